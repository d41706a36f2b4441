import BlocklistCore

/// Ascending, coalesced runs of numbers, pulled one at a time.
package protocol RunSource: AnyObject {
    func nextRun() throws(BlocklistError) -> NumberRun?
    /// The next run with its numbers below `lower` left out. A source that can jump (a pattern
    /// spec's generator) does so, so that an allow-list covering a vast range costs nothing.
    func nextRun(from lower: Int64) throws(BlocklistError) -> NumberRun?
}

extension RunSource {
    package func nextRun(from lower: Int64) throws(BlocklistError) -> NumberRun? {
        while let run = try nextRun() {
            if run.last < lower { continue }
            return run.start < lower ? NumberRun(first: lower, last: run.last) : run
        }
        return nil
    }
}

/// Ascending runs of identified numbers, each with a label index; adjacent runs differ in label.
package protocol LabelledSource: AnyObject {
    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)?
}

/// A pattern spec's runs.
final class GeneratedRuns: RunSource {
    private let generator: RunGenerator
    init(_ generator: RunGenerator) { self.generator = generator }
    func nextRun() throws(BlocklistError) -> NumberRun? { generator.next() }
    func nextRun(from lower: Int64) throws(BlocklistError) -> NumberRun? {
        generator.skip(below: lower)
        return generator.next()
    }
}

/// Sorted unique numbers as runs.
final class KeyRuns: RunSource {
    private let keys: KeyMerge
    private var pending: Int64?
    init(_ keys: KeyMerge) { self.keys = keys }

    func nextRun() throws(BlocklistError) -> NumberRun? {
        var first = pending
        if first == nil, let key = try keys.next() { first = Int64(bitPattern: key) }
        guard let start = first else { return nil }
        var last = start
        pending = nil
        while let key = try keys.next() {
            let number = Int64(bitPattern: key)
            if number == last + 1 {
                last = number
            } else {
                pending = number
                break
            }
        }
        return NumberRun(first: start, last: last)
    }
}

/// The union of several run sources, coalesced.
final class UnionRuns: RunSource {
    private let sources: [any RunSource]
    private var heads: [NumberRun?]

    init(_ sources: [any RunSource]) throws(BlocklistError) {
        self.sources = sources
        heads = []
        for source in sources { heads.append(try source.nextRun()) }
    }

    func nextRun(from lower: Int64) throws(BlocklistError) -> NumberRun? {
        for index in heads.indices {
            guard let head = heads[index] else { continue }
            if head.last < lower {
                heads[index] = try sources[index].nextRun(from: lower)
            } else if head.start < lower {
                heads[index] = NumberRun(first: lower, last: head.last)
            }
        }
        return try nextRun()
    }

    func nextRun() throws(BlocklistError) -> NumberRun? {
        var best: Int?
        for (index, head) in heads.enumerated() {
            if let head, best.map({ head.start < heads[$0]!.start }) ?? true { best = index }
        }
        guard let first = best, var current = heads[first] else { return nil }
        heads[first] = try sources[first].nextRun()
        var merged = true
        while merged {
            merged = false
            for index in heads.indices {
                guard let head = heads[index], head.start - 1 <= current.last else { continue }
                if head.last > current.last { current = NumberRun(first: current.start, last: head.last) }
                heads[index] = try sources[index].nextRun()
                merged = true
            }
        }
        return current
    }
}

/// `source` without the numbers of `removed`.
final class DifferenceRuns: RunSource {
    private let source: any RunSource
    private let removed: any RunSource
    private var head: NumberRun?
    private var cut: NumberRun?
    private var started = false

    init(_ source: any RunSource, minus removed: any RunSource) {
        self.source = source
        self.removed = removed
    }

    func nextRun() throws(BlocklistError) -> NumberRun? {
        if !started {
            started = true
            head = try source.nextRun()
            cut = try removed.nextRun()
        }
        while let run = head {
            while let c = cut, c.last < run.start { cut = try removed.nextRun() }
            guard let c = cut, c.start <= run.last else {
                head = try source.nextRun()
                return run
            }
            if c.start > run.start {
                head = NumberRun(first: c.start, last: run.last)
                return NumberRun(first: run.start, last: c.start - 1)
            }
            if c.last >= run.last {
                // Jump the source past the cut rather than reading every run it covers.
                head = c.last == Int64.max ? nil : try source.nextRun(from: c.last + 1)
            } else {
                head = NumberRun(first: c.last + 1, last: run.last)
            }
        }
        return nil
    }
}

