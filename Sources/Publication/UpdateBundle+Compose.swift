import BlocklistCore
import BlocklistSystem
import UpdateCore

extension UpdateBundle {
    /// The bundle that takes a phone from generation `from` to the newest of `publication`:
    /// every `N.root.json`, the timestamp, the snapshot, and per changed shard its delta from `from` if published,
    /// else the full shard. From the newest generation (or a newer one), only the timestamp.
    ///
    /// - Throws: if the publication cannot be read.
    public static func compose(publication: String, from: UInt64) throws -> [UInt8] {
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
        guard from < timestamp.generation else { return encode(files) }
        let snapshotPath = timestamp.snapshot.path
        files.append((snapshotPath, try directory.readFile(snapshotPath, limit: SignedDocument.maximumBytes)))
        let snapshot = try Publisher.snapshot(directory, generation: timestamp.generation)
        let base = from > 0 ? try? Publisher.snapshot(directory, generation: from) : nil
        for shard in snapshot.shards {
            if let base, shard.index <= base.shards.count, base.shards[shard.index - 1].digest == shard.digest {
                continue
            }
            if let delta = snapshot.deltas.first(where: { $0.from == from && $0.index == shard.index }) {
                files.append((delta.file.path, try directory.readFile(delta.file.path, limit: Int(delta.file.length))))
            } else {
                files.append((shard.file.path, try directory.readFile(shard.file.path, limit: Int(shard.file.length))))
            }
        }
        return encode(files)
    }
}
