/// A block spec compiled for fast counting and generation.
///
/// For each pattern it makes, when that pattern is reached, a table of how many accepted
/// completions every (digit position, automaton state) pair has; tables are not kept, so twenty
/// thousand patterns cost a rank offset per 64 of them, not twenty thousand tables. With it, counting a shard takes a few hundred steps, and the
/// generator jumps over whole blocks of accepted numbers (a block of `10^k` numbers whose last
/// `k` digits are free and cannot complete an exclusion is one run) instead of visiting numbers.
///
/// - Complexity: a table is O(digits × automaton states × 10) to build and holds
///   `(digits + 1) × states` integers; memory is one table at a time, plus 8 bytes per 64 patterns.
package struct CompiledSpec: Sendable {
    /// The spec this was compiled from.
    package let spec: BlockSpec
    package let automaton: ExclusionAutomaton
    /// The global candidate rank of the first candidate of every `checkpointStride`-th pattern;
    /// the patterns between add their candidate counts (`rankOffset(of:)`).
    private let rankCheckpoints: [Int64]
    private static let checkpointStride = 64

    package init(_ spec: BlockSpec) {
        self.spec = spec
        automaton = ExclusionAutomaton(exclusions: spec.exclusions)
        var offset: Int64 = 0
        var checkpoints: [Int64] = []
        checkpoints.reserveCapacity(spec.patterns.count / Self.checkpointStride + 1)
        for (index, pattern) in spec.patterns.enumerated() {
            if index % Self.checkpointStride == 0 { checkpoints.append(offset) }
            offset += pattern.candidateCount
        }
        rankCheckpoints = checkpoints
    }

    /// The global candidate rank of pattern `index`'s first candidate.
    package func rankOffset(of index: Int) -> Int64 {
        let checkpoint = index / Self.checkpointStride
        var offset = rankCheckpoints[checkpoint]
        for between in (checkpoint * Self.checkpointStride)..<index { offset += spec.patterns[between].candidateCount }
        return offset
    }

    /// Pattern `index`'s tables.
    package func compiled(_ index: Int) -> CompiledPattern {
        CompiledPattern(spec.patterns[index], rankOffset: rankOffset(of: index), automaton: automaton)
    }

    /// The patterns whose candidates meet `ranks`.
    package func patterns(overlapping ranks: Range<Int64>) -> Range<Int> {
        // The last pattern starting at or below the range's start, through the last starting below
        // its end: the last checkpoint at or below the start, then the patterns after it.
        var low = 0
        var high = rankCheckpoints.count
        while low < high {
            let middle = (low + high) / 2
            if rankCheckpoints[middle] <= ranks.lowerBound { low = middle + 1 } else { high = middle }
        }
        var first = max(low - 1, 0) * Self.checkpointStride
        var offset = rankCheckpoints[first / Self.checkpointStride]
        while first + 1 < spec.patterns.count, offset + spec.patterns[first].candidateCount <= ranks.lowerBound {
            offset += spec.patterns[first].candidateCount
            first += 1
        }
        var end = first
        while end < spec.patterns.count, offset < ranks.upperBound {
            offset += spec.patterns[end].candidateCount
            end += 1
        }
        return first..<end
    }

    /// The part of the global `ranks` that falls in pattern `index`, as local wildcard values.
    package func localRange(of index: Int, _ ranks: Range<Int64>) -> Range<Int64>? {
        let offset = rankOffset(of: index)
        let lower = max(ranks.lowerBound, offset) - offset
        let upper = min(ranks.upperBound, offset + spec.patterns[index].candidateCount) - offset
        return lower < upper ? lower..<upper : nil
    }

    /// How many accepted numbers have a candidate rank in `ranks`.
    package func count(ranks: Range<Int64>) -> Int64 {
        var total: Int64 = 0
        for index in patterns(overlapping: ranks) {
            guard let local = localRange(of: index, ranks) else { continue }
            total += compiled(index).count(position: 0, state: 0, wildcardPrefix: 0, in: local, automaton: automaton)
        }
        return total
    }

    /// How many accepted numbers shard `index` (from 1) holds.
    package func count(shard index: Int) -> Int64 { count(ranks: spec.rankRange(ofShard: index)) }

    /// The accepted numbers with a candidate rank in `ranks`, ascending, as maximal runs.
    package func runs(ranks: Range<Int64>) -> RunGenerator { RunGenerator(self, ranks: ranks) }

    /// The accepted numbers of shard `index` (from 1), ascending, as maximal runs.
    package func runs(shard index: Int) -> RunGenerator { runs(ranks: spec.rankRange(ofShard: index)) }

    /// Every accepted number, ascending, as maximal runs.
    package func runs() -> RunGenerator { runs(ranks: 0..<spec.candidateCount) }

    /// Whether `number` is one the spec blocks; `nil` if no pattern spells it.
    ///
    /// - Returns: the number's candidate rank and whether it is accepted (not excluded).
    package func classify(_ number: Int64) -> (rank: Int64, accepted: Bool)? {
        for (index, pattern) in spec.patterns.enumerated() where pattern.lowest <= number && number <= pattern.highest {
            if let result = compiled(index).classify(number, automaton: automaton) { return result }
        }
        return nil
    }
}

