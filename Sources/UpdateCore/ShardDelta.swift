import BlocklistCore

/// The difference between two versions of one shard, as a sorted-set difference: the blocking
/// runs removed and added, and the identification runs removed and added with their labels'
/// text. Runs are gap-coded in version 2's adaptive Rice code (`BitWriter`), so a delta of
/// random numbers costs within about 1 % of their entropy; `DeltaFile` then deflates it.
///
/// The payload (docs/FORMAT.md, "Shard delta"), all varints unsigned LEB128:
/// shard index, the result's format version, its lower bound; the counts of removed blocking,
/// added blocking, removed identification and added identification runs; the label count and
/// each label (length, bytes); then a bit stream of the four sections in that order, each as
/// `RunSection.put` writes it: a bit saying whether any run is longer than one number, the
/// first start in full, then each gap `start - (previousLast + 1)` and, if the bit is 1, each
/// `count - 1`, in two Rice coders that start fresh; an added identification run then has its
/// label index in `ceil(log2(labelCount))` bits. The stream is padded with zero bits to a byte
/// and must end there.
public enum ShardDelta {
    /// A delta's payload is at most this many bytes before compression (1 MiB); a larger change
    /// is published as the full shard, so a phone never holds more than this of one delta.
    public static let maximumPayloadBytes = 1 << 20

    /// What applying a delta changed.
    public struct Counts: Hashable, Sendable {
        public var blockingAdded: Int64 = 0
        public var blockingRemoved: Int64 = 0
        public var identificationAdded: Int64 = 0
        public var identificationRemoved: Int64 = 0
        public init() {}
        public var added: Int64 { blockingAdded + identificationAdded }
        public var removed: Int64 { blockingRemoved + identificationRemoved }
    }

    // MARK: - Making a delta (the publisher)

    /// The payload that turns `old` into `new`, and what it changes.
    ///
    /// - Precondition: both are the same shard index.
    package static func payload(from old: ShardContent, to new: ShardContent) -> (bytes: [UInt8], counts: Counts) {
        precondition(old.index == new.index, "a delta is between two versions of one shard")
        var counts = Counts()
        var removed: [NumberRun] = []
        var added: [NumberRun] = []
        var diff = RunDiff(old: old.blocking.makeIterator(), new: new.blocking.makeIterator())
        while let change = diff.next() {
            switch change {
            case .remove(let run):
                append(run, to: &removed)
                counts.blockingRemoved += run.count
            case .add(let run):
                append(run, to: &added)
                counts.blockingAdded += run.count
            }
        }
        let (removedIdentification, addedIdentification) = labeledDifference(old, new)
        var labels: [[UInt8]] = []
        var labelIndex: [[UInt8]: Int] = [:]
        var addedLabeled: [(NumberRun, Int)] = []
        for (run, text) in addedIdentification {
            let index: Int
            if let known = labelIndex[text] {
                index = known
            } else {
                index = labels.count
                labelIndex[text] = index
                labels.append(text)
            }
            addedLabeled.append((run, index))
            counts.identificationAdded += run.count
        }
        for run in removedIdentification { counts.identificationRemoved += run.count }

        var writer = BitWriter()
        writer.putVarint(UInt64(new.index))
        writer.putVarint(UInt64(new.version))
        writer.putVarint(UInt64(new.lowerBound))
        writer.putVarint(UInt64(removed.count))
        writer.putVarint(UInt64(added.count))
        writer.putVarint(UInt64(removedIdentification.count))
        writer.putVarint(UInt64(addedLabeled.count))
        writer.putVarint(UInt64(labels.count))
        for label in labels {
            writer.putVarint(UInt64(label.count))
            writer.putBytes(label)
        }
        let width = labelWidth(labels.count)
        for section in [removed, added, removedIdentification] {
            RunSection.put(section.map { ($0, 0) }, labelWidth: 0, into: &writer)
        }
        RunSection.put(addedLabeled, labelWidth: width, into: &writer)
        writer.align()
        return (writer.bytes, counts)
    }

    /// Appends `run`, merging it into the last run when they touch.
    private static func append(_ run: NumberRun, to runs: inout [NumberRun]) {
        if let last = runs.last, last.last < Int64.max, last.last + 1 == run.start {
            runs[runs.count - 1].count += run.count
        } else {
            runs.append(run)
        }
    }

