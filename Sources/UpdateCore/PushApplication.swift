import BlocklistCore

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
    ///   - resultPath: where to write the new version of a changed shard, given its index; nothing
    ///     may have that name yet.
    ///   - sync: whether each written shard is synced to disk.
    /// - Returns: the changed shards, every shard's digest afterwards, and the counts.
    /// - Throws: `UpdateError`: `.wrongBase` as `deltasByShard`, or when a delta is for another
    ///   version of its shard; `.malformed` if a result path is taken; a delta's own errors; and
    ///   `.mismatch` if the resulting set is not the one the push signs. Whatever failed, the
    ///   files this call wrote are removed, and nothing else is touched.
    public func apply(
        installedGeneration: UInt64,
        shards: [(path: String, digest: [UInt8])],
        writingTo resultPath: (Int) -> String,
        sync: Bool = true
    ) throws(UpdateError) -> Application {
        let byShard = try deltasByShard(installedGeneration: installedGeneration, shardCount: shards.count)
        let changed = byShard.keys.sorted()
        for index in changed where FileDescriptor.nameExists(resultPath(index)) {
            throw UpdateError(
                .malformed,
                "\(resultPath(index)) exists, and the new version of shard \(index) is written only where nothing is; remove what an earlier apply left there, or write elsewhere. Nothing was written."
            )
        }
        var written: [String] = []
        do throws(UpdateError) {
            var digests = shards.map(\.digest)
            var counts = ShardDelta.Counts()
            for index in changed {
                let path = resultPath(index)
                written.append(path)
                let (_, delta, digest) = try ShardDelta.apply(
                    byShard[index]!,
                    what: "the push's delta of shard \(index)",
                    baseAt: shards[index - 1].path,
                    to: path,
                    sync: sync
                )
                counts.blockingAdded += delta.blockingAdded
                counts.blockingRemoved += delta.blockingRemoved
                counts.identificationAdded += delta.identificationAdded
                counts.identificationRemoved += delta.identificationRemoved
                digests[index - 1] = digest
            }
            guard Snapshot.setDigest(digests) == setDigest else {
                throw UpdateError(
                    .mismatch,
                    "The shards after the push are not the set it signs (generation \(to)): the changed shards \(changed.map(String.init).joined(separator: ", ")) applied, so an unchanged shard's recorded digest, or the order of `shards`, is not the push's base (list every shard in index order with the digest recorded when it was installed). Nothing was kept."
                )
            }
            return Application(changedShards: changed, shardDigests: digests, counts: counts)
        } catch {
            for path in written { FileDescriptor.removeCreated(path) }
            throw error
        }
    }
}
