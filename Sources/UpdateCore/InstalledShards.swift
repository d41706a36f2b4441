import BlocklistCore

/// The set an app installed in its App Group, kept in one directory (`<App Group>/blocklist`):
/// the shards, one file per Call Directory extension in `shards/`, and `installed.json`, the
/// generation they are and each shard's content digest.
///
/// The app installs the set it ships (``install(shardsAt:generation:in:)``); the Notification
/// Service Extension applies each update (``apply(_:in:)``); the app asks CallKit to reload when
/// the installed generation is newer than the one CallKit loaded. Every file is written beside
/// its place and renamed over it, and the record last, so that a kill leaves the old file or the
/// new one, and shards that disagree with the record at worst: ``isWhole(in:)`` tells, and the app
/// installs its own set again then.
public struct InstalledShards: Sendable, Equatable {
    /// The generation the shards are.
    public var generation: UInt64
    /// Each shard's file name in `shards/`, in index order.
    public var names: [String]
    /// Each shard's content digest (`ShardContent.digest(ofShardAt:)`), in index order.
    public var digests: [[UInt8]]

    public init(generation: UInt64, names: [String], digests: [[UInt8]]) {
        self.generation = generation
        self.names = names
        self.digests = digests
    }

    /// `DIRECTORY/installed.json`.
    public static func recordPath(in directory: String) -> String { AppGroupLayout.installedRecord(in: directory) }

    /// `DIRECTORY/shards/NAME`: where the shard `name` is installed.
    public static func shardPath(_ name: String, in directory: String) -> String {
        AppGroupLayout.installedShard(name, in: directory)
    }

    /// Reads `installed.json` in `directory`.
    ///
    /// - Throws: `UpdateError` naming the file when it is missing, not JSON, or not a record.
    public static func read(in directory: String) throws(UpdateError) -> InstalledShards {
        let path = recordPath(in: directory)
        let bytes: [UInt8]
        do throws(BlocklistError) {
            bytes = try FileDescriptor.readWholeFile(path, limit: 1 << 22)
        } catch {
            throw UpdateError(error)
        }
        let fields = try JSONFields(try JSONValue(parsing: bytes, what: path), what: path)
        let generation = try fields.integer("generation")
        var names: [String] = []
        for value in try fields.array("shards") {
            guard case .string(let name) = value, isPlainName(name) else {
                throw UpdateError(.malformed, "\(path): \"shards\" holds something other than a shard's file name.")
            }
            names.append(name)
        }
        var digests: [[UInt8]] = []
        for value in try fields.array("digests") {
            guard let digest = digestBytes(value) else {
                throw UpdateError(.malformed, "\(path): \"digests\" holds something other than 64 hex digits.")
            }
            digests.append(digest)
        }
        guard names.count == digests.count else {
            throw UpdateError(
                .malformed,
                "\(path) names \(names.count) shards and \(digests.count) digests; they must be as many."
            )
        }
        return InstalledShards(generation: UInt64(generation), names: names, digests: digests)
    }

    /// Writes `installed.json` in `directory` beside its place and renames it over the old one.
    public func write(in directory: String) throws(UpdateError) {
        let path = Self.recordPath(in: directory)
        let record = JSONValue.object([
            "generation": .number(String(generation)),
            "shards": .array(names.map { .string($0) }),
            "digests": .array(digests.map { .string(TextEncodings.hex($0)) }),
        ])
        do throws(BlocklistError) {
            try Self.replace(path) { aside throws(BlocklistError) in
                try FileDescriptor.writeNewFile(aside, record.canonicalBytes, sync: true)
            }
        } catch {
            throw UpdateError(error)
        }
    }

    /// Installs the shards at `paths` (a set's, in index order) whole, as generation
    /// `generation`, and records them: what the app does with the set it ships, before any
    /// update, and again whenever ``isWhole(in:)`` is false.
    @discardableResult
    public static func install(
        shardsAt paths: [String],
        generation: UInt64,
        in directory: String
    ) throws(UpdateError) -> InstalledShards {
        var record = InstalledShards(generation: generation, names: [], digests: [])
        // The digests are the sources', so that a shard another process put in place meanwhile
        // (an update applied during the install) makes the set not whole rather than recorded.
        for path in paths { record.digests.append(try ShardContent.digest(ofShardAt: path)) }
        do throws(BlocklistError) {
            try FileDescriptor.makeDirectory(directory)
            try FileDescriptor.makeDirectory(directory + "/shards")
            for path in paths {
                let name = String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
                guard isPlainName(name) else {
                    throw BlocklistError(.invalidInput, "\(path) does not end in a shard's file name.")
                }
                try replace(shardPath(name, in: directory)) { aside throws(BlocklistError) in
                    try FileDescriptor.copy(path, toNew: aside, sync: true)
                }
                record.names.append(name)
            }
        } catch {
            throw UpdateError(error)
        }
        try record.write(in: directory)
        return record
    }

