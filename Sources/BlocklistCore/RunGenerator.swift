/// Streams the accepted numbers of a rank range in ascending order, as maximal runs.
///
/// A depth-first walk over digit positions with an explicit stack allocated once (one frame per
/// digit, at most 15). A subtree whose remaining digits are all free and cannot complete an
/// exclusion is emitted as one run without visiting its numbers; adjacent runs are merged, also
/// across patterns. Nothing is allocated per run or per number.
///
/// - Complexity: O(runs × digits × 10) steps; memory is fixed.
public struct RunGenerator: IteratorProtocol, Sequence {
    @usableFromInline
    struct Frame {
        var position: Int
        var state: Int
        var number: Int64
        var wildcardPrefix: Int64
        var nextDigit: Int
    }

    private let spec: CompiledSpec
    /// (pattern index, local wildcard range) pieces still to walk, in order.
    private var segments: [(Int, Range<Int64>)]
    private var segmentIndex = 0
    private var stack: ContiguousArray<Frame>
    private var depth = -1
    private var pending: NumberRun?

    init(_ spec: CompiledSpec, ranks: Range<Int64>) {
        self.spec = spec
        segments = []
        for (index, pattern) in spec.patterns.enumerated() {
            if let local = pattern.localRange(ranks) { segments.append((index, local)) }
        }
        stack = ContiguousArray(
            repeating: Frame(position: 0, state: 0, number: 0, wildcardPrefix: 0, nextDigit: 0),
            count: BlockPattern.maximumDigits + 1)
    }

    /// The next maximal run, or `nil` when the range is exhausted.
    public mutating func next() -> NumberRun? {
        while let run = nextPiece() {
            guard var merged = pending else {
                pending = run
                continue
            }
            if merged.end == run.start {
                merged.count += run.count
                pending = merged
            } else {
                pending = run
                return merged
            }
        }
        defer { pending = nil }
        return pending
    }

    /// The next block of accepted numbers, possibly adjacent to the previous one.
    private mutating func nextPiece() -> NumberRun? {
        let automaton = spec.automaton
        while segmentIndex < segments.count {
            let (patternIndex, local) = segments[segmentIndex]
            let pattern = spec.patterns[patternIndex]
            if depth < 0 {
                depth = 0
                stack[0] = Frame(position: 0, state: 0, number: 0, wildcardPrefix: 0, nextDigit: firstDigit(pattern, 0))
            }
            while depth >= 0 {
                let frame = stack[depth]
                let fixed = Int(pattern.digits[frame.position])
                if frame.nextDigit > 9 || (fixed >= 0 && frame.nextDigit != fixed) {
                    depth -= 1
                    continue
                }
                let digit = frame.nextDigit
                stack[depth].nextDigit = fixed >= 0 ? 10 : digit + 1

                let state = automaton.next(frame.state, digit)
                let position = frame.position + 1
                let completions = pattern.completions[position * pattern.stateCount + state]
                if completions == 0 { continue }
                let number = frame.number * 10 + Int64(digit)
                let prefix = fixed < 0 ? frame.wildcardPrefix * 10 + Int64(digit) : frame.wildcardPrefix
                let span = pattern.power10[pattern.wildcardsFrom[position]]
                let lower = prefix * span
                let upper = lower + span
                if upper <= local.lowerBound || lower >= local.upperBound { continue }

                let remaining = pattern.length - position
                if lower >= local.lowerBound && upper <= local.upperBound && pattern.allWildcardFrom[position]
                    && completions == pattern.power10[remaining]
                {
                    return NumberRun(start: number * pattern.power10[remaining], count: completions)
                }
                depth += 1
                stack[depth] = Frame(
                    position: position, state: state, number: number, wildcardPrefix: prefix,
                    nextDigit: firstDigit(pattern, position))
            }
            segmentIndex += 1
        }
        return nil
    }

    private func firstDigit(_ pattern: CompiledPattern, _ position: Int) -> Int {
        let fixed = Int(pattern.digits[position])
        return fixed >= 0 ? fixed : 0
    }
}
