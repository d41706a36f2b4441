/// The one bit codec of the package: bits least significant first, and the adaptive Golomb–Rice
/// code of `RiceState`. Version 2 shards (`ShardWriter`, `ShardReader`) and deltas and pushes
/// (UpdateCore's `BitWriter` and `BitReader`) are written and read through it; those types only
/// hold the bytes.
///
/// Both halves move 64 bits at a time: the packer stores a whole word and advances by the bytes
/// it completed, the unpacker loads a word and keeps up to 63 bits. That is what makes a phone's
/// rewrite of a 1,000,000-run shard take milliseconds rather than a tenth of a second.
package struct BitPacker {
    /// Bits not yet a whole byte: fewer than 8 between calls, the bits above `count` zero.
    @usableFromInline var bits: UInt64 = 0
    @usableFromInline var count = 0

    package init() {}

    /// Whether a partial byte is pending.
    @inlinable
    package var isAligned: Bool { count == 0 }

    /// The most bytes one `putRice` or `putExplicit` call may touch past `position`: 94 bits of
    /// code, and the 8-byte word stored at the last whole byte.
    package static let bytesPerValue = 20

    /// Appends the low `width` bits of `value`, `width` in 0...64. Stores up to 8 bytes at
    /// `out + position` (whole bytes and the pending partial one) and advances `position` by the
    /// bytes it completed; the caller keeps 16 bytes free there.
    @inlinable @inline(__always)
    package mutating func put(_ value: UInt64, _ width: Int, into out: UnsafeMutableRawPointer, at position: inout Int)
    {
        if width > 56 {
            putShort(value & 0xFFFF_FFFF, 32, out, &position)
            putShort(value >> 32, width - 32, out, &position)
        } else {
            putShort(value, width, out, &position)
        }
    }

    @inlinable @inline(__always)
    mutating func putShort(_ value: UInt64, _ width: Int, _ out: UnsafeMutableRawPointer, _ position: inout Int) {
        // count < 8 and width ≤ 56, so the bits fit one word.
        bits |= (value & ((1 &<< UInt64(width)) &- 1)) &<< UInt64(count)
        count &+= width
        out.storeBytes(of: bits.littleEndian, toByteOffset: position, as: UInt64.self)
        let whole = count &>> 3
        position &+= whole
        bits = whole == 8 ? 0 : bits &>> UInt64(whole &<< 3)
        count &= 7
    }

    /// Appends `value` in the Rice code `state` gives, then takes it into `state`: `q = value >> k`
    /// one-bits, a zero bit, the low `k` bits; a quotient of `RiceState.escapeQuotient` or more as
    /// that many one-bits and `putExplicit`.
    @inlinable @inline(__always)
    package mutating func putRice(
        _ value: UInt64,
        _ state: inout RiceState,
        into out: UnsafeMutableRawPointer,
        at position: inout Int
    ) {
        let k = state.parameter
        let quotient = value &>> UInt64(k)
        if quotient < RiceState.escapeQuotient {
            let unary = Int(quotient) &+ 1
            if unary &+ k <= 56 {
                // The ones, the zero and the remainder in one word.
                let remainder = value & ((1 &<< UInt64(k)) &- 1)
                putShort(((1 &<< quotient) &- 1) | remainder &<< UInt64(unary), unary &+ k, out, &position)
            } else {
                putShort((1 &<< quotient) &- 1, unary, out, &position)
                put(value, k, into: out, at: &position)
            }
        } else {
            putShort((1 &<< RiceState.escapeQuotient) &- 1, Int(RiceState.escapeQuotient), out, &position)
            putExplicit(value, into: out, at: &position)
        }
        state.update(value)
    }

    /// Appends `value` in full: 6 bits of its bit length − 1, then its bits (the Rice code's
    /// escape, and a delta section's first start). 0 is one bit long. Inlined: a call would
    /// keep a caller's packer in memory rather than in registers.
    @inlinable @inline(__always)
    package mutating func putExplicit(_ value: UInt64, into out: UnsafeMutableRawPointer, at position: inout Int) {
        let length = value == 0 ? 1 : UInt64.bitWidth - value.leadingZeroBitCount
        putShort(UInt64(length - 1), 6, out, &position)
        put(value, length, into: out, at: &position)
    }

    /// Pads the pending bits with zeros to a whole byte.
    @inlinable
    package mutating func align(into out: UnsafeMutableRawPointer, at position: inout Int) {
        guard count > 0 else { return }
        out.storeBytes(of: UInt8(truncatingIfNeeded: bits), toByteOffset: position, as: UInt8.self)
        position += 1
        bits = 0
        count = 0
    }
}

/// Why `BitUnpacker` could not read a value; each reader turns it into its own sentence.
package enum BitFailure: Error {
    /// The input ends inside the value.
    case ended
    /// An explicit value is not in its shortest length, or an escaped Rice value's quotient is
    /// below the escape: no writer makes either.
    case notShortest
    /// A Rice value does not fit 64 bits.
    case tooLarge
}

