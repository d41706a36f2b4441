/// What to block: number patterns, the digit strings to leave out, and how to cut the result into
/// shards of at most one extension's capacity.
///
/// Shard `i` (from 1) holds the accepted numbers whose candidate rank falls in
/// `[(i-1)·rangeSize, i·rangeSize)`. With the default single pattern the rank is the 8 subscriber
/// digits, so extension `i` gets range `i` as in the seed app. With several patterns the ranks of
/// each pattern follow those of the numerically lower patterns.

@usableFromInline package struct BlockSpec: Hashable, Sendable {
    /// Every Korean 070 internet-phone number.
    package static let defaultPatterns = ["+8270########"]
    /// The seed app skips any number whose digits contain "000".
    package static let defaultExclusions = ["000"]
    /// Candidates per shard: 50 shards for the default pattern.
    package static let defaultRangeSize: Int64 = 2_000_000
    /// Devices accept 1,999,999 entries per extension and refuse 2,000,000.
    @usableFromInline package static let defaultCapacity: Int64 = 1_999_999
    /// More shards than this is refused before any work: no app ships that many extensions.
    package static let maximumShardCount = 10_000
    /// The most entries a shard can hold: the format counts runs in 32 bits, and runs ≤ entries.
    package static let maximumCapacity = Int64(UInt32.max)
    /// The longest exclusion accepted.
    package static let maximumExclusionLength = BlockPattern.maximumDigits

    /// The patterns, sorted by the numbers they spell.
    package let patterns: [BlockPattern]
    /// Digit strings; a number whose digits contain any of them is not blocked.
    package let exclusions: [String]
    /// Candidates per shard.
    package let rangeSize: Int64
    /// The most entries one shard may hold.
    package let capacity: Int64

    /// The default spec: every +82 70 number without "000" in its digits, 50 shards.
    package static var `default`: BlockSpec {
        try! BlockSpec(patterns: defaultPatterns, exclusions: defaultExclusions)
    }

    /// Validates and normalises a spec.
    ///
    /// - Parameters:
    ///   - patterns: one or more patterns (see `BlockPattern`); their number ranges must not overlap.
    ///   - exclusions: digit strings, each 1–15 digits; duplicates are dropped. Default: none.
    ///   - rangeSize: candidates per shard, at least 1. Default: 2,000,000.
    ///   - capacity: the most entries per shard, at least 1. Default: 1,999,999.
    /// - Throws: `BlocklistError` with `.invalidSpec` or `.limitExceeded`, one sentence naming the
    ///   offending value.
    package init(
        patterns: [String],
        exclusions: [String] = [],
        rangeSize: Int64 = BlockSpec.defaultRangeSize,
        capacity: Int64 = BlockSpec.defaultCapacity
    ) throws(BlocklistError) {
        var parsed: [BlockPattern] = []
        parsed.reserveCapacity(patterns.count)
        for text in patterns { parsed.append(try BlockPattern(parsing: text)) }
        try self.init(patterns: parsed, exclusions: exclusions, rangeSize: rangeSize, capacity: capacity)
    }

    /// Validates and normalises a spec of parsed patterns, in any order. Patterns already in order
    /// are kept without a copy, so the spec shares the caller's array.
    ///
    /// - Throws: `BlocklistError` as `init(patterns:exclusions:rangeSize:capacity:)` for texts.
    package init(
        patterns: [BlockPattern],
        exclusions: [String] = [],
        rangeSize: Int64 = BlockSpec.defaultRangeSize,
        capacity: Int64 = BlockSpec.defaultCapacity
    ) throws(BlocklistError) {
        guard !patterns.isEmpty else {
            throw BlocklistError(.invalidSpec, "A block spec needs at least one pattern, e.g. +8270########.")
        }
        var parsed = patterns
        let inOrder: (BlockPattern, BlockPattern) -> Bool = { ($0.lowest, $0.highest) < ($1.lowest, $1.highest) }
        if zip(parsed, parsed.dropFirst()).contains(where: { inOrder($1, $0) }) { parsed.sort(by: inOrder) }
        for (lower, upper) in zip(parsed, parsed.dropFirst()) where upper.lowest <= lower.highest {
            throw BlocklistError(
                .invalidSpec,
                lower == upper
                    ? "Pattern \(lower) is given twice."
                    : "Patterns \(lower) and \(upper) overlap (\(lower) reaches \(lower.highest), \(upper) starts at \(upper.lowest)); give patterns whose number ranges do not overlap."
            )
        }

        var cleaned: [String] = []
        for exclusion in exclusions {
            guard !exclusion.isEmpty else {
                throw BlocklistError(
                    .invalidSpec,
                    "An exclusion is empty; it would exclude every number. Give digits such as 000."
                )
            }
            guard exclusion.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                throw BlocklistError(
                    .invalidSpec,
                    "Exclusion \"\(exclusion)\" is not all digits; an exclusion is a digit string such as 000."
                )
            }
            guard exclusion.utf8.count <= Self.maximumExclusionLength else {
                throw BlocklistError(
                    .limitExceeded,
                    "Exclusion \"\(exclusion)\" has \(exclusion.utf8.count) digits; no number has more than \(Self.maximumExclusionLength)."
                )
            }
            if !cleaned.contains(exclusion) { cleaned.append(exclusion) }
        }

        guard rangeSize >= 1 else {
            throw BlocklistError(
                .invalidSpec,
                "The range size is \(rangeSize); it must be at least 1 candidate per shard."
            )
        }
        guard capacity >= 1 else {
            throw BlocklistError(.invalidSpec, "The capacity is \(capacity); it must be at least 1 entry per shard.")
        }
        guard capacity <= Self.maximumCapacity else {
            throw BlocklistError(
                .limitExceeded,
                "The capacity is \(capacity); a shard holds at most \(Self.maximumCapacity) entries (its run count is 32 bits), and a device fewer than 2,000,000."
            )
        }
        var candidates: Int64 = 0
        for pattern in parsed {
            let (sum, overflow) = candidates.addingReportingOverflow(pattern.candidateCount)
            guard !overflow else {
                throw BlocklistError(
                    .limitExceeded,
                    "The patterns spell more than \(Int64.max) numbers together; give fewer or narrower patterns."
                )
            }
            candidates = sum
        }
        let shardCount = (candidates - 1) / rangeSize + 1
        guard shardCount <= Self.maximumShardCount else {
            throw BlocklistError(
                .limitExceeded,
                "The spec has \(candidates) candidates, which at \(rangeSize) per shard makes \(shardCount) shards; at most \(Self.maximumShardCount) are allowed, so raise --range-size."
            )
        }

        self.patterns = parsed
        self.exclusions = cleaned
        self.rangeSize = rangeSize
        self.capacity = capacity
    }

    /// Sentences about a spec that is valid but probably not what was meant: an exclusion longer
    /// than every pattern, which can never match. (A spec whose exclusions leave nothing is
    /// refused by `ShardPlan`.)
    package var warnings: [String] {
        let longest = patterns.lazy.map(\.length).max() ?? 0
        return exclusions.filter { $0.utf8.count > longest }.map {
            "exclusion \($0) has \($0.utf8.count) digits, more than the \(longest) of the longest pattern, so it excludes nothing."
        }
    }

    /// How many numbers the patterns spell before exclusions.
    package var candidateCount: Int64 { patterns.reduce(0) { $0 + $1.candidateCount } }

    /// How many shards the spec makes.
    package var shardCount: Int { Int((candidateCount - 1) / rangeSize + 1) }

    /// The candidate ranks shard `index` (from 1) covers.
    package func rankRange(ofShard index: Int) -> Range<Int64> {
        precondition(index >= 1 && index <= shardCount, "shard \(index) is outside 1...\(shardCount)")
        let lower = Int64(index - 1) * rangeSize
        return lower..<min(lower + rangeSize, candidateCount)
    }
}
