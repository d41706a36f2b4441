import CZlib

// Every zlib call the core makes goes through here. A `z_stream` must not move once initialised
// (zlib keeps a pointer back to it), so each one lives on the heap, owned by a final class whose
// deinit ends it.

private func zlibMessage(_ stream: UnsafeMutablePointer<z_stream>, _ code: Int32) -> String {
    if let message = stream.pointee.msg { return String(cString: message) }
    switch code {
    case Z_STREAM_ERROR: return "stream error"
    case Z_DATA_ERROR: return "data error"
    case Z_MEM_ERROR: return "out of memory"
    case Z_BUF_ERROR: return "buffer error"
    case Z_VERSION_ERROR: return "incompatible zlib version"
    default: return "zlib error \(code)"
    }
}

/// A zlib compression stream.
package final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// The file this stream writes, for error sentences.
    package var context: String

    /// - Parameters:
    ///   - level: 0–9; 9 is smallest.
    ///   - windowBits: 9–15; memory is about `2^(windowBits+2) + 2^(memLevel+9)` bytes.
    ///   - memLevel: 1–9.
    ///   - context: the file this stream writes, for error sentences.
    package init(level: Int32, windowBits: Int32, memLevel: Int32, context: String) throws(BlocklistError) {
        self.context = context
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = deflateInit2_(
            stream,
            level,
            Z_DEFLATED,
            windowBits,
            memLevel,
            Z_DEFAULT_STRATEGY,
            zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)
        )
        guard code == Z_OK else {
            let message = zlibMessage(stream, code)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw BlocklistError(.compression, "Starting zlib compression for \(context) failed: \(message).")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts a new stream with the same parameters, keeping the allocated state.
    /// Starts a new stream, at `level` if one is given (else the level it had).
    package func reset(context: String, level: Int32? = nil) throws(BlocklistError) {
        self.context = context
        var code = deflateReset(stream)
        if code == Z_OK, let level { code = deflateParams(stream, level, Z_DEFAULT_STRATEGY) }
        guard code == Z_OK else {
            throw BlocklistError(
                .compression,
                "Resetting zlib compression for \(context) failed: \(zlibMessage(stream, code))."
            )
        }
    }

    /// Compresses `input`, handing every full chunk of `output` to `sink`.
    ///
    /// With `finish`, also ends the stream and hands over the last, partial chunk.
    package func compress(
        _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer,
        finish: Bool,
        sink: (UnsafeRawBufferPointer) throws(BlocklistError) -> Void
    ) throws(BlocklistError) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(input.count)
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        while true {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            stream.pointee.avail_out = UInt32(output.count)
            let code = deflate(stream, flush)
            guard code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR else {
                throw BlocklistError(
                    .compression,
                    "zlib compression of \(context) failed: \(zlibMessage(stream, code))."
                )
            }
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[..<produced])) }
            if finish {
                if code == Z_STREAM_END { return }
            } else if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 {
                return
            }
        }
    }
}

/// A zlib decompression stream.
package final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let context: String
    private var payloadOffset: Int64

    /// The result of one `inflate` step.
    package enum Step {
        /// Output was produced or input consumed; call again with more input or output room.
        case progress
        /// The compressed stream ended; its Adler-32 checked out.
        case end
    }

    /// - Parameters:
    ///   - windowBits: 9–15; must be at least the writer's.
    ///   - context: the file this stream reads, for error sentences.
    ///   - payloadOffset: where the compressed bytes start in that file, so errors give file offsets.
    package init(windowBits: Int32, context: String, payloadOffset: Int64) throws(BlocklistError) {
        self.context = context
        self.payloadOffset = payloadOffset
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = inflateInit2_(stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            let message = zlibMessage(stream, code)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw BlocklistError(.compression, "Starting zlib decompression for \(context) failed: \(message).")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Bytes of input not yet consumed.
    package var availableInput: Int { Int(stream.pointee.avail_in) }
    /// The compressed bytes set but not yet consumed (after a stream's end: what follows it).
    package var pendingInput: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: stream.pointee.next_in, count: Int(stream.pointee.avail_in))
    }

    /// Starts a new stream with the same parameters (the next member of a multi-member gzip
    /// file), keeping the input set and the allocated state.
    ///
    /// - Parameter payloadOffset: where the new stream starts in the file, for error offsets.
    package func reset(payloadOffset: Int64) throws(BlocklistError) {
        let code = inflateReset(stream)
        guard code == Z_OK else {
            throw BlocklistError(
                .compression,
                "Restarting zlib decompression for \(context) failed: \(zlibMessage(stream, code))."
            )
        }
        self.payloadOffset = payloadOffset
    }

    /// Total compressed bytes consumed so far (since the last reset).
    package var totalIn: Int64 { Int64(stream.pointee.total_in) }

    /// Sets the compressed bytes to read next. `input` must stay valid until they are consumed.
    package func setInput(_ input: UnsafeRawBufferPointer) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(input.count)
    }

    /// Decompresses into `output`; returns the step and the number of bytes written.
    package func inflate(into output: UnsafeMutableRawBufferPointer) throws(BlocklistError) -> (Step, Int) {
        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = UInt32(output.count)
        let code = CZlib.inflate(stream, Z_NO_FLUSH)
        let produced = output.count - Int(stream.pointee.avail_out)
        switch code {
        case Z_OK: return (.progress, produced)
        case Z_STREAM_END: return (.end, produced)
        case Z_BUF_ERROR: return (.progress, produced)
        default:
            throw BlocklistError(
                .corruptShard,
                "\(context): the compressed payload is damaged near byte \(payloadOffset + totalIn) (zlib: \(zlibMessage(stream, code)))."
            )
        }
    }
}
