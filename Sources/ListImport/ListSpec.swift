import BlocklistCore
import BlocklistSystem
import SetStorage

/// Everything a packed `generate` combines: patterns (with their exclusions), number lists,
/// labels, and the allow-list that overrides them all.
package struct ListSpec: Sendable {
    /// Blocking patterns and exclusions, as a range-layout spec has them; `nil` for none.
    package var spec: BlockSpec?
    /// Files of numbers to block.
    package var numbers: [String] = []
    /// Files of numbers never to block or identify.
    package var allow: [String] = []
    /// Patterns never to block or identify.
    package var allowPatterns: [BlockPattern] = []
    /// CSV files of `number,label`.
    package var labels: [String] = []
    /// List files (JSON patterns with actions).
    package var lists: [String] = []
    /// Skip (and report) lines that are not numbers instead of refusing the run.
    package var skipInvalid = false
    /// Whether inputs that give no number at all may make an empty set. `generate` refuses that
    /// unless told (`--allow-empty`): an empty set installed replaces a whole list on phones,
    /// and is what a wrong file (another format, every line skipped) gives.
    package var allowEmpty = true
    /// The country code national numbers get.
    package var defaultCountry: Int64?
    /// The most entries of each kind one shard holds.
    package var capacity = BlockSpec.defaultCapacity
    /// Keys a sorter holds in memory before it writes a run.
    package var sortBufferKeys = 64 * 1024

    package init() {}

    /// Whether anything besides patterns is given.
    package var hasLists: Bool {
        !numbers.isEmpty || !allow.isEmpty || !allowPatterns.isEmpty || !labels.isEmpty || !lists.isEmpty
    }

    /// The most distinct labels one generate accepts.
    package static let maximumLabels = 1 << Int(LabelledKeyRuns.labelBits)
    /// Invalid lines shown before "and N more".
    static let examplesShown = 5
    /// Packing fills a shard to this fraction of capacity (15/16), so that a list that grows a
    /// little keeps its shard boundaries.
    package static func fillTarget(_ capacity: Int64) -> Int64 { max(1, capacity - capacity / 16) }
}

