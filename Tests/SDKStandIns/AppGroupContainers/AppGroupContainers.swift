// A stand-in, for Linux, for what Foundation gives an iOS app and its extensions: the directory
// of an App Group. No iOS SDK is available on this machine; the stand-ins in Tests/SDKStandIns
// have the signatures of Apple's API that the handlers in Sources/AppProject/Handlers call, so
// those files compile and run here as they are.
@_exported import Foundation

#if canImport(FoundationNetworking)
    // On iOS, Foundation has URLSession; on Linux it is in FoundationNetworking.
    @_exported import FoundationNetworking
#endif

/// The containers of the App Groups a test made: identifier to directory.
public enum AppGroupContainers {
    nonisolated(unsafe) public static var directories: [String: URL] = [:]
}

extension FileManager {
    /// Foundation's `containerURL(forSecurityApplicationGroupIdentifier:)`: the App Group's
    /// directory, or nil when the process is not entitled to it.
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        AppGroupContainers.directories[groupIdentifier]
    }
}
