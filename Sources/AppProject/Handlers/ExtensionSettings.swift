import BlocklistCore
import Foundation

#if canImport(Darwin)
    import os
#else
    import LoggerStandIn  // blocklist's tests on Linux: os's Logger as docs/PLATFORM.md declares it
#endif

/// What an extension and the app read from their Info.plist, as `blocklist xcodegen` writes it:
/// `BlocklistAppGroup`, the App Group they share (its `blocklist/` directory holds BlocklistCore's
/// `AppGroupLayout`); `BlocklistShard`, the shard a Call Directory extension loads; and
/// `BlocklistCallDirectoryExtensions`, the Call Directory extensions' bundle identifiers.
struct ExtensionSettings {
    /// The bundle whose Info.plist and resources are read: the extension's own.
    nonisolated(unsafe) static var bundle = Bundle.main

    /// `<App Group container>/blocklist`, as BlocklistCore and UpdateCore take it.
    let path: String

    static func current() throws -> ExtensionSettings {
        guard let group = bundle.object(forInfoDictionaryKey: "BlocklistAppGroup") as? String else {
            throw SettingsError("The extension's Info.plist has no BlocklistAppGroup; blocklist xcodegen writes it.")
        }
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: group) else {
            throw SettingsError("The App Group \(group) is not in the extension's entitlements.")
        }
        return ExtensionSettings(path: container.appendingPathComponent("blocklist").path)
    }

    static func info(_ key: String) -> String? { bundle.object(forInfoDictionaryKey: key) as? String }

    /// The Call Directory extensions' bundle identifiers, extension `i` loading shard `i`.
    static var callDirectoryExtensions: [String] {
        (info("BlocklistCallDirectoryExtensions") ?? "").split(separator: ",").map(String.init)
    }

    /// The bytes of a file the app ships in the extension's bundle (`root.json`, `push.key`).
    func resource(_ name: String, _ type: String) throws -> [UInt8] {
        guard let url = Self.bundle.url(forResource: name, withExtension: type) else {
            throw SettingsError("\(name).\(type) is not in the extension's bundle; blocklist xcodegen copies it there.")
        }
        return [UInt8](try Data(contentsOf: url))
    }

    /// Logs `error` (os.Logger) and records it in the App Group (BlocklistCore's
    /// `ExtensionFailures`), where the app shows it: nobody sees an extension's errors otherwise.
    static func recordFailure(_ error: any Error, source: String, in settings: ExtensionSettings?) {
        log(error, category: source)
        guard let settings else { return }
        ExtensionFailures.record(
            "\(error)",
            source: source,
            time: Int64(Date().timeIntervalSince1970),
            in: settings.path
        )
    }
}

extension ExtensionSettings {
    /// Logs `error`'s sentence (os.Logger; it names files, never a message or a number).
    static func log(_ error: any Error, category: String) {
        Logger(subsystem: "blocklist", category: category).error("\("\(error)", privacy: .public)")
    }
}

/// A setting the extension needs is missing; the sentence says which.
struct SettingsError: LocalizedError, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
    var errorDescription: String? { description }
}

// Foundation shows blocklist's errors by their sentence (`localizedDescription`), not as "The
// operation couldn't be completed": the packages do not import Foundation (docs/PLATFORM.md).
// swift-format-ignore: AvoidRetroactiveConformances
extension BlocklistError: @retroactive LocalizedError { public var errorDescription: String? { description } }
// swift-format-ignore: AvoidRetroactiveConformances
extension CallDirectoryManagerError: @retroactive LocalizedError {
    public var errorDescription: String? { description }
}
