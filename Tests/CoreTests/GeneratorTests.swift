import TestSupport
import Testing

@testable import BlocklistCore

/// Counts 12-digit strings "8270" + 8 digits with no "000", by a transfer matrix over the number
/// of trailing zeros: a method independent of the generator's automaton.
private func independentDefaultCount(subscriberPrefix: [Int] = []) -> Int64 {
    // ways[t]: strings so far ending in exactly t zeros (t < 3).
    var ways: [Int64] = [0, 1, 0]  // "8270" ends in one zero
    let free = 8 - subscriberPrefix.count
    for digit in subscriberPrefix {
        ways = digit == 0 ? [0, ways[0], ways[1]] : [ways[0] + ways[1] + ways[2], 0, 0]
    }
    for _ in 0..<free {
        let total = ways[0] + ways[1] + ways[2]
        ways = [9 * total, ways[0], ways[1]]
    }
    return ways[0] + ways[1] + ways[2]
}

/// Every accepted number of a spec, by building each candidate's digit string: the seed's method.
private func bruteForce(_ spec: BlockSpec) -> [Int64] {
    var result: [Int64] = []
    for pattern in spec.patterns {
        let wildcards = pattern.wildcardCount
        for value in 0..<pattern.candidateCount {
            var free = wildcards == 0 ? "" : String(value)
            free = String(repeating: "0", count: wildcards - free.count) + free
            var freeDigits = free.makeIterator()
            var text = ""
            for digit in pattern.digits { text.append(digit < 0 ? freeDigits.next()! : Character(String(digit))) }
            if spec.exclusions.contains(where: { text.contains($0) }) { continue }
            result.append(Int64(text)!)
        }
    }
    return result.sorted()
}

private func expand(_ runs: some Sequence<NumberRun>) -> [Int64] {
    var numbers: [Int64] = []
    for run in runs { numbers.append(contentsOf: run.start...run.last) }
    return numbers
}

@Suite struct GeneratorTests {
    @Test func defaultSpecHoldsTheDerivedNumberOfEntries() throws {
        let plan = try ShardPlan(.default)
        #expect(plan.shards.count == 50)
        #expect(plan.totalEntries == independentDefaultCount())
        #expect(plan.totalEntries == 98_552_781)
    }

