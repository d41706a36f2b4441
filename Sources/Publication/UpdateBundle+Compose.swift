import BlocklistCore
import BlocklistSystem
import UpdateCore

extension UpdateBundle {
    /// What ``compose(publication:from:limit:)`` made.
    package enum Composed: Sendable {
        /// The bundle, at most the limit.
        case bundle([UInt8])
        /// The bundle would have been `bytes` long, over the limit; no shard or delta was read.
        case tooLarge(bytes: Int)
    }

    /// The generations whose bundles differ: the newest, and every earlier one that still has a
    /// snapshot or is the base of a delta. A `from` among none of them gets the bundle of one
    /// that is not either (0, the bundle of every shard), and one at or past the newest the
    /// newest's (the timestamp and roots only).
    ///
    /// - Throws: if the timestamp or the newest snapshot cannot be read.
    package static func bases(publication: String) throws -> (newest: UInt64, bases: Set<UInt64>) {
        let directory = try DirectoryHandle(path: publication)
        guard let snapshot = try Publisher.currentSnapshot(directory) else {
            throw BlocklistError(.io, "\(publication) holds no \(Publisher.timestampName).")
        }
        var bases = Set(snapshot.deltas.map(\.from))
        for name in try directory.entries() {
            if let generation = UInt64(name), generation < snapshot.generation,
                try directory.kind(of: "\(name)/snapshot.json") == .file
            {
                bases.insert(generation)
            }
        }
        return (snapshot.generation, bases)
    }

    /// The bundle that takes a phone from generation `from` to the newest of `publication`:
    /// every `N.root.json` and the update file `from-N.push` when there is one; else every root,
    /// the timestamp, the snapshot, and per changed shard its delta from `from` if published,
    /// else the full shard. From the newest generation (or a newer one), the roots and the timestamp.
    ///
    /// The bundle's size is known from the signed lengths in the snapshot before any shard or
    /// delta is read; past `limit` none is, and the answer is ``Composed/tooLarge(bytes:)``.
    ///
    /// - Parameter limit: the largest bundle made; default ``maximumServedBytes``, what a phone takes.
    /// - Complexity: memory is the metadata plus at most `limit` bytes.
    /// - Throws: if the publication cannot be read.
    package static func compose(publication: String, from: UInt64, limit: Int = maximumServedBytes) throws -> Composed {
        let directory = try DirectoryHandle(path: publication)
        let timestampBytes = try directory.readFile(Publisher.timestampName, limit: 64 * 1024)
        let timestamp = try Timestamp(
            payload: try SignedDocument(parsing: timestampBytes, what: Publisher.timestampName).payload,
            what: Publisher.timestampName
        )
        var files: [(String, [UInt8])] = [(Publisher.timestampName, timestampBytes)]
        // Every root the publication has, so a phone learns of a rotation without asking.
        for name in try directory.entries().sorted() where name.hasSuffix(".root.json") && name.first != "." {
            files.append((name, try directory.readFile(name, limit: SignedDocument.maximumBytes)))
        }
        var toRead: [FileInfo] = []
        let updateFile = InlinePush.fileName(from: from)
        if from >= 1, from < timestamp.generation, try directory.kind(of: updateFile) == .file {
            // The update file is all such a phone reads (the plan's files, if it cannot use it,
            // come file by file).
            files[0] = (updateFile, try directory.readFile(updateFile, limit: InlinePush.maximumFileBytes))
        } else if from < timestamp.generation {
            let snapshotPath = timestamp.snapshot.path
            files.append((snapshotPath, try directory.readFile(snapshotPath, limit: SignedDocument.maximumBytes)))
            let snapshot = try Publisher.snapshot(directory, generation: timestamp.generation)
            let base = from > 0 ? try? Publisher.snapshot(directory, generation: from) : nil
            for shard in snapshot.shards {
                if let base, shard.index <= base.shards.count, base.shards[shard.index - 1].digest == shard.digest {
                    continue
                }
                let delta = snapshot.deltas.first { $0.from == from && $0.index == shard.index }
                toRead.append(delta?.file ?? shard.file)
            }
        }
        let bytes =
            files.reduce(magic.count) { $0 + encodedLength(path: $1.0, length: $1.1.count) }
            + toRead.reduce(0) { $0 + encodedLength(path: $1.path, length: Int(clamping: $1.length)) }
        guard bytes <= limit else { return .tooLarge(bytes: bytes) }
        for file in toRead {
            files.append((file.path, try directory.readFile(file.path, limit: Int(file.length))))
        }
        return .bundle(encode(files))
    }
}