    /// The identification entries to remove (numbers whose label goes or changes) and to add
    /// (numbers whose label is new or changed), comparing labels by their text.
    private static func labeledDifference(_ old: ShardContent, _ new: ShardContent) -> (
        removed: [NumberRun], added: [(NumberRun, [UInt8])]
    ) {
        var removed: [NumberRun] = []
        var added: [(NumberRun, [UInt8])] = []
        var i = 0
        var j = 0
        var position = Int64.min
        while i < old.identification.count || j < new.identification.count {
            while i < old.identification.count, old.identification[i].run.last < position { i += 1 }
            while j < new.identification.count, new.identification[j].run.last < position { j += 1 }
            let o = i < old.identification.count ? old.identification[i] : nil
            let n = j < new.identification.count ? new.identification[j] : nil
            if o == nil && n == nil { break }
            let start = max(position, min(o?.run.start ?? .max, n?.run.start ?? .max))
            let oCovers = o.map { $0.run.start <= start } ?? false
            let nCovers = n.map { $0.run.start <= start } ?? false
            // The segment ends where either side's state changes next.
            var end = Int64.max
            if let o { end = min(end, oCovers ? o.run.last : o.run.start - 1) }
            if let n { end = min(end, nCovers ? n.run.last : n.run.start - 1) }
            let oldLabel = oCovers ? old.labels[o!.label] : nil
            let newLabel = nCovers ? new.labels[n!.label] : nil
            if oldLabel != newLabel {
                let segment = NumberRun(first: start, last: end)
                if oldLabel != nil { append(segment, to: &removed) }
                if let newLabel {
                    if let last = added.last, last.1 == newLabel, last.0.last < Int64.max, last.0.last + 1 == start {
                        added[added.count - 1].0.count += segment.count
                    } else {
                        added.append((segment, newLabel))
                    }
                }
            }
            if end == Int64.max { break }
            position = end + 1
        }
        return (removed, added)
    }

    static func labelWidth(_ count: Int) -> Int {
        count <= 1 ? 0 : Int.bitWidth - (count - 1).leadingZeroBitCount
    }

    // MARK: - Reading a delta's header fields

    /// The fields at the start of a payload: which shard it makes and how.
    public struct Target: Hashable, Sendable {
        public var index: Int
        public var version: UInt16
        public var lowerBound: Int64
    }

    /// The shard a payload makes, read from its first fields.
    public static func target(of payload: [UInt8], what: String) throws(UpdateError) -> Target {
        var reader = BitReader(payload, what: what)
        return try readTarget(&reader, what: what)
    }

    private static func readTarget(_ reader: inout BitReader, what: String) throws(UpdateError) -> Target {
        let index = try reader.varint("the shard index")
        let version = try reader.varint("the format version")
        let lowerBound = try reader.varint("the lower bound")
        guard index >= 1, index <= UInt64(UInt32.max) else {
            throw UpdateError(.malformed, "\(what): shard index \(index) is outside 1...\(UInt32.max).")
        }
        guard version == 1 || version == 2 else {
            throw UpdateError(
                .unsupportedVersion,
                "\(what) makes a shard of format version \(version); this reader writes 1 and 2."
            )
        }
        guard lowerBound <= UInt64(Int64.max), version == 2 || lowerBound == 0 else {
            throw UpdateError(.malformed, "\(what): lower bound \(lowerBound) does not suit format version \(version).")
        }
        return Target(index: Int(index), version: UInt16(version), lowerBound: Int64(lowerBound))
    }

    // MARK: - Applying a delta (the phone)