    @Test func firstShardLosesEveryNumberStartingWith00() throws {
        // Shard 1 is subscriber digits 00000000-01999999; "8270" + "00…" contains "000".
        let plan = try ShardPlan(.default)
        #expect(plan.shards[0].entryCount == independentDefaultCount(subscriberPrefix: [0, 1]))
        #expect(plan.shards[0].entryCount == 996_300)
        #expect(
            plan.shards[1].entryCount == independentDefaultCount(subscriberPrefix: [0, 2])
                + independentDefaultCount(subscriberPrefix: [0, 3])
        )
    }

    @Test(arguments: [
        (827_000_123_456 as Int64, false),  // prefix's last 0 joins "00": "827000…"
        (827_001_234_567, true),  // "827001…" has only "00"
        (827_012_345_678, true),
        (827_012_300_045, false),
        (827_099_999_999, true),
        (827_010_001_000, false),
        (827_010_010_010, true),
    ])
    func exclusionMatchesTheWholeDigitString(number: Int64, accepted: Bool) throws {
        let spec = CompiledSpec(.default)
        #expect(!String(number).contains("000") == accepted)
        #expect(spec.classify(number)?.accepted == accepted)
        #expect(spec.classify(827_0000_0000 + 1) == nil)  // 11 digits: no pattern spells it
    }

    @Test func generatorMatchesCountsAndRunsAreMaximal() throws {
        let spec = CompiledSpec(.default)
        var runs = 0
        var entries: Int64 = 0
        var previous: NumberRun?
        for run in spec.runs() {
            if let previous { #expect(run.start > previous.last + 1) }
            runs += 1
            entries += run.count
            previous = run
        }
        #expect(entries == 98_552_781)
        #expect(runs > 90_000 && runs < 110_000)
    }

    @Test func randomSmallSpecsMatchBruteForce() throws {
        var random = SplitMix64(state: 0x5EED_0001)
        for trial in 0..<60 {
            let length = Int.random(in: 2...6, using: &random)
            var text = "+" + String(Int.random(in: 1...9, using: &random))
            for _ in 1..<length {
                text += Bool.random(using: &random) ? "#" : String(Int.random(in: 0...9, using: &random))
            }
            var patterns = [text]
            if trial % 3 == 0 {
                patterns.append("+9" + String(repeating: "#", count: Int.random(in: 1...4, using: &random)))
            }
            if trial % 3 == 0, patterns[0].hasPrefix("+9") { patterns.removeLast() }
            let exclusions = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                String(
                    (0..<Int.random(in: 1...3, using: &random)).map { _ in
                        Character(String(Int.random(in: 0...9, using: &random)))
                    }
                )
            }
            let spec = try BlockSpec(
                patterns: patterns,
                exclusions: exclusions,
                rangeSize: Int64.random(in: 1...50, using: &random),
                capacity: 1_000_000
            )
            let compiled = CompiledSpec(spec)
            let expected = bruteForce(spec)
            #expect(expand(compiled.runs()) == expected, "spec \(patterns) excluding \(exclusions)")

            // Shards concatenate to the whole, in order, and each count matches its runs.
            var fromShards: [Int64] = []
            for index in 1...spec.shardCount {
                let numbers = expand(compiled.runs(shard: index))
                #expect(Int64(numbers.count) == compiled.count(shard: index))
                if let last = fromShards.last, let first = numbers.first { #expect(first > last) }
                fromShards += numbers
            }
            #expect(fromShards == expected)
            for number in expected.prefix(20) { #expect(compiled.classify(number)?.accepted == true) }
        }
    }

    /// Hundreds of patterns of mixed widths, so that shards start and end between the rank
    /// checkpoints CompiledSpec keeps (one per 64 patterns) as well as on them.
    @Test func manyPatternsMatchBruteForceAcrossRankCheckpoints() throws {
        var random = SplitMix64(state: 0x5EED_0002)
        for _ in 0..<4 {
            var prefixes = Set<Int>()
            while prefixes.count < Int.random(in: 130...300, using: &random) {
                prefixes.insert(Int.random(in: 1000...9999, using: &random))
            }
            let patterns = prefixes.map {
                "+\($0)" + String(repeating: "#", count: Int.random(in: 0...2, using: &random))
            }
            let spec = try BlockSpec(
                patterns: patterns,
                exclusions: ["7"],
                rangeSize: Int64.random(in: 1...300, using: &random),
                capacity: 1_000_000
            )
            let compiled = CompiledSpec(spec)
            let expected = bruteForce(spec)
            #expect(expand(compiled.runs()) == expected)
            var fromShards: [Int64] = []
            for index in 1...spec.shardCount {
                let numbers = expand(compiled.runs(shard: index))
                #expect(Int64(numbers.count) == compiled.count(shard: index), "shard \(index) of \(spec.shardCount)")
                fromShards += numbers
            }
            #expect(fromShards == expected)
            // Every pattern's first candidate has the rank of the candidates of the patterns before it.
            var rank: Int64 = 0
            for (index, pattern) in spec.patterns.enumerated() {
                #expect(compiled.rankOffset(of: index) == rank)
                rank += pattern.candidateCount
            }
        }
    }

    @Test func shardBoundariesSplitRunsAtTheRightRank() throws {
        let spec = try BlockSpec(patterns: ["+1####"], exclusions: ["99"], rangeSize: 1000)
        let compiled = CompiledSpec(spec)
        let shard2 = Array(compiled.runs(shard: 2))
        #expect(shard2.first?.start == 11000)
        #expect(shard2.last?.last == 11989)  // 11990...11999 all contain "99"
        let shard1Last = Array(compiled.runs(shard: 1)).last?.last
        #expect(shard1Last == 10989)
    }

    @Test func capacityIsRefusedNamingTheShard() throws {
        let spec = try BlockSpec(
            patterns: ["+8270########"],
            exclusions: ["000"],
            rangeSize: 2_000_000,
            capacity: 1_500_000
        )
        let error = #expect(throws: BlocklistError.self) { try ShardPlan(spec) }
        #expect(error?.code == .capacityExceeded)
        #expect(error?.message.contains("Shard 2 ") == true)
    }
}
