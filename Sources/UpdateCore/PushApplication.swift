/// What an app's Notification Service Extension does with an opened push (or update file) when it
/// keeps its shards itself: the push's deltas applied to the installed shards, each written to a
/// new file, and the resulting set checked against the push's signed set digest. Nothing is
/// renamed or removed: the caller commits the new files by rename only after this returns, and
/// removes them if it throws (docs/UpdateCore.docc, "Applying a push in a Notification Service
/// Extension").
extension InlinePush {
    /// What `apply(installedGeneration:shards:writingTo:sync:)` wrote.
    public struct Application: Sendable {
        /// The changed shards' indices (1-based), ascending.
        public var changedShards: [Int]
        /// Every shard's content digest after the push, in index order: what to record with the
        /// new generation, for the next push's check.
        public var shardDigests: [[UInt8]]
        /// What the deltas changed, summed over the shards.
        public var counts: ShardDelta.Counts
    }

    /// The push's delta for each shard it changes, keyed by shard index, after checking that it
    /// leads from `installedGeneration` and a set of `shardCount` shards, with one delta per shard.
    ///
    /// - Throws: `.wrongBase` if the push starts from another generation or shard count (fetch the
    ///   update instead); `.malformed` if two deltas name one shard.
    public func deltasByShard(installedGeneration: UInt64, shardCount: Int) throws(UpdateError) -> [Int: [UInt8]] {
        guard from >= 1, installedGeneration == from, self.shardCount == shardCount else {
            throw UpdateError(
                .wrongBase,
                "The push leads from generation \(from) (\(self.shardCount) shards), but the App Group holds generation \(installedGeneration) (\(shardCount) shards)."
            )
        }
        var byShard: [Int: [UInt8]] = [:]
        for delta in deltas {
            let target = try ShardDelta.target(of: delta, what: "the push's delta")
            guard byShard[target.index] == nil else {
                throw UpdateError(.malformed, "The push has two deltas for shard \(target.index).")
            }
            byShard[target.index] = delta
        }
        return byShard
    }

    /// Applies the push to installed shards.
    ///
    /// - Parameters:
    ///   - installedGeneration: the generation the shards are.
    ///   - shards: each installed shard's path and content digest, in index order (shard 1 first).
    ///   - resultPath: where to write the new version of a changed shard, given its index; the
    ///     file must not exist.
    ///   - sync: whether each written shard is synced to disk.
    /// - Returns: the changed shards, every shard's digest afterwards, and the counts.
    /// - Throws: `UpdateError`: `.wrongBase` as `deltasByShard`, a delta's own errors, and
    ///   `.mismatch` if the resulting set is not the one the push signs. Files already written
    ///   stay for the caller to remove.
    public func apply(
        installedGeneration: UInt64,
        shards: [(path: String, digest: [UInt8])],
        writingTo resultPath: (Int) -> String,
        sync: Bool = true
    ) throws(UpdateError) -> Application {
        let byShard = try deltasByShard(installedGeneration: installedGeneration, shardCount: shards.count)
        var digests = shards.map(\.digest)
        var counts = ShardDelta.Counts()
        for index in byShard.keys.sorted() {
            let (_, changed, digest) = try ShardDelta.apply(
                byShard[index]!,
                what: "the push's delta of shard \(index)",
                baseAt: shards[index - 1].path,
                to: resultPath(index),
                sync: sync
            )
            counts.blockingAdded += changed.blockingAdded
            counts.blockingRemoved += changed.blockingRemoved
            counts.identificationAdded += changed.identificationAdded
            counts.identificationRemoved += changed.identificationRemoved
            digests[index - 1] = digest
        }
        guard Snapshot.setDigest(digests) == setDigest else {
            throw UpdateError(
                .mismatch,
                "The shards after the push are not the set it signs (generation \(to)); the installed shards are not the push's base."
            )
        }
        return Application(changedShards: byShard.keys.sorted(), shardDigests: digests, counts: counts)
    }
}