/// Reads what `BitPacker` wrote. It holds up to 64 bits taken from the input a whole byte at a
/// time; a reader supplies them through a `fill` closure, which adds bytes until at least 56
/// bits are held or the input ends (`refill(from:at:end:)` does that from bytes in memory).
package struct BitUnpacker {
    /// The bits taken and not yet read, the next one lowest; the bits above `count` are zero.
    @usableFromInline var bits: UInt64 = 0
    @usableFromInline var count = 0

    package init() {}

    /// How many bits are held.
    @inlinable
    package var bitsHeld: Int { count }

    /// Takes whole bytes from `base[position..<end]` until more than 55 bits are held or the
    /// bytes run out, advancing `position`; at most 63 bits may be held.
    @inlinable @inline(__always)
    package mutating func refill(from base: UnsafeRawPointer, at position: inout Int, end: Int) {
        if end &- position >= 8 {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            let taken = (63 &- count) &>> 3
            bits |= word &<< UInt64(count)
            count &+= taken &<< 3
            // count is now 56...63: clear the part of a byte not taken.
            bits &= (1 &<< UInt64(count)) &- 1
            position &+= taken
        } else {
            while count <= 56, position < end {
                push(base.load(fromByteOffset: position, as: UInt8.self))
                position &+= 1
            }
        }
    }

    /// Takes one byte; at most 56 bits may be held.
    @inlinable @inline(__always)
    package mutating func push(_ byte: UInt8) {
        bits |= UInt64(byte) &<< UInt64(count)
        count &+= 8
    }

    /// Reads `width` bits, `width` in 0...64.
    @inlinable @inline(__always)
    package mutating func bits<E: Error>(
        _ width: Int,
        fill: (inout BitUnpacker) throws(E) -> Void,
        fail: (BitFailure) -> E
    ) throws(E) -> UInt64 {
        if width > 56 {
            let low = try short(32, fill: fill, fail: fail)
            return try low | short(width - 32, fill: fill, fail: fail) &<< 32
        }
        return try short(width, fill: fill, fail: fail)
    }

    @inlinable @inline(__always)
    mutating func short<E: Error>(
        _ width: Int,
        fill: (inout BitUnpacker) throws(E) -> Void,
        fail: (BitFailure) -> E
    ) throws(E) -> UInt64 {
        if count < width {
            try fill(&self)
            guard count >= width else { throw fail(.ended) }
        }
        return take(width)
    }

    @inlinable @inline(__always)
    mutating func take(_ width: Int) -> UInt64 {
        // width ≤ count ≤ 64.
        if width == 64 {
            defer {
                bits = 0
                count = 0
            }
            return bits
        }
        let value = bits & ((1 &<< UInt64(width)) &- 1)
        bits = width == 0 ? bits : bits &>> UInt64(width)
        count &-= width
        return value
    }

    /// Reads a value in the Rice code `state` gives, then takes it into `state`.
    @inlinable @inline(__always)
    package mutating func rice<E: Error>(
        _ state: inout RiceState,
        fill: (inout BitUnpacker) throws(E) -> Void,
        fail: (BitFailure) -> E
    ) throws(E) -> UInt64 {
        let escape = Int(RiceState.escapeQuotient)
        if count <= escape { try fill(&self) }
        // Bits above `count` are zero, so the ones counted never pass it.
        let ones = (~bits).trailingZeroBitCount
        let value: UInt64
        if ones >= escape {
            _ = take(escape)
            value = try explicit(fill: fill, fail: fail)
            guard value &>> UInt64(state.parameter) >= RiceState.escapeQuotient else { throw fail(.notShortest) }
        } else {
            guard ones < count else { throw fail(.ended) }
            _ = take(ones &+ 1)
            let k = state.parameter
            let quotient = UInt64(ones)
            guard quotient <= UInt64.max &>> UInt64(k) else { throw fail(.tooLarge) }
            value = quotient &<< UInt64(k) | (try bits(k, fill: fill, fail: fail))
        }
        state.update(value)
        return value
    }

    /// Reads a Rice value from bytes in memory, without closures, for a reader's loop over runs:
    /// at least 16 bytes must be readable at `base + position`. Returns nil for what it leaves
    /// to `rice(_:fill:fail:)`: an escape, or a parameter above 32 (so a value read here is
    /// below 2^37). On nil, `self`, `state` and `position` are part way: the caller reads from
    /// copies it dropped.
    @inlinable @inline(__always)
    package mutating func riceInMemory(
        _ state: inout RiceState,
        from base: UnsafeRawPointer,
        at position: inout Int
    ) -> UInt64? {
        refill(from: base, at: &position, end: position &+ 16)
        // count ≥ 56 now, so fewer than 24 ones end inside the bits held.
        let ones = (~bits).trailingZeroBitCount
        let k = state.parameter
        guard ones < Int(RiceState.escapeQuotient), k <= 32 else { return nil }
        _ = take(ones &+ 1)
        // At least 32 bits are left for the remainder.
        let value = UInt64(ones) &<< UInt64(k) | take(k)
        state.update(value)
        return value
    }

    /// Reads what `BitPacker.putExplicit` wrote; it must be in its shortest length.
    @inlinable
    package mutating func explicit<E: Error>(
        fill: (inout BitUnpacker) throws(E) -> Void,
        fail: (BitFailure) -> E
    ) throws(E) -> UInt64 {
        let length = Int(try bits(6, fill: fill, fail: fail)) + 1
        let value = try bits(length, fill: fill, fail: fail)
        guard length == 1 || value &>> UInt64(length - 1) == 1 else { throw fail(.notShortest) }
        return value
    }

    /// Drops the bits left of the current byte, which must be zero, and returns how many whole
    /// bytes are still held (the reader gives those back before reading bytes again).
    ///
    /// - Returns: nil if a dropped bit is not zero.
    @inlinable
    package mutating func align() -> Int? {
        let partial = count & 7
        guard bits & ((1 &<< UInt64(partial)) &- 1) == 0 else { return nil }
        _ = take(partial)
        return count >> 3
    }

    /// Takes the next whole byte held; only after `align()`, while `bitsHeld >= 8`.
    @inlinable
    package mutating func takeByte() -> UInt8 {
        UInt8(truncatingIfNeeded: take(8))
    }
}
