/// What a phone holds of a publication: the generation it installed and each shard's content
/// digest. Generation 0 means nothing was installed from a publication yet.
package struct InstalledPublication: Hashable, Sendable {
    public var generation: UInt64
    public var shardDigests: [[UInt8]]

    public init(generation: UInt64, shardDigests: [[UInt8]]) {
        self.generation = generation
        self.shardDigests = shardDigests
    }

    /// Nothing installed.
    public static let none = InstalledPublication(generation: 0, shardDigests: [])

    /// The state file's bytes (`publication.json` beside the shards).
    public var stateBytes: [UInt8] {
        JSONValue.object([
            "generation": .number(String(generation)),
            "shards": .array(shardDigests.map { .string(TextEncodings.hex($0)) }),
        ]).canonicalBytes + [0x0A]
    }

    /// Reads a state file.
    public init(stateBytes: [UInt8], what: String) throws(UpdateError) {
        let fields = try JSONFields(try JSONValue(parsing: stateBytes, what: what), what: what)
        generation = UInt64(try fields.integer("generation"))
        shardDigests = []
        for element in try fields.array("shards") {
            guard case .string(let text) = element, let digest = TextEncodings.hexDecode(Array(text.utf8)),
                digest.count == 32
            else { throw UpdateError(.malformed, "\(what): a shard digest is not 64 lowercase hex digits.") }
            shardDigests.append(digest)
        }
    }
}