    /// Writes the shard that `payload` makes from the base shard at `basePath` to the new file
    /// `resultPath`, streaming: the base is read twice (its labels first), the result written
    /// once, in fixed memory plus the label tables and the payload.
    ///
    /// Every removal must be in the base and every addition must be new; a delta made from
    /// another base fails here or at the digest check that follows.
    ///
    /// - Returns: the result's header, what changed, and the result's content digest (computed as
    ///   it is written, from the runs as stored).
    /// - Throws: `UpdateError` naming `what` and the run; the caller removes `resultPath`.
    package static func apply(
        _ payload: [UInt8],
        what: String,
        baseAt basePath: String,
        to resultPath: String,
        encoder: ShardEncoder? = nil,
        sync: Bool = true
    ) throws(UpdateError) -> (header: ShardHeader, counts: Counts, digest: [UInt8]) {
        guard payload.count <= maximumPayloadBytes else {
            throw UpdateError(
                .limitExceeded,
                "\(what) is \(payload.count) bytes before compression; a delta is at most \(maximumPayloadBytes)."
            )
        }
        var reader = BitReader(payload, what: what)
        let target = try readTarget(&reader, what: what)
        var sectionCounts: [Int] = []
        for name in [
            "removed blocking runs", "added blocking runs", "removed identification runs", "added identification runs",
        ] {
            let count = try reader.varint("the count of \(name)")
            // Each run takes at least 2 bits, so a count beyond that is a lie.
            guard count <= UInt64(payload.count * 4) else {
                throw UpdateError(
                    .malformed,
                    "\(what) claims \(count) \(name), more than its \(payload.count) bytes hold."
                )
            }
            sectionCounts.append(Int(count))
        }
        let labelCount = try reader.varint("the label count")
        guard labelCount <= UInt64(ShardHeader.maximumLabelCount) else {
            throw UpdateError(
                .limitExceeded,
                "\(what) has \(labelCount) labels; a shard holds at most \(ShardHeader.maximumLabelCount)."
            )
        }
        var deltaLabels: [[UInt8]] = []
        for index in 0..<Int(labelCount) {
            let length = try reader.varint("the length of label \(index)")
            guard length >= 1, length <= UInt64(ShardHeader.maximumLabelBytes) else {
                throw UpdateError(.malformed, "\(what): label \(index) is \(length) bytes; a label is 1 byte to 1 MiB.")
            }
            let label = try reader.bytes(Int(length), "label \(index)")
            guard String(decoding: label, as: UTF8.self).utf8.elementsEqual(label) else {
                throw UpdateError(.malformed, "\(what): label \(index) is not valid UTF-8.")
            }
            deltaLabels.append(label)
        }
        guard Set(deltaLabels).count == deltaLabels.count else {
            throw UpdateError(.malformed, "\(what) lists a label twice.")
        }
        let sectionsStart = reader.position

        do {
            // Pass 1: which of the base's labels survive, so the result's table holds only used ones.
            // A base without labels needs no such pass.
            let labelPass = try ShardReader(path: basePath)
            try checkBase(labelPass.header, target: target, what: what, basePath: basePath)
            let baseLabels = labelPass.header.labelCount > 0 ? try labelPass.readLabels() : []
            var sections = reader
            try skipRuns(&sections, count: sectionCounts[0], labelWidth: 0, "removed blocking runs")
            try skipRuns(&sections, count: sectionCounts[1], labelWidth: 0, "added blocking runs")
            var used = [Bool](repeating: false, count: baseLabels.count)
            var keptIdentification = Subtraction(
                removals: RunSection(
                    sections,
                    count: sectionCounts[2],
                    labelWidth: 0,
                    what: "removed identification runs"
                ),
                base: labelPass
            )
            while !baseLabels.isEmpty, let (run, label) = try keptIdentification.next(what: what) {
                _ = run
                used[label] = true
            }
            var resultLabels: [[UInt8]] = []
            var resultIndex: [[UInt8]: Int] = [:]
            var baseToResult = [Int](repeating: -1, count: baseLabels.count)
            for (index, label) in baseLabels.enumerated() where used[index] {
                if let known = resultIndex[label] {
                    baseToResult[index] = known
                } else {
                    baseToResult[index] = resultLabels.count
                    resultIndex[label] = resultLabels.count
                    resultLabels.append(label)
                }
            }
            var deltaToResult: [Int] = []
            for label in deltaLabels {
                if let known = resultIndex[label] {
                    deltaToResult.append(known)
                } else {
                    deltaToResult.append(resultLabels.count)
                    resultIndex[label] = resultLabels.count
                    resultLabels.append(label)
                }
            }

            // Pass 2: write. A base without labels was not read by pass 1: its reader goes on
            // (opening it again would read and check the whole file a second time).
            let base = baseLabels.isEmpty ? labelPass : try ShardReader(path: basePath)
            let writer = try ShardWriter(
                path: resultPath,
                shardIndex: target.index,
                encoder: encoder,
                version: target.version,
                lowerBound: target.lowerBound
            )
            var counts = Counts()
            // The result's digest, from the runs as the writer stores them (touching runs merged),
            // so the result need not be read back.
            var hasher = ContentHasher(version: target.version, index: target.index, lowerBound: target.lowerBound)
            var pending: NumberRun?
            var pendingLabel = -1
            var blockingSections = reader
            var removals = RunSection(
                blockingSections,
                count: sectionCounts[0],
                labelWidth: 0,
                what: "removed blocking runs"
            )
            try skipRuns(&blockingSections, count: sectionCounts[0], labelWidth: 0, "removed blocking runs")
            var additions = RunSection(
                blockingSections,
                count: sectionCounts[1],
                labelWidth: 0,
                what: "added blocking runs"
            )
            try applyBlocking(
                base: base,
                removals: &removals,
                additions: &additions,
                writer: writer,
                hasher: &hasher,
                counts: &counts,
                what: what
            )
            hasher.beginIdentification()
            if target.version >= 2 {
                try writer.beginIdentification(labels: resultLabels)
            } else if sectionCounts[2] + sectionCounts[3] > 0 || base.header.identificationCount > 0 {
                throw UpdateError(
                    .malformed,
                    "\(what) makes a format version 1 shard, which holds no identification entries."
                )
            }
            var idSections = reader
            try skipRuns(&idSections, count: sectionCounts[0], labelWidth: 0, "removed blocking runs")
            try skipRuns(&idSections, count: sectionCounts[1], labelWidth: 0, "added blocking runs")
            var keptIds = Subtraction(
                removals: RunSection(
                    idSections,
                    count: sectionCounts[2],
                    labelWidth: 0,
                    what: "removed identification runs"
                ),
                base: base
            )
            try skipRuns(&idSections, count: sectionCounts[2], labelWidth: 0, "removed identification runs")
            let width = labelWidth(deltaLabels.count)
            var idAdditions = RunSection(
                idSections,
                count: sectionCounts[3],
                labelWidth: width,
                what: "added identification runs"
            )
            _ = try base.readLabels()
            try merge(
                kept: { () throws in
                    try keptIds.next(what: what)
                },
                added: { () throws in
                    guard let (run, label) = try idAdditions.next() else { return nil }
                    guard label < deltaLabels.count else {
                        throw UpdateError(
                            .malformed,
                            "\(what): an added identification run names label \(label) of \(deltaLabels.count)."
                        )
                    }
                    return (run, label)
                },
                what: "\(what), identification",
                basePath: basePath,
                emit: { (run, label, isAddition) throws in
                    guard target.version >= 2 else { return }
                    let resultLabel = isAddition ? deltaToResult[label] : baseToResult[label]
                    try writer.appendIdentification(run, label: resultLabel)
                    if isAddition { counts.identificationAdded += run.count }
                    if let last = pending, last.last < Int64.max, last.last + 1 == run.start,
                        pendingLabel == resultLabel
                    {
                        pending = NumberRun(start: last.start, count: last.count + run.count)
                    } else {
                        if let last = pending { hasher.identification(last, label: resultLabels[pendingLabel]) }
                        pending = run
                        pendingLabel = resultLabel
                    }
                }
            )
            counts.identificationRemoved = keptIds.removedEntries
            var end = idAdditions.reader
            try end.align("the added identification runs")
            guard end.atCleanEnd else {
                throw UpdateError(.malformed, "\(what) has bytes after its last section.")
            }
            _ = sectionsStart
            if let last = pending { hasher.identification(last, label: resultLabels[pendingLabel]) }
            return (try writer.finish(sync: sync), counts, hasher.finish())
        } catch let error as UpdateError {
            throw error
        } catch let error as BlocklistError {
            throw UpdateError(error)
        } catch {
            throw UpdateError(.shard, "\(what): \(error)")
        }
    }

