internal import ByteCodecs

/// Reads one shard file, streaming: numbers or runs in ascending order from two fixed 16 KiB
/// buffers and zlib's 32 KiB window, allocated once when the reader opens.
///
/// Opening checks the header, the file size and the payload's CRC-32 before anything is yielded,
/// so a damaged file fails before a Call Directory extension adds a single entry from it.
/// Decoding then checks every run against the header: order, counts, first and last number.
///
/// Blocking entries come first (`next()`, `read(into:)`, `nextRun()`); a version 2 shard then
/// holds its label table (`readLabels()`) and identification runs (`nextIdentificationRun()`).
/// A version 1 shard reads as one with no identification entries.
///
/// - Complexity: O(entries) to read every number, O(runs) for `nextRun()`; memory is fixed
///   (about 80 KiB), plus the shard's label table once it is read.

public final class ShardReader {
    /// The file.
    public let path: String
    /// Its checked header.
    public let header: ShardHeader

    private let file: FileDescriptor
    private let inflater: Inflater
    private let inputBuffer: UnsafeMutableRawBufferPointer
    private let outputBuffer: UnsafeMutableRawBufferPointer
    // The decoding state, touched for every run: no dynamic exclusivity checks (a reader is
    // used by one thread, and no access to these overlaps another), which took a fifth of a
    // 1,000,000-run read.
    @exclusivity(unchecked) private var inputOffset = Int64(ShardHeader.size)
    @exclusivity(unchecked) private var outputPosition = 0
    @exclusivity(unchecked) private var outputCount = 0
    @exclusivity(unchecked) private var streamEnded = false
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var runsRead: UInt32 = 0
    @exclusivity(unchecked) private var entriesBeforeRun: Int64 = 0
    @exclusivity(unchecked) private var previousLast: Int64 = 0
    // Version 2.
    @exclusivity(unchecked) private var unpacker = BitUnpacker()
    @exclusivity(unchecked) private var gapState = RiceState()
    @exclusivity(unchecked) private var lengthState = RiceState()
    @exclusivity(unchecked) private var blockingDone = false
    @exclusivity(unchecked) private var identificationRunsRead: UInt32 = 0
    @exclusivity(unchecked) private var identificationEntriesRead: Int64 = 0
    @exclusivity(unchecked) private var labelWidth = 0
    private var labelTable: [[UInt8]]?
    private var previousLabel = -1

    // The run being expanded by `next()`.
    @exclusivity(unchecked) @usableFromInline var cursor: Int64 = 0
    @exclusivity(unchecked) @usableFromInline var remaining: Int64 = 0

    /// Opens and checks `path`.
    ///
    /// - Throws: `BlocklistError`: `.io` if it cannot be read, `.notAShard` if it is not a shard
    ///   file, `.unsupportedVersion` for a newer format, `.corruptShard` if a check fails.
    public init(path: String) throws(BlocklistError) {
        self.path = path
        file = try FileDescriptor.openForReading(path)
        let size = try file.size()
        guard size > 0 else {
            throw BlocklistError(
                .notAShard,
                "\(path) is empty; a shard file starts with a \(ShardHeader.size)-byte header."
            )
        }
        inputBuffer = .allocate(byteCount: ShardFormat.bufferSize, alignment: 8)
        outputBuffer = .allocate(byteCount: ShardFormat.bufferSize, alignment: 8)
        do throws(BlocklistError) {
            header = try ShardHeader.read(file, buffer: inputBuffer, path: path)
            let expected = header.fileSize
            guard size == expected else {
                throw BlocklistError(
                    .corruptShard,
                    size < expected
                        ? "\(path) is truncated: \(size) bytes, but its header says \(header.byteCount) + \(header.payloadLength)."
                        : "\(path) has \(size - expected) bytes after the end its header gives (\(expected) bytes)."
                )
            }
            try Self.checkPayloadCRC(file, header: header, buffer: inputBuffer, path: path)
            inflater = try Inflater(
                windowBits: ShardFormat.readerWindowBits,
                context: path,
                payloadOffset: Int64(header.byteCount)
            )
        } catch {
            inputBuffer.deallocate()
            outputBuffer.deallocate()
            throw error
        }
        previousLast = header.first - 2
        inputOffset = Int64(header.byteCount)
    }

