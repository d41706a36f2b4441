/// The difference between two ascending run streams, computed a run at a time: what to remove
/// (in the old, not in the new) and what to add (in the new, not in the old), both ascending.
///
/// An incremental Call Directory request can send just these, so changing one number of a
/// 2,000,000-entry shard costs two calls instead of a full reload.
///
/// - Complexity: O(runs of both); memory is fixed.
package struct RunDiff<Old: IteratorProtocol<NumberRun>, New: IteratorProtocol<NumberRun>> {
    /// A change to apply.
    public enum Change: Hashable, Sendable {
        case remove(NumberRun)
        case add(NumberRun)
    }

    private var old: Old
    private var new: New
    private var oldRun: NumberRun?
    private var newRun: NumberRun?

    public init(old: Old, new: New) {
        self.old = old
        self.new = new
        oldRun = self.old.next()
        newRun = self.new.next()
    }

    /// The next change, in ascending order of the numbers it covers; `nil` when both streams end.
    public mutating func next() -> Change? {
        while true {
            switch (oldRun, newRun) {
            case (nil, nil):
                return nil
            case (let o?, nil):
                oldRun = old.next()
                return .remove(o)
            case (nil, let n?):
                newRun = new.next()
                return .add(n)
            case (let o?, let n?):
                if o.last < n.start {
                    oldRun = old.next()
                    return .remove(o)
                }
                if n.last < o.start {
                    newRun = new.next()
                    return .add(n)
                }
                // They overlap: hand over the part before the overlap, then drop the common part.
                // Everything is computed from `last`, never `last + 1`: a run may end at Int64.max.
                if o.start < n.start {
                    oldRun = NumberRun(first: n.start, last: o.last)
                    return .remove(NumberRun(first: o.start, last: n.start - 1))
                }
                if n.start < o.start {
                    newRun = NumberRun(first: o.start, last: n.last)
                    return .add(NumberRun(first: n.start, last: o.start - 1))
                }
                let common = min(o.last, n.last)
                if o.last == common { oldRun = old.next() } else { oldRun = NumberRun(first: common + 1, last: o.last) }
                if n.last == common { newRun = new.next() } else { newRun = NumberRun(first: common + 1, last: n.last) }
            }
        }
    }
}

/// Reads a shard's runs as an iterator, stopping at the first damaged run and keeping its error,
/// which the caller must check after the stream ends.
package final class ShardRuns: IteratorProtocol {
    /// The reader it reads.
    public let reader: ShardReader
    /// The error that ended the stream early, if any.
    public private(set) var error: BlocklistError?

    public init(_ reader: ShardReader) { self.reader = reader }

    public func next() -> NumberRun? {
        guard error == nil else { return nil }
        do {
            return try reader.nextRun()
        } catch {
            self.error = error
            return nil
        }
    }
}

/// The difference between two shards' identification entries, a run at a time: a number whose
/// label changed is removed and added again, as CallKit needs. Labels are compared by content.
///
/// - Complexity: O(runs of both); memory is fixed.
package struct IdentificationDiff {
    /// A change to apply; `label` indexes the new shard's labels.
    public enum Change: Hashable, Sendable {
        case remove(NumberRun)
        case add(NumberRun, label: Int)
    }

    private let old: ShardReader
    private let new: ShardReader
    private let oldLabels: [[UInt8]]
    private let newLabels: [[UInt8]]
    private var oldRun: (run: NumberRun, label: Int)?
    private var newRun: (run: NumberRun, label: Int)?
    private var changeAfter: Change?

    /// Diffs `old`'s identification entries against `new`'s. Both readers must have read their
    /// blocking entries (or will skip them).
    public init(old: ShardReader, new: ShardReader) throws(BlocklistError) {
        self.old = old
        self.new = new
        oldLabels = try old.readLabels()
        newLabels = try new.readLabels()
        oldRun = try old.nextIdentificationRun()
        newRun = try new.nextIdentificationRun()
    }

    /// The next change, ascending; `nil` when both streams end.
    public mutating func next() throws(BlocklistError) -> Change? {
        if let change = changeAfter {
            changeAfter = nil
            return change
        }
        while true {
            switch (oldRun, newRun) {
            case (nil, nil):
                return nil
            case (let o?, nil):
                oldRun = try old.nextIdentificationRun()
                return .remove(o.run)
            case (nil, let n?):
                newRun = try new.nextIdentificationRun()
                return .add(n.run, label: n.label)
            case (let o?, let n?):
                if o.run.last < n.run.start {
                    oldRun = try old.nextIdentificationRun()
                    return .remove(o.run)
                }
                if n.run.last < o.run.start {
                    newRun = try new.nextIdentificationRun()
                    return .add(n.run, label: n.label)
                }
                if o.run.start < n.run.start {
                    oldRun = (NumberRun(first: n.run.start, last: o.run.last), o.label)
                    return .remove(NumberRun(first: o.run.start, last: n.run.start - 1))
                }
                if n.run.start < o.run.start {
                    newRun = (NumberRun(first: o.run.start, last: n.run.last), n.label)
                    return .add(NumberRun(first: n.run.start, last: o.run.start - 1), label: n.label)
                }
                let common = NumberRun(first: o.run.start, last: min(o.run.last, n.run.last))
                if o.run.last == common.last {
                    oldRun = try old.nextIdentificationRun()
                } else {
                    oldRun = (NumberRun(first: common.last + 1, last: o.run.last), o.label)
                }
                if n.run.last == common.last {
                    newRun = try new.nextIdentificationRun()
                } else {
                    newRun = (NumberRun(first: common.last + 1, last: n.run.last), n.label)
                }
                if oldLabels[o.label] != newLabels[n.label] {
                    changeAfter = .add(common, label: n.label)
                    return .remove(common)
                }
            }
        }
    }
}

/// How many entries differ between two shards: blocking numbers added and removed, and
/// identification entries (numbers with a label) added and removed, a changed label counting
/// once each way. Streamed through both shards' readers.
///
/// - Complexity: O(runs of both); memory is fixed.
package struct ShardChangeCounts: Hashable, Sendable {
    public var added: Int64 = 0
    public var removed: Int64 = 0
    public var labelsAdded: Int64 = 0
    public var labelsRemoved: Int64 = 0

    public init() {}

    /// The counts from the shard at `oldPath` to the one at `newPath`.
    public init(from oldPath: String, to newPath: String) throws(BlocklistError) {
        let old = ShardRuns(try ShardReader(path: oldPath))
        let new = ShardRuns(try ShardReader(path: newPath))
        var diff = RunDiff(old: old, new: new)
        while let change = diff.next() {
            switch change {
            case .remove(let run): removed += run.count
            case .add(let run): added += run.count
            }
        }
        if let error = old.error ?? new.error { throw error }
        var labels = try IdentificationDiff(old: old.reader, new: new.reader)
        while let change = try labels.next() {
            switch change {
            case .remove(let run): labelsRemoved += run.count
            case .add(let run, _): labelsAdded += run.count
            }
        }
    }
}