    /// The blocking half of `apply`: the base's runs minus `removals` plus `additions`, in
    /// order, into `writer` and `hasher`, a batch of runs at a time; a run that touches the one
    /// before is merged with it, as the writer stores it. The same checks as `Subtraction` and
    /// `merge`, which the identification runs take one at a time: every removed number is in
    /// the base, and no added one is. A base run below the next removal and the next addition,
    /// nearly every run of a small delta, is only copied.
    private static func applyBlocking(
        base: ShardReader,
        removals: inout RunSection,
        additions: inout RunSection,
        writer: ShardWriter,
        hasher: inout ContentHasher,
        counts: inout Counts,
        what: String
    ) throws {
        let capacity = 4096
        let input = UnsafeMutableBufferPointer<NumberRun>.allocate(capacity: capacity)
        defer { input.deallocate() }
        // A second thread writes (and shares the hash) while this one decodes, for a shard large
        // enough to repay starting it (about 40 µs).
        let threaded =
            base.header.runCount >= threadedRunCount
            ? ThreadedRunSink.start(writer: writer, hasher: hasher, capacity: capacity) : nil
        defer { threaded?.cancel() }
        let direct = threaded == nil ? DirectRunSink(writer: writer, hasher: hasher, capacity: capacity) : nil
        let sink: any RunSink = threaded ?? direct!
        var output = RunBatch(sink: sink, first: threaded?.first ?? direct!.first)
        var removal = try removals.next()?.0
        var addition = try additions.next()?.0
        var limit = min(removal?.start ?? Int64.max, addition?.start ?? Int64.max)
        while true {
            let read = try base.nextRuns(into: input)
            guard read > 0 else { break }
            var index = 0
            while index < read {
                // The base's runs below the next change go on as they are, in bulk.
                var end = index
                while end < read, input[end].last < limit { end += 1 }
                if end > index { try output.emit(contentsOf: UnsafeBufferPointer(rebasing: input[index..<end])) }
                guard end < read else { break }
                let run = input[end]
                index = end + 1
                var rest: NumberRun? = run
                while let current = rest, let cut = removal, cut.start <= current.last {
                    guard cut.start >= current.start else {
                        throw UpdateError(
                            .wrongBase,
                            "\(what) removes \(cut.start), which the base \(base.path) does not hold; the delta was made from another version of the shard, or that file was changed."
                        )
                    }
                    if cut.start > current.start {
                        try keep(
                            NumberRun(first: current.start, last: cut.start - 1),
                            after: &addition,
                            from: &additions,
                            into: &output,
                            counts: &counts,
                            what: what,
                            basePath: base.path
                        )
                    }
                    if cut.last <= current.last {
                        counts.blockingRemoved += cut.count
                        rest = cut.last < current.last ? NumberRun(first: cut.last + 1, last: current.last) : nil
                        removal = try removals.next()?.0
                    } else {
                        // The removal runs on past this run; the next must start right after.
                        counts.blockingRemoved += current.last - cut.start + 1
                        removal = NumberRun(first: current.last + 1, last: cut.last)
                        rest = nil
                    }
                }
                if let rest {
                    try keep(
                        rest,
                        after: &addition,
                        from: &additions,
                        into: &output,
                        counts: &counts,
                        what: what,
                        basePath: base.path
                    )
                }
                limit = min(removal?.start ?? Int64.max, addition?.start ?? Int64.max)
            }
        }
        if let removal {
            throw UpdateError(
                .wrongBase,
                "\(what) removes \(removal), which the base \(base.path) does not hold; the delta was made from another version of the shard, or that file was changed."
            )
        }
        while let added = addition {
            try output.emit(added)
            counts.blockingAdded += added.count
            addition = try additions.next()?.0
        }
        try output.finish()
        hasher = sink.hasher
    }