/// Sorted unique keys `number << labelBits | label` as labelled runs; a number with two labels is
/// refused with both.
final class LabelledKeyRuns: LabelledSource {
    static let labelBits: UInt64 = 13
    static let labelMask: UInt64 = (1 << labelBits) - 1
    private let keys: KeyMerge
    private let labels: [[UInt8]]
    private let origin: String
    private var pending: (number: Int64, label: Int)?
    private var previous: (number: Int64, label: Int)?

    init(_ keys: KeyMerge, labels: [[UInt8]], origin: String) {
        self.keys = keys
        self.labels = labels
        self.origin = origin
    }

    private func read() throws(BlocklistError) -> (number: Int64, label: Int)? {
        guard let key = try keys.next() else { return nil }
        let entry = (number: Int64(bitPattern: key >> Self.labelBits), label: Int(key & Self.labelMask))
        if let previous, previous.number == entry.number {
            throw BlocklistError(
                .invalidInput,
                "+\(entry.number) has two labels, \"\(String(decoding: labels[previous.label], as: UTF8.self))\" and \"\(String(decoding: labels[entry.label], as: UTF8.self))\" (\(origin)); give it one."
            )
        }
        previous = entry
        return entry
    }

    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)? {
        var first = pending
        if first == nil { first = try read() }
        guard let start = first else { return nil }
        pending = nil
        var last = start.number
        while let entry = try read() {
            if entry.number == last + 1 && entry.label == start.label {
                last = entry.number
            } else {
                pending = entry
                break
            }
        }
        return (NumberRun(first: start.number, last: last), start.label)
    }
}

/// Labelled runs without the numbers of `removed`.
final class LabelledDifference: LabelledSource {
    private let source: any LabelledSource
    private let removed: any RunSource
    private var head: (run: NumberRun, label: Int)?
    private var cut: NumberRun?
    private var started = false

    init(_ source: any LabelledSource, minus removed: any RunSource) {
        self.source = source
        self.removed = removed
    }

    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)? {
        if !started {
            started = true
            head = try source.nextLabelled()
            cut = try removed.nextRun()
        }
        while let (run, label) = head {
            while let c = cut, c.last < run.start { cut = try removed.nextRun() }
            guard let c = cut, c.start <= run.last else {
                head = try source.nextLabelled()
                return (run, label)
            }
            if c.start > run.start {
                head = (NumberRun(first: c.start, last: run.last), label)
                return (NumberRun(first: run.start, last: c.start - 1), label)
            }
            if c.last >= run.last {
                head = try source.nextLabelled()
            } else {
                head = (NumberRun(first: c.last + 1, last: run.last), label)
            }
        }
        return nil
    }
}

/// No runs.
final class EmptyRuns: RunSource, LabelledSource {
    func nextRun() throws(BlocklistError) -> NumberRun? { nil }
    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)? { nil }
}

/// One pattern's numbers, all with one label.
final class PatternRuns: LabelledSource {
    private let generator: RunGenerator
    private let label: Int

    init(_ pattern: BlockPattern, label: Int) throws(BlocklistError) {
        // One shard's range for the whole pattern: shards are the planner's business, and a
        // pattern that only allows or identifies numbers must never be cut into shards.
        generator = CompiledSpec(
            try BlockSpec(patterns: [pattern], rangeSize: .max, capacity: BlockSpec.maximumCapacity)
        ).runs()
        self.label = label
    }

    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)? {
        generator.next().map { ($0, label) }
    }
}

/// The union of labelled sources and of labelled patterns, coalesced; a number that two of them
/// give different labels is refused with both.
///
/// Patterns start only when the merge reaches their lowest number, so ten thousand patterns cost
/// a sorted array and the few generators that overlap the current number, not ten thousand
/// generators at once.
final class LabelledUnion: LabelledSource {
    private var active: [(source: any LabelledSource, head: (run: NumberRun, label: Int))] = []
    /// Patterns, by their lowest number, and each one's label (all 0 when `waitingLabels` is
    /// `nil`): parallel arrays, so that patterns handed over in order are shared, not copied.
    private let waiting: [BlockPattern]
    private let waitingLabels: [Int]?
    /// The first of `waiting` not started yet.
    private var nextIndex = 0
    /// How many patterns were started (those a run already held whole never are).
    package private(set) var startedPatterns = 0
    private let labels: [[UInt8]]
    private let origin: String