/// A packed set's producer: reads the lists into external sorters inside the staging
/// directory, cuts shard boundaries, then writes version 2 shards.
package final class PackedProducer: ShardProducer {
    let list: ListSpec
    /// Sentences about skipped lines and headers, for the caller to print.
    package private(set) var notes: [String] = []
    private var numbers: SortedKeys?
    private var allowed: SortedKeys?
    private var identified: SortedKeys?
    private var labels: [[UInt8]] = []
    private var labelIndex: [[UInt8]: Int] = [:]
    private var inputs: [Manifest.Input] = []
    private var bounds: [Int64] = []
    private var shardLabels: [[Int]] = []
    private var expected: [(blocking: Int64, identified: Int64)] = []
    private var blockingStream: (any RunSource)?
    private var identificationStream: (any LabelledSource)?
    private var blockingHead: NumberRun?
    private var identificationHead: (run: NumberRun, label: Int)?
    private var labelOrigin = ""
    /// The list files' patterns; identify patterns with their label's number.
    private var listBlock: [BlockPattern] = []
    private var listAllow: [BlockPattern] = []
    private var listIdentify: [(pattern: BlockPattern, label: Int)] = []
    /// Whether the boundaries came from the previous generation.
    package private(set) var keptBoundaries = false
    /// Called while the lists are read, every `ReadingProgress.interval` lines and at the end of
    /// each file (`generate` draws its reading line from it on a terminal).
    package var onReading: ((ReadingProgress) -> Void)?
    /// Lines read and numbers kept so far, over every file of the run.
    private var linesRead: Int64 = 0
    private var numbersKept: Int64 = 0
    /// Numbers read to block, and to label, before the allow list.
    private var kept: (blocking: Int64, labels: Int64) = (0, 0)

    package init(_ list: ListSpec) { self.list = list }

    package var manifestSpec: Manifest.Spec {
        Manifest.Spec(
            patterns: list.spec?.patterns ?? [],
            exclusions: list.spec?.exclusions ?? [],
            rangeSize: list.spec?.rangeSize ?? 0,
            capacity: list.capacity,
            layout: .packed,
            allowPatterns: list.allowPatterns,
            inputs: inputs,
            defaultCountry: list.defaultCountry,
            skipInvalid: list.skipInvalid
        )
    }

    package func prepare(staging: DirectoryHandle, previousLowerBounds: () -> [Int64]?) throws(BlocklistError) -> (
        shardCount: Int, totalEntries: Int64
    ) {
        let parser = ListLine(defaultCountry: list.defaultCountry)
        // Shared with the options, not copied, unless a list file adds to them or they need sorting.
        listAllow = list.allowPatterns
        numbers = try sort(list.numbers, kind: "numbers", staging: staging, parser: parser) {
            (number, _, _) throws(ListLineError) in UInt64(number)
        }
        allowed = try sort(list.allow, kind: "allow", staging: staging, parser: parser) {
            (number, _, _) throws(ListLineError) in UInt64(number)
        }
        var label: [UInt8] = []
        label.reserveCapacity(ListLine.maximumLabelBytes + 2)
        identified = try sort(list.labels, kind: "labels", staging: staging, parser: parser) {
            (number, line, fields) throws(ListLineError) in
            guard let second = fields.second else {
                throw ListLineError("it has no label; a labels file holds number,label")
            }
            guard fields.count == 2 else {
                throw ListLineError(
                    "it has \(fields.count) fields; a labels file holds number,label (quote a label that holds \(ListLine.describe(fields.separator ?? 44)), as \"ACME, Inc.\")"
                )
            }
            try ListLine.label(line, second, quoted: fields.secondQuoted, into: &label)
            let index = try self.labelNumber(label)
            return UInt64(number) << LabelledKeyRuns.labelBits | UInt64(index)
        }
        for path in list.lists {
            let file = try ListFile.read(path)
            listBlock += file.block
            listAllow += file.allow
            for (pattern, label) in file.identify {
                do {
                    listIdentify.append((pattern, try labelNumber(label)))
                } catch {
                    throw BlocklistError(.limitExceeded, "\(path): \(pattern): \(error.reason).")
                }
            }
            inputs.append(file.input)
        }
        // In the order the merges take them, once: each pass shares them.
        if !LabelledUnion.inOrder(listAllow) { listAllow.sort { $0.lowest < $1.lowest } }
        if !LabelledUnion.inOrder(listBlock) { listBlock.sort { $0.lowest < $1.lowest } }
        listIdentify.sort { $0.pattern.lowest < $1.pattern.lowest }
        let labelFiles = list.labels + list.lists.filter { _ in !listIdentify.isEmpty }
        labelOrigin =
            labelFiles.count == 1
            ? "in \(labelFiles[0])"
            : "in " + labelFiles.prefix(4).joined(separator: ", ") + (labelFiles.count > 4 ? ", …" : "")

        // Pass 1: count, and cut boundaries.
        if let previous = previousLowerBounds(), case let counts = try count(bounds: previous),
            counts.allSatisfy({ $0.blocking <= list.capacity && $0.identified <= list.capacity })
        {
            bounds = [0] + previous
            expected = counts
            keptBoundaries = true
        } else {
            try cut()
        }
        guard bounds.count <= BlockSpec.maximumShardCount else {
            throw BlocklistError(
                .limitExceeded,
                "The lists need \(bounds.count) shards, more than the \(BlockSpec.maximumShardCount) this tool writes; raise --capacity or shorten the lists."
            )
        }
        let total = expected.reduce(0) { $0 + $1.blocking + $1.identified }
        guard total > 0 || list.allowEmpty else {
            let files = list.numbers + list.labels + list.lists
            // Numbers were read, and the allow list took them all: say so, naming it.
            let allowing = list.allow + listAllow.map(\.description)
            let read =
                kept.blocking + kept.labels > 0 || !listBlock.isEmpty || !listIdentify.isEmpty || list.spec != nil
            if read, !allowing.isEmpty {
                throw BlocklistError(
                    .invalidInput,
                    "The allow list (\(allowing.prefix(3).joined(separator: ", "))\(allowing.count > 3 ? ", …" : "")) removes every number \(files.isEmpty ? "the patterns give" : files.count == 1 ? files[0] + " gives" : files.joined(separator: ", ") + " give"), so the new set would be empty; nothing was written. Check the allow list, or pass --allow-empty to make an empty set on purpose."
                )
            }
            throw BlocklistError(
                .invalidInput,
                "\(files.isEmpty ? "The inputs give" : files.count == 1 ? files[0] + " gives" : files.joined(separator: ", ") + " give") no number to block or identify, so the new set would be empty; nothing was written. Check the files (is every line skipped as invalid?), or pass --allow-empty to make an empty set on purpose."
            )
        }
        return (bounds.count, total)
    }

    /// The number of `label` in the generate's label table, adding it if new.
    private func labelNumber(_ label: [UInt8]) throws(ListLineError) -> Int {
        // A lookup with the caller's buffer allocates nothing; only a new label is copied.
        if let known = labelIndex[label] { return known }
        guard labels.count < ListSpec.maximumLabels else {
            throw ListLineError(
                "it brings label \(labels.count + 1); one generate takes at most \(ListSpec.maximumLabels) distinct labels"
            )
        }
        labels.append(label)
        labelIndex[label] = labels.count - 1
        return labels.count - 1
    }

    /// Reads the files of one kind through a sorter of their own, whose buffer goes when it
    /// returns: one sort buffer at a time, however many kinds of list a run combines.
    private func sort(
        _ paths: [String],
        kind: String,
        staging: DirectoryHandle,
        parser: ListLine,
        _ key: (Int64, UnsafeRawBufferPointer, ListLine.Fields) throws(ListLineError) -> UInt64
    ) throws(BlocklistError) -> SortedKeys {
        let sorter = ExternalSorter(directory: staging, tag: kind, capacity: paths.isEmpty ? 2 : list.sortBufferKeys)
        for path in paths { try read(path, kind: kind, parser: parser, into: sorter, key) }
        return try sorter.finish()
    }

    /// Reads one list file into `sorter`; `key` makes each number (with the line and its second
    /// field) a key.
    private func read(
        _ path: String,
        kind: String,
        parser: ListLine,
        into sorter: ExternalSorter,
        _ key: (Int64, UnsafeRawBufferPointer, ListLine.Fields) throws(ListLineError) -> UInt64
    ) throws(BlocklistError) {
        let lines = try InputLines(path: path)
        var invalid: [String] = []
        var invalidCount: Int64 = 0
        while let next = try lines.nextLine() {
            let made: UInt64?
            do throws(ListLineError) {
                guard case .text(let line) = next else {
                    guard case .tooLong(let bytes) = next else { continue }
                    throw ListLineError(InputLines.tooLongReason(bytes))
                }
                do throws(ListLineError) {
                    guard case .number(let number, let fields) = try parser.parse(line) else { continue }
                    made = try key(number, line, fields)
                } catch {
                    if lines.lineNumber == 1, Self.isHeader(line) {
                        notes.append("\(lines.name):1 has no digits and a separator; read as a CSV header and skipped.")
                        continue
                    }
                    // An export with the name first (Name;Phone): say where the number is read from.
                    if kind != "labels", error.openQuotedField == nil, let fields = try? ListLine.fields(line),
                        let second = fields.second,
                        (try? parser.number(UnsafeRawBufferPointer(rebasing: line[second]))) != nil
                    {
                        throw ListLineError(
                            error.reason
                                + "; the number is read from the first field, and this line's second field holds one: put the phone column first"
                        )
                    }
                    throw error
                }
            } catch {
                made = nil
                invalidCount += 1
                let line = lines.lineNumber
                let reason =
                    try error.openQuotedField.map { (field) throws(BlocklistError) in
                        try Self.skipQuotedLineBreak(lines, field: field)
                    } ?? error.reason
                if invalid.count < ListSpec.examplesShown {
                    invalid.append("\(lines.name):\(line): \(reason)")
                }
            }
            if let made {
                try sorter.add(made)
                numbersKept += 1
                if kind == "numbers" { kept.blocking += 1 } else if kind == "labels" { kept.labels += 1 }
            }
            linesRead += 1
            if let onReading, linesRead % ReadingProgress.interval == 0 { onReading(progress(lines, kind: kind)) }
        }
        onReading?(progress(lines, kind: kind, finished: true))
        if invalidCount > 0 {
            let more =
                invalidCount > Int64(invalid.count) ? "\n  … and \(invalidCount - Int64(invalid.count)) more" : ""
            let listing = invalid.joined(separator: "\n  ") + more
            guard list.skipInvalid else {
                throw BlocklistError(
                    .invalidInput,
                    "\(lines.name) has \(invalidCount) invalid line\(invalidCount == 1 ? "" : "s"); nothing was written. Fix \(invalidCount == 1 ? "it" : "them"), or pass --skip-invalid to skip and report them:\n  \(listing)"
                )
            }
            notes.append(
                "skipped \(invalidCount) invalid line\(invalidCount == 1 ? "" : "s") of \(lines.name) (--skip-invalid):\n  \(listing)"
            )
        }
        inputs.append(
            Manifest.Input(
                kind: kind,
                path: absolutePath(path),
                bytes: lines.bytesRead,
                lines: Int64(lines.lineNumber),
                skipped: invalidCount,
                sha256: lines.sha256()
            )
        )
    }

    /// Where the reading of `lines` stands.
    private func progress(_ lines: InputLines, kind: String, finished: Bool = false) -> ReadingProgress {
        ReadingProgress(
            name: lines.name,
            kind: kind,
            lines: Int64(lines.lineNumber),
            bytesRead: lines.bytesRead,
            size: lines.size,
            totalLines: linesRead,
            kept: numbersKept,
            finished: finished
        )
    }

    /// After a line that ends inside a quoted field: reads on to the line that closes it (an odd
    /// number of quotes; `""` inside the field counts two), so that the record is refused once,
    /// whole, and none of its lines is read as a record of its own. Returns the sentence.
    static func skipQuotedLineBreak(_ lines: InputLines, field: String) throws(BlocklistError) -> String {
        while let next = try lines.nextLine() {
            // A line too long to keep is not read for quotes: the record goes on.
            guard case .text(let text) = next else { continue }
            if text.reduce(0, { $0 + ($1 == UInt8(ascii: "\"") ? 1 : 0) }) % 2 == 1 {
                return
                    "\(field) holds a line break (the record goes on to line \(lines.lineNumber)); a field of a list is on one line, and a label holds no line break"
            }
        }
        return "\(field) is never closed: the record runs to the end of the file"
    }

    /// Whether a first line is a CSV header: no digits, and a `,`, `;` or tab between fields.
    static func isHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        !line.contains(where: { $0 >= 48 && $0 <= 57 })
            && line.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") || $0 == 9 })
    }

    // MARK: Streams

    /// What the allow inputs take out; `nil` for none.
    private func allowStream() throws(BlocklistError) -> (any RunSource)? {
        var sources: [any RunSource] = list.allow.isEmpty ? [] : [KeyRuns(try allowed!.makeIterator())]
        let patterns = listAllow
        if !patterns.isEmpty { sources.append(try Self.runs(of: patterns)) }
        return try union(sources)
    }

    /// The numbers of `patterns` (all with label 0), overlaps merged.
    private static func runs(of patterns: [BlockPattern]) throws(BlocklistError) -> any RunSource {
        UnlabelledRuns(try LabelledUnion([], patterns: patterns, labels: [[]], origin: ""))
    }

    /// The union of `sources`: the source itself when there is one (a stage fewer per run), `nil`
    /// for none.
    private func union(_ sources: [any RunSource]) throws(BlocklistError) -> (any RunSource)? {
        sources.count <= 1 ? sources.first : try UnionRuns(sources)
    }

    private func openStreams() throws(BlocklistError) {
        var sources: [any RunSource] = list.numbers.isEmpty ? [] : [KeyRuns(try numbers!.makeIterator())]
        if let spec = list.spec { sources.append(GeneratedRuns(CompiledSpec(spec).runs())) }
        if !listBlock.isEmpty { sources.append(try Self.runs(of: listBlock)) }
        let blocking = try union(sources) ?? EmptyRuns()
        blockingStream = try allowStream().map { DifferenceRuns(blocking, minus: $0) } ?? blocking
        let keyed = LabelledKeyRuns(try identified!.makeIterator(), labels: labels, origin: labelOrigin)
        let identification: any LabelledSource =
            listIdentify.isEmpty
            ? keyed
            : try LabelledUnion(
                [keyed],
                patterns: listIdentify.map(\.pattern),
                patternLabels: listIdentify.map(\.label),
                labels: labels,
                origin: labelOrigin
            )
        identificationStream = try allowStream().map { LabelledDifference(identification, minus: $0) } ?? identification
        blockingHead = try blockingStream!.nextRun()
        identificationHead = try identificationStream!.nextLabelled()
    }

    /// Counts both kinds per interval of `bounds` (lower bounds of shards 2…n), and the labels
    /// each shard uses.
    private func count(bounds previous: [Int64]) throws(BlocklistError) -> [(blocking: Int64, identified: Int64)] {
        try openStreams()
        var counts: [(blocking: Int64, identified: Int64)] = []
        bounds = [0] + previous
        shardLabels = []
        for shard in 0..<bounds.count {
            let upper = shard + 1 < bounds.count ? bounds[shard + 1] : Int64.max
            var blocking: Int64 = 0
            var identifiedCount: Int64 = 0
            var used = Set<Int>()
            while let run = try takeBlocking(below: upper) { blocking += run.count }
            while let (run, label) = try takeIdentification(below: upper) {
                identifiedCount += run.count
                used.insert(label)
            }
            counts.append((blocking, identifiedCount))
            shardLabels.append(used.sorted())
        }
        return counts
    }

    private func takeBlocking(below upper: Int64) throws(BlocklistError) -> NumberRun? {
        guard let run = blockingHead, run.start < upper else { return nil }
        if run.last < upper {
            blockingHead = try blockingStream!.nextRun()
            return run
        }
        blockingHead = NumberRun(first: upper, last: run.last)
        return NumberRun(first: run.start, last: upper - 1)
    }

    private func takeIdentification(below upper: Int64) throws(BlocklistError) -> (run: NumberRun, label: Int)? {
        guard let (run, label) = identificationHead, run.start < upper else { return nil }
        if run.last < upper {
            identificationHead = try identificationStream!.nextLabelled()
            return (run, label)
        }
        identificationHead = (NumberRun(first: upper, last: run.last), label)
        return (NumberRun(first: run.start, last: upper - 1), label)
    }

    /// Fresh boundaries: fill each shard to the fill target, in number order across both kinds,
    /// and cut at the roundest number (most trailing zeros) between the last entry taken and the
    /// next, so that boundaries fall on number prefixes.
    private func cut() throws(BlocklistError) {
        try openStreams()
        let target = ListSpec.fillTarget(list.capacity)
        bounds = [0]
        var blocking: Int64 = 0
        var identifiedCount: Int64 = 0
        var lastTaken: Int64 = 0
        var counts: [(blocking: Int64, identified: Int64)] = []
        var used = Set<Int>()
        shardLabels = []
        while true {
            let b = blockingHead?.start ?? Int64.max
            let i = identificationHead?.run.start ?? Int64.max
            let start = min(b, i)
            if start == Int64.max { break }
            // The segment from `start` where the set of kinds covering it stays the same.
            var end = Int64.max
            if let run = blockingHead { end = min(end, run.start == start ? run.last : run.start - 1) }
            if let run = identificationHead?.run { end = min(end, run.start == start ? run.last : run.start - 1) }
            let length = end - start + 1
            var room = length
            if b == start { room = min(room, target - blocking) }
            if i == start { room = min(room, target - identifiedCount) }
            let take = max(0, room)
            if take > 0 {
                let upper = take == length ? (end == Int64.max ? end : end + 1) : start + take
                if b == start, let run = try takeBlocking(below: upper) { blocking += run.count }
                if i == start, let taken = try takeIdentification(below: upper) {
                    identifiedCount += taken.run.count
                    used.insert(taken.label)
                }
                lastTaken = upper - 1
            }
            if take < length {
                let next = start + take
                bounds.append(Self.roundest(after: lastTaken, upTo: next))
                counts.append((blocking, identifiedCount))
                shardLabels.append(used.sorted())
                used = []
                blocking = 0
                identifiedCount = 0
            }
        }
        counts.append((blocking, identifiedCount))
        shardLabels.append(used.sorted())
        expected = counts
    }

    /// The number in `(after, upTo]` with the most trailing zeros.
    static func roundest(after lower: Int64, upTo upper: Int64) -> Int64 {
        var scale: Int64 = 1_000_000_000_000_000_000
        while scale > 1 {
            let candidate = (upper / scale) * scale
            if candidate > lower { return candidate }
            scale /= 10
        }
        return upper
    }

    // MARK: Pass 2

    package func writeShard(_ index: Int, path: String, encoder: ShardEncoder, sync: Bool) throws(BlocklistError)
        -> ShardHeader
    {
        if index == 1 { try openStreams() }
        let upper = index < bounds.count ? bounds[index] : Int64.max
        let writer = try ShardWriter(
            path: path,
            shardIndex: index,
            encoder: encoder,
            version: 2,
            lowerBound: bounds[index - 1]
        )
        while let run = try takeBlocking(below: upper) { try writer.append(run) }
        let used = shardLabels[index - 1]
        var local: [Int: Int] = [:]
        for (position, label) in used.enumerated() { local[label] = position }
        try writer.beginIdentification(labels: used.map { labels[$0] })
        while let (run, label) = try takeIdentification(below: upper) {
            try writer.appendIdentification(run, label: local[label]!)
        }
        let header = try writer.finish(sync: sync)
        let want = expected[index - 1]
        guard header.entryCount == want.blocking, header.identificationCount == want.identified else {
            throw BlocklistError(
                .manifestMismatch,
                "Shard \(index) got \(header.entryCount) + \(header.identificationCount) entries but was planned with \(want.blocking) + \(want.identified); this is a bug in blocklist."
            )
        }
        return header
    }

    package func cleanUp() {
        numbers?.remove()
        allowed?.remove()
        identified?.remove()
    }
}