    /// From how many base runs `apply` writes on a second thread.
    static let threadedRunCount: UInt32 = 50_000

    /// Emits `kept` after the additions below it; none may overlap it.
    private static func keep(
        _ kept: NumberRun,
        after addition: inout NumberRun?,
        from additions: inout RunSection,
        into output: inout RunBatch,
        counts: inout Counts,
        what: String,
        basePath: String
    ) throws {
        while let added = addition, added.last < kept.start {
            try output.emit(added)
            counts.blockingAdded += added.count
            addition = try additions.next()?.0
        }
        if let added = addition, added.start <= kept.last {
            throw UpdateError(
                .wrongBase,
                "\(what), blocking: the delta adds \(added), which the base \(basePath) already holds; the delta was made from another version of the shard, or that file was changed."
            )
        }
        try output.emit(kept)
    }

    private static func checkBase(_ header: ShardHeader, target: Target, what: String, basePath: String)
        throws(UpdateError)
    {
        guard Int(header.shardIndex) == target.index else {
            throw UpdateError(
                .wrongBase,
                "\(what) is for shard \(target.index), but \(basePath) is shard \(header.shardIndex)."
            )
        }
    }

    private static func skipRuns(_ reader: inout BitReader, count: Int, labelWidth: Int, _ name: String)
        throws(UpdateError)
    {
        var section = RunSection(reader, count: count, labelWidth: labelWidth, what: name)
        while try section.next() != nil {}
        reader = section.reader
    }

