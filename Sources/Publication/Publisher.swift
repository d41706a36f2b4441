import BlocklistCore
import BlocklistSystem
import Crypto
import SetStorage
import UpdateCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
public enum Publisher {
    /// What a publish did.
    public struct Outcome: Sendable {
        public var generation: UInt64
        /// Whether a new generation was written (else the set was unchanged and only the timestamp was re-signed).
        public var published: Bool
        public var changedShards: [Int]
        public var deltas: Int
        public var deltaBytes: Int64
        public var bytesWritten: Int64
        public var removedGenerations: [UInt64]
    }

    public static let timestampName = "timestamp.json"
    public static let lockName = ".publish.lock"

    /// Publishes the set committed in `setDirectory`.
    ///
    /// - Parameters:
    ///   - keep: how many earlier generations get deltas (and stay published).
    ///   - timestampLifetime: seconds a timestamp is valid (default 1 day).
    ///   - snapshotLifetime: seconds a snapshot is valid (default 30 days).
    public static func publish(
        setDirectory: String,
        signingKey: Curve25519.Signing.PrivateKey,
        root rootBytes: [UInt8]?,
        to publication: String,
        keep: Int,
        now: Int64,
        timestampLifetime: Int64 = 86_400,
        snapshotLifetime: Int64 = 30 * 86_400
    ) throws -> Outcome {
        precondition(keep >= 0)
        // The set, as its manifest lists it.
        let manifestPath = setDirectory + "/" + Manifest.fileName
        let manifest = try JSONValue(
            parsing: try FileSystem.readFile(manifestPath, limit: 16 << 20),
            what: manifestPath
        )
        guard case .object(let members) = manifest, case .string(let setName)? = members["directory"],
            case .array(let shardList)? = members["shards"], case .object(var specFields)? = members["spec"],
            FileInfo.isSafe(setName)
        else {
            throw UpdateError(.malformed, "\(manifestPath) is not a blocklist set manifest.")
        }
        // The list files' paths are the publisher's: they would leak them, and a phone's `verify`
        // would look for them there.
        specFields["inputs"] = nil
        let spec = JSONValue.object(specFields)
        var shardPaths: [String] = []
        for entry in shardList {
            guard case .object(let shard) = entry, case .string(let file)? = shard["file"], FileInfo.isSafe(file),
                !file.contains("/")
            else { throw UpdateError(.malformed, "\(manifestPath) lists a shard without a plain file name.") }
            shardPaths.append(setDirectory + "/" + setName + "/" + file)
        }
        let contents = try shardPaths.map { path throws(UpdateError) in try ShardContent(shardAt: path) }
        let digests = contents.map(\.digest)

        if try FileSystem.kind(publication) == .missing { _ = try FileSystem.makeDirectory(publication) }
        guard try FileSystem.kind(publication) == .directory else {
            throw UpdateError(.malformed, "\(publication) is not a directory.")
        }
        let directory = try DirectoryHandle(path: publication)
        let lock = try directory.lock(
            lockName,
            exclusive: true,
            what: "The publication \(publication)",
            patienceMilliseconds: 250
        )
        defer { lock.unlock() }
        for name in try directory.entries() where !isOurs(name) {
            throw UpdateError(
                .malformed,
                "\(publication) holds \(name), which blocklist publish did not write; give an empty or new directory."
            )
        }
        if let rootBytes {
            let root = try Root.trusted(rootBytes, what: "the trust root")
            guard root.keys[Keys.keyID(of: signingKey.publicKey)] != nil else {
                throw UpdateError(
                    .badSignature,
                    "The signing key is not one of the trust root's keys; an app would refuse everything it signs."
                )
            }
            let name = "\(root.version).root.json"
            if try directory.kind(of: name) == .missing {
                // A rotation (keys rotate): published only if the root before it signed it, so
                // that apps shipping an older root can follow the chain.
                if root.version > 1 {
                    let previousName = "\(root.version - 1).root.json"
                    guard try directory.kind(of: previousName) != .missing else {
                        throw UpdateError(
                            .malformed,
                            "\(publication) has no \(previousName), so apps could not follow root version \(root.version); publish with the keys of each version in turn."
                        )
                    }
                    let previous = try Root(
                        payload: try SignedDocument(
                            parsing: try directory.readFile(previousName, limit: SignedDocument.maximumBytes),
                            what: previousName
                        ).payload,
                        what: previousName
                    )
                    _ = try previous.next(rootBytes, what: "root version \(root.version)")
                }
                try writeAtomically(directory, name, rootBytes)
                try writeAtomically(directory, "root.json", rootBytes)
            }
        }

        // The current publication.
        let previous = try currentSnapshot(directory)
        let existing = try directory.entries().compactMap { UInt64($0) }.sorted()
        if let previous, previous.shards.map(\.digest) == digests, previous.spec == spec {
            // Unchanged: only a fresh timestamp, so phones do not see a frozen publication.
            try writeTimestamp(
                directory,
                generation: previous.generation,
                signingKey: signingKey,
                expires: now + timestampLifetime
            )
            return Outcome(
                generation: previous.generation,
                published: false,
                changedShards: [],
                deltas: 0,
                deltaBytes: 0,
                bytesWritten: 0,
                removedGenerations: []
            )
        }
        let generation = (existing.last ?? 0) + 1
        let staging = ".staging-\(generation)"
        if try directory.kind(of: staging) != .missing { try removeGeneration(directory, staging) }
        try directory.makeDirectory(staging)
        var committed = false
        defer { if !committed { try? removeGeneration(directory, staging) } }
        let stage = try directory.openDirectory(staging)
        var written: Int64 = 0
        var shards: [Snapshot.Shard] = []
        for (offset, path) in shardPaths.enumerated() {
            let name = "shard-\(pad(offset + 1)).blk"
            let bytes = try FileSystem.readFile(path, limit: 1 << 30)
            try FileSystem.writeNewFile(stage.path(of: name), bytes, sync: true)
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
        // Deltas from each kept generation.
        var deltas: [Snapshot.Delta] = []
        var deltaBytes: Int64 = 0
        var changed: Set<Int> = []
        for from in existing.suffix(keep) {
            guard let old = try? snapshot(directory, generation: from) else { continue }
            let fromDirectory = "from-\(from)"
            var made = false
            for (offset, content) in contents.enumerated() where offset < old.shards.count {
                let oldShard = old.shards[offset]
                if oldShard.digest == digests[offset] { continue }
                if from == existing.last { changed.insert(offset + 1) }
                let oldContent = try ShardContent(shardAt: publication + "/" + oldShard.file.path)
                guard oldContent.index == content.index else { continue }
                let (payload, _) = ShardDelta.payload(from: oldContent, to: content)
                guard payload.count <= ShardDelta.maximumPayloadBytes else { continue }
                let file = try DeltaFile.encode(payload: payload, index: offset + 1, from: from, to: generation)
                // Never larger than the full shard: then the full shard is served.
                guard Int64(file.count) < shards[offset].file.length else { continue }
                if !made {
                    try stage.makeDirectory(fromDirectory)
                    made = true
                }
                let name = "shard-\(pad(offset + 1)).delta"
                try FileSystem.writeNewFile(stage.path(of: fromDirectory + "/" + name), file, sync: true)
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
        changed = Set(
            digests.indices.filter { offset in
                guard let previous, offset < previous.shards.count else { return true }
                return previous.shards[offset].digest != digests[offset]
            }.map { $0 + 1 }
        )
        let snapshot = Snapshot(
            generation: generation,
            expires: now + snapshotLifetime,
            spec: spec,
            shards: shards,
            deltas: deltas
        )
        let snapshotBytes = try SignedDocument.sign(snapshot.payload, with: [signingKey])
        try FileSystem.writeNewFile(stage.path(of: "snapshot.json"), snapshotBytes, sync: true)
        written += Int64(snapshotBytes.count)
        try stage.sync()
        try directory.rename(staging, to: String(generation))
        committed = true
        try directory.sync()
        try writeTimestamp(directory, generation: generation, signingKey: signingKey, expires: now + timestampLifetime)

        // Generations past `keep` are no longer a base for deltas: remove them (only what we wrote).
        var removed: [UInt64] = []
        for old in existing.dropLast(keep) {
            if (try? removeGeneration(directory, String(old))) != nil { removed.append(old) }
        }
        return Outcome(
            generation: generation,
            published: true,
            changedShards: changed.sorted(),
            deltas: deltas.filter { $0.from == existing.last }.count,
            deltaBytes: deltaBytes,
            bytesWritten: written,
            removedGenerations: removed
        )
    }

    /// The snapshot the current timestamp names, if any (the publisher trusts its own files).
    package static func currentSnapshot(_ directory: DirectoryHandle) throws -> Snapshot? {
        guard try directory.kind(of: timestampName) != .missing else { return nil }
        let timestamp = try Timestamp(
            payload: try SignedDocument(
                parsing: try directory.readFile(timestampName, limit: 64 * 1024),
                what: timestampName
            ).payload,
            what: timestampName
        )
        return try snapshot(directory, generation: timestamp.generation)
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

    /// Writes `name` aside and renames it into place.
    static func writeAtomically(_ directory: DirectoryHandle, _ name: String, _ bytes: [UInt8]) throws {
        let temporary = ".\(name).\(getpid()).tmp"
        try? directory.removeRegularFile(temporary)
        try FileSystem.writeNewFile(directory.path(of: temporary), bytes, sync: true)
        try directory.rename(temporary, to: name)
        try directory.sync()
    }

    /// Whether `name` is something publish writes in a publication directory.
    static func isOurs(_ name: String) -> Bool {
        name == timestampName || name == lockName || name == "root.json" || name.hasSuffix(".root.json")
            || UInt64(name) != nil || name.hasPrefix(".staging-") || (name.hasPrefix(".") && name.hasSuffix(".tmp"))
    }

    /// Removes a generation directory: only the files publish writes in one, then the directory.
    static func removeGeneration(_ directory: DirectoryHandle, _ name: String) throws {
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
        try directory.removeEmptyDirectory(name)
    }

    static func pad(_ index: Int) -> String { index < 10 ? "0\(index)" : "\(index)" }
}
