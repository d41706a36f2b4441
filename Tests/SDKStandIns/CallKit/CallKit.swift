// A stand-in for CallKit's Call Directory API, with the declarations docs/PLATFORM.md gives from
// Apple's headers and documentation (no iOS SDK is available here; see AppGroupContainers), held
// to that table by PlatformTableTests. The context records nothing itself: a test subclasses it,
// as the system's own context is a subclass it does not show; the manager's answers are set by
// a test.
@_exported import AppGroupContainers

/// A phone number as the Call Directory takes it: country code and digits.
public typealias CXCallDirectoryPhoneNumber = Int64

/// The largest phone number CallKit takes.
// swift-format-ignore: AlwaysUseLowerCamelCase
public var CXCallDirectoryPhoneNumberMax: CXCallDirectoryPhoneNumber { Int64.max - 1 }

/// The principal class of a Call Directory extension.
open class CXCallDirectoryProvider: NSObject {
    public override init() {}

    /// Called by the system to load or update the extension's entries.
    open func beginRequest(with context: CXCallDirectoryExtensionContext) {}
}

/// What the context tells when a request fails (for example a load started in Settings).
public protocol CXCallDirectoryExtensionContextDelegate: NSObjectProtocol {
    func requestFailed(for extensionContext: CXCallDirectoryExtensionContext, withError error: any Error)
}

/// What the system hands a Call Directory extension's request.
open class CXCallDirectoryExtensionContext: NSObject {
    public override init() {}

    /// Told when the request fails.
    open weak var delegate: (any CXCallDirectoryExtensionContextDelegate)?

    /// True when the request may change what is stored, false when it adds the whole list
    /// (iOS 11).
    open var isIncremental: Bool { false }

    open func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {}
    open func removeBlockingEntry(withPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {}
    open func removeAllBlockingEntries() {}
    open func addIdentificationEntry(
        withNextSequentialPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber,
        label: String
    ) {}
    open func removeIdentificationEntry(withPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {}
    open func removeAllIdentificationEntries() {}
    /// Ends the request; `completion` gets `expired`: `true` when nothing the request sent was
    /// stored.
    open func completeRequest(completionHandler completion: (@Sendable (Bool) -> Void)? = nil) {}
    /// The async form Swift imports: returns `expired`.
    open func completeRequest() async -> Bool {
        await withCheckedContinuation { continuation in
            completeRequest { expired in continuation.resume(returning: expired) }
        }
    }
    /// `NSExtensionContext`'s: ends the request with an error; nothing it sent is stored.
    open func cancelRequest(withError error: any Error) {}
}

/// The app's side: reloads an extension, tells whether it is enabled, opens Settings.
open class CXCallDirectoryManager: NSObject {
    /// Whether the user enabled an extension in Settings.
    public enum EnabledStatus: Int, Sendable {
        case unknown = 0
        case disabled = 1
        case enabled = 2
    }

    /// The one manager of the app.
    open class var sharedInstance: CXCallDirectoryManager { standInShared }
    /// The stand-in's own: what `sharedInstance` returns, which a test replaces with a subclass
    /// that answers as it scripts.
    nonisolated(unsafe) public static var standInShared = CXCallDirectoryManager()

    public override init() {}

    open func reloadExtension(
        withIdentifier identifier: String,
        completionHandler completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        completion?(nil)
    }
    open func reloadExtension(withIdentifier identifier: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            reloadExtension(withIdentifier: identifier) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }
    open func getEnabledStatusForExtension(
        withIdentifier identifier: String,
        completionHandler completion: @escaping @Sendable (CXCallDirectoryManager.EnabledStatus, (any Error)?) -> Void
    ) {
        completion(.unknown, nil)
    }
    /// iOS 13.4.
    open func openSettings(completionHandler completion: (@Sendable ((any Error)?) -> Void)? = nil) {
        completion?(nil)
    }
    open func openSettings() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            openSettings { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }
}

/// The domain of the manager's errors. Apple's header declares it `extern` and publishes no
/// value; this string is the stand-in's own.
// swift-format-ignore: AlwaysUseLowerCamelCase
public let CXErrorDomainCallDirectoryManager: String = "CXErrorDomainCallDirectoryManager"

/// An error of the Call Directory manager, as Swift imports `CXErrorCodeCallDirectoryManagerError`.
public struct CXErrorCodeCallDirectoryManagerError: Error, Sendable {
    public enum Code: Int, Sendable {
        case unknown = 0
        case noExtensionFound = 1
        case loadingInterrupted = 2
        case entriesOutOfOrder = 3
        case duplicateEntries = 4
        case maximumEntriesExceeded = 5
        case extensionDisabled = 6
        /// iOS 10.3.
        case currentlyLoading = 7
        /// iOS 11.
        case unexpectedIncrementalRemoval = 8
    }

    public let code: Code
    public init(_ code: Code) { self.code = code }
}