/// The verified way from what is installed to the newest publication: for each shard, keep it,
/// apply a delta, or download it whole. Made only from metadata whose signatures, lengths,
/// hashes, expiry and generation all checked; nothing has been written when it is made.
package struct UpdatePlan: Sendable {
    /// What to do for one shard.
    public enum Step: Sendable {
        case keep
        case delta(Snapshot.Delta)
        case full(Snapshot.Shard)
    }

    /// The newest root (the trusted one, or one it rotated to) and its files' bytes, to keep.
    public var root: Root
    public var rootFiles: [(version: Int64, bytes: [UInt8])]
    public var timestamp: Timestamp
    public var snapshot: Snapshot
    public var steps: [Step]
    /// The bytes of metadata read to make the plan.
    public var metadataBytes: Int64

    /// The bytes the steps will download.
    public var downloadBytes: Int64 {
        steps.reduce(0) {
            switch $1 {
            case .keep: $0
            case .delta(let delta): $0 + delta.file.length
            case .full(let shard): $0 + shard.file.length
            }
        }
    }

    /// Shards that change.
    public var changedShards: [Int] {
        steps.enumerated().compactMap {
            if case .keep = $0.element { nil } else { $0.offset + 1 }
        }
    }

    /// Verifies the publication `fetch` reads and plans the update from `installed`.
    ///
    /// `fetch(path, maximumBytes, optional)` returns a file of the publication, `nil` if it does
    /// not exist; it must refuse (throw) past `maximumBytes`. `optional` marks a file the
    /// publication may lack (the next root): a static host that hides a missing file behind 403
    /// or an HTML page answers `nil` for it; a required file fails with the host's answer.
    ///
    /// - Returns: the plan, or `nil` if `installed` is already the newest generation.
    /// - Throws: `UpdateError`: `.badSignature`, `.expired` (freeze), `.rollback`, `.mismatch`
    ///   (mix-and-match, truncation, tampering), `.malformed`.
    public static func make(
        trusting trusted: Root,
        installed: InstalledPublication,
        now: Int64,
        source: String = "the publication",
        fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
    ) throws -> UpdatePlan? {
        try make(
            roots: try Roots(from: trusted, fetch: fetch),
            installed: installed,
            now: now,
            source: source,
            fetch: fetch
        )
    }

    /// The newest root: the trusted one, or the last of the `N+1.root.json` chain it starts,
    /// each signed by the one before; with the files read and their size.
    struct Roots {
        var root: Root
        var files: [(version: Int64, bytes: [UInt8])] = []
        var bytes: Int64 = 0

        init(
            from trusted: Root,
            fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
        ) throws {
            root = trusted
            while root.version < Int64(Int32.max),
                let next = try fetch("\(root.version + 1).root.json", SignedDocument.maximumBytes, true),
                SignedDocument.isDocument(next)
            {
                bytes += Int64(next.count)
                root = try root.next(next, what: "\(root.version + 1).root.json")
                files.append((root.version, next))
            }
        }
    }

    /// How to reach the newest generation, the cheapest way that verifies.
    public enum Route: Sendable {
        /// The update file from the installed generation (`from-M.push`): one signed file with
        /// every changed shard's delta, the resulting set's digest and an expiry, applied as an
        /// inline push is; `bytes` is its size.
        case updateFile(InlinePush, bytes: Int64)
        /// The timestamp, the snapshot, and per shard a delta or the whole shard.
        case plan(UpdatePlan)
    }

    /// The route from `installed` to the newest generation: after the roots, the update file
    /// from the installed generation when there is one that verifies (signed by the current
    /// root, unexpired, from exactly this generation), else the plan `make` gives. An update
    /// file that is missing, damaged, expired or from another base is passed over for the
    /// plan, which checks everything again; when a new root was found, the plan is taken.
    ///
    /// - Returns: `nil` if `installed` is already the newest generation.
    public static func route(
        trusting trusted: Root,
        installed: InstalledPublication,
        now: Int64,
        source: String = "the publication",
        fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
    ) throws -> Route? {
        try route(
            roots: try Roots(from: trusted, fetch: fetch),
            installed: installed,
            now: now,
            source: source,
            fetch: fetch
        )
    }

    /// ``route(trusting:installed:now:source:fetch:)`` after the roots were followed.
    static func route(
        roots: Roots,
        installed: InstalledPublication,
        now: Int64,
        source: String,
        fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
    ) throws -> Route? {
        if roots.files.isEmpty, installed.generation >= 1, !installed.shardDigests.isEmpty,
            let bytes = try? fetch(InlinePush.fileName(from: installed.generation), InlinePush.maximumFileBytes, true),
            let update = try? InlinePush(
                signed: bytes,
                trusting: roots.root,
                now: now,
                what: "\(source)/\(InlinePush.fileName(from: installed.generation))"
            ),
            update.from == installed.generation, update.shardCount == installed.shardDigests.count
        {
            return .updateFile(update, bytes: roots.bytes + Int64(bytes.count))
        }
        return try make(roots: roots, installed: installed, now: now, source: source, fetch: fetch).map(Route.plan)
    }

    static func make(
        roots: Roots,
        installed: InstalledPublication,
        now: Int64,
        source: String,
        fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
    ) throws -> UpdatePlan? {
        let root = roots.root
        var metadataBytes = roots.bytes
        try root.checkCurrent(now: now)
        guard let timestampBytes = try fetch("timestamp.json", 64 * 1024, false) else {
            throw UpdateError(
                .malformed,
                "\(source) has no timestamp.json: nothing has been published there, or it is not a publication (give the directory or URL that blocklist publish wrote)."
            )
        }
        metadataBytes += Int64(timestampBytes.count)
        let timestampPayload: [UInt8]
        do {
            timestampPayload = try SignedDocument(parsing: timestampBytes, what: "timestamp.json")
                .verifiedPayload(trusting: root, now: now, what: "timestamp.json")
        } catch {
            guard error.code == .badSignature else { throw error }
            throw UpdateError(
                .badSignature,
                "\(error.message) If the publisher rotated its key, \(source) may lack \(root.version + 1).root.json: the roots are uploaded before timestamp.json."
            )
        }
        let timestamp = try Timestamp(payload: timestampPayload, what: "timestamp.json")
        guard timestamp.expires > now else {
            throw UpdateError(
                .expired,
                "timestamp.json expired at \(TextEncodings.utcTime(timestamp.expires)) (it is now \(TextEncodings.utcTime(now))): the publication is frozen or stale; nothing was installed. The publisher renews it by running blocklist publish (daily)."
            )
        }
        guard timestamp.generation >= installed.generation else {
            throw UpdateError(
                .rollback,
                "\(source) offers generation \(timestamp.generation), older than generation \(installed.generation), which is installed; a rollback is refused. (A CDN may still serve an old timestamp.json for a minute: try again later. If it stays so, the app may ship its set as a generation the publication has not reached: installIfNeeded's generation, xcodegen --generation, must be the one blocklist publish gave that set.)"
            )
        }
        if timestamp.generation == installed.generation { return nil }
        let snapshotPath = timestamp.snapshot.path
        guard timestamp.snapshot.length <= Int64(SignedDocument.maximumBytes),
            let snapshotBytes = try fetch(snapshotPath, Int(timestamp.snapshot.length), false)
        else {
            throw UpdateError(
                .mismatch,
                "\(source)/\(snapshotPath), which timestamp.json names, is missing or over \(timestamp.snapshot.length) bytes: the host has the new timestamp.json but not its generation (upload the generation first, timestamp.json last)."
            )
        }
        metadataBytes += Int64(snapshotBytes.count)
        try timestamp.snapshot.check(snapshotBytes, what: snapshotPath)
        let snapshot = try Snapshot(
            payload: try SignedDocument(parsing: snapshotBytes, what: snapshotPath)
                .verifiedPayload(trusting: root, now: now, what: snapshotPath),
            what: snapshotPath
        )
        guard snapshot.generation == timestamp.generation else {
            throw UpdateError(
                .mismatch,
                "\(snapshotPath) is generation \(snapshot.generation), but timestamp.json says \(timestamp.generation)."
            )
        }
        guard snapshot.expires > now else {
            throw UpdateError(
                .expired,
                "\(snapshotPath) expired at \(TextEncodings.utcTime(snapshot.expires)) (it is now \(TextEncodings.utcTime(now))); the publisher renews it by running blocklist publish."
            )
        }
        var steps: [Step] = []
        for shard in snapshot.shards {
            let position = shard.index - 1
            if position < installed.shardDigests.count, installed.shardDigests[position] == shard.digest {
                steps.append(.keep)
            } else if position < installed.shardDigests.count,
                let delta = snapshot.deltas.first(where: {
                    $0.from == installed.generation && $0.index == shard.index
                        && $0.base == installed.shardDigests[position]
                })
            {
                steps.append(.delta(delta))
            } else {
                steps.append(.full(shard))
            }
        }
        return UpdatePlan(
            root: root,
            rootFiles: roots.files,
            timestamp: timestamp,
            snapshot: snapshot,
            steps: steps,
            metadataBytes: metadataBytes
        )
    }
}