    deinit {
        inputBuffer.deallocate()
        outputBuffer.deallocate()
    }

    private static func checkPayloadCRC(
        _ file: borrowing FileDescriptor,
        header: ShardHeader,
        buffer: UnsafeMutableRawBufferPointer,
        path: String
    ) throws(BlocklistError) {
        var crc: UInt32 = 0
        var offset = Int64(header.byteCount)
        let end = offset + header.payloadLength
        while offset < end {
            let want = Int(min(Int64(buffer.count), end - offset))
            let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
            guard read > 0 else {
                throw BlocklistError(
                    .corruptShard,
                    "\(path) is truncated at byte \(offset) while its header says \(end)."
                )
            }
            crc = crc32Update(crc, UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            offset += Int64(read)
        }
        guard crc == header.payloadCRC else {
            throw BlocklistError(
                .corruptShard,
                "\(path): payload checksum mismatch (bytes \(header.byteCount)-\(end - 1) give CRC-32 \(hex(crc)), the header says \(hex(header.payloadCRC))); the payload is damaged."
            )
        }
    }

    /// Refuses a shard whose header says it holds more than `capacity` numbers, before any is read:
    /// a hostile header could otherwise promise a stream of billions.
    ///
    /// - Throws: `.capacityExceeded` naming the file.
    public func checkCapacity(_ capacity: Int64) throws(BlocklistError) {
        guard header.entryCount <= capacity else {
            throw BlocklistError(
                .capacityExceeded,
                "\(path) holds \(header.entryCount) entries, more than the \(capacity) an extension may hold; nothing was added."
            )
        }
        guard header.identificationCount <= capacity else {
            throw BlocklistError(
                .capacityExceeded,
                "\(path) holds \(header.identificationCount) identification entries, more than the \(capacity) an extension may hold; nothing was added."
            )
        }
    }

    /// How many numbers have been yielded by `next()` / `read(into:)` so far.
    public var entriesRead: Int64 { entriesBeforeRun - remaining }

    /// The next number, or `nil` after the last one.
    ///
    /// - Throws: `.corruptShard` naming the entry index if the payload disagrees with the header.
    @inlinable
    public func next() throws(BlocklistError) -> Int64? {
        if remaining > 0 {
            remaining &-= 1
            defer { cursor &+= 1 }
            return cursor
        }
        return try nextAfterRun()
    }

    @usableFromInline
    func nextAfterRun() throws(BlocklistError) -> Int64? {
        guard let run = try nextRunForExpansion() else { return nil }
        cursor = run.start &+ 1
        remaining = run.count &- 1
        return run.start
    }

    /// Fills `buffer` with the next numbers; returns how many (0 after the last one).
    public func read(into buffer: UnsafeMutableBufferPointer<Int64>) throws(BlocklistError) -> Int {
        var filled = 0
        while filled < buffer.count {
            if remaining == 0 {
                guard let run = try nextRunForExpansion() else { break }
                cursor = run.start
                remaining = run.count
            }
            let take = Int(min(remaining, Int64(buffer.count - filled)))
            var value = cursor
            for index in filled..<(filled + take) {
                buffer[index] = value
                value &+= 1
            }
            cursor = value
            remaining -= Int64(take)
            filled += take
        }
        return filled
    }

    /// The next run, or `nil` after the last one. Do not mix with `next()`: a run partly yielded
    /// by `next()` is not returned again.
    public func nextRun() throws(BlocklistError) -> NumberRun? {
        remaining = 0
        return try nextRunForExpansion()
    }

    /// Fills `buffer` with the next runs; returns how many (0 after the last one). The same runs
    /// as `nextRun()`, decoded in one loop: the way to read a whole shard fast.
    public func nextRuns(into buffer: UnsafeMutableBufferPointer<NumberRun>) throws(BlocklistError) -> Int {
        remaining = 0
        guard let start = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            filled += decodeRuns(into: start + filled, capacity: buffer.count - filled)
            guard filled < buffer.count, let run = try nextRunForExpansion() else { break }
            buffer[filled] = run
            filled += 1
        }
        return filled
    }

