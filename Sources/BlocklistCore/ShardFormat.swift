/// Parameters of the shard payload, shared by the writer and the reader.
///
/// The payload is a zlib stream (RFC 1950) of runs, each two unsigned LEB128 varints:
/// `start - (previousLast + 2)` and `count - 1`, with `previousLast = first - 2` before the first
/// run. Runs are therefore strictly ascending and never adjacent by construction.
package enum ShardFormat {
    /// zlib level 9: the payload is written once and read on every device.
    package static let compressionLevel: Int32 = 9
    /// A 4 KiB window: a default shard's whole raw payload is about 6 KiB and compresses to
    /// ~130 bytes with any window from 1 KiB to 32 KiB (measured), so a larger one only costs
    /// memory, in the writer and in every reader on a device.
    package static let windowBits: Int32 = 12
    /// Deflate's hash memory, `2^(memLevel+9)` bytes: 8 KiB.
    package static let memoryLevel: Int32 = 4
    /// The reader accepts any window zlib allows, so files from writers with other settings read.
    package static let readerWindowBits: Int32 = 15
    /// The writer's and reader's I/O buffers.
    package static let bufferSize = 16 * 1024
    /// The longest LEB128 encoding of a UInt64.
    package static let maximumVarintBytes = 10
}

/// Version 2's adaptive Golomb–Rice code for one stream of unsigned values (gaps, or run lengths
/// minus one), shared by the writer and the reader so both compute the same parameter.
///
/// A value `v` is written as `q = v >> k` one-bits, a zero bit, then the low `k` bits of `v`,
/// where `k` follows the running mean of the values seen so far (the JPEG-LS rule: the largest
/// `k` with `count << k <= sum`, halving both every 64 values). For geometrically distributed
/// gaps, which uniformly random numbers give, this is within a few percent of the entropy.
/// A quotient of `escapeQuotient` or more is written as `escapeQuotient` one-bits, 6 bits of
/// bit length `n`, then the `n` bits of `v`.
package struct RiceState {
    package static let escapeQuotient: UInt64 = 24
    private static let initialSum: UInt64 = 1 << 10
    private static let sumLimit: UInt64 = 1 << 56
    private var sum: UInt64 = RiceState.initialSum
    private var count: UInt64 = 1

    package init() {}

    /// The Rice parameter for the next value: the largest `k` with `count << k <= sum`, which is
    /// `⌊log2(sum / count)⌋` (0 when the mean is 0), found from the two bit lengths without a
    /// division (a division per value was a tenth of decoding a shard).
    @inline(__always)
    package var parameter: Int {
        let k = count.leadingZeroBitCount &- sum.leadingZeroBitCount
        if k <= 0 { return 0 }
        // count < 2^7 and k < 64 - 7, so the shift does not overflow.
        return count &<< UInt64(k) > sum ? k &- 1 : k
    }

    /// Takes `value` into the running mean.
    @inline(__always)
    package mutating func update(_ value: UInt64) {
        sum = min(sum &+ min(value, RiceState.sumLimit), RiceState.sumLimit * 2)
        count += 1
        if count == 64 {
            sum >>= 1
            count >>= 1
        }
    }
}

/// The version every blocklist program prints for `--version`.
public let blocklistVersion = "0.1.0"
