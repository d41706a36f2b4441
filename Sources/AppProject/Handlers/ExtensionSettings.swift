import BlocklistCore
import Foundation

/// Where an extension finds its files. `blocklist xcodegen` writes two keys into each extension's
/// Info.plist: `BlocklistAppGroup`, the App Group the app and its extensions share, and, for a
/// Call Directory extension, `BlocklistShard`, the file name of the shard it loads.
///
/// In the App Group's container, under `blocklist/`, BlocklistCore's `AppGroupLayout`: the
/// installed shards and their record, the loaded copies, the failures and the SMS rules.
struct ExtensionSettings {
    /// The bundle whose Info.plist and resources are read: the extension's own.
    nonisolated(unsafe) static var bundle = Bundle.main

    /// `<App Group container>/blocklist`.
    let directory: URL
    /// The shard this extension loads, for a Call Directory extension.
    let shardName: String?

    /// The settings in the extension's Info.plist.
    static func current() throws -> ExtensionSettings {
        guard let group = bundle.object(forInfoDictionaryKey: "BlocklistAppGroup") as? String else {
            throw SettingsError("The extension's Info.plist has no BlocklistAppGroup; blocklist xcodegen writes it.")
        }
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: group) else {
            throw SettingsError("The App Group \(group) is not in the extension's entitlements.")
        }
        return ExtensionSettings(
            directory: container.appendingPathComponent("blocklist"),
            shardName: bundle.object(forInfoDictionaryKey: "BlocklistShard") as? String
        )
    }

    /// The installed copy of the shard `name`.
    func installedShard(_ name: String) -> String { AppGroupLayout.installedShard(name, in: path) }

    /// `directory` as a path, as BlocklistCore and UpdateCore take it.
    var path: String { directory.path }

    /// The copy of the shard `name` that its extension loaded last.
    func loadedShard(_ name: String) -> String { AppGroupLayout.loadedCopy(name, in: path) }

    /// Makes `loaded/` when it is not there yet.
    func makeLoadedDirectory() throws {
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("loaded"),
            withIntermediateDirectories: true
        )
    }

    /// Records `error` in the App Group (BlocklistCore's `ExtensionFailures`), where the app shows
    /// it: nobody sees an extension's errors otherwise.
    func recordFailure(_ error: any Error, source: String) {
        ExtensionFailures.record("\(error)", source: source, time: Int64(Date().timeIntervalSince1970), in: path)
    }

    /// The compiled SMS rules.
    var rules: String { AppGroupLayout.rules(in: path) }

    /// The bytes of a file the app ships in the extension's bundle (`root.json`, `push.key`).
    func resource(_ name: String, _ type: String) throws -> [UInt8] {
        guard let url = Self.bundle.url(forResource: name, withExtension: type) else {
            throw SettingsError("\(name).\(type) is not in the extension's bundle; blocklist xcodegen copies it there.")
        }
        return [UInt8](try Data(contentsOf: url))
    }

    /// Copies `source` over `destination` through a file beside it and a rename, so that
    /// `destination` is always whole: the old copy or the new.
    func replace(_ destination: String, withCopyOf source: String) throws {
        let target = URL(fileURLWithPath: destination)
        let aside = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).new")
        try FileManager.default.createDirectory(
            at: aside.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try? FileManager.default.removeItem(at: aside)
        try FileManager.default.copyItem(at: URL(fileURLWithPath: source), to: aside)
        guard rename(aside.path, destination) == 0 else {
            throw SettingsError("Could not rename \(aside.path) to \(destination) (errno \(errno)).")
        }
    }
}

/// A setting the extension needs is missing; the sentence says which.
struct SettingsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