    /// Decodes up to `capacity` blocking runs of a version 2 shard straight from the inflated
    /// bytes, the coder in locals. It stops before any run it leaves to `nextRunForExpansion`:
    /// the first run, one in a buffer's last 32 bytes, an escaped value, one failing a check
    /// (which that then names). Returns how many it decoded.
    @inline(__always)
    private func decodeRuns(into runs: UnsafeMutablePointer<NumberRun>, capacity: Int) -> Int {
        guard header.version >= 2, !finished, !blockingDone, runsRead > 0 else { return 0 }
        let base = UnsafeRawPointer(outputBuffer.baseAddress!)
        let end = outputCount
        let total = header.runCount
        let highest = header.last
        let entryTotal = header.entryCount
        var unpacker = self.unpacker
        var gaps = gapState
        var lengths = lengthState
        var position = outputPosition
        var previous = previousLast
        var entries = entriesBeforeRun
        var read = runsRead
        var produced = 0
        while produced < capacity, read < total, end &- position >= 32 {
            var nextUnpacker = unpacker
            var nextGaps = gaps
            var nextLengths = lengths
            var nextPosition = position
            guard let gap = nextUnpacker.riceInMemory(&nextGaps, from: base, at: &nextPosition),
                let countMinusOne = nextUnpacker.riceInMemory(&nextLengths, from: base, at: &nextPosition)
            else { break }
            // Both are below 2^37, so only the sums near Int64.max can wrap, and then start or
            // last falls below what it follows.
            let start = previous &+ 2 &+ Int64(gap)
            let count = Int64(countMinusOne) &+ 1
            let last = start &+ Int64(countMinusOne)
            guard start > previous, last >= start, last <= highest, count <= entryTotal &- entries else { break }
            runs[produced] = NumberRun(start: start, count: count)
            produced &+= 1
            read &+= 1
            entries &+= count
            previous = last
            unpacker = nextUnpacker
            gaps = nextGaps
            lengths = nextLengths
            position = nextPosition
        }
        self.unpacker = unpacker
        gapState = gaps
        lengthState = lengths
        outputPosition = position
        previousLast = previous
        entriesBeforeRun = entries
        runsRead = read
        return produced
    }

    private func nextRunForExpansion() throws(BlocklistError) -> NumberRun? {
        if finished || blockingDone { return nil }
        var fast = NumberRun(start: 0, count: 0)
        if decodeRuns(into: &fast, capacity: 1) == 1 { return fast }
        guard runsRead < header.runCount else {
            if header.version == 1 {
                try checkEnd()
                finished = true
            } else {
                // Version 2: identification runs follow in the same stream, but the blocking
                // runs must add up now, so that a reader of blocking entries alone learns it too.
                try checkBlockingTotals()
                blockingDone = true
            }
            return nil
        }
        let runIndex = runsRead
        func fail(_ what: String) -> BlocklistError {
            BlocklistError(
                .corruptShard,
                "\(path): run \(runIndex + 1) of \(header.runCount) (entry \(entriesBeforeRun)) \(what)."
            )
        }
        let gap: UInt64
        let countMinusOne: UInt64
        if header.version == 1 {
            gap = try readVarint(in: "run \(runIndex + 1) of \(header.runCount) (entry \(entriesBeforeRun))")
            countMinusOne = try readVarint(in: "run \(runIndex + 1) of \(header.runCount) (entry \(entriesBeforeRun))")
        } else {
            let place = Place(identification: false, run: runIndex)
            gap = try readRice(&gapState, at: place)
            countMinusOne = try readRice(&lengthState, at: place)
        }
        guard let (start, count) = decodeRun(gap: gap, countMinusOne: countMinusOne, step: 2) else {
            throw fail(overflow(gap: gap, countMinusOne: countMinusOne))
        }
        if runIndex == 0 && start != header.first {
            throw fail("starts at \(start), but the header says the first number is \(header.first)")
        }
        let last = start + (count - 1)
        guard last <= header.last else { throw fail("reaches \(last), above the header's last number \(header.last)") }
        guard count <= header.entryCount - entriesBeforeRun else {
            throw fail(
                "holds \(count) entries, more than the \(header.entryCount - entriesBeforeRun) the header leaves after entry \(entriesBeforeRun)"
            )
        }
        runsRead += 1
        entriesBeforeRun += count
        previousLast = last
        return NumberRun(start: start, count: count)
    }

