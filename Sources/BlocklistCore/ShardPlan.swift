/// How a spec's numbers split into shards, counted before anything is written.
///
/// Shard `i` (from 1) covers candidate ranks `[(i-1)·rangeSize, i·rangeSize)`. Planning refuses a
/// spec whose shard would hold more than `capacity` entries, naming the shard and its count, so a
/// bad spec is stopped before any file is touched.
package struct ShardPlan: Sendable {
    /// One planned shard.
    package struct Shard: Hashable, Sendable {
        /// From 1; extension `index` loads it.
        package var index: Int
        /// The candidate ranks it covers.
        package var ranks: Range<Int64>
        /// How many numbers it holds.
        package var entryCount: Int64
    }

    /// The compiled spec.
    package let compiled: CompiledSpec
    /// The shards, by index.
    package let shards: [Shard]

    /// Plans `spec`.
    ///
    /// - Throws: `BlocklistError` `.capacityExceeded` naming the first shard over capacity;
    ///   `.invalidSpec` if the exclusions leave no number at all.
    /// - Complexity: O(shards × digits × 10 × states).
    package init(_ spec: BlockSpec) throws(BlocklistError) {
        let compiled = CompiledSpec(spec)
        var shards: [Shard] = []
        shards.reserveCapacity(spec.shardCount)
        for index in 1...spec.shardCount {
            let ranks = spec.rankRange(ofShard: index)
            let count = compiled.count(ranks: ranks)
            guard count <= spec.capacity else {
                throw BlocklistError(
                    .capacityExceeded,
                    "Shard \(index) (candidates \(Figures.grouped(ranks.lowerBound)) to \(Figures.grouped(ranks.upperBound - 1))) would hold \(Figures.grouped(count)) entries, more than the capacity of \(Figures.grouped(spec.capacity)); lower --range-size or add exclusions."
                )
            }
            shards.append(Shard(index: index, ranks: ranks, entryCount: count))
        }
        guard shards.contains(where: { $0.entryCount > 0 }) else {
            throw BlocklistError(
                .invalidSpec,
                "The exclusions \(spec.exclusions.joined(separator: ", ")) leave none of the \(Figures.grouped(spec.candidateCount)) numbers of \(Self.named(spec.patterns)) to block; drop or lengthen an exclusion."
            )
        }
        self.compiled = compiled
        self.shards = shards
    }

    /// The first three patterns, and how many more: a sentence stays a sentence for 20,000.
    static func named(_ patterns: [BlockPattern]) -> String {
        let shown = patterns.prefix(3).map(\.description).joined(separator: ", ")
        return patterns.count > 3 ? "\(shown) and \(patterns.count - 3) more patterns" : shown
    }

    /// The spec.
    package var spec: BlockSpec { compiled.spec }

    /// How many numbers all shards hold together.
    package var totalEntries: Int64 { shards.reduce(0) { $0 + $1.entryCount } }
}
