import Foundation
import UpdateCore

/// The set installed in the App Group: its generation and, in index order, each shard's file
/// name and content digest (`installed.json`). The app writes it when it installs shards whole;
/// the Notification Service Extension rewrites it after each update it applies.
struct InstalledSet: Codable {
    var generation: UInt64
    var shards: [String]
    var digests: [[UInt8]]

    /// The record in the App Group.
    static func read(_ settings: ExtensionSettings) throws -> InstalledSet {
        try JSONDecoder().decode(InstalledSet.self, from: Data(contentsOf: settings.installedRecord))
    }

    /// Writes the record aside and renames it into place: the old record or the new, never half.
    func write(_ settings: ExtensionSettings) throws {
        try JSONEncoder().encode(self).write(to: settings.installedRecord, options: .atomic)
    }

    /// Installs the shards at `paths` (a set's, in index order) whole, as generation `generation`,
    /// and records them: what the app does with the set it ships, before any update.
    static func install(shardsAt paths: [String], generation: UInt64, _ settings: ExtensionSettings) throws {
        var record = InstalledSet(generation: generation, shards: [], digests: [])
        for path in paths {
            let name = URL(fileURLWithPath: path).lastPathComponent
            try settings.replace(settings.installedShard(name), withCopyOf: path)
            record.shards.append(name)
            record.digests.append(try ShardContent.digest(ofShardAt: settings.installedShard(name)))
        }
        try record.write(settings)
    }

    /// Whether the App Group holds a whole installed set: a record, and shards whose content
    /// digests are the record's. A kill between an update's renames leaves shards of two
    /// generations; the app installs its shipped set again then, and updates bring it forward.
    static func isWhole(_ settings: ExtensionSettings) -> Bool {
        guard let record = try? read(settings), record.shards.count == record.digests.count else { return false }
        return zip(record.shards, record.digests).allSatisfy { name, digest in
            (try? ShardContent.digest(ofShardAt: settings.installedShard(name))) == digest
        }
    }

    /// Applies `push` to the installed shards: each new shard is written beside the installed
    /// one and renamed over it, and the record is written last, so that a kill in between leaves
    /// shards whose digests differ from the record (install in full then).
    ///
    /// - Returns: the indices (from 1) of the shards that changed.
    mutating func apply(_ push: InlinePush, _ settings: ExtensionSettings) throws -> [Int] {
        let installed = zip(shards, digests).map { (path: settings.installedShard($0), digest: $1) }
        let names = shards
        let staging = { (index: Int) in settings.installedShard(".\(names[index - 1]).new") }
        // A run killed before its renames left its new shards beside the installed ones: they
        // are this extension's own files, and the apply writes only where nothing is.
        for index in names.indices { try? FileManager.default.removeItem(atPath: staging(index + 1)) }
        let applied = try push.apply(installedGeneration: generation, shards: installed, writingTo: staging)
        for index in applied.changedShards {
            guard rename(staging(index), installed[index - 1].path) == 0 else {
                throw SettingsError(
                    "Could not rename \(staging(index)) to \(installed[index - 1].path) (errno \(errno))."
                )
            }
        }
        generation = push.to
        digests = applied.shardDigests
        try write(settings)
        return applied.changedShards
    }
}