    /// The shard's labels, in table order (version 2; empty for version 1). Reads past any blocking
    /// runs not read yet.
    ///
    /// - Throws: `.corruptShard` if the table disagrees with the header or a label is not UTF-8.
    public func readLabels() throws(BlocklistError) -> [[UInt8]] {
        if let labelTable { return labelTable }
        guard header.version >= 2 else {
            labelTable = []
            return []
        }
        while try nextRunForExpansion() != nil {}
        remaining = 0
        try alignToByte(after: "the blocking runs")
        var labels: [[UInt8]] = []
        labels.reserveCapacity(Int(header.labelCount))
        var total: UInt32 = 0
        for index in 0..<Int(header.labelCount) {
            func fail(_ what: String) -> BlocklistError {
                BlocklistError(.corruptShard, "\(path): label \(index) of \(header.labelCount) \(what).")
            }
            let length = try readVarint(in: "the length of label \(index) of \(header.labelCount)")
            guard length >= 1, length <= UInt64(header.labelBytes - total) else {
                throw fail(
                    "is \(length) bytes, but the header leaves \(header.labelBytes - total) of its \(header.labelBytes) label bytes"
                )
            }
            var label = [UInt8](repeating: 0, count: Int(length))
            for position in 0..<label.count {
                guard let byte = try nextByte() else { throw fail("ends before its \(length) bytes") }
                label[position] = byte
            }
            guard String(decoding: label, as: UTF8.self).utf8.elementsEqual(label) else {
                throw fail("is not valid UTF-8")
            }
            total += UInt32(length)
            labels.append(label)
        }
        guard total == header.labelBytes else {
            throw BlocklistError(
                .corruptShard,
                "\(path): the labels hold \(total) bytes, but the header says \(header.labelBytes)."
            )
        }
        labelWidth = labels.count <= 1 ? 0 : Int.bitWidth - (labels.count - 1).leadingZeroBitCount
        previousLast = header.identificationFirst - 1
        gapState = RiceState()
        lengthState = RiceState()
        labelTable = labels
        return labels
    }

    /// Reads the rest of the payload without yielding it, checking it as the other calls do: a
    /// reader of blocking entries alone then knows that the label table, the identification runs
    /// and the payload's end are sound too (`blocklist cat` without `--labels`).
    ///
    /// - Throws: `.corruptShard` naming what is wrong, as `readLabels()` and
    ///   `nextIdentificationRun()` would.
    public func checkToEnd() throws(BlocklistError) {
        while try nextRunForExpansion() != nil {}
        remaining = 0
        while try nextIdentificationRun() != nil {}
    }

    /// How many identification entries `nextIdentificationRun()` has yielded.
    public var identificationEntriesReadSoFar: Int64 { identificationEntriesRead }

    /// The next identification run and the index of its label in `readLabels()`, or `nil` after
    /// the last one; the first call reads the label table. Checks the end of the payload.
    public func nextIdentificationRun() throws(BlocklistError) -> (run: NumberRun, label: Int)? {
        if finished { return nil }
        if labelTable == nil { _ = try readLabels() }
        guard header.version >= 2 else { return nil }
        let runIndex = identificationRunsRead
        guard runIndex < header.identificationRunCount else {
            try alignToByte(after: "the identification runs")
            try checkPayloadEnd(after: "the \(header.identificationRunCount) identification runs")
            guard identificationEntriesRead == header.identificationCount,
                header.identificationCount == 0 || previousLast == header.identificationLast
            else {
                throw BlocklistError(
                    .corruptShard,
                    "\(path): the identification runs hold \(identificationEntriesRead) entries ending at \(previousLast), but the header says \(header.identificationCount) ending at \(header.identificationLast)."
                )
            }
            finished = true
            return nil
        }
        let place = Place(identification: true, run: runIndex)
        func fail(_ problem: String) -> BlocklistError {
            BlocklistError(.corruptShard, "\(path): \(name(place)) (entry \(identificationEntriesRead)) \(problem).")
        }
        let gap = try readRice(&gapState, at: place)
        let countMinusOne = try readRice(&lengthState, at: place)
        let label = labelWidth == 0 ? 0 : Int(try readBits(labelWidth, at: place))
        guard let (start, count) = decodeRun(gap: gap, countMinusOne: countMinusOne, step: 1) else {
            throw fail(overflow(gap: gap, countMinusOne: countMinusOne))
        }
        if runIndex > 0, gap == 0, label == previousLabel {
            throw fail("continues the previous run with the same label; the writer merges those")
        }
        previousLabel = label
        if runIndex == 0 && start != header.identificationFirst {
            throw fail(
                "starts at \(start), but the header says the first identified number is \(header.identificationFirst)"
            )
        }
        let last = start + (count - 1)
        guard last <= header.identificationLast else {
            throw fail("reaches \(last), above the header's last identified number \(header.identificationLast)")
        }
        guard count <= header.identificationCount - identificationEntriesRead else {
            throw fail("holds \(count) entries, more than the header leaves")
        }
        guard label < Int(header.labelCount) else {
            throw fail("names label \(label) of a table of \(header.labelCount)")
        }
        identificationRunsRead += 1
        identificationEntriesRead += count
        previousLast = last
        return (NumberRun(start: start, count: count), label)
    }