/// One pattern's tables, in buffers allocated once and never changed, so the generator can walk
/// them through raw pointers without reference counting.
package final class CompiledPattern: @unchecked Sendable {
    /// Each position's fixed digit, or -1 for `#`.
    package let digits: UnsafeMutableBufferPointer<Int8>
    /// The global candidate rank of this pattern's first candidate.
    package let rankOffset: Int64
    package let candidateCount: Int64
    package let stateCount: Int
    /// `completions[position * stateCount + state]`: accepted ways to finish the number from there.
    package let completions: UnsafeMutableBufferPointer<Int64>
    /// `wildcardSpan[position]`: 10 to the number of `#` at `position` or later.
    package let wildcardSpan: UnsafeMutableBufferPointer<Int64>
    /// `fullSpan[position]`: 10 to the number of positions left if all of them are `#`, else 0.
    package let fullSpan: UnsafeMutableBufferPointer<Int64>

    init(_ pattern: BlockPattern, rankOffset: Int64, automaton: ExclusionAutomaton) {
        let length = pattern.length
        let states = automaton.stateCount
        self.rankOffset = rankOffset
        candidateCount = pattern.candidateCount
        stateCount = states
        digits = .allocate(capacity: length)
        for position in 0..<length { digits.initializeElement(at: position, to: pattern.digit(at: position)) }

        wildcardSpan = .allocate(capacity: length + 1)
        fullSpan = .allocate(capacity: length + 1)
        wildcardSpan[length] = 1
        fullSpan[length] = 1
        for position in stride(from: length - 1, through: 0, by: -1) {
            let wildcard = digits[position] < 0
            wildcardSpan[position] = wildcardSpan[position + 1] * (wildcard ? 10 : 1)
            fullSpan[position] = wildcard ? fullSpan[position + 1] * 10 : 0
        }

        completions = .allocate(capacity: (length + 1) * states)
        completions.initialize(repeating: 0)
        for state in 0..<states { completions[length * states + state] = automaton.isDead[state] ? 0 : 1 }
        for position in stride(from: length - 1, through: 0, by: -1) {
            let fixed = Int(digits[position])
            let range = fixed < 0 ? 0...9 : fixed...fixed
            for state in 0..<states where !automaton.isDead[state] {
                var sum: Int64 = 0
                for digit in range {
                    sum += completions[(position + 1) * states + automaton.next(state, digit)]
                }
                completions[position * states + state] = sum
            }
        }
    }

    deinit {
        digits.deallocate()
        completions.deallocate()
        wildcardSpan.deallocate()
        fullSpan.deallocate()
    }

    var length: Int { digits.count }

    /// The part of the global `ranks` that falls in this pattern, as local wildcard values.
    func localRange(_ ranks: Range<Int64>) -> Range<Int64>? {
        let lower = max(ranks.lowerBound, rankOffset) - rankOffset
        let upper = min(ranks.upperBound, rankOffset + candidateCount) - rankOffset
        return lower < upper ? lower..<upper : nil
    }

    /// The local rank (wildcard value) of the first candidate at or above `number`, before
    /// exclusions: how many of the pattern's candidates are below it.
    func localRank(atOrAbove number: Int64) -> Int64 {
        guard number > 0 else { return 0 }
        var numberLength = 0
        var rest = number
        while rest > 0 {
            numberLength += 1
            rest /= 10
        }
        if numberLength < length { return 0 }
        if numberLength > length { return candidateCount }
        var scale: Int64 = 1
        for _ in 1..<length { scale *= 10 }
        var rank: Int64 = 0
        for position in 0..<length {
            let digit = Int8((number / scale) % 10)
            scale /= 10
            let fixed = digits[position]
            if fixed < 0 {
                rank += Int64(digit) * wildcardSpan[position + 1]
            } else if fixed < digit {
                return rank + wildcardSpan[position]
            } else if fixed > digit {
                return rank
            }
        }
        return rank
    }

    func count(position: Int, state: Int, wildcardPrefix: Int64, in local: Range<Int64>, automaton: ExclusionAutomaton)
        -> Int64
    {
        let span = wildcardSpan[position]
        let lower = wildcardPrefix * span
        let upper = lower + span
        if upper <= local.lowerBound || lower >= local.upperBound { return 0 }
        if lower >= local.lowerBound && upper <= local.upperBound {
            return completions[position * stateCount + state]
        }
        // Partly inside: only positions before the end can straddle a boundary.
        let fixed = Int(digits[position])
        var total: Int64 = 0
        for digit in (fixed < 0 ? 0...9 : fixed...fixed) {
            let next = automaton.next(state, digit)
            if automaton.isDead[next] { continue }
            let prefix = fixed < 0 ? wildcardPrefix * 10 + Int64(digit) : wildcardPrefix
            total += count(position: position + 1, state: next, wildcardPrefix: prefix, in: local, automaton: automaton)
        }
        return total
    }

    func classify(_ number: Int64, automaton: ExclusionAutomaton) -> (rank: Int64, accepted: Bool)? {
        guard number >= 0 else { return nil }
        var remaining = number
        var numberDigits = [Int8](repeating: 0, count: length)
        for position in stride(from: length - 1, through: 0, by: -1) {
            numberDigits[position] = Int8(remaining % 10)
            remaining /= 10
        }
        guard remaining == 0, numberDigits[0] != 0 || length == 1 else { return nil }
        var state = 0
        var rank: Int64 = 0
        for position in 0..<length {
            let digit = numberDigits[position]
            if digits[position] >= 0 {
                guard digits[position] == digit else { return nil }
            } else {
                rank = rank * 10 + Int64(digit)
            }
            state = automaton.next(state, Int(digit))
        }
        return (rankOffset + rank, !automaton.isDead[state])
    }
}
