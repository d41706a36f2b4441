import BlocklistCore
internal import ByteCodecs

/// zlib for publication's small, bounded documents: deltas and pushes, whole in memory.
package enum Compression {
    /// `bytes` as one zlib stream (level 9).
    package static func deflate(_ bytes: [UInt8], what: String) throws(UpdateError) -> [UInt8] {
        do {
            let deflater = try Deflater(level: 9, windowBits: 15, memLevel: 8, context: what)
            var out: [UInt8] = []
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 8)
            defer { buffer.deallocate() }
            try bytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
                try deflater.compress(input, into: buffer, finish: true) { out.append(contentsOf: $0) }
            }
            return out
        } catch let error as BlocklistError {
            throw UpdateError(error)
        } catch {
            throw UpdateError(.shard, "Compressing \(what) failed: \(error).")
        }
    }

    /// The bytes of the zlib stream `compressed`, which must decompress to exactly
    /// `expectedLength` bytes and end exactly at its last byte.
    package static func inflate(_ compressed: [UInt8], expectedLength: Int, what: String) throws(UpdateError) -> [UInt8]
    {
        var out = [UInt8](repeating: 0, count: expectedLength)
        var produced = 0
        do {
            let inflater = try Inflater(windowBits: 15, context: what, payloadOffset: 0)
            var spare: UInt8 = 0
            try compressed.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
                inflater.setInput(input)
                while true {
                    let (step, count): (Inflater.Step, Int)
                    if produced < expectedLength {
                        (step, count) = try out.withUnsafeMutableBytes { all in
                            try inflater.inflate(into: UnsafeMutableRawBufferPointer(rebasing: all[produced...]))
                        }
                    } else {
                        // Room for one byte more, to see whether the stream goes on.
                        (step, count) = try withUnsafeMutableBytes(of: &spare) { one in
                            try inflater.inflate(into: one)
                        }
                        guard count == 0 else {
                            throw BlocklistError(
                                .corruptShard,
                                "\(what) decompresses to more than its \(expectedLength) bytes"
                            )
                        }
                    }
                    produced += count
                    if step == .end { break }
                    if count == 0 && inflater.availableInput == 0 {
                        throw BlocklistError(.corruptShard, "\(what) ends before its compressed stream does")
                    }
                }
                guard inflater.availableInput == 0 else {
                    throw BlocklistError(
                        .corruptShard,
                        "\(what) has \(inflater.availableInput) bytes after its compressed stream"
                    )
                }
            }
        } catch let error as BlocklistError {
            throw UpdateError(.malformed, "\(error.message.hasSuffix(".") ? error.message : error.message + ".")")
        } catch {
            throw UpdateError(.malformed, "\(what): \(error).")
        }
        guard produced == expectedLength else {
            throw UpdateError(.malformed, "\(what) decompresses to \(produced) bytes, but says \(expectedLength).")
        }
        return out
    }
}

/// A published shard delta: a 48-byte header, then the deflated `ShardDelta` payload
/// (docs/FORMAT.md, "Delta file"). Little-endian.
package enum DeltaFile {
    package static let magic = Array("BLKDELTA".utf8)
    package static let headerSize = 48
    /// Version 2: each section's first start written in full and its run lengths only when one
    /// run is longer than a number (version 1, which gap-coded the first start, is not read).
    package static let version: UInt64 = 2

    /// The file for `payload`, the delta of shard `index` from generation `from` to `to`.
    package static func encode(payload: [UInt8], index: Int, from: UInt64, to: UInt64) throws(UpdateError) -> [UInt8] {
        precondition(payload.count <= ShardDelta.maximumPayloadBytes, "the publisher checks the size first")
        let compressed = try Compression.deflate(payload, what: "the delta of shard \(index)")
        var out = magic
        put(&out, version, 2)
        put(&out, UInt64(headerSize), 2)
        put(&out, UInt64(index), 4)
        put(&out, from, 8)
        put(&out, to, 8)
        put(&out, UInt64(payload.count), 4)
        put(&out, UInt64(compressed.count), 4)
        put(&out, UInt64(crc32(compressed)), 4)
        put(&out, UInt64(crc32(out)), 4)
        return out + compressed
    }

    /// What a delta file says of itself, checked.
    package struct Decoded: Sendable {
        package var index: Int
        package var from: UInt64
        package var to: UInt64
        package var payload: [UInt8]
    }

    /// Checks and decompresses a delta file read whole (at most `maximumPayloadBytes` compressed
    /// plus the header; the snapshot's length bounds it before it is read).
    package static func decode(_ bytes: [UInt8], what: String) throws(UpdateError) -> Decoded {
        func fail(_ problem: String) -> UpdateError { UpdateError(.malformed, "\(what) \(problem).") }
        guard bytes.count >= headerSize else {
            throw fail("is \(bytes.count) bytes, shorter than a delta's \(headerSize)-byte header")
        }
        guard Array(bytes[0..<8]) == magic else {
            throw fail("is not a shard delta (its first bytes are not BLKDELTA)")
        }
        let version = get(bytes, 8, 2)
        guard version == Self.version else {
            throw UpdateError(
                .unsupportedVersion,
                "\(what) is delta format version \(version); this reader knows \(Self.version) (a publication made by another blocklist version: publish it again with this one)."
            )
        }
        guard crc32(Array(bytes[0..<44])) == UInt32(get(bytes, 44, 4)) else {
            throw fail("has a damaged header (CRC-32 mismatch)")
        }
        guard get(bytes, 10, 2) == UInt64(headerSize) else { throw fail("has a header size other than \(headerSize)") }
        let index = get(bytes, 12, 4)
        guard index >= 1 else { throw fail("names shard 0; shards count from 1") }
        let length = Int(get(bytes, 32, 4))
        guard length <= ShardDelta.maximumPayloadBytes else {
            throw UpdateError(
                .limitExceeded,
                "\(what) holds \(length) bytes before compression; a delta is at most \(ShardDelta.maximumPayloadBytes)."
            )
        }
        let compressedLength = Int(get(bytes, 36, 4))
        guard bytes.count == headerSize + compressedLength else {
            throw fail("is \(bytes.count) bytes, but its header says \(headerSize) + \(compressedLength)")
        }
        let compressed = Array(bytes[headerSize...])
        guard crc32(compressed) == UInt32(get(bytes, 40, 4)) else {
            throw fail("has a damaged payload (CRC-32 mismatch)")
        }
        let payload = try Compression.inflate(compressed, expectedLength: length, what: what)
        let target = try ShardDelta.target(of: payload, what: what)
        guard target.index == Int(index) else {
            throw fail("says shard \(index) in its header and \(target.index) in its payload")
        }
        return Decoded(index: Int(index), from: get(bytes, 16, 8), to: get(bytes, 24, 8), payload: payload)
    }

    private static func put(_ out: inout [UInt8], _ value: UInt64, _ width: Int) {
        for byte in 0..<width { out.append(UInt8(truncatingIfNeeded: value >> (8 * byte))) }
    }

    private static func get(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in 0..<width { value |= UInt64(bytes[offset + byte]) << (8 * byte) }
        return value
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { crc32Update(0, $0) }
    }
}
