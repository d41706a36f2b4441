internal import CZlib

/// zlib's CRC-32 of `bytes`, continuing from `crc` (0 to begin): the one CRC of the package
/// (shard headers, compiled rules, gzip members, deflated pushes).
package func crc32Update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
    var value = UInt(crc)
    var offset = 0
    // zlib takes a 32-bit length: a larger buffer goes in pieces.
    while offset < bytes.count {
        let piece = min(bytes.count - offset, Int(UInt32.max))
        value = crc32(value, base.assumingMemoryBound(to: Bytef.self) + offset, uInt(piece))
        offset += piece
    }
    return UInt32(truncatingIfNeeded: value)
}