    /// - Parameters:
    ///   - patterns: ordered by their lowest number (`LabelledUnion.inOrder`).
    ///   - patternLabels: each pattern's label; `nil` for label 0 throughout.
    init(
        _ sources: [any LabelledSource],
        patterns: [BlockPattern],
        patternLabels: [Int]? = nil,
        labels: [[UInt8]],
        origin: String
    ) throws(BlocklistError) {
        precondition(patternLabels == nil || patternLabels!.count == patterns.count)
        precondition(Self.inOrder(patterns), "patterns must be ordered by their lowest number")
        waiting = patterns
        waitingLabels = patternLabels
        self.labels = labels
        self.origin = origin
        for source in sources { try start(source) }
    }

    /// Whether `patterns` are ordered by their lowest number, as `init` takes them.
    static func inOrder(_ patterns: [BlockPattern]) -> Bool {
        zip(patterns, patterns.dropFirst()).allSatisfy { $0.lowest <= $1.lowest }
    }

    private func start(_ source: any LabelledSource) throws(BlocklistError) {
        if let head = try source.nextLabelled() { active.append((source, head)) }
    }

    private var nextWaiting: (pattern: BlockPattern, label: Int)? {
        nextIndex < waiting.count ? (waiting[nextIndex], waitingLabels?[nextIndex] ?? 0) : nil
    }

    /// Starts every waiting pattern whose lowest number is at most `number`, except those that
    /// `covering` (the run being built, and its label) holds whole: they add nothing, and a wide
    /// pattern over twenty thousand narrow ones would otherwise start them all at once.
    private func startPatterns(through number: Int64, covering: (run: NumberRun, label: Int)? = nil)
        throws(BlocklistError)
    {
        while let next = nextWaiting, next.pattern.lowest <= number {
            nextIndex += 1
            if let covering, covering.label == next.label, covering.run.start <= next.pattern.lowest,
                next.pattern.highest <= covering.run.last
            {
                continue
            }
            startedPatterns += 1
            try start(try PatternRuns(next.pattern, label: next.label))
        }
    }

    private func advance(_ index: Int) throws(BlocklistError) {
        if let head = try active[index].source.nextLabelled() {
            active[index].head = head
        } else {
            active.remove(at: index)
        }
    }

    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)? {
        if active.isEmpty, let next = nextWaiting { try startPatterns(through: next.pattern.lowest) }
        while let lowest = active.map(\.head.run.start).min(), let next = nextWaiting, next.pattern.lowest <= lowest {
            try startPatterns(through: lowest)
        }
        guard let first = active.indices.min(by: { active[$0].head.run.start < active[$1].head.run.start }) else {
            return nil
        }
        var (current, label) = active[first].head
        try advance(first)
        var merged = true
        while merged {
            merged = false
            try startPatterns(
                through: current.last == Int64.max ? current.last : current.last + 1,
                covering: (current, label)
            )
            var index = 0
            while index < active.count {
                let (run, other) = active[index].head
                let overlaps = run.start <= current.last
                guard overlaps || (run.start == current.last + 1 && other == label) else {
                    index += 1
                    continue
                }
                if overlaps && other != label {
                    throw BlocklistError(
                        .invalidInput,
                        "+\(run.start) has two labels, \"\(String(decoding: labels[label], as: UTF8.self))\" and \"\(String(decoding: labels[other], as: UTF8.self))\" (\(origin)); give it one."
                    )
                }
                if run.last > current.last { current = NumberRun(first: current.start, last: run.last) }
                let count = active.count
                try advance(index)
                if active.count == count { index += 1 }
                merged = true
            }
        }
        return (current, label)
    }
}

/// A labelled source's numbers without their labels (all one label, so nothing conflicts).
final class UnlabelledRuns: RunSource {
    private let source: any LabelledSource
    init(_ source: any LabelledSource) { self.source = source }
    func nextRun() throws(BlocklistError) -> NumberRun? { try source.nextLabelled()?.run }
}