    /// Drops the bits left of the current byte; they must be zero.
    /// Bytes the unpacker took past the boundary stay in it, and `nextByte()` gives them first.
    private func alignToByte(after what: String) throws(BlocklistError) {
        guard unpacker.align() != nil else {
            throw BlocklistError(.corruptShard, "\(path): the padding after \(what) is not zero bits.")
        }
    }

    /// Where a value is read, named in a failure's sentence only when there is one (no String
    /// per run).
    private struct Place {
        var identification: Bool
        var run: UInt32
    }

    private func name(_ place: Place) -> String {
        place.identification
            ? "identification run \(place.run + 1) of \(header.identificationRunCount)"
            : "run \(place.run + 1) of \(header.runCount)"
    }

    /// Adds bytes to the unpacker until it holds more than 55 bits or the payload ends: a word at a
    /// time from the inflated buffer, a byte at a time across its refills.
    @inline(__always)
    private func fill(_ unpacker: inout BitUnpacker) throws(BlocklistError) {
        unpacker.refill(from: outputBuffer.baseAddress!, at: &outputPosition, end: outputCount)
        while unpacker.bitsHeld < 56, let byte = try nextInflatedByte() {
            unpacker.push(byte)
            unpacker.refill(from: outputBuffer.baseAddress!, at: &outputPosition, end: outputCount)
        }
    }

    private func failure(_ failure: BitFailure, at place: Place) -> BlocklistError {
        switch failure {
        case .ended:
            BlocklistError(.corruptShard, "\(path): the payload ends inside \(name(place)).")
        case .notShortest:
            BlocklistError(.corruptShard, "\(path): \(name(place)) has an escaped value not in its shortest form.")
        case .tooLarge:
            BlocklistError(.corruptShard, "\(path): \(name(place)) has a Rice value beyond 64 bits.")
        }
    }

    @inline(__always)
    private func readBits(_ width: Int, at place: Place) throws(BlocklistError) -> UInt64 {
        // unowned(unsafe): the reader outlives the call, and a strong capture cost a retain and
        // a release per value.
        try unpacker.bits(
            width,
            fill: { [unowned(unsafe) self] (unpacker) throws(BlocklistError) in try self.fill(&unpacker) },
            fail: { [unowned(unsafe) self] in self.failure($0, at: place) }
        )
    }

    @inline(__always)
    private func readRice(_ state: inout RiceState, at place: Place) throws(BlocklistError) -> UInt64 {
        try unpacker.rice(
            &state,
            fill: { [unowned(unsafe) self] (unpacker) throws(BlocklistError) in try self.fill(&unpacker) },
            fail: { [unowned(unsafe) self] in self.failure($0, at: place) }
        )
    }

    private func checkEnd() throws(BlocklistError) {
        try checkPayloadEnd(after: "the \(header.runCount) runs")
        try checkBlockingTotals()
    }

    /// Nothing follows `what` in the payload, and the zlib stream is as long as the header says.
    private func checkPayloadEnd(after what: String) throws(BlocklistError) {
        if try nextByte() != nil {
            throw BlocklistError(.corruptShard, "\(path): the payload holds more data after \(what) its header gives.")
        }
        guard inflater.totalIn == header.payloadLength else {
            throw BlocklistError(
                .corruptShard,
                "\(path): the zlib stream ends at payload byte \(inflater.totalIn), but the header says the payload is \(header.payloadLength) bytes."
            )
        }
    }

