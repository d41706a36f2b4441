/// Reads one shard file, streaming: numbers or runs in ascending order from two fixed 16 KiB
/// buffers and zlib's 32 KiB window, allocated once when the reader opens.
///
/// Opening checks the header, the file size and the payload's CRC-32 before anything is yielded,
/// so a damaged file fails before a Call Directory extension adds a single entry from it.
/// Decoding then checks every run against the header: order, counts, first and last number.
///
/// - Complexity: O(entries) to read every number, O(runs) for `nextRun()`; memory is fixed
///   (about 80 KiB).
public final class ShardReader {
    /// The file.
    public let path: String
    /// Its checked header.
    public let header: ShardHeader

    private let file: FileDescriptor
    private let inflater: Inflater
    private let inputBuffer: UnsafeMutableRawBufferPointer
    private let outputBuffer: UnsafeMutableRawBufferPointer
    private var inputOffset = Int64(ShardHeader.size)
    private var outputPosition = 0
    private var outputCount = 0
    private var streamEnded = false
    private var finished = false
    private var runsRead: UInt32 = 0
    private var entriesBeforeRun: Int64 = 0
    private var previousLast: Int64 = 0

    // The run being expanded by `next()`.
    @usableFromInline var cursor: Int64 = 0
    @usableFromInline var remaining: Int64 = 0

    /// Opens and checks `path`.
    ///
    /// - Throws: `BlocklistError`: `.io` if it cannot be read, `.notAShard` if it is not a shard
    ///   file, `.unsupportedVersion` for a newer format, `.corruptShard` if a check fails.
    public init(path: String) throws(BlocklistError) {
        self.path = path
        file = try FileDescriptor.openForReading(path)
        let size = try file.size()
        guard size > 0 else {
            throw BlocklistError(.notAShard, "\(path) is empty; a shard file starts with a \(ShardHeader.size)-byte header.")
        }
        inputBuffer = .allocate(byteCount: ShardFormat.bufferSize, alignment: 8)
        outputBuffer = .allocate(byteCount: ShardFormat.bufferSize, alignment: 8)
        do throws(BlocklistError) {
            let headerBytes = UnsafeMutableRawBufferPointer(rebasing: inputBuffer[0..<ShardHeader.size])
            let read = try file.read(into: headerBytes, at: 0)
            guard read == ShardHeader.size else {
                if read >= 8, zip(headerBytes.prefix(8), ShardHeader.magic).allSatisfy({ $0 == $1 }) {
                    throw BlocklistError(.corruptShard, "\(path) is truncated: \(read) bytes, shorter than the \(ShardHeader.size)-byte header.")
                }
                throw BlocklistError(.notAShard, "\(path) is not a shard file: \(read) bytes, shorter than the \(ShardHeader.size)-byte header.")
            }
            header = try ShardHeader.decode(UnsafeRawBufferPointer(headerBytes), path: path)
            let expected = Int64(ShardHeader.size) + header.payloadLength
            guard size == expected else {
                throw BlocklistError(
                    .corruptShard,
                    size < expected
                        ? "\(path) is truncated: \(size) bytes, but its header says \(ShardHeader.size) + \(header.payloadLength)."
                        : "\(path) has \(size - expected) bytes after the end its header gives (\(expected) bytes).")
            }
            try Self.checkPayloadCRC(file, header: header, buffer: inputBuffer, path: path)
            inflater = try Inflater(windowBits: ShardFormat.readerWindowBits, context: path, payloadOffset: Int64(ShardHeader.size))
        } catch {
            inputBuffer.deallocate()
            outputBuffer.deallocate()
            throw error
        }
        previousLast = header.first - 2
    }

    deinit {
        inputBuffer.deallocate()
        outputBuffer.deallocate()
    }

