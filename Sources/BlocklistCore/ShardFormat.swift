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
