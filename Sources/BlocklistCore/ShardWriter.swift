/// The compression state and buffers a `ShardWriter` uses, reusable from one shard to the next so
/// that writing a whole set allocates them once.
public final class ShardEncoder {
    let deflater: Deflater
    let encodeBuffer: UnsafeMutableRawBufferPointer
    let outputBuffer: UnsafeMutableRawBufferPointer
    var inUse = false

    /// Allocates the state: about 20 KiB of zlib state and two 16 KiB buffers.
    public init() throws(BlocklistError) {
        deflater = try Deflater(
            level: ShardFormat.compressionLevel, windowBits: ShardFormat.windowBits,
            memLevel: ShardFormat.memoryLevel, context: "a shard")
        encodeBuffer = .allocate(byteCount: ShardFormat.bufferSize, alignment: 8)
        outputBuffer = .allocate(byteCount: ShardFormat.bufferSize, alignment: 8)
    }

    deinit {
        encodeBuffer.deallocate()
        outputBuffer.deallocate()
    }
}

/// Writes one shard file from ascending runs, streaming: a fixed encode buffer and a fixed
/// compressed-output buffer, allocated once (or borrowed from a `ShardEncoder`).
///
/// The header is written last, at offset 0, once the counts and checksums are known. The writer
/// creates its file exclusively and never renames it: committing it is the caller's job.
///
/// - Complexity: O(runs); memory is fixed (about 60 KiB).
public final class ShardWriter {
    /// The file being written.
    public let path: String
    private let shardIndex: UInt32
    private let file: FileDescriptor
    private let encoder: ShardEncoder
    private var deflater: Deflater { encoder.deflater }
    private var encodeBuffer: UnsafeMutableRawBufferPointer { encoder.encodeBuffer }
    private var outputBuffer: UnsafeMutableRawBufferPointer { encoder.outputBuffer }
    private var encoded = 0
    private var pending: NumberRun?
    private var previousLast: Int64 = 0
    private var runCount: UInt32 = 0
    private var entryCount: Int64 = 0
    private var first: Int64 = 0
    private var payloadLength: Int64 = 0
    private var payloadCRC: UInt32 = 0
    private var finished = false

    /// Creates `path` (which must not exist) for shard `shardIndex`.
    ///
    /// - Parameters:
    ///   - path: the new file.
    ///   - shardIndex: from 1.
    ///   - encoder: state to reuse; one writer at a time may use it. Default: a new one.
    /// - Throws: `BlocklistError` `.io` if the file cannot be created.
    public init(path: String, shardIndex: Int, encoder: ShardEncoder? = nil) throws(BlocklistError) {
        guard shardIndex >= 1, shardIndex <= Int(UInt32.max) else {
            throw BlocklistError(.invalidInput, "Shard index \(shardIndex) for \(path) is outside 1...\(UInt32.max).")
        }
        let encoder = if let encoder { encoder } else { try ShardEncoder() }
        precondition(!encoder.inUse, "a ShardEncoder serves one ShardWriter at a time")
        try encoder.deflater.reset(context: path)
        self.path = path
        self.shardIndex = UInt32(shardIndex)
        file = try FileDescriptor.createExclusive(path)
        self.encoder = encoder
        encoder.inUse = true
    }

    deinit { encoder.inUse = false }

    /// How many numbers have been appended.
    public var entriesWritten: Int64 { entryCount + (pending?.count ?? 0) }

    /// Appends a run; it must start after every number appended before. A run that continues the
    /// previous one is merged with it.
    ///
    /// - Throws: `.invalidInput` for an empty, negative or out-of-order run.
    public func append(_ run: NumberRun) throws(BlocklistError) {
        precondition(!finished, "append after finish")
        guard run.count >= 1, run.start >= 1, run.start <= Int64.max - (run.count - 1) else {
            throw BlocklistError(.invalidInput, "\(path): run \(run.start) × \(run.count) is not a run of positive numbers.")
        }
        guard var current = pending else {
            pending = run
            first = run.start
            previousLast = run.start - 2
            return
        }
        if current.last < Int64.max, run.start == current.last + 1 {
            current.count += run.count
            pending = current
            return
        }
        guard run.start > current.last else {
            throw BlocklistError(
                .invalidInput,
                "\(path): number \(run.start) at entry \(entriesWritten) is not above the previous number \(current.last); entries must be strictly ascending.")
        }
        try encode(current)
        pending = run
    }

    /// Appends one number; it must be above every number appended before.
    public func append(_ number: Int64) throws(BlocklistError) {
        try append(NumberRun(start: number, count: 1))
    }

    /// Ends the payload, writes the header, and optionally flushes the file to disk.
    ///
    /// - Parameter sync: `fsync` the file before returning. Default: true.
    /// - Returns: the header as written.
    public func finish(sync: Bool = true) throws(BlocklistError) -> ShardHeader {
        precondition(!finished, "finish called twice")
        finished = true
        if let run = pending { try encode(run) }
        try compressEncoded(finish: true)
        var header = ShardHeader(
            shardIndex: shardIndex, runCount: runCount, entryCount: entryCount,
            first: entryCount > 0 ? first : 0, last: entryCount > 0 ? previousLast : 0,
            payloadLength: payloadLength, payloadCRC: payloadCRC)
        let headerBytes = UnsafeMutableRawBufferPointer(rebasing: encodeBuffer[0..<ShardHeader.size])
        header.encode(into: headerBytes)
        try file.write(UnsafeRawBufferPointer(headerBytes), at: 0)
        if sync { try file.sync() }
        return header
    }

    private func encode(_ run: NumberRun) throws(BlocklistError) {
        guard runCount < UInt32.max else {
            throw BlocklistError(.limitExceeded, "\(path): more than \(UInt32.max) runs do not fit one shard.")
        }
        if encoded + 2 * ShardFormat.maximumVarintBytes > encodeBuffer.count { try compressEncoded(finish: false) }
        putVarint(UInt64(run.start - (previousLast + 2)))
        putVarint(UInt64(run.count - 1))
        previousLast = run.last
        runCount += 1
        entryCount += run.count
    }

    private func putVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            encodeBuffer[encoded] = UInt8(truncatingIfNeeded: value) | 0x80
            encoded += 1
            value >>= 7
        }
        encodeBuffer[encoded] = UInt8(value)
        encoded += 1
    }

    private func compressEncoded(finish: Bool) throws(BlocklistError) {
        let input = UnsafeRawBufferPointer(rebasing: encodeBuffer[0..<encoded])
        try deflater.compress(input, into: outputBuffer, finish: finish) { (chunk) throws(BlocklistError) in
            try file.write(chunk, at: Int64(ShardHeader.size) + payloadLength)
            payloadLength += Int64(chunk.count)
            payloadCRC = crc32Update(payloadCRC, chunk)
        }
        encoded = 0
    }
}