    private static func checkPayloadCRC(
        _ file: borrowing FileDescriptor, header: ShardHeader, buffer: UnsafeMutableRawBufferPointer, path: String
    ) throws(BlocklistError) {
        var crc: UInt32 = 0
        var offset = Int64(ShardHeader.size)
        let end = offset + header.payloadLength
        while offset < end {
            let want = Int(min(Int64(buffer.count), end - offset))
            let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
            guard read > 0 else {
                throw BlocklistError(.corruptShard, "\(path) is truncated at byte \(offset) while its header says \(end).")
            }
            crc = crc32Update(crc, UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            offset += Int64(read)
        }
        guard crc == header.payloadCRC else {
            throw BlocklistError(
                .corruptShard,
                "\(path): payload checksum mismatch (bytes \(ShardHeader.size)-\(end - 1) give CRC-32 \(hex(crc)), the header says \(hex(header.payloadCRC))); the payload is damaged.")
        }
    }

    /// Refuses a shard whose header says it holds more than `capacity` numbers, before any is read:
    /// a hostile header could otherwise promise a stream of billions.
    ///
    /// - Throws: `.capacityExceeded` naming the file.
    public func checkCapacity(_ capacity: Int64) throws(BlocklistError) {
        guard header.entryCount <= capacity else {
            throw BlocklistError(
                .capacityExceeded, "\(path) holds \(header.entryCount) entries, more than the \(capacity) an extension may hold; nothing was added.")
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

    private func nextRunForExpansion() throws(BlocklistError) -> NumberRun? {
        if finished { return nil }
        guard runsRead < header.runCount else {
            try checkEnd()
            finished = true
            return nil
        }
        let runIndex = runsRead
        func fail(_ what: String) -> BlocklistError {
            BlocklistError(.corruptShard, "\(path): run \(runIndex + 1) of \(header.runCount) (entry \(entriesBeforeRun)) \(what).")
        }
        let gap = try readVarint(runIndex: runIndex)
        let countMinusOne = try readVarint(runIndex: runIndex)
        guard gap <= UInt64(Int64.max), countMinusOne < UInt64(Int64.max) else { throw fail("has a value beyond Int64") }
        let (base, overflow1) = previousLast.addingReportingOverflow(2)
        let (start, overflow2) = base.addingReportingOverflow(Int64(gap))
        let count = Int64(countMinusOne) + 1
        guard !overflow1, !overflow2, start <= Int64.max - (count - 1) else { throw fail("runs past the largest Int64") }
        if runIndex == 0 && start != header.first {
            throw fail("starts at \(start), but the header says the first number is \(header.first)")
        }
        let last = start + (count - 1)
        guard last <= header.last else { throw fail("reaches \(last), above the header's last number \(header.last)") }
        guard count <= header.entryCount - entriesBeforeRun else {
            throw fail("holds \(count) entries, more than the \(header.entryCount - entriesBeforeRun) the header leaves after entry \(entriesBeforeRun)")
        }
        runsRead += 1
        entriesBeforeRun += count
        previousLast = last
        return NumberRun(start: start, count: count)
    }

    private func checkEnd() throws(BlocklistError) {
        if try nextByte() != nil {
            throw BlocklistError(.corruptShard, "\(path): the payload holds more data after the \(header.runCount) runs its header gives.")
        }
        guard inflater.totalIn == header.payloadLength else {
            throw BlocklistError(
                .corruptShard,
                "\(path): the zlib stream ends at payload byte \(inflater.totalIn), but the header says the payload is \(header.payloadLength) bytes.")
        }
        guard entriesBeforeRun == header.entryCount else {
            throw BlocklistError(.corruptShard, "\(path): the runs hold \(entriesBeforeRun) entries, but the header says \(header.entryCount).")
        }
        guard header.entryCount == 0 || previousLast == header.last else {
            throw BlocklistError(.corruptShard, "\(path): the last number is \(previousLast), but the header says \(header.last).")
        }
    }

    private func readVarint(runIndex: UInt32) throws(BlocklistError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for index in 0..<ShardFormat.maximumVarintBytes {
            guard let byte = try nextByte() else {
                throw BlocklistError(
                    .corruptShard,
                    "\(path): the payload ends inside run \(runIndex + 1) of \(header.runCount) (entry \(entriesBeforeRun)).")
            }
            if index == ShardFormat.maximumVarintBytes - 1 && byte > 1 {
                break
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw BlocklistError(
            .corruptShard, "\(path): run \(runIndex + 1) of \(header.runCount) (entry \(entriesBeforeRun)) has a varint longer than 64 bits.")
    }

    private func nextByte() throws(BlocklistError) -> UInt8? {
        while outputPosition == outputCount {
            if streamEnded { return nil }
            if inflater.availableInput == 0 {
                let end = Int64(ShardHeader.size) + header.payloadLength
                let want = Int(min(Int64(inputBuffer.count), end - inputOffset))
                guard want > 0 else {
                    throw BlocklistError(.corruptShard, "\(path): the payload ends before its zlib stream does.")
                }
                let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: inputBuffer[0..<want]), at: inputOffset)
                guard read > 0 else { throw BlocklistError(.corruptShard, "\(path) is truncated at byte \(inputOffset).") }
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
