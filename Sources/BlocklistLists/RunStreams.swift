import BlocklistCore

/// Ascending, coalesced runs of numbers, pulled one at a time.
public protocol RunSource: AnyObject {
    func nextRun() throws(BlocklistError) -> NumberRun?
}

/// Ascending runs of identified numbers, each with a label index; adjacent runs differ in label.
public protocol LabelledSource: AnyObject {
    func nextLabelled() throws(BlocklistError) -> (run: NumberRun, label: Int)?
}

/// A pattern spec's runs.
final class GeneratedRuns: RunSource {
    private let generator: RunGenerator
    init(_ generator: RunGenerator) { self.generator = generator }
    func nextRun() throws(BlocklistError) -> NumberRun? { generator.next() }
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
                head = try source.nextRun()
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
                "+\(entry.number) has two labels, \"\(String(decoding: labels[previous.label], as: UTF8.self))\" and \"\(String(decoding: labels[entry.label], as: UTF8.self))\" (\(origin)); give it one.")
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
