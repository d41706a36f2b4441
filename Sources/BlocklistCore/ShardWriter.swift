internal import ByteCodecs

/// The compression state and buffers a `ShardWriter` uses, reusable from one shard to the next so
/// that writing a whole set allocates them once.

package final class ShardEncoder {
    let deflater: Deflater
    let fast: Bool
    let encodeBuffer: UnsafeMutableRawBufferPointer
    let outputBuffer: UnsafeMutableRawBufferPointer
    var inUse = false

    /// Allocates the state: about 20 KiB of zlib state and two 16 KiB buffers.
    ///
    /// - Parameter fast: for a shard a phone rewrites while it applies an update: a version 2
    ///   shard's zlib stream is stored (level 0), a version 1 shard's deflated at level 1, instead
    ///   of level 9. A version 2 payload is Rice-coded already and deflate does not make it
    ///   smaller (a 1,001,000-number shard: 1,130,043 bytes stored, 1,134,290 at level 9), while
    ///   it spent a third of a rewrite's time. Default: false.
    package init(fast: Bool = false) throws(BlocklistError) {
        self.fast = fast
        deflater = try Deflater(
            level: fast ? 1 : ShardFormat.compressionLevel,
            windowBits: ShardFormat.windowBits,
            // Fast: blocks of 32,768 symbols rather than 1,024, so Huffman trees are built 32 times less often.
            memLevel: fast ? 9 : ShardFormat.memoryLevel,
            context: "a shard"
        )
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
/// Blocking runs come first; then, in version 2, `beginIdentification(labels:)` writes the label
/// table and `appendIdentification(_:label:)` the identification runs. The header is written
/// last, at offset 0, once the counts and checksums are known. The writer creates its file
/// exclusively and never renames it: committing it is the caller's job.
///
/// - Complexity: O(runs); memory is fixed (about 60 KiB).
package final class ShardWriter {
    /// The file being written.
    package let path: String
    /// The format version it writes.
    package let version: UInt16
    private let shardIndex: UInt32
    private let lowerBound: Int64
    private let file: FileDescriptor
    private let encoder: ShardEncoder
    private var deflater: Deflater { encoder.deflater }
    private var encodeBuffer: UnsafeMutableRawBufferPointer { encoder.encodeBuffer }
    private var outputBuffer: UnsafeMutableRawBufferPointer { encoder.outputBuffer }
    // The encoding state, touched for every run: no dynamic exclusivity checks (a writer is
    // used by one thread, and no access to these overlaps another).
    @exclusivity(unchecked) private var encoded = 0
    @exclusivity(unchecked) private var pending: NumberRun?
    @exclusivity(unchecked) private var pendingLabel = 0
    @exclusivity(unchecked) private var previousLast: Int64 = 0
    @exclusivity(unchecked) private var runCount: UInt32 = 0
    @exclusivity(unchecked) private var entryCount: Int64 = 0
    @exclusivity(unchecked) private var first: Int64 = 0
    @exclusivity(unchecked) private var payloadLength: Int64 = 0
    @exclusivity(unchecked) private var payloadCRC: UInt32 = 0
    @exclusivity(unchecked) private var finished = false
    // Version 2.
    @exclusivity(unchecked) private var packer = BitPacker()
    @exclusivity(unchecked) private var gapState = RiceState()
    @exclusivity(unchecked) private var lengthState = RiceState()
    @exclusivity(unchecked) private var identifying = false
    @exclusivity(unchecked) private var blocking: (runs: UInt32, entries: Int64, first: Int64, last: Int64) =
        (0, 0, 0, 0)
    private var labelCount: UInt32 = 0
    private var labelBytes: UInt32 = 0
    private var labelWidth = 0

    /// Creates `path` (which must not exist) for shard `shardIndex`.
    ///
    /// - Parameters:
    ///   - path: the new file.
    ///   - shardIndex: from 1.
    ///   - encoder: state to reuse; one writer at a time may use it. Default: a new one.
    ///   - version: the format version, 1 or 2. Default: the current one. Version 1 holds
    ///     blocking entries only.
    ///   - lowerBound: the smallest number the shard covers in a packed layout (version 2).
    /// - Throws: `BlocklistError` `.io` if the file cannot be created.
    package init(
        path: String,
        shardIndex: Int,
        encoder: ShardEncoder? = nil,
        version: UInt16 = ShardHeader.currentVersion,
        lowerBound: Int64 = 0
    ) throws(BlocklistError) {
        guard shardIndex >= 1, shardIndex <= Int(UInt32.max) else {
            throw BlocklistError(.invalidInput, "Shard index \(shardIndex) for \(path) is outside 1...\(UInt32.max).")
        }
        guard (1...ShardHeader.currentVersion).contains(version) else {
            throw BlocklistError(
                .invalidInput,
                "\(path): shard format version \(version) cannot be written; this tool writes 1 and 2."
            )
        }
        guard lowerBound >= 0, version >= 2 || lowerBound == 0 else {
            throw BlocklistError(
                .invalidInput,
                "\(path): lower bound \(lowerBound) needs format version 2 and a number of at least 0."
            )
        }
        let encoder = if let encoder { encoder } else { try ShardEncoder() }
        precondition(!encoder.inUse, "a ShardEncoder serves one ShardWriter at a time")
        try encoder.deflater.reset(context: path, level: encoder.fast ? (version >= 2 ? 0 : 1) : nil)
        self.path = path
        self.version = version
        self.shardIndex = UInt32(shardIndex)
        self.lowerBound = lowerBound
        file = try FileDescriptor.createExclusive(path)
        self.encoder = encoder
        encoder.inUse = true
    }

    deinit { encoder.inUse = false }

    private var headerSize: Int { ShardHeader.size(ofVersion: version) }
    /// Blocking runs never touch (a touching run would have been merged): gaps count from
    /// `last + 2`. Identification runs touch when the label changes: gaps count from `last + 1`.
    private var gapBase: Int64 { identifying ? 1 : 2 }

    /// How many numbers of the current kind have been appended.
    package var entriesWritten: Int64 { entryCount + (pending?.count ?? 0) }

    /// Appends a blocking run; it must start after every number appended before. A run that
    /// continues the previous one is merged with it.
    ///
    /// - Throws: `.invalidInput` for an empty, negative or out-of-order run.
    package func append(_ run: NumberRun) throws(BlocklistError) {
        precondition(!finished, "append after finish")
        precondition(!identifying, "blocking entries come before identification entries")
        try add(run, label: 0)
    }

    /// Appends blocking runs, as `append(_:)` would one by one, in one loop: the way to write a
    /// whole shard fast.
    package func append(contentsOf runs: UnsafeBufferPointer<NumberRun>) throws(BlocklistError) {
        precondition(!finished, "append after finish")
        precondition(!identifying, "blocking entries come before identification entries")
        var index = 0
        while index < runs.count {
            index += encodeRuns(runs, from: index)
            guard index < runs.count else { break }
            try add(runs[index], label: 0)
            index += 1
        }
    }

    /// Takes `runs[start...]` as `add` would, the coder in locals, while each run is valid and
    /// neither touches nor precedes the pending one, and the buffer has room; it stops before any
    /// other run, which `add` then takes (merging it, or naming its fault). Version 2 blocking
    /// runs only. Returns how many it took.
    @inline(__always)
    private func encodeRuns(_ runs: UnsafeBufferPointer<NumberRun>, from start: Int) -> Int {
        guard version >= 2, !identifying, var current = pending, let out = encodeBuffer.baseAddress else { return 0 }
        let room = encodeBuffer.count - 2 * BitPacker.bytesPerValue
        var packer = self.packer
        var gaps = gapState
        var lengths = lengthState
        var position = encoded
        var previous = previousLast
        var count = runCount
        var entries = entryCount
        var index = start
        while index < runs.count, position <= room, count < UInt32.max - 1 {
            let run = runs[index]
            guard run.count >= 1, current.last < Int64.max - 1, run.start > current.last + 1,
                run.start <= Int64.max - (run.count - 1)
            else { break }
            packer.putRice(UInt64(current.start - (previous + 2)), &gaps, into: out, at: &position)
            packer.putRice(UInt64(current.count - 1), &lengths, into: out, at: &position)
            previous = current.last
            count += 1
            entries += current.count
            current = run
            index += 1
        }
        self.packer = packer
        gapState = gaps
        lengthState = lengths
        encoded = position
        previousLast = previous
        runCount = count
        entryCount = entries
        pending = current
        return index - start
    }

    /// Appends one blocking number; it must be above every number appended before.
    package func append(_ number: Int64) throws(BlocklistError) {
        try append(NumberRun(start: number, count: 1))
    }

    /// Ends the blocking entries and writes the label table (version 2). Each label is UTF-8, at
    /// least one byte; identification runs then name a label by its index in `labels`.
    ///
    /// - Throws: `.invalidInput` for version 1, an empty label, or a table over the format's limits.
    package func beginIdentification(labels: [[UInt8]]) throws(BlocklistError) {
        precondition(!finished && !identifying, "beginIdentification once, before finish")
        guard version >= 2 else {
            throw BlocklistError(
                .invalidInput,
                "\(path): format version 1 holds no identification entries; write version 2."
            )
        }
        let total = labels.reduce(0) { $0 + $1.count }
        guard labels.count <= Int(ShardHeader.maximumLabelCount), total <= Int(ShardHeader.maximumLabelBytes) else {
            throw BlocklistError(
                .limitExceeded,
                "\(path): \(labels.count) labels of \(total) bytes do not fit one shard's label table (at most \(ShardHeader.maximumLabelCount) labels and \(ShardHeader.maximumLabelBytes) bytes)."
            )
        }
        if let index = labels.firstIndex(where: \.isEmpty) {
            throw BlocklistError(.invalidInput, "\(path): label \(index) is empty; a label is at least one byte.")
        }
        try endSection()
        blocking = (runCount, entryCount, entryCount > 0 ? first : 0, entryCount > 0 ? previousLast : 0)
        identifying = true
        runCount = 0
        entryCount = 0
        first = 0
        pending = nil
        gapState = RiceState()
        lengthState = RiceState()
        labelCount = UInt32(labels.count)
        labelBytes = UInt32(total)
        labelWidth = labels.count <= 1 ? 0 : Int.bitWidth - (labels.count - 1).leadingZeroBitCount
        for label in labels {
            try reserve(ShardFormat.maximumVarintBytes)
            putVarint(UInt64(label.count))
            var offset = 0
            while offset < label.count {
                if encoded == encodeBuffer.count { try compressEncoded(finish: false) }
                let take = min(label.count - offset, encodeBuffer.count - encoded)
                label.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: encodeBuffer[encoded..<(encoded + take)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
                }
                encoded += take
                offset += take
            }
        }
    }

    /// Appends identification run: every number of `run` is identified by label `label`. Runs
    /// are strictly ascending; a run that continues the previous one with the same label is
    /// merged with it.
    package func appendIdentification(_ run: NumberRun, label: Int) throws(BlocklistError) {
        precondition(!finished, "append after finish")
        precondition(identifying, "call beginIdentification(labels:) first")
        guard label >= 0, label < Int(labelCount) else {
            throw BlocklistError(
                .invalidInput,
                "\(path): label index \(label) is outside the table of \(labelCount) labels."
            )
        }
        try add(run, label: label)
    }

    private func add(_ run: NumberRun, label: Int) throws(BlocklistError) {
        guard run.count >= 1, run.start >= 1, run.start <= Int64.max - (run.count - 1) else {
            throw BlocklistError(
                .invalidInput,
                "\(path): run \(run.start) × \(run.count) is not a run of positive numbers."
            )
        }
        guard var current = pending else {
            pending = run
            pendingLabel = label
            first = run.start
            previousLast = run.start - gapBase
            return
        }
        if current.last < Int64.max, run.start == current.last + 1, label == pendingLabel {
            current.count += run.count
            pending = current
            return
        }
        guard run.start > current.last else {
            throw BlocklistError(
                .invalidInput,
                "\(path): number \(run.start) at \(identifying ? "identification " : "")entry \(entriesWritten) is not above the previous number \(current.last); entries must be strictly ascending."
            )
        }
        try encode(current, label: pendingLabel)
        pending = run
        pendingLabel = label
    }

    /// Ends the payload, writes the header, and optionally flushes the file to disk.
    ///
    /// - Parameter sync: `fsync` the file before returning. Default: true.
    /// - Returns: the header as written.
    package func finish(sync: Bool = true) throws(BlocklistError) -> ShardHeader {
        precondition(!finished, "finish called twice")
        if version >= 2 && !identifying { try beginIdentification(labels: []) }
        finished = true
        try endSection()
        try compressEncoded(finish: true)
        var header: ShardHeader
        if identifying {
            header = ShardHeader(
                version: version,
                shardIndex: shardIndex,
                runCount: blocking.runs,
                entryCount: blocking.entries,
                first: blocking.first,
                last: blocking.last,
                payloadLength: payloadLength,
                payloadCRC: payloadCRC
            )
            header.identificationRunCount = runCount
            header.identificationCount = entryCount
            header.identificationFirst = entryCount > 0 ? first : 0
            header.identificationLast = entryCount > 0 ? previousLast : 0
            header.labelCount = labelCount
            header.labelBytes = labelBytes
            header.lowerBound = lowerBound
        } else {
            header = ShardHeader(
                version: version,
                shardIndex: shardIndex,
                runCount: runCount,
                entryCount: entryCount,
                first: entryCount > 0 ? first : 0,
                last: entryCount > 0 ? previousLast : 0,
                payloadLength: payloadLength,
                payloadCRC: payloadCRC
            )
        }
        let headerBytes = UnsafeMutableRawBufferPointer(rebasing: encodeBuffer[0..<headerSize])
        header.encode(into: headerBytes)
        try file.write(UnsafeRawBufferPointer(headerBytes), at: 0)
        if sync { try file.sync() }
        return header
    }

    /// Encodes the pending run and pads the bit stream to a byte.
    private func endSection() throws(BlocklistError) {
        if let run = pending { try encode(run, label: pendingLabel) }
        pending = nil
        if !packer.isAligned {
            try reserve(1)
            packer.align(into: encodeBuffer.baseAddress!, at: &encoded)
        }
    }

    private func encode(_ run: NumberRun, label: Int) throws(BlocklistError) {
        guard runCount < UInt32.max else {
            throw BlocklistError(.limitExceeded, "\(path): more than \(UInt32.max) runs do not fit one shard.")
        }
        let gap = UInt64(run.start - (previousLast + gapBase))
        let lengthMinusOne = UInt64(run.count - 1)
        if version == 1 {
            try reserve(2 * ShardFormat.maximumVarintBytes)
            putVarint(gap)
            putVarint(lengthMinusOne)
        } else {
            // Two values, a label index (at most 20 bits) and the word stored past the last byte.
            try reserve(3 * BitPacker.bytesPerValue)
            let out = encodeBuffer.baseAddress!
            packer.putRice(gap, &gapState, into: out, at: &encoded)
            packer.putRice(lengthMinusOne, &lengthState, into: out, at: &encoded)
            if labelWidth > 0 { packer.put(UInt64(label), labelWidth, into: out, at: &encoded) }
        }
        previousLast = run.last
        runCount += 1
        entryCount += run.count
    }

    private func reserve(_ bytes: Int) throws(BlocklistError) {
        if encoded + bytes > encodeBuffer.count { try compressEncoded(finish: false) }
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
        let offset = Int64(headerSize)
        try deflater.compress(input, into: outputBuffer, finish: finish) { (chunk) throws(BlocklistError) in
            try file.write(chunk, at: offset + payloadLength)
            payloadLength += Int64(chunk.count)
            payloadCRC = crc32Update(payloadCRC, chunk)
        }
        encoded = 0
    }
}