extension ShardSet {
    /// Writes the packed set `list` makes as a new generation in `outputDirectory` and commits it,
    /// as `generate(_:into:sync:force:progress:)` describes: the lists are sorted in the staging
    /// directory, and a previous packed generation's shard bounds are kept while they fit.
    ///
    /// - Returns: what was committed; its notes include skipped lines and CSV headers.
    package static func generate(
        _ list: ListSpec,
        into outputDirectory: String,
        sync: Bool = true,
        force: Bool = false,
        progress: (Progress) throws(BlocklistError) -> Void = { _ in }
    ) throws(BlocklistError) -> Generated {
        let producer = PackedProducer(list)
        var generated = try generate(
            producer: producer,
            into: outputDirectory,
            sync: sync,
            force: force,
            progress: progress
        )
        generated.notes = producer.notes + generated.notes
        return generated
    }
}

/// Where reading the lists stands: the file being read, and the run so far.
package struct ReadingProgress: Sendable, Equatable {
    /// How often (in lines) a producer reports.
    package static let interval: Int64 = 16_384
    /// The file, as sentences name it.
    package var name: String
    /// numbers, allow or labels.
    package var kind: String
    /// This file's lines read, and its bytes (compressed bytes for gzip).
    package var lines: Int64
    package var bytesRead: Int64
    /// The file's size when it is a regular file; `nil` for a pipe.
    package var size: Int64?
    /// Lines read, and numbers kept (valid, not a header), over every file so far.
    package var totalLines: Int64
    package var kept: Int64
    /// Whether the file has been read to its end.
    package var finished: Bool

    package init(
        name: String,
        kind: String,
        lines: Int64,
        bytesRead: Int64,
        size: Int64?,
        totalLines: Int64,
        kept: Int64,
        finished: Bool = false
    ) {
        self.name = name
        self.kind = kind
        self.lines = lines
        self.bytesRead = bytesRead
        self.size = size
        self.totalLines = totalLines
        self.kept = kept
        self.finished = finished
    }
}
