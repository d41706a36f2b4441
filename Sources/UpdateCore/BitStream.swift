import BlocklistCore

/// Writes a bit stream, least significant bit first, and the adaptive Golomb–Rice code that
/// version 2 shards use (`RiceState`), into a growing byte array (the publisher's side).
package struct BitWriter {
    package private(set) var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var count = 0

    package init() {}

    /// Appends the low `width` bits of `value`, `width` in 0...64.
    package mutating func put(_ value: UInt64, _ width: Int) {
        var value = width == 64 ? value : value & ((1 << UInt64(width)) &- 1)
        var width = width
        while width > 0 {
            let take = min(width, 32)
            accumulator |= (value & ((1 << UInt64(take)) - 1)) << UInt64(count)
            count += take
            value = take == 64 ? 0 : value >> UInt64(take)
            width -= take
            while count >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator >>= 8
                count -= 8
            }
        }
    }

    /// Appends `value` in the Rice code `state` gives, then takes it into `state`.
    package mutating func putRice(_ value: UInt64, _ state: inout RiceState) {
        let k = state.parameter
        let quotient = value >> UInt64(k)
        if quotient < RiceState.escapeQuotient {
            put((1 << quotient) - 1, Int(quotient) + 1)
            put(value, k)
        } else {
            put((1 << RiceState.escapeQuotient) - 1, Int(RiceState.escapeQuotient))
            putExplicit(value)
        }
        state.update(value)
    }

    /// Appends `value` in full: 6 bits of its bit length − 1, then its bits (the Rice code's
    /// escape, and a delta section's first start).
    package mutating func putExplicit(_ value: UInt64) {
        let length = value == 0 ? 1 : UInt64.bitWidth - value.leadingZeroBitCount
        put(UInt64(length - 1), 6)
        put(value, length)
    }

    /// Appends an unsigned LEB128 varint; only at a byte boundary.
    package mutating func putVarint(_ value: UInt64) {
        precondition(count == 0, "varints are written at a byte boundary")
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Appends raw bytes; only at a byte boundary.
    package mutating func putBytes(_ raw: [UInt8]) {
        precondition(count == 0, "bytes are written at a byte boundary")
        bytes.append(contentsOf: raw)
    }

    /// Pads the stream with 0 bits to a byte boundary.
    package mutating func align() {
        if count > 0 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator = 0
            count = 0
        }
    }
}

/// Reads what `BitWriter` wrote, from bytes in memory, refusing to read past their end.
package struct BitReader {
    private let bytes: [UInt8]
    package private(set) var position: Int
    private var accumulator: UInt64 = 0
    private var count = 0
    /// Names the input in errors.
    private let what: String

    package init(_ bytes: [UInt8], at position: Int = 0, what: String) {
        self.bytes = bytes
        self.position = position
        self.what = what
    }

    private func fail(_ problem: String) -> UpdateError {
        UpdateError(.malformed, "\(what): \(problem).")
    }

    /// Whether every byte has been read and the bits left over in the last one are zero.
    package var atCleanEnd: Bool { position == bytes.count && accumulator == 0 }

    package mutating func bits(_ width: Int, _ context: @autoclosure () -> String) throws(UpdateError) -> UInt64 {
        var value: UInt64 = 0
        var filled = 0
        while filled < width {
            if count == 0 {
                guard position < bytes.count else { throw fail("ends in \(context())") }
                accumulator = UInt64(bytes[position])
                position += 1
                count = 8
            }
            let take = min(width - filled, count)
            value |= (accumulator & ((1 << UInt64(take)) - 1)) << UInt64(filled)
            accumulator >>= UInt64(take)
            count -= take
            filled += take
        }
        return value
    }

    package mutating func rice(_ state: inout RiceState, _ context: @autoclosure () -> String) throws(UpdateError)
        -> UInt64
    {
        var quotient: UInt64 = 0
        while try bits(1, context()) == 1 {
            quotient += 1
            if quotient == RiceState.escapeQuotient { break }
        }
        let value: UInt64
        if quotient < RiceState.escapeQuotient {
            let k = state.parameter
            guard quotient <= UInt64.max >> UInt64(k) else { throw fail("has a Rice value too large in \(context())") }
            value = quotient << UInt64(k) | (try bits(k, context()))
        } else {
            value = try explicit(context())
        }
        state.update(value)
        return value
    }

    /// Reads what `BitWriter.putExplicit` wrote; it must be in its shortest length.
    package mutating func explicit(_ context: @autoclosure () -> String) throws(UpdateError) -> UInt64 {
        let length = Int(try bits(6, context())) + 1
        let value = try bits(length, context())
        guard length == 1 || value >> UInt64(length - 1) == 1 else {
            throw fail("has a value that is not written in its shortest length in \(context())")
        }
        return value
    }

    /// Skips the padding bits to the next byte boundary; they must be zero.
    package mutating func align(_ context: @autoclosure () -> String) throws(UpdateError) {
        guard accumulator == 0 else { throw fail("has padding bits that are not zero after \(context())") }
        count = 0
    }

    package mutating func varint(_ context: @autoclosure () -> String) throws(UpdateError) -> UInt64 {
        precondition(count == 0, "varints are read at a byte boundary")
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw fail("ends in \(context())") }
            let byte = bytes[position]
            position += 1
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
        precondition(count == 0, "bytes are skipped at a byte boundary")
        guard n >= 0, n <= bytes.count - position else { throw fail("ends in \(context())") }
        position += n
    }

    package mutating func bytes(_ n: Int, _ context: @autoclosure () -> String) throws(UpdateError) -> [UInt8] {
        precondition(count == 0, "bytes are read at a byte boundary")
        guard n >= 0, n <= bytes.count - position else { throw fail("ends in \(context())") }
        defer { position += n }
        return Array(bytes[position..<(position + n)])
    }
}
