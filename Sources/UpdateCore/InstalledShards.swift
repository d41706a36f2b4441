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
        return try parse(bytes, what: path)
    }

    /// A record's bytes, read.
    static func parse(_ bytes: [UInt8], what path: String) throws(UpdateError) -> InstalledShards {
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
        do throws(BlocklistError) {
            try Self.replace(Self.recordPath(in: directory)) { aside throws(BlocklistError) in
                try FileDescriptor.writeNewFile(aside, recordBytes, sync: true)
            }
        } catch {
            throw UpdateError(error)
        }
    }

    /// The record as `installed.json` holds it.
    var recordBytes: [UInt8] {
        JSONValue.object([
            "generation": .number(String(generation)),
            "shards": .array(names.map { .string($0) }),
            "digests": .array(digests.map { .string(TextEncodings.hex($0)) }),
        ]).canonicalBytes
    }

    /// Installs the shards at `paths` (a set's, in index order) whole, as generation
    /// `generation`, and records them, under the App Group's lock: what the app does with the set
    /// it ships (``installIfNeeded(shippedShardsAt:generation:in:)``).
    @discardableResult
    public static func install(
        shardsAt paths: [String],
        generation: UInt64,
        in directory: String
    ) throws(UpdateError) -> InstalledShards {
        try withLock(in: directory) { () throws(UpdateError) in
            try installUnlocked(shardsAt: paths, generation: generation, in: directory)
        }
    }

    /// What the app does at each launch, before it reads the set: under the App Group's lock,
    /// finishes an update a kill interrupted, then installs the set it ships when the App Group
    /// holds no whole set, or an older generation than the shipped one (a new version of the app
    /// that ships a newer set). A whole set of the shipped generation or newer is kept: the
    /// Notification Service Extension and ``catchUp(trust:now:in:fetch:)`` bring it forward.
    ///
    /// - Returns: the installed record, and whether the shipped set was installed now.
    /// - Throws: `UpdateError` naming the file that could not be read or written.
    @discardableResult
    public static func installIfNeeded(
        shippedShardsAt paths: [String],
        generation: UInt64,
        in directory: String
    ) throws(UpdateError) -> (record: InstalledShards, installedNow: Bool) {
        try withLock(in: directory) { () throws(UpdateError) in
            if isWhole(in: directory), var record = try? read(in: directory), record.names.count == paths.count {
                // The shipped shards themselves under another number: an earlier version of the
                // app shipped them as a generation the publication had not given them (too high,
                // every catch-up would be refused as a rollback). The shipped number is recorded.
                if record.generation != generation, record.holds(shipped: paths, in: directory) {
                    record.generation = generation
                    try record.write(in: directory)
                    return (record, true)
                }
                if record.generation >= generation { return (record, false) }
            }
            return (try installUnlocked(shardsAt: paths, generation: generation, in: directory), true)
        }
    }

    /// Whether the installed shards are the files at `paths`: the same names and sizes (a stat
    /// each, so that a launch after an update reads no shard), then the same content digests.
    func holds(shipped paths: [String], in directory: String) -> Bool {
        func size(_ path: String) -> Int64? { try? FileDescriptor.openForReading(path).size() }
        for (path, name) in zip(paths, names) {
            guard path.split(separator: "/").last.map(String.init) == name,
                let shipped = size(path), shipped == size(Self.shardPath(name, in: directory))
            else { return false }
        }
        return zip(paths, digests).allSatisfy { (try? ShardContent.digest(ofShardAt: $0)) == $1 }
    }

    private static func installUnlocked(
        shardsAt paths: [String],
        generation: UInt64,
        in directory: String
    ) throws(UpdateError) -> InstalledShards {
        guard !paths.isEmpty else {
            throw UpdateError(.malformed, "The set to install has no shards: the app's bundle holds no shard file.")
        }
        guard generation >= 1 else {
            throw UpdateError(.malformed, "Generation 0 is no publication's: a publication counts from 1.")
        }
        // Every name is checked before anything is copied.
        var record = InstalledShards(generation: generation, names: [], digests: [])
        for path in paths {
            let name = String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
            guard isPlainName(name) else {
                throw UpdateError(.malformed, "\(path) does not end in a shard's file name.")
            }
            guard !record.names.contains(name) else {
                throw UpdateError(.malformed, "\(path) is the second shard named \(name) in the set to install.")
            }
            record.names.append(name)
        }
        // The digests are the sources', so that a shard another process put in place meanwhile
        // makes the set not whole rather than recorded.
        for path in paths { record.digests.append(try ShardContent.digest(ofShardAt: path)) }
        do throws(BlocklistError) {
            try FileDescriptor.makeDirectory(directory + "/shards")
            for (path, name) in zip(paths, record.names) {
                try replace(shardPath(name, in: directory)) { aside throws(BlocklistError) in
                    try FileDescriptor.copy(path, toNew: aside, sync: true)
                }
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
        stalePositions(statuses: statuses, in: directory).isEmpty
    }

    /// Applies `push` to the installed shards, under the App Group's lock (``withLock(in:_:)``):
    /// each new shard is written beside the installed one, then the new record beside its place,
    /// then the shards and the record are renamed over the old ones. A kill before the record's
    /// rename leaves shards whose digests differ from the record; the next writer (or
    /// ``installIfNeeded(shippedShardsAt:generation:in:)``) finishes the renames from the files
    /// left beside them.
    ///
    /// The record is read again under the lock: a push another process applied meanwhile (two
    /// Notification Service Extensions, or the app's catch-up) is not applied twice.
    ///
    /// - Returns: the indices (from 1) of the shards that changed; none when the set already is
    ///   the push's generation.
    /// - Throws: `UpdateError` if the push is for another generation or set, or a file cannot be
    ///   written; the installed set is then as it was.
    @discardableResult
    public mutating func apply(_ push: InlinePush, in directory: String) throws(UpdateError) -> [Int] {
        var current = self
        let changed = try Self.withLock(in: directory) { () throws(UpdateError) -> [Int] in
            current = try Self.read(in: directory)
            return try current.applyUnlocked(push, in: directory)
        }
        self = current
        return changed
    }

    /// ``apply(_:in:)`` under a lock the caller holds, to this record, read under it.
    mutating func applyUnlocked(_ push: InlinePush, in directory: String) throws(UpdateError) -> [Int] {
        if generation == push.to, Snapshot.setDigest(digests) == push.setDigest { return [] }
        let installed = zip(names, digests).map { (path: Self.shardPath($0, in: directory), digest: $1) }
        let names = self.names
        let applied = try push.apply(
            installedGeneration: generation,
            shards: installed,
            writingTo: { Self.stagedPath(names[$0 - 1], in: directory) }
        )
        var next = self
        next.generation = push.to
        next.digests = applied.shardDigests
        try next.commit(applied.changedShards, in: directory)
        self = next
        return applied.changedShards
    }

    /// Where a shard's next version is written before it is renamed over `shards/NAME`.
    static func stagedPath(_ name: String, in directory: String) -> String {
        shardPath("." + name + ".new", in: directory)
    }

    /// Where the next record is written before it is renamed over `installed.json`: while it is
    /// there, the shards it names may be half renamed (``finishInterruptedUpdate(in:)``).
    static func stagedRecordPath(in directory: String) -> String { directory + "/.installed.json.new" }

    /// Commits this record, whose changed shards (indices from 1) are staged beside their places:
    /// the record is written aside and synced first, then each shard renamed, then the record.
    /// Called under the lock.
    func commit(_ changedShards: [Int], in directory: String) throws(UpdateError) {
        let staged = Self.stagedRecordPath(in: directory)
        do throws(BlocklistError) {
            FileDescriptor.removeCreated(staged)
            try FileDescriptor.writeNewFile(staged, recordBytes, sync: true)
            try commitStaged(changedShards, stagedRecord: staged, in: directory)
        } catch {
            throw UpdateError(error)
        }
    }

    /// Finishes an update that a kill interrupted between its renames, or removes what it left:
    /// when a staged record is there and every shard it names is either in place with its digest
    /// or staged beside its place with it, the staged shards and the record are renamed into
    /// place; otherwise the staged files are removed (they are this type's own names) and the
    /// installed set is as the old record says, or not whole. Called under the lock, before any
    /// write.
    static func finishInterruptedUpdate(in directory: String) {
        let stagedRecord = stagedRecordPath(in: directory)
        defer {
            // Whatever the outcome, nothing staged survives: the next writer stages from scratch.
            if let names = (try? read(in: directory))?.names {
                for name in names { FileDescriptor.removeCreated(stagedPath(name, in: directory)) }
            }
            FileDescriptor.removeCreated(stagedRecord)
        }
        guard FileDescriptor.nameExists(stagedRecord),
            let bytes = try? FileDescriptor.readWholeFile(stagedRecord, limit: 1 << 22),
            let record = try? parse(bytes, what: stagedRecord)
        else { return }
        var renames: [Int] = []
        for (offset, (name, digest)) in zip(record.names, record.digests).enumerated() {
            if (try? ShardContent.digest(ofShardAt: shardPath(name, in: directory))) == digest { continue }
            guard (try? ShardContent.digest(ofShardAt: stagedPath(name, in: directory))) == digest else { return }
            renames.append(offset + 1)
        }
        try? record.commitStaged(renames, stagedRecord: stagedRecord, in: directory)
    }

    /// The renames of ``commit(_:in:)`` after its record was written.
    private func commitStaged(_ changed: [Int], stagedRecord: String, in directory: String) throws(BlocklistError) {
        for index in changed {
            try FileDescriptor.rename(
                Self.stagedPath(names[index - 1], in: directory),
                over: Self.shardPath(names[index - 1], in: directory)
            )
        }
        try FileDescriptor.rename(stagedRecord, over: Self.recordPath(in: directory))
    }

    /// How long a writer waits for the App Group's lock before it gives up with `.shard`
    /// ("busy"): an install of the shipped set or a catch-up holds it for seconds; a Notification
    /// Service Extension has about 30 in all.
    public static let lockPatienceMilliseconds = 15_000

    /// Runs `body` holding the App Group's lock (`DIRECTORY/.lock`, an advisory `flock` the
    /// kernel drops when a process dies), after finishing or undoing an update a kill
    /// interrupted: the app and the Notification Service Extension (two instances of it, even)
    /// write the installed set one at a time.
    ///
    /// - Throws: `UpdateError` when the lock stays busy past ``lockPatienceMilliseconds``, or
    ///   what `body` throws.
    public static func withLock<Result>(
        in directory: String,
        _ body: () throws(UpdateError) -> Result
    ) throws(UpdateError) -> Result {
        let lock: FileLock
        do throws(BlocklistError) {
            try FileDescriptor.makeDirectory(directory)
            lock = try FileLock(
                path: AppGroupLayout.lock(in: directory),
                what: "The App Group's installed set",
                patienceMilliseconds: lockPatienceMilliseconds
            )
        } catch {
            throw UpdateError(error)
        }
        defer { lock.unlock() }
        finishInterruptedUpdate(in: directory)
        return try body()
    }

    /// Writes `path` through `.NAME.new` beside it (a leftover of a killed run is removed first:
    /// the name is this type's own) and renames it into place.
    static func replace(
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