    /// Whether `directory` holds a whole installed set: a record, and shards whose content
    /// digests are the record's. A kill between an update's renames leaves shards of two
    /// generations; the app installs its shipped set again then, and updates bring it forward.
    public static func isWhole(in directory: String) -> Bool {
        guard let record = try? read(in: directory) else { return false }
        return zip(record.names, record.digests).allSatisfy { name, digest in
            (try? ShardContent.digest(ofShardAt: shardPath(name, in: directory))) == digest
        }
    }

    /// Whether every extension that is turned on holds the installed set: its loaded copy's
    /// content digest is its installed shard's. The app records the installed generation as
    /// loaded only then; a request CallKit reported expired, or one that never completed, leaves
    /// the copy of another generation.
    ///
    /// - Parameters:
    ///   - statuses: each extension's status, extension `i` loading shard `i` (index order).
    ///   - directory: the App Group's directory (BlocklistCore's `AppGroupLayout`).
    public func isLoaded(statuses: [CallDirectoryEnabledStatus], in directory: String) -> Bool {
        for (index, name) in names.enumerated() where index < statuses.count && statuses[index] == .enabled {
            let copy = AppGroupLayout.loadedCopy(name, in: directory)
            guard (try? ShardContent.digest(ofShardAt: copy)) == digests[index] else { return false }
        }
        return true
    }

    /// Applies `push` to the installed shards: each new shard is written beside the installed
    /// one and renamed over it, and the record is written last, so that a kill in between leaves
    /// shards whose digests differ from the record (``isWhole(in:)`` is false then).
    ///
    /// - Returns: the indices (from 1) of the shards that changed.
    /// - Throws: `UpdateError` if the push is for another generation or set, or a file cannot be
    ///   written; the installed shards are then as they were, or some of them new and the record
    ///   old.
    @discardableResult
    public mutating func apply(_ push: InlinePush, in directory: String) throws(UpdateError) -> [Int] {
        let installed = zip(names, digests).map { (path: Self.shardPath($0, in: directory), digest: $1) }
        let names = self.names
        let staging = { (index: Int) in Self.shardPath("." + names[index - 1] + ".new", in: directory) }
        // A run killed before its renames left its new shards beside the installed ones: they
        // are this type's own files, and the apply writes only where nothing is.
        for index in names.indices { FileDescriptor.removeCreated(staging(index + 1)) }
        let applied = try push.apply(installedGeneration: generation, shards: installed, writingTo: staging)
        for index in applied.changedShards {
            do throws(BlocklistError) {
                try FileDescriptor.rename(staging(index), over: installed[index - 1].path)
            } catch {
                throw UpdateError(error)
            }
        }
        generation = push.to
        digests = applied.shardDigests
        try write(in: directory)
        return applied.changedShards
    }

    /// Writes `path` through `.NAME.new` beside it (a leftover of a killed run is removed first:
    /// the name is this type's own) and renames it into place.
    private static func replace(
        _ path: String,
        writing write: (String) throws(BlocklistError) -> Void
    ) throws(BlocklistError) {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path.utf8.index(after: $0) } ?? path.startIndex
        let aside = String(path[..<slash]) + "." + String(path[slash...]) + ".new"
        FileDescriptor.removeCreated(aside)
        try write(aside)
        try FileDescriptor.rename(aside, over: path)
    }

    /// A file name alone: no slash, not empty, not `.` or `..`, not hidden.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
    }

    /// A digest as written: 64 hex digits, or (as the app's first releases wrote it) an array of
    /// 32 numbers.
    private static func digestBytes(_ value: JSONValue) -> [UInt8]? {
        switch value {
        case .string(let hex):
            guard let bytes = TextEncodings.hexDecode(Array(hex.utf8)), bytes.count == 32 else { return nil }
            return bytes
        case .array(let numbers):
            let bytes = numbers.compactMap { number -> UInt8? in
                if case .number(let text) = number { UInt8(text) } else { nil }
            }
            return bytes.count == 32 && numbers.count == 32 ? bytes : nil
        default:
            return nil
        }
    }
}
