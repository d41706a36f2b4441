import BlocklistCore

/// Writes a delta's or a push's bytes: BlocklistCore's `BitPacker` (the one bit and Rice codec,
/// which shards use too) into a growing byte array, and varints and raw bytes between.
package struct BitWriter {
    private var storage: [UInt8] = []
    private var used = 0
    private var packer = BitPacker()

    package init() {}

    /// The whole bytes written so far (after `align()`, everything).
    package var bytes: [UInt8] { Array(storage[0..<used]) }

    /// Runs `body` with room for `bytes` more bytes at `used`.
    private mutating func withRoom(
        _ bytes: Int,
        _ body: (UnsafeMutableRawPointer, inout Int, inout BitPacker) -> Void
    ) {
        if storage.count < used + bytes {
            storage.append(contentsOf: repeatElement(0, count: max(used + bytes - storage.count, storage.count)))
        }
        storage.withUnsafeMutableBytes { body($0.baseAddress!, &used, &packer) }
    }

    /// Appends the low `width` bits of `value`, `width` in 0...64.
    package mutating func put(_ value: UInt64, _ width: Int) {
        withRoom(BitPacker.bytesPerValue) { out, used, packer in packer.put(value, width, into: out, at: &used) }
    }

    /// Appends `value` in the Rice code `state` gives, then takes it into `state`.
    package mutating func putRice(_ value: UInt64, _ state: inout RiceState) {
        withRoom(BitPacker.bytesPerValue) { out, used, packer in packer.putRice(value, &state, into: out, at: &used) }
    }

    /// Appends `value` in full: 6 bits of its bit length − 1, then its bits (a delta section's
    /// first start).
    package mutating func putExplicit(_ value: UInt64) {
        withRoom(BitPacker.bytesPerValue) { out, used, packer in packer.putExplicit(value, into: out, at: &used) }
    }

    /// Appends an unsigned LEB128 varint; only at a byte boundary.
    package mutating func putVarint(_ value: UInt64) {
        precondition(packer.isAligned, "varints are written at a byte boundary")
        withRoom(10) { out, used, _ in
            var value = value
            while value >= 0x80 {
                out.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: used, as: UInt8.self)
                used += 1
                value >>= 7
            }
            out.storeBytes(of: UInt8(value), toByteOffset: used, as: UInt8.self)
            used += 1
        }
    }

    /// Appends raw bytes; only at a byte boundary.
    package mutating func putBytes(_ raw: [UInt8]) {
        precondition(packer.isAligned, "bytes are written at a byte boundary")
        withRoom(raw.count) { out, used, _ in
            raw.withUnsafeBytes { (out + used).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            used += raw.count
        }
    }

    /// Pads the stream with 0 bits to a byte boundary.
    package mutating func align() {
        withRoom(1) { out, used, packer in packer.align(into: out, at: &used) }
    }
}

/// Reads what `BitWriter` wrote, from bytes in memory, refusing to read past their end: bits and
/// Rice values through BlocklistCore's `BitUnpacker`, varints and raw bytes between.
package struct BitReader {
    private let bytes: [UInt8]
    /// The next byte not taken into the unpacker.
    private var next: Int
    private var unpacker = BitUnpacker()
    /// Names the input in errors.
    package let what: String

    package init(_ bytes: [UInt8], at position: Int = 0, what: String) {
        self.bytes = bytes
        self.next = position
        self.what = what
    }

    /// The next byte to read, at a byte boundary.
    package var position: Int { next - unpacker.bitsHeld / 8 }

    private func fail(_ problem: String) -> UpdateError {
        UpdateError(.malformed, "\(what) \(problem).")
    }

    private static func fail(_ what: String, _ failure: BitFailure, _ context: () -> String) -> UpdateError {
        let problem =
            switch failure {
            case .ended: "ends in \(context())"
            case .notShortest: "has a value that is not written in its shortest length in \(context())"
            case .tooLarge: "has a Rice value too large in \(context())"
            }
        return UpdateError(.malformed, "\(what) \(problem).")
    }

    /// After `align(_:)`: whether every byte has been read.
    package var atCleanEnd: Bool { next == bytes.count && unpacker.bitsHeld == 0 }

    /// Runs one unpacker read with the bytes in memory as its input.
    private mutating func unpack(
        _ read: (inout BitUnpacker, (inout BitUnpacker) throws(UpdateError) -> Void) throws(UpdateError) -> UInt64
    ) throws(UpdateError) -> UInt64 {
        var unpacker = self.unpacker
        var next = self.next
        defer {
            self.unpacker = unpacker
            self.next = next
        }
        let result = bytes.withUnsafeBytes { (raw) -> Result<UInt64, UpdateError> in
            let base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
            return Result { () throws(UpdateError) in
                try read(&unpacker) { (unpacker) throws(UpdateError) in
                    unpacker.refill(from: base, at: &next, end: raw.count)
                }
            }
        }
        return try result.get()
    }

    package mutating func bits(_ width: Int, _ context: @autoclosure () -> String) throws(UpdateError) -> UInt64 {
        let what = what
        return try unpack { (unpacker, fill) throws(UpdateError) in
            try unpacker.bits(width, fill: fill, fail: { Self.fail(what, $0, context) })
        }
    }

    package mutating func rice(_ state: inout RiceState, _ context: @autoclosure () -> String) throws(UpdateError)
        -> UInt64
    {
        let what = what
        return try unpack { (unpacker, fill) throws(UpdateError) in
            try unpacker.rice(&state, fill: fill, fail: { Self.fail(what, $0, context) })
        }
    }

    /// Reads what `BitWriter.putExplicit` wrote; it must be in its shortest length.
    package mutating func explicit(_ context: @autoclosure () -> String) throws(UpdateError) -> UInt64 {
        let what = what
        return try unpack { (unpacker, fill) throws(UpdateError) in
            try unpacker.explicit(fill: fill, fail: { Self.fail(what, $0, context) })
        }
    }

    /// Skips the padding bits to the next byte boundary; they must be zero. Whole bytes the
    /// unpacker took are given back.
    package mutating func align(_ context: @autoclosure () -> String) throws(UpdateError) {
        guard let whole = unpacker.align() else { throw fail("has padding bits that are not zero after \(context())") }
        next -= whole
        unpacker = BitUnpacker()
    }

    package mutating func varint(_ context: @autoclosure () -> String) throws(UpdateError) -> UInt64 {
        precondition(unpacker.bitsHeld == 0, "varints are read at a byte boundary")
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard next < bytes.count else { throw fail("ends in \(context())") }
            let byte = bytes[next]
            next += 1
            guard shift < 64, shift < 63 || byte <= 1 else { throw fail("has a varint over 64 bits in \(context())") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                guard byte != 0 || shift == 0 else {
                    throw fail("has a varint not in its shortest form in \(context())")
                }
                return value
            }
            shift += 7
        }
    }

    /// Skips `n` bytes; only at a byte boundary.
    package mutating func skip(_ n: Int, _ context: @autoclosure () -> String) throws(UpdateError) {
        precondition(unpacker.bitsHeld == 0, "bytes are skipped at a byte boundary")
        guard n >= 0, n <= bytes.count - next else { throw fail("ends in \(context())") }
        next += n
    }

    package mutating func bytes(_ n: Int, _ context: @autoclosure () -> String) throws(UpdateError) -> [UInt8] {
        precondition(unpacker.bitsHeld == 0, "bytes are read at a byte boundary")
        guard n >= 0, n <= bytes.count - next else { throw fail("ends in \(context())") }
        defer { next += n }
        return Array(bytes[next..<(next + n)])
    }
}
