/// Streams the accepted numbers of a rank range in ascending order, as maximal runs.
///
/// A depth-first walk over digit positions with an explicit stack allocated once (one frame per
/// digit, at most 15). A subtree whose remaining digits are all free and cannot complete an
/// exclusion is emitted as one block without visiting its numbers; neighbouring blocks are merged
/// into maximal runs, also across patterns. Nothing is allocated per run or per number, and the
/// walk reads the compiled tables through raw pointers, so it does no reference counting.
///
/// A generator is single-pass: iterating it consumes it.
///
/// - Complexity: O(runs × digits × 10) steps; memory is fixed.
package final class RunGenerator: IteratorProtocol, Sequence {
    struct Frame {
        var position: Int
        var state: Int
        var number: Int64
        var wildcardPrefix: Int64
        var nextDigit: Int
    }

    /// Keeps the tables the pointers below point into alive.
    private let spec: CompiledSpec
    /// The candidate ranks to walk.
    private let ranks: Range<Int64>
    /// The next pattern to walk, and the end of those that meet `ranks`.
    private var nextPattern: Int
    private let endPattern: Int
    /// The pattern being walked (its tables are made when it is reached).
    private var current: CompiledPattern?
    private let frames: UnsafeMutableBufferPointer<Frame>
    private var depth = -1
    private var pending: NumberRun?

    // The current segment's tables and bounds.
    private let transitions: UnsafeMutableBufferPointer<Int32>
    private var digits = UnsafeMutableBufferPointer<Int8>(start: nil, count: 0)
    private var completions = UnsafeMutableBufferPointer<Int64>(start: nil, count: 0)
    private var wildcardSpan = UnsafeMutableBufferPointer<Int64>(start: nil, count: 0)
    private var fullSpan = UnsafeMutableBufferPointer<Int64>(start: nil, count: 0)
    private var stateCount = 0
    private var lowerBound: Int64 = 0
    private var upperBound: Int64 = 0
    /// Numbers below this are skipped (`skip(below:)`).
    private var skipBelow: Int64 = 0

    init(_ spec: CompiledSpec, ranks: Range<Int64>) {
        self.spec = spec
        self.ranks = ranks
        let overlapping = spec.patterns(overlapping: ranks)
        nextPattern = overlapping.lowerBound
        endPattern = overlapping.upperBound
        transitions = spec.automaton.transitions
        frames = .allocate(capacity: BlockPattern.maximumDigits + 1)
    }

    deinit { frames.deallocate() }

    /// The next maximal run, or `nil` when the range is exhausted.
    package func next() -> NumberRun? {
        while let run = nextPiece() {
            guard var merged = pending else {
                pending = run
                continue
            }
            if merged.last + 1 == run.start {
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

    /// Leaves out the numbers below `number`: the next run starts at `number` or later. The walk
    /// jumps there (a few steps per digit) instead of visiting what lies between.
    package func skip(below number: Int64) {
        guard number > skipBelow else { return }
        skipBelow = number
        if let run = pending, run.last >= number {
            // The walk is already past `number`.
            if run.start < number { pending = NumberRun(first: number, last: run.last) }
            return
        }
        pending = nil
        guard depth >= 0 else { return }  // Not in a segment: the next one starts past it.
        guard let current else { return }
        let rank = current.localRank(atOrAbove: number)
        guard rank > lowerBound else { return }
        lowerBound = rank
        if lowerBound >= upperBound {
            depth = -1
        } else {
            restartWalk()
        }
    }

    private func restartWalk() {
        depth = 0
        frames[0] = Frame(position: 0, state: 0, number: 0, wildcardPrefix: 0, nextDigit: Swift.max(Int(digits[0]), 0))
    }

    /// The next block of accepted numbers, possibly adjacent to the previous one.
    private func nextPiece() -> NumberRun? {
        while true {
            if depth < 0 {
                guard nextPattern < endPattern else {
                    current = nil
                    return nil
                }
                let index = nextPattern
                nextPattern += 1
                // A pattern wholly below a skip, or outside the ranks, is passed without its tables.
                guard spec.spec.patterns[index].highest >= skipBelow, let local = spec.localRange(of: index, ranks)
                else { continue }
                let pattern = spec.compiled(index)
                current = pattern
                digits = pattern.digits
                completions = pattern.completions
                wildcardSpan = pattern.wildcardSpan
                fullSpan = pattern.fullSpan
                stateCount = pattern.stateCount
                lowerBound = Swift.max(local.lowerBound, skipBelow > 0 ? pattern.localRank(atOrAbove: skipBelow) : 0)
                upperBound = local.upperBound
                if lowerBound >= upperBound { continue }
                restartWalk()
            }
            // Siblings whose subtrees are all accepted are adjacent: gather them into one piece.
            var piece: NumberRun?
            while depth >= 0 {
                let frame = frames[depth]
                let fixed = Int(digits[frame.position])
                if frame.nextDigit > 9 || (fixed >= 0 && frame.nextDigit != fixed) {
                    if piece != nil { return piece }
                    depth -= 1
                    continue
                }
                let digit = frame.nextDigit
                frames[depth].nextDigit = fixed >= 0 ? 10 : digit + 1

                let state = Int(transitions[frame.state &* 10 &+ digit])
                let position = frame.position + 1
                let count = completions[position &* stateCount &+ state]
                let number = frame.number &* 10 &+ Int64(digit)
                let prefix = fixed < 0 ? frame.wildcardPrefix &* 10 &+ Int64(digit) : frame.wildcardPrefix
                let span = wildcardSpan[position]
                let lower = prefix &* span
                let upper = lower &+ span
                if count == 0 || upper <= lowerBound || lower >= upperBound {
                    if piece != nil { return piece }
                    continue
                }
                let full = fullSpan[position]
                if count == full && lower >= lowerBound && upper <= upperBound {
                    if piece == nil {
                        piece = NumberRun(start: number &* full, count: count)
                    } else {
                        piece!.count &+= count
                    }
                    continue
                }
                if piece != nil {
                    // Look at this digit again on the next call, after handing over the piece.
                    frames[depth].nextDigit = digit
                    return piece
                }
                depth += 1
                frames[depth] = Frame(
                    position: position,
                    state: state,
                    number: number,
                    wildcardPrefix: prefix,
                    nextDigit: Swift.max(Int(digits[position]), 0)
                )
            }
            if piece != nil { return piece }
        }
    }
}
