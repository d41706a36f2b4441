import BlocklistCore
import BlocklistSystem
import Crypto
internal import LibC
import SetReading
import SetStorage
import UpdateCore

/// Publishes a generated set as static files any HTTP server or CDN can serve
/// (`blocklist publish`; docs/USAGE.md, "Publishing"):
///
/// ```
/// PUBDIR/timestamp.json            short-lived, re-signed on every publish; names the snapshot
/// PUBDIR/root.json, 1.root.json    the trust root (and each rotation)
/// PUBDIR/<N>/snapshot.json         generation N: every file, its length and SHA-256
/// PUBDIR/<N>/shard-07.blk          the full shards of generation N
/// PUBDIR/<N>/from-<M>/shard-07.delta   deltas from generation M, for shards that changed
/// ```
///
/// A generation's directory is written aside (`.staging-N`), synced and renamed into place;
/// then `timestamp.json` is replaced by rename, which is the commit. A reader sees the old
/// publication or the new one, never a mix: every file it reads is named by the timestamp it read.
package enum Publisher {
    /// What a publish did.
    package struct Outcome: Sendable {
        package var generation: UInt64
        /// Whether a new generation was written (else the set was unchanged and only the timestamp was re-signed).
        package var published: Bool
        package var changedShards: [Int]
        package var deltas: Int
        package var deltaBytes: Int64
        package var bytesWritten: Int64
        package var removedGenerations: [UInt64]
        /// Why a new generation was written although the set is unchanged (a damaged or
        /// wrongly signed generation, a snapshot past half its lifetime); empty otherwise.
        package var resigned: [String]
        /// The generations that have an update file (`from-M.push`) to this one.
        package var updateFiles: [UInt64] = []
        /// Why the publication's page (`index.html`) was not written; `nil` when it was.
        package var pageProblem: String? = nil
        /// Whether this is the publication's first generation (nothing before it to change from).
        package var first = false
    }

    package static let timestampName = "timestamp.json"
    package static let lockName = ".publish.lock"

    /// Publishes the set committed in `setDirectory`.
    ///
    /// Before anything is written: the set is verified as `blocklist verify` verifies it, and
    /// the key is checked against the roots PUBDIR already publishes (`checkKey`). Then a new
    /// generation is written when the set changed, when the current generation does not verify
    /// under the newest root (a damaged file, or a wrong publish made with an older version),
    /// or when its snapshot has less than half of `snapshotLifetime` left; otherwise only
    /// `timestamp.json` is re-signed. Either way the timestamp is fresh for `timestampLifetime`.
    ///
    /// - Parameters:
    ///   - root: the bytes of `root.json` in the key's directory, if it has one; `rootPath`
    ///     names it in sentences.
    ///   - generationRecord: a file beside the key (`last-generation`) holding the highest
    ///     generation this key directory published anywhere: a new generation is numbered above
    ///     it, so that a PUBDIR restored from a backup, or a second copy, never reuses a number
    ///     phones already hold with other content.
    ///   - keep: how many earlier generations get deltas (and stay published). The generation
    ///     before the new one always stays until the next publish, so that a phone that read
    ///     the old timestamp still finds every file it names (also with `keep` 0).
    ///   - timestampLifetime: seconds a timestamp is valid (default 1 day).
    ///   - snapshotLifetime: seconds a snapshot is valid (default 30 days).
    /// - Throws: `UpdateError` naming the mistake and the command that fixes it; nothing is
    ///   written in PUBDIR when the set or the key is refused.
    package static func publish(
        setDirectory: String,
        signingKey: Curve25519.Signing.PrivateKey,
        root rootBytes: [UInt8]?,
        rootPath: String = "root.json",
        generationRecord: String? = nil,
        to publication: String,
        keep: Int,
        now: Int64,
        timestampLifetime: Int64 = 86_400,
        snapshotLifetime: Int64 = 30 * 86_400
    ) throws -> Outcome {
        precondition(keep >= 0)
        // The set, verified as `blocklist verify` verifies it, before anything is signed.
        let verification = ShardSet.verify(setDirectory)
        guard verification.isValid else {
            let problems = verification.problems.prefix(3).map(\.message).joined(separator: " ")
            throw UpdateError(
                .malformed,
                "The set in \(setDirectory) does not verify, so nothing was published: \(problems) Run blocklist generate again (blocklist verify \(setDirectory) lists every problem)."
            )
        }
        let manifestPath = setDirectory + "/" + Manifest.fileName
        // The set's one manifest reader (the set was verified above through it); the spec goes
        // into the snapshot as the JSON it is.
        let manifestBytes = try FileSystem.readFile(manifestPath, limit: 16 << 20)
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(manifestBytes, path: manifestPath)
            try manifest.validate(path: manifestPath)
        } catch {
            throw UpdateError(.malformed, error.message)
        }
        guard case .object(let members) = try JSONValue(parsing: manifestBytes, what: manifestPath),
            case .object(var specFields)? = members["spec"]
        else {
            throw UpdateError(.malformed, "\(manifestPath) is not a blocklist set manifest.")
        }
        // The list files' paths are the publisher's: they would leak them, and a phone's `verify`
        // would look for them there.
        specFields["inputs"] = nil
        let spec = JSONValue.object(specFields)
        let shardPaths = manifest.shards.map { manifest.path(of: $0, in: setDirectory) }
        let contents = try shardPaths.map { path throws(UpdateError) in try ShardContent(shardAt: path) }
        let digests = contents.map(\.digest)

        // The key, against the roots already published: read only, before PUBDIR is touched.
        let existingKind = try FileSystem.kind(publication)
        guard existingKind == .missing || existingKind == .directory else {
            throw UpdateError(.malformed, "\(publication) is not a directory.")
        }
        let published = existingKind == .missing ? [] : try publishedRoots(try DirectoryHandle(path: publication))
        let trust = try checkKey(
            signingKey,
            keyRoot: rootBytes,
            keyRootPath: rootPath,
            published: published,
            publication: publication,
            now: now
        )

        // Someone else's directory is refused before the lock file is made in it.
        if existingKind == .directory { try refuseForeign(try DirectoryHandle(path: publication), publication) }
        let recorded = try generationRecord.map(readGenerationRecord) ?? 0
        if existingKind == .missing {
            _ = try FileSystem.makeDirectory(publication)
            try makeReadable(publication, directory: true)
        }
        let directory = try DirectoryHandle(path: publication)
        let lock = try directory.lock(
            lockName,
            exclusive: true,
            what: "The publication \(publication)",
            patienceMilliseconds: 250
        )
        defer { lock.unlock() }
        try refuseForeign(directory, publication)
        // What a killed publish left: staging directories and temporary files, each proved ours
        // by the marker publish writes first (we hold the lock: no publish is running).
        try removeLeftovers(directory)
        // The roots again, under the lock: another publish may have added one meanwhile.
        guard try publishedRoots(directory).count == published.count else {
            throw UpdateError(
                .malformed,
                "Another publish changed the roots of \(publication) meanwhile; run it again."
            )
        }
        if let add = trust.add {
            try writeAtomically(directory, "\(add.root.version).root.json", add.bytes)
            try writeAtomically(directory, "root.json", add.bytes)
        }
        let root = trust.root

        // The current publication, and whether it still holds as a phone would check it.
        let previous = try currentSnapshot(directory)
        let existing = try directory.entries().compactMap { UInt64($0) }.sorted()
        var reasons: [String] = []
        if let previous {
            if recorded > previous.generation {
                reasons.append(
                    "this key directory published generation \(recorded) before (\(generationRecord ?? "")), and \(publication) is at \(previous.generation): it was restored from a backup or copied, and phones may hold a newer generation"
                )
            } else if let problem = soundnessProblem(directory, generation: previous.generation, root: root, now: now) {
                reasons.append(problem)
            } else if previous.expires - now < snapshotLifetime / 2 {
                reasons.append(
                    "the snapshot of generation \(previous.generation) expires at \(previous.expires), within half of --snapshot-lifetime"
                )
            }
        }
        if let previous, previous.shards.map(\.digest) == digests, previous.spec == spec, reasons.isEmpty {
            // Unchanged: only a fresh timestamp and update files, so phones do not see a frozen
            // publication.
            let updateFiles = try writeUpdateFiles(
                directory,
                snapshot: previous,
                from: Array(existing.filter { $0 < previous.generation }.suffix(keep)),
                signingKey: signingKey,
                expires: min(now + timestampLifetime, previous.expires)
            )
            // A timestamp never outlives the snapshot it names: phones refuse that snapshot once
            // it expires, whatever the timestamp says.
            try writeTimestamp(
                directory,
                generation: previous.generation,
                signingKey: signingKey,
                expires: min(now + timestampLifetime, previous.expires)
            )
            return Outcome(
                generation: previous.generation,
                published: false,
                changedShards: [],
                deltas: 0,
                deltaBytes: 0,
                bytesWritten: 0,
                removedGenerations: [],
                resigned: [],
                updateFiles: updateFiles,
                pageProblem: writePage(directory, publication, now: now)
            )
        }
        let generation = max(existing.last ?? 0, previous?.generation ?? 0, recorded) + 1
        let staging = ".staging-\(generation)"
        try directory.makeDirectory(staging)
        try makeReadable(directory.path(of: staging), directory: true)
        var committed = false
        defer { if !committed { try? removeGeneration(directory, staging) } }
        let stage = try directory.openDirectory(staging)
        try FileSystem.writeNewFile(stage.path(of: markerName), markerContent, sync: true)
        var written: Int64 = 0
        var shards: [Snapshot.Shard] = []
        for (offset, path) in shardPaths.enumerated() {
            let name = "shard-\(pad(offset + 1)).blk"
            let bytes = try FileSystem.readFile(path, limit: 1 << 30)
            try FileSystem.writeNewFile(stage.path(of: name), bytes, sync: true)
            try makeReadable(stage.path(of: name), directory: false)
            written += Int64(bytes.count)
            shards.append(
                Snapshot.Shard(
                    index: offset + 1,
                    digest: digests[offset],
                    entries: Int64(contents[offset].blocking.reduce(0) { $0 + $1.count })
                        + Int64(contents[offset].identification.reduce(0) { $0 + $1.run.count }),
                    file: FileInfo(
                        path: "\(generation)/\(name)",
                        length: Int64(bytes.count),
                        sha256: Array(SHA256.hash(data: bytes))
                    )
                )
            )
        }
        // Deltas from each kept generation that still verifies (a damaged one is no base).
        var deltas: [Snapshot.Delta] = []
        var deltaBytes: Int64 = 0
        for from in existing.suffix(keep) {
            guard let old = try? snapshot(directory, generation: from) else { continue }
            let fromDirectory = "from-\(from)"
            var made = false
            for (offset, content) in contents.enumerated() where offset < old.shards.count {
                let oldShard = old.shards[offset]
                if oldShard.digest == digests[offset] { continue }
                // A damaged base would make a delta no phone can apply: only a base that still
                // has its published digest.
                guard let oldContent = try? ShardContent(shardAt: publication + "/" + oldShard.file.path),
                    oldContent.digest == oldShard.digest, oldContent.index == content.index
                else { continue }
                let (payload, _) = ShardDelta.payload(from: oldContent, to: content)
                guard payload.count <= ShardDelta.maximumPayloadBytes else { continue }
                let file = try DeltaFile.encode(payload: payload, index: offset + 1, from: from, to: generation)
                // Never larger than the full shard: then the full shard is served.
                guard Int64(file.count) < shards[offset].file.length else { continue }
                if !made {
                    try stage.makeDirectory(fromDirectory)
                    try makeReadable(stage.path(of: fromDirectory), directory: true)
                    made = true
                }
                let name = "shard-\(pad(offset + 1)).delta"
                try FileSystem.writeNewFile(stage.path(of: fromDirectory + "/" + name), file, sync: true)
                try makeReadable(stage.path(of: fromDirectory + "/" + name), directory: false)
                written += Int64(file.count)
                deltaBytes += from == existing.last ? Int64(file.count) : 0
                deltas.append(
                    Snapshot.Delta(
                        from: from,
                        index: offset + 1,
                        base: oldShard.digest,
                        file: FileInfo(
                            path: "\(generation)/\(fromDirectory)/\(name)",
                            length: Int64(file.count),
                            sha256: Array(SHA256.hash(data: file))
                        )
                    )
                )
            }
            if made { try (try stage.openDirectory(fromDirectory)).sync() }
        }
        // What changed since the previous generation, whether or not deltas were made (--keep 0).
        let changed = digests.indices.filter { offset in
            guard let previous, offset < previous.shards.count else { return true }
            return previous.shards[offset].digest != digests[offset]
        }.map { $0 + 1 }
        var snapshot = Snapshot(
            generation: generation,
            expires: now + snapshotLifetime,
            spec: spec,
            shards: shards,
            deltas: deltas
        )
        var snapshotBytes = try SignedDocument.sign(snapshot.payload, with: [signingKey])
        // A snapshot is at most what a phone reads (4 MiB): past it, the deltas from the oldest
        // generations go first (their files too); phones behind that far download whole shards.
        while snapshotBytes.count > SignedDocument.maximumBytes, let oldest = snapshot.deltas.map(\.from).min() {
            let dropped = snapshot.deltas.filter { $0.from == oldest }
            snapshot.deltas.removeAll { $0.from == oldest }
            let fromDirectory = try stage.openDirectory("from-\(oldest)")
            for delta in dropped {
                let name = String(delta.file.path.split(separator: "/").last ?? "")
                try fromDirectory.removeRegularFile(name)
                written -= delta.file.length
                if oldest == existing.last { deltaBytes -= delta.file.length }
            }
            try stage.removeEmptyDirectory("from-\(oldest)")
            snapshotBytes = try SignedDocument.sign(snapshot.payload, with: [signingKey])
        }
        guard snapshotBytes.count <= SignedDocument.maximumBytes else {
            throw UpdateError(
                .limitExceeded,
                "The snapshot of \(shards.count) shards would be \(snapshotBytes.count) bytes, over the \(SignedDocument.maximumBytes) a phone reads; nothing was published. Generate the set with fewer shards (a larger --range-size)."
            )
        }
        deltas = snapshot.deltas
        try FileSystem.writeNewFile(stage.path(of: "snapshot.json"), snapshotBytes, sync: true)
        try makeReadable(stage.path(of: "snapshot.json"), directory: false)
        written += Int64(snapshotBytes.count)
        try stage.sync()
        try directory.rename(staging, to: String(generation))
        committed = true
        try directory.sync()
        try? (try directory.openDirectory(String(generation))).removeRegularFile(markerName)
        let updateFiles = try writeUpdateFiles(
            directory,
            snapshot: snapshot,
            from: Array(existing.suffix(keep)),
            signingKey: signingKey,
            expires: min(now + timestampLifetime, snapshot.expires)
        )
        try writeTimestamp(
            directory,
            generation: generation,
            signingKey: signingKey,
            expires: min(now + timestampLifetime, snapshot.expires)
        )
        if let generationRecord { try writeGenerationRecord(generationRecord, generation) }

        // Generations past `keep` are no longer a base for deltas: remove them (only what we
        // wrote). The one before the new generation stays until the next publish: phones that
        // read the old timestamp are still fetching what it names.
        var removed: [UInt64] = []
        for old in existing.dropLast(max(keep, 1)) {
            if (try? removeGeneration(directory, String(old))) != nil { removed.append(old) }
        }
        return Outcome(
            generation: generation,
            published: true,
            changedShards: changed,
            deltas: deltas.filter { $0.from == existing.last }.count,
            deltaBytes: deltaBytes,
            bytesWritten: written,
            removedGenerations: removed,
            resigned: reasons,
            updateFiles: updateFiles,
            pageProblem: writePage(directory, publication, now: now),
            first: previous == nil
        )
    }

    /// The roots PUBDIR publishes, `1.root.json` up to the newest, each checked against the one
    /// before (version 1 against itself), with their bytes.
    ///
    /// - Throws: `.malformed` if a version is missing in between, or a root does not follow
    ///   from the one before: the publication is broken, and the sentence says which file.
    package static func publishedRoots(_ directory: DirectoryHandle) throws -> [(root: Root, bytes: [UInt8])] {
        let versions = try directory.entries().compactMap { name -> Int64? in
            guard name.hasSuffix(".root.json"), !name.hasPrefix(".") else { return nil }
            return Int64(name.dropLast(".root.json".count))
        }.sorted()
        var roots: [(root: Root, bytes: [UInt8])] = []
        for (offset, version) in versions.enumerated() {
            let name = "\(version).root.json"
            guard version == Int64(offset + 1) else {
                throw UpdateError(
                    .malformed,
                    "\(directory.path(of: name)) is published, but \(offset + 1).root.json is not: the chain of roots is broken, and apps cannot follow it."
                )
            }
            let bytes = try directory.readFile(name, limit: SignedDocument.maximumBytes)
            let root =
                try roots.last.map { try $0.root.next(bytes, what: directory.path(of: name)) }
                ?? Root.trusted(bytes, what: directory.path(of: name))
            roots.append((root, bytes))
        }
        return roots
    }

    /// What a key may publish: the root to trust (the newest published, or the key
    /// directory's root that extends the chain by one version) and the root to add, if any.
    ///
    /// - Throws: `.badSignature`, `.expired` or `.malformed`, naming the mistake (another
    ///   publisher's key, a retired key, a rotation whose predecessor is not published, a second
    ///   root of a published version, an expired root) and the command that fixes it.
    package static func checkKey(
        _ signingKey: Curve25519.Signing.PrivateKey,
        keyRoot keyRootBytes: [UInt8]?,
        keyRootPath: String,
        published: [(root: Root, bytes: [UInt8])],
        publication: String,
        now: Int64
    ) throws -> (root: Root, add: (root: Root, bytes: [UInt8])?) {
        let keyID = Keys.keyID(of: signingKey.publicKey)
        let newest = published.last
        var root: Root
        var add: (root: Root, bytes: [UInt8])?
        if let keyRootBytes {
            let keyRoot = try Root.trusted(keyRootBytes, what: keyRootPath)
            guard keyRoot.keys[keyID] != nil else {
                throw UpdateError(
                    .badSignature,
                    "The signing key is not one of the keys of \(keyRootPath), the root beside it: the key directory is mixed up. Publish with the signing.key that keys create or keys rotate wrote beside that root.json."
                )
            }
            if let newest {
                let version = newest.root.version
                if keyRoot.version == version {
                    guard keyRoot.payload == newest.root.payload else {
                        throw UpdateError(
                            .badSignature,
                            "\(keyRootPath) is a different root version \(version) from the one \(publication) publishes: this key belongs to another publisher (or was made again with keys create), and every phone would refuse what it signs. Publish with the key directory that published \(publication), or to a new publication."
                        )
                    }
                    root = newest.root
                } else if keyRoot.version == version + 1 {
                    do {
                        root = try newest.root.next(keyRootBytes, what: keyRootPath)
                    } catch {
                        throw UpdateError(
                            .badSignature,
                            "\(keyRootPath) is root version \(keyRoot.version), but the keys of root version \(version), which \(publication) publishes, did not sign it: it is another publisher's rotation. Run blocklist keys rotate with the key directory of root version \(version), and publish with the new directory."
                        )
                    }
                    add = (root, keyRootBytes)
                } else if keyRoot.version > version + 1 {
                    throw UpdateError(
                        .malformed,
                        "\(keyRootPath) is root version \(keyRoot.version), but \(publication) publishes versions up to \(version): apps could not follow the rotations in between. Publish once with the key directory of each root version from \(version + 1) to \(keyRoot.version - 1) first, in order."
                    )
                } else {
                    throw UpdateError(
                        .badSignature,
                        "\(keyRootPath) is root version \(keyRoot.version), which root version \(version) published in \(publication) replaced: this key was rotated out, and phones that followed the rotation refuse it. Publish with the key directory of root version \(version) (the one keys rotate wrote)."
                    )
                }
            } else {
                guard keyRoot.version == 1 else {
                    throw UpdateError(
                        .malformed,
                        "\(keyRootPath) is root version \(keyRoot.version), and \(publication) publishes no root yet: apps that ship version 1 could not follow it. Publish first with the key directory of root version 1, then with each rotation in order."
                    )
                }
                root = keyRoot
                add = (keyRoot, keyRootBytes)
            }
        } else {
            guard let newest else {
                throw UpdateError(
                    .malformed,
                    "There is no root.json beside the signing key (\(keyRootPath)), and \(publication) publishes no root: apps would have nothing to trust. Publish with the key directory keys create wrote."
                )
            }
            root = newest.root
        }
        guard root.keys[keyID] != nil else {
            throw UpdateError(
                .badSignature,
                "The signing key is not one of the keys of root version \(root.version), which \(publication) publishes: it is another publisher's key or a retired one, and every phone would refuse what it signs. Publish with the key directory of root version \(root.version)."
            )
        }
        guard root.expires > now else {
            throw UpdateError(
                .expired,
                "Root version \(root.version) expired at \(PublicationStatus.formatTime(root.expires)), so phones refuse everything it signs. Run blocklist keys rotate KEYDIR NEWDIR and publish with NEWDIR/signing.key: the new root, signed by the old key, takes over."
            )
        }
        return (root, add)
    }

    /// Why generation `generation` does not hold as a phone would check it, or `nil` if it
    /// does: its snapshot signed by `root`'s keys and unexpired at `now`, every file it names of
    /// the length and SHA-256 it gives.
    static func soundnessProblem(_ directory: DirectoryHandle, generation: UInt64, root: Root, now: Int64)
        -> String?
    {
        let path = "\(generation)/snapshot.json"
        do {
            let document = try SignedDocument(
                parsing: try directory.readFile(path, limit: SignedDocument.maximumBytes),
                what: path
            )
            let payload = try document.verifiedPayload(trusting: root, what: path)
            let snapshot = try Snapshot(payload: payload, what: path)
            guard snapshot.expires > now else { return "the snapshot of generation \(generation) has expired" }
            for shard in snapshot.shards {
                try shard.file.check(
                    try directory.readFile(shard.file.path, limit: Int(shard.file.length) + 1),
                    what: directory.path(of: shard.file.path)
                )
            }
            for delta in snapshot.deltas {
                try delta.file.check(
                    try directory.readFile(delta.file.path, limit: Int(delta.file.length) + 1),
                    what: directory.path(of: delta.file.path)
                )
            }
            return nil
        } catch {
            return "generation \(generation) does not verify (\(error))"
        }
    }

    /// The snapshot the current timestamp names, if any (the publisher trusts its own files).
    package static func currentSnapshot(_ directory: DirectoryHandle) throws -> Snapshot? {
        guard try directory.kind(of: timestampName) != .missing else { return nil }
        return try current(directory).snapshot
    }

    /// The current timestamp and the snapshot it names.
    ///
    /// - Throws: if the publication has none yet ("run blocklist publish first"), or its files
    ///   cannot be read.
    package static func current(_ directory: DirectoryHandle) throws -> (timestamp: Timestamp, snapshot: Snapshot) {
        guard try directory.kind(of: timestampName) != .missing else {
            throw UpdateError(.malformed, "\(directory.path) holds no publication yet; run blocklist publish first.")
        }
        let timestamp = try Timestamp(
            payload: try SignedDocument(
                parsing: try directory.readFile(timestampName, limit: 64 * 1024),
                what: timestampName
            ).payload,
            what: timestampName
        )
        return (timestamp, try snapshot(directory, generation: timestamp.generation))
    }

    static func snapshot(_ directory: DirectoryHandle, generation: UInt64) throws -> Snapshot {
        let path = "\(generation)/snapshot.json"
        return try Snapshot(
            payload: try SignedDocument(
                parsing: try directory.readFile(path, limit: SignedDocument.maximumBytes),
                what: path
            ).payload,
            what: path
        )
    }

    static func writeTimestamp(
        _ directory: DirectoryHandle,
        generation: UInt64,
        signingKey: Curve25519.Signing.PrivateKey,
        expires: Int64
    ) throws {
        let path = "\(generation)/snapshot.json"
        let bytes = try directory.readFile(path, limit: SignedDocument.maximumBytes)
        let timestamp = Timestamp(
            generation: generation,
            expires: expires,
            snapshot: FileInfo(path: path, length: Int64(bytes.count), sha256: Array(SHA256.hash(data: bytes)))
        )
        try writeAtomically(directory, timestampName, try SignedDocument.sign(timestamp.payload, with: [signingKey]))
    }

    /// What ``update(_:to:from:expires:)`` found.
    package enum Update {
        /// The update, every changed shard by its delta.
        case update(InlinePush)
        /// Generation `from` is not published (or its snapshot cannot be read), or has another shard count.
        case noBase
        /// A changed shard has no delta from `from` that can be made, or the deltas are over
        /// `InlinePush.maximumFileBytes`.
        case noDelta
    }

    /// The update from generation `from` to `snapshot`'s, unsigned: the deltas `snapshot` lists
    /// from `from`, the set digest, the spec if it changed. What an inline push carries and what
    /// an update file (`from-M.push`) holds.
    package static func update(_ directory: DirectoryHandle, to snapshot: Snapshot, from: UInt64, expires: Int64)
        throws -> Update
    {
        guard from >= 1, from < snapshot.generation, let previous = try? self.snapshot(directory, generation: from),
            previous.shards.count == snapshot.shards.count
        else { return .noBase }
        var deltas: [[UInt8]] = []
        var size = 0
        for shard in snapshot.shards where previous.shards[shard.index - 1].digest != shard.digest {
            if let delta = snapshot.deltas.first(where: { $0.from == from && $0.index == shard.index }) {
                let bytes = try directory.readFile(delta.file.path, limit: Int(delta.file.length))
                deltas.append(try DeltaFile.decode(bytes, what: delta.file.path).payload)
            } else {
                // No delta file (it would have been larger than the shard): made from the two
                // shards, which both generations still publish.
                let old = previous.shards[shard.index - 1]
                guard let base = try? ShardContent(shardAt: directory.path(of: old.file.path)),
                    let result = try? ShardContent(shardAt: directory.path(of: shard.file.path)),
                    base.digest == old.digest, result.digest == shard.digest
                else { return .noDelta }
                let (payload, _) = ShardDelta.payload(from: base, to: result)
                // At most the shard itself and 16 KiB (two round trips saved are worth about
                // that on a slow network): beyond it the snapshot's way is cheaper (found by the
                // field test: a 156 KB update file for a change that left a 150-byte shard).
                guard payload.count <= ShardDelta.maximumPayloadBytes,
                    Int64(payload.count) <= shard.file.length + Self.updateFileSlack
                else { return .noDelta }
                deltas.append(payload)
            }
            size += deltas[deltas.count - 1].count
            // Past what any push or update file holds: the snapshot's way.
            guard size <= InlinePush.maximumFileBytes else { return .noDelta }
        }
        return .update(
            InlinePush(
                from: from,
                to: snapshot.generation,
                expires: expires,
                setDigest: Snapshot.setDigest(snapshot.shards.map(\.digest)),
                shardCount: snapshot.shards.count,
                spec: previous.spec == snapshot.spec ? nil : snapshot.spec.canonicalBytes,
                deltas: deltas
            )
        )
    }

    /// How many bytes more than a changed shard an update file may spend on its delta when the
    /// shard has no delta file: one file instead of the timestamp, the snapshot and the shard.
    static let updateFileSlack: Int64 = 16 * 1024

    /// Signs the update files anew: `from-M.push` for each generation M of `bases` (the kept
    /// generations, those deltas are made from) whose changes can all be carried as deltas, in
    /// at most `InlinePush.maximumFileBytes`, valid
    /// until `expires` (the timestamp's expiry, or the snapshot's if sooner). A phone holding M
    /// reads that one file instead of the timestamp, the snapshot and the deltas. Update files
    /// of generations that no longer qualify are removed.
    ///
    /// - Returns: the generations that have one.
    static func writeUpdateFiles(
        _ directory: DirectoryHandle,
        snapshot: Snapshot,
        from bases: [UInt64],
        signingKey: Curve25519.Signing.PrivateKey,
        expires: Int64
    ) throws -> [UInt64] {
        var written: [UInt64] = []
        for from in bases.sorted() where from < snapshot.generation {
            guard
                case .update(let update) = try self.update(
                    directory,
                    to: snapshot,
                    from: from,
                    expires: min(expires, snapshot.expires)
                )
            else { continue }
            let bytes = try update.signed(with: [signingKey])
            guard bytes.count <= InlinePush.maximumFileBytes else { continue }
            try writeAtomically(directory, InlinePush.fileName(from: from), bytes)
            written.append(from)
        }
        // Only a regular file (never a symlink) of publish's name that starts as publish writes
        // one, in a directory that holds only what publish writes (`refuseForeign`, under the lock).
        for name in try directory.entries() where isUpdateFile(name) {
            guard !written.contains(where: { InlinePush.fileName(from: $0) == name }),
                try directory.kind(of: name) == .file,
                (try? directory.readFile(name, limit: 8, prefix: InlinePush.magic.count)) == InlinePush.magic
            else { continue }
            try directory.removeRegularFile(name)
        }
        return written
    }

    /// Whether `name` is an update file's name, `from-M.push`.
    static func isUpdateFile(_ name: String) -> Bool {
        name.hasPrefix("from-") && name.hasSuffix(".push")
            && UInt64(name.dropFirst(5).dropLast(5)).map { InlinePush.fileName(from: $0) == name } == true
    }

    /// The marker publish writes first into each directory it writes aside (`.staging-N`,
    /// `.publish-tmp`): what proves to a later run that the directory, and the files in it
    /// named as publish names them, are publish's own.
    static let markerName = ".blocklist-publish"
    static let markerContent = Array("blocklist publish\n".utf8)
    /// Where single files (the timestamp, roots) are written before their rename into place.
    static let temporaryDirectoryName = ".publish-tmp"

    /// Writes `name` aside (in `.publish-tmp`, marked) and renames it into place.
    static func writeAtomically(_ directory: DirectoryHandle, _ name: String, _ bytes: [UInt8]) throws {
        if try directory.kind(of: temporaryDirectoryName) == .missing {
            try directory.makeDirectory(temporaryDirectoryName)
        }
        let temporary = try directory.openDirectory(temporaryDirectoryName)
        if try temporary.kind(of: markerName) == .missing {
            try FileSystem.writeNewFile(temporary.path(of: markerName), markerContent, sync: true)
        }
        let aside = name + ".tmp"
        if try temporary.kind(of: aside) != .missing { try temporary.removeRegularFile(aside) }
        try FileSystem.writeNewFile(temporary.path(of: aside), bytes, sync: true)
        try makeReadable(temporary.path(of: aside), directory: false)
        try temporary.rename(aside, to: name, in: directory)
        try directory.sync()
    }

    /// Whether `path` (relative, `/`-separated) names a file publish writes to be served:
    /// `timestamp.json`, `root.json`, `N.root.json`, `from-M.push`, `N/snapshot.json`, `N/shard-*.blk`,
    /// `N/from-M/shard-*.delta` for phones, and `index.html` for people. A server serves these and nothing else, whatever else sits in
    /// the directory (a key copied there by mistake, notes, a backup).
    package static func isPublishedFile(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        func isGeneration(_ part: Substring) -> Bool {
            !part.isEmpty && part.allSatisfy(\.isASCII) && UInt64(part) != nil
        }
        func isNamed(_ part: Substring, _ prefix: String, _ suffix: String) -> Bool {
            part.hasPrefix(prefix) && part.hasSuffix(suffix) && part.count > prefix.count + suffix.count
                && UInt64(part.dropFirst(prefix.count).dropLast(suffix.count)) != nil
        }
        switch parts.count {
        case 1:
            return parts[0] == Substring(timestampName) || parts[0] == "root.json"
                || parts[0] == Substring(PublicationPage.fileName)
                || (parts[0].hasSuffix(".root.json") && isGeneration(parts[0].dropLast(".root.json".count)))
                || isUpdateFile(String(parts[0]))
        case 2:
            return isGeneration(parts[0]) && (parts[1] == "snapshot.json" || isNamed(parts[1], "shard-", ".blk"))
        case 3:
            return isGeneration(parts[0]) && parts[1].hasPrefix("from-") && isGeneration(parts[1].dropFirst(5))
                && isNamed(parts[2], "shard-", ".delta")
        default:
            return false
        }
    }

    /// The name of the generation record beside the signing key.
    package static let generationRecordName = "last-generation"

    /// The highest generation the record at `path` holds; 0 if there is none.
    static func readGenerationRecord(_ path: String) throws -> UInt64 {
        guard try FileSystem.kind(path, followingSymlinks: false) != .missing else { return 0 }
        let text = String(decoding: try FileSystem.readFile(path, limit: 64), as: UTF8.self)
        guard let value = UInt64(text.prefix { $0 != "\n" }) else {
            throw UpdateError(
                .malformed,
                "\(path) is not a generation record (one whole number): publish wrote it; if it was edited, put back the highest generation published with this key."
            )
        }
        return value
    }

    /// Records `generation` at `path` (written aside, renamed), if it is higher than what is there.
    static func writeGenerationRecord(_ path: String, _ generation: UInt64) throws {
        guard try readGenerationRecord(path) < generation else { return }
        // Aside under a name of this process's own (created exclusively: nothing is removed or
        // overwritten in the key directory but the record itself, by the rename).
        let aside = siblingFile(of: path, named: ".last-generation.\(getpid()).tmp")
        try FileSystem.writeNewFile(aside, Array("\(generation)\n".utf8), sync: true)
        try FileSystem.rename(aside, to: path)
    }

    /// Gives a file 0644 and a directory 0755 whatever the umask: a publication is public, and a
    /// web server running as another user must read it.
    static func makeReadable(_ path: String, directory: Bool) throws {
        guard chmod(path, directory ? 0o755 : 0o644) == 0 else {
            throw UpdateError(
                .malformed,
                "Making \(path) readable by a web server failed: \(String(cString: strerror(errno)))."
            )
        }
    }

    /// Refuses a directory that holds anything publish did not write (a key directory, a set).
    static func refuseForeign(_ directory: DirectoryHandle, _ publication: String) throws {
        // The directories people give by mistake, named as what they are: a generation of a
        // publication (PUBDIR/N), a set, a key directory.
        var trimmed = Substring(publication)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let slash = trimmed.lastIndex(of: "/")
        let last = slash.map { trimmed[trimmed.index(after: $0)...] } ?? trimmed
        let parent = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        if !last.isEmpty, last.allSatisfy({ ("0"..."9").contains($0) }),
            (try? FileSystem.kind(parent + "/" + timestampName)) == .file
        {
            throw UpdateError(
                .malformed,
                "\(publication) is generation \(last) of the publication \(parent): give --to \(parent), where publish adds the next generation; nothing was written."
            )
        }
        if (try? directory.kind(of: Manifest.fileName)) == .file {
            throw UpdateError(
                .malformed,
                "\(publication) is a shard set (it holds \(Manifest.fileName)), the SETDIR publish reads: give --to a directory of its own for the publication, such as pub; nothing was written."
            )
        }
        if (try? directory.kind(of: "signing.key")) == .file {
            throw UpdateError(
                .malformed,
                "\(publication) is a key directory (it holds signing.key), which must stay private: give --to a directory of its own for the publication, such as pub; nothing was written."
            )
        }
        for name in try directory.entries() {
            let isDirectory = try directory.kind(of: name) == .directory
            if isOurs(name), !name.hasPrefix(".staging-") || isDirectory { continue }
            // The page: publish's own, or, in a publication publish has committed, one put in
            // its place by hand (left as it is, with a warning, by `writePage`).
            if name == PublicationPage.fileName,
                isOurPage(directory) || (try? directory.kind(of: timestampName)) == .file
            {
                continue
            }
            throw UpdateError(
                .malformed,
                "\(publication) holds \(name), which blocklist publish did not write; give an empty or new directory (or move \(name) away)."
            )
        }
    }

    /// Whether `name` is something publish writes in a publication directory.
    static func isOurs(_ name: String) -> Bool {
        name == timestampName || name == lockName || name == "root.json" || name.hasSuffix(".root.json")
            || UInt64(name) != nil || name.hasPrefix(".staging-") || name == temporaryDirectoryName
            || (name.hasPrefix(".") && name.hasSuffix(".tmp")) || isUpdateFile(name)
    }

    /// Whether `directory`'s `index.html` is a page publish wrote (it starts with
    /// `PublicationPage.signature`), never following a symlink.
    static func isOurPage(_ directory: DirectoryHandle) -> Bool {
        let signature = Array(PublicationPage.signature.utf8)
        guard (try? directory.kind(of: PublicationPage.fileName)) == .file,
            let head = try? directory.readFile(
                PublicationPage.fileName,
                limit: signature.count,
                prefix: signature.count
            )
        else { return false }
        return head == signature
    }

    /// Writes the publication's page, `index.html` (`PublicationPage`), from what `directory`
    /// now holds. The publication is committed before: a page that cannot be written is a
    /// warning, never a failed publish, and an `index.html` publish did not write stays.
    ///
    /// - Returns: why there is no new page, or `nil`.
    static func writePage(_ directory: DirectoryHandle, _ publication: String, now: Int64) -> String? {
        do {
            if try directory.kind(of: PublicationPage.fileName) != .missing, !isOurPage(directory) {
                return
                    "\(publication)/\(PublicationPage.fileName) was not written by blocklist publish, so it was left as it is and the publication's page was not written; move it away to get the page"
            }
            let status = try PublicationStatus.read(directory, name: publication)
            try writeAtomically(directory, PublicationPage.fileName, PublicationPage.render(status, now: now))
            return nil
        } catch {
            return
                "the publication's page \(publication)/\(PublicationPage.fileName) was not written (\(error)); the publication itself is complete"
        }
    }

    /// Whether `name` in `directory` is a directory that holds publish's marker (never
    /// following a symlink).
    static func isMarked(_ directory: DirectoryHandle, _ name: String) -> Bool {
        guard (try? directory.kind(of: name)) == .directory, let child = try? directory.openDirectory(name),
            (try? child.kind(of: markerName)) == .file, let marker = try? child.readFile(markerName, limit: 64)
        else { return false }
        return marker == markerContent
    }

    /// Removes what killed publishes left: staging directories and `.publish-tmp`'s files, each
    /// only where publish's marker proves it publish's own; anything else stays.
    static func removeLeftovers(_ directory: DirectoryHandle) throws {
        for name in try directory.entries() where name.hasPrefix(".staging-") {
            if isMarked(directory, name) {
                try removeGeneration(directory, name)
            } else if try directory.kind(of: name) == .directory {
                // Killed between its mkdir and its marker, or while it wrote the marker (cut
                // short, and nothing else there): rmdir takes only an empty directory.
                if let child = try? directory.openDirectory(name), (try? child.entries()) == [markerName],
                    (try? child.kind(of: markerName)) == .file,
                    let bytes = try? child.readFile(markerName, limit: 64), markerContent.starts(with: bytes)
                {
                    try? child.removeRegularFile(markerName)
                }
                try? directory.removeEmptyDirectory(name)
            }
        }
        if isMarked(directory, temporaryDirectoryName) {
            let temporary = try directory.openDirectory(temporaryDirectoryName)
            for name in try temporary.entries() where name.hasSuffix(".tmp") && !name.hasPrefix(".") {
                if try temporary.kind(of: name) == .file { try temporary.removeRegularFile(name) }
            }
        }
    }

    /// Removes a generation directory: only the files publish writes in one, then the directory.
    ///
    /// A committed generation (`N`) is marked as publish's own and renamed aside to
    /// `.staging-N` first: a reader (a host's sync, `blocklist diff`) sees it whole or not at
    /// all, and a kill leaves a marked directory the next publish removes. The marker goes last,
    /// so that a kill at any file leaves it while anything else is there.
    static func removeGeneration(_ directory: DirectoryHandle, _ name: String) throws {
        var name = name
        if UInt64(name) != nil {
            let committed = try directory.openDirectory(name)
            if try committed.kind(of: markerName) == .missing {
                try FileSystem.writeNewFile(committed.path(of: markerName), markerContent, sync: true)
            }
            try directory.rename(name, to: ".staging-" + name)
            name = ".staging-" + name
        }
        let generation = try directory.openDirectory(name)
        for entry in try generation.entries() {
            if entry.hasPrefix("from-"), try generation.kind(of: entry) == .directory {
                let deltas = try generation.openDirectory(entry)
                for file in try deltas.entries() where file.hasSuffix(".delta") { try deltas.removeRegularFile(file) }
                try generation.removeEmptyDirectory(entry)
            } else if entry == "snapshot.json" || (entry.hasPrefix("shard-") && entry.hasSuffix(".blk")) {
                try generation.removeRegularFile(entry)
            }
        }
        if try generation.kind(of: markerName) == .file { try generation.removeRegularFile(markerName) }
        try directory.removeEmptyDirectory(name)
    }

    static func pad(_ index: Int) -> String { index < 10 ? "0\(index)" : "\(index)" }
}