    /// The run that starts `gap` numbers past `previousLast + step` and holds `countMinusOne + 1`
    /// numbers (blocking runs never touch, so their step is 2; identification runs with another
    /// label may, so theirs is 1), or nil if it does not fit Int64 (`overflow` says how). No
    /// closure is passed: one capturing the reader cost a retain and a release per run.
    @inline(__always)
    private func decodeRun(gap: UInt64, countMinusOne: UInt64, step: Int64) -> (start: Int64, count: Int64)? {
        guard gap <= UInt64(Int64.max), countMinusOne < UInt64(Int64.max) else { return nil }
        let (base, overflow1) = previousLast.addingReportingOverflow(step)
        let (start, overflow2) = base.addingReportingOverflow(Int64(gap))
        let count = Int64(countMinusOne) + 1
        guard !overflow1, !overflow2, start <= Int64.max - (count - 1) else { return nil }
        return (start, count)
    }

    /// Why `decodeRun` found no run.
    private func overflow(gap: UInt64, countMinusOne: UInt64) -> String {
        gap <= UInt64(Int64.max) && countMinusOne < UInt64(Int64.max)
            ? "runs past the largest Int64" : "has a value beyond Int64"
    }

    /// The blocking runs hold the header's count and end at its last number.
    private func checkBlockingTotals() throws(BlocklistError) {
        guard entriesBeforeRun == header.entryCount else {
            throw BlocklistError(
                .corruptShard,
                "\(path): the runs hold \(entriesBeforeRun) entries, but the header says \(header.entryCount)."
            )
        }
        guard header.entryCount == 0 || previousLast == header.last else {
            throw BlocklistError(
                .corruptShard,
                "\(path): the last number is \(previousLast), but the header says \(header.last)."
            )
        }
    }

    /// A LEB128 varint; `what` names its place in a failure's sentence (a run of a version 1
    /// shard, or a label's length).
    private func readVarint(in what: @autoclosure () -> String) throws(BlocklistError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for index in 0..<ShardFormat.maximumVarintBytes {
            guard let byte = try nextByte() else {
                throw BlocklistError(.corruptShard, "\(path): the payload ends inside \(what()).")
            }
            if index == ShardFormat.maximumVarintBytes - 1 && byte > 1 {
                break
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                // A zero last byte after others: not the shortest form, which the writer and the
                // delta reader keep to.
                guard byte != 0 || index == 0 else {
                    throw BlocklistError(.corruptShard, "\(path): \(what()) has a varint not in its shortest form.")
                }
                return value
            }
            shift += 7
        }
        throw BlocklistError(.corruptShard, "\(path): \(what()) has a varint longer than 64 bits.")
    }

    /// The next payload byte: first any whole bytes the unpacker holds after `alignToByte`.
    private func nextByte() throws(BlocklistError) -> UInt8? {
        if unpacker.bitsHeld >= 8 { return unpacker.takeByte() }
        return try nextInflatedByte()
    }

    private func nextInflatedByte() throws(BlocklistError) -> UInt8? {
        while outputPosition == outputCount {
            if streamEnded { return nil }
            if inflater.availableInput == 0 {
                let end = header.fileSize
                let want = Int(min(Int64(inputBuffer.count), end - inputOffset))
                guard want > 0 else {
                    throw BlocklistError(.corruptShard, "\(path): the payload ends before its zlib stream does.")
                }
                let read = try file.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: inputBuffer[0..<want]),
                    at: inputOffset
                )
                guard read > 0 else {
                    throw BlocklistError(.corruptShard, "\(path) is truncated at byte \(inputOffset).")
                }
                inputOffset += Int64(read)
                inflater.setInput(UnsafeRawBufferPointer(rebasing: inputBuffer[0..<read]))
            }
            let (step, produced) = try inflater.inflate(into: outputBuffer)
            outputPosition = 0
            outputCount = produced
            if step == .end { streamEnded = true }
        }
        defer { outputPosition += 1 }
        return outputBuffer[outputPosition]
    }
}