    /// Merges the kept runs and the added runs in ascending order; they must not overlap.
    private static func merge(
        kept: () throws -> (NumberRun, Int)?,
        added: () throws -> (NumberRun, Int)?,
        what: String,
        basePath: String,
        emit: (NumberRun, Int, Bool) throws -> Void
    ) throws {
        var k = try kept()
        var a = try added()
        do {
            while true {
                switch (k, a) {
                case (nil, nil):
                    return
                case (let (run, label)?, nil):
                    try emit(run, label, false)
                    k = try kept()
                case (nil, let (run, label)?):
                    try emit(run, label, true)
                    a = try added()
                case (let (keptRun, keptLabel)?, let (addedRun, addedLabel)?):
                    if keptRun.last < addedRun.start {
                        try emit(keptRun, keptLabel, false)
                        k = try kept()
                    } else if addedRun.last < keptRun.start {
                        try emit(addedRun, addedLabel, true)
                        a = try added()
                    } else {
                        throw UpdateError(
                            .wrongBase,
                            "\(what): the delta adds \(addedRun), which the base \(basePath) already holds; the delta was made from another version of the shard, or that file was changed."
                        )
                    }
                }
            }
        }
    }
}

/// Blocking runs on their way to a shard writer and a content hasher (a `RunSink`), merged
/// where they touch (as the writer stores them, and so as they are hashed), handed on a buffer at
/// a time.
private struct RunBatch {
    private var runs: UnsafeMutableBufferPointer<NumberRun>
    private var count = 0
    private let sink: any RunSink

    init(sink: any RunSink, first: UnsafeMutableBufferPointer<NumberRun>) {
        self.sink = sink
        runs = first
    }

    @inline(__always)
    mutating func emit(_ run: NumberRun) throws(BlocklistError) {
        if count > 0 {
            let last = runs[count - 1]
            if last.last < Int64.max, last.last + 1 == run.start {
                runs[count - 1].count += run.count
                return
            }
            if count == runs.count { try handOnAllButLast() }
        }
        runs[count] = run
        count += 1
    }

    /// Emits `segment`, runs of which no two touch (a shard's own runs), copying them in bulk.
    mutating func emit(contentsOf segment: UnsafeBufferPointer<NumberRun>) throws(BlocklistError) {
        guard let first = segment.first, let source = segment.baseAddress else { return }
        try emit(first)
        var offset = 1
        while offset < segment.count {
            if count == runs.count { try handOnAllButLast() }
            let take = min(segment.count - offset, runs.count - count)
            (runs.baseAddress! + count).update(from: source + offset, count: take)
            count += take
            offset += take
        }
    }

    /// Hands on a full buffer but its last run, which may still grow and so moves to the next.
    private mutating func handOnAllButLast() throws(BlocklistError) {
        let last = runs[count - 1]
        runs = try sink.consume(runs, count: count - 1)
        runs[0] = last
        count = 1
    }

    /// Hands on what is left and waits for the sink.
    mutating func finish() throws(BlocklistError) {
        if count > 0 { runs = try sink.consume(runs, count: count) }
        count = 0
        try sink.finish()
    }
}

/// One section of runs in a delta's bit stream.
struct RunSection {
    var reader: BitReader
    private var remaining: Int
    private let labelWidth: Int
    private let what: String
    private var gaps = RiceState()
    private var lengths = RiceState()
    private var previousLast: Int64 = 0
    private var index = 0
    private var hasLengths = false

    init(_ reader: BitReader, count: Int, labelWidth: Int, what: String) {
        self.reader = reader
        remaining = count
        self.labelWidth = labelWidth
        self.what = what
    }

    mutating func next() throws(UpdateError) -> (NumberRun, Int)? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        index += 1
        let start: Int64
        if index == 1 {
            hasLengths = try reader.bits(1, "\(what), its first bit") == 1
            let value = try reader.explicit("\(what), run 1")
            guard value <= UInt64(Int64.max) else {
                throw UpdateError(.malformed, "\(reader.what): run 1 of the \(what) starts past the largest number.")
            }
            start = Int64(value)
        } else {
            let gap = try reader.rice(&gaps, "\(what), run \(index)")
            guard previousLast < Int64.max, gap <= UInt64(Int64.max - previousLast - 1) else {
                throw UpdateError(
                    .malformed,
                    "\(reader.what): run \(index) of the \(what) reaches past the largest number."
                )
            }
            start = previousLast + 1 + Int64(gap)
        }
        let countMinusOne = hasLengths ? try reader.rice(&lengths, "\(what), run \(index)") : 0
        let label = labelWidth == 0 ? 0 : Int(try reader.bits(labelWidth, "\(what), run \(index)"))
        guard countMinusOne < UInt64(Int64.max), Int64(countMinusOne) <= Int64.max - start else {
            throw UpdateError(
                .malformed,
                "\(reader.what): run \(index) of the \(what) reaches past the largest number."
            )
        }
        let run = NumberRun(start: start, count: Int64(countMinusOne) + 1)
        previousLast = run.last
        return (run, label)
    }

    /// Writes a section as `next()` reads it: when it has runs, one bit (whether any run is
    /// longer than one number), the first run's start in full (6 bits of bit length − 1, then
    /// the bits), and each later run's gap from the one before in the adaptive Rice code; each
    /// run's `count − 1` in a second Rice coder only if the bit is 1; then its label index.
    static func put(_ runs: [(NumberRun, Int)], labelWidth: Int, into writer: inout BitWriter) {
        guard let first = runs.first?.0 else { return }
        let hasLengths = runs.contains { $0.0.count > 1 }
        writer.put(hasLengths ? 1 : 0, 1)
        var gaps = RiceState()
        var lengths = RiceState()
        var previousLast = first.start - 1
        for (offset, (run, label)) in runs.enumerated() {
            if offset == 0 {
                writer.putExplicit(UInt64(run.start))
            } else {
                writer.putRice(UInt64(run.start - (previousLast + 1)), &gaps)
            }
            if hasLengths { writer.putRice(UInt64(run.count - 1), &lengths) }
            writer.put(UInt64(label), labelWidth)
            previousLast = run.last
        }
    }
}

/// The base's identification runs minus the removed ones, streaming; every removed number must
/// be in the base. (`ShardDelta.applyBlocking` does the same for blocking runs, a batch at a time.)
struct Subtraction {
    private var removals: RunSection
    private let base: ShardReader
    private var current: (NumberRun, Int)?
    private var removal: NumberRun?
    private var removalsDone = false
    private(set) var removedEntries: Int64 = 0

    init(removals: RunSection, base: ShardReader) {
        self.removals = removals
        self.base = base
    }

    mutating func next(what: String) throws -> (NumberRun, Int)? {
        while true {
            if current == nil {
                current = try base.nextIdentificationRun().map { ($0.run, $0.label) }
            }
            if removal == nil && !removalsDone {
                removal = try removals.next()?.0
                if removal == nil { removalsDone = true }
            }
            guard let (run, label) = current else {
                if let removal {
                    throw UpdateError(
                        .wrongBase,
                        "\(what) removes \(removal), which the base \(base.path) does not hold; the delta was made from another version of the shard, or that file was changed."
                    )
                }
                return nil
            }
            guard let cut = removal, cut.start <= run.last else {
                current = nil
                return (run, label)
            }
            guard cut.start >= run.start else {
                throw UpdateError(
                    .wrongBase,
                    "\(what) removes \(cut.start), which the base \(base.path) does not hold; the delta was made from another version of the shard, or that file was changed."
                )
            }
            let before = cut.start > run.start ? NumberRun(first: run.start, last: cut.start - 1) : nil
            if cut.last <= run.last {
                removedEntries += cut.count
                current = cut.last < run.last ? (NumberRun(first: cut.last + 1, last: run.last), label) : nil
                removal = nil
            } else {
                // The removal runs on into the next base run, which must touch this one.
                removedEntries += run.last - cut.start + 1
                removal = NumberRun(first: run.last + 1, last: cut.last)
                current = nil
            }
            if let before { return (before, label) }
        }
    }
}
