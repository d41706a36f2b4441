/// The fixed 64-byte header at the start of every shard file. docs/FORMAT.md gives the layout.
///
/// All integers are little-endian. The header's CRC-32 covers its first 60 bytes, including the
/// payload's CRC-32, so together they cover every byte of the file.
public struct ShardHeader: Hashable, Sendable {
    /// "BLKSHARD".
    public static let magic: [UInt8] = Array("BLKSHARD".utf8)
    /// The format version this library writes and the newest it reads.
    public static let currentVersion: UInt16 = 1
    /// Bytes in the header; the payload starts here.
    public static let size = 64

    /// The format version the file was written with.
    public var version: UInt16
    /// The shard's index, from 1: extension `index` loads it.
    public var shardIndex: UInt32
    /// How many runs the payload encodes.
    public var runCount: UInt32
    /// How many numbers the shard holds.
    public var entryCount: Int64
    /// The smallest number, or 0 for an empty shard.
    public var first: Int64
    /// The largest number, or 0 for an empty shard.
    public var last: Int64
    /// Bytes of zlib payload after the header.
    public var payloadLength: Int64
    /// CRC-32 of the payload bytes as stored (compressed).
    public var payloadCRC: UInt32
    /// CRC-32 of header bytes 0..<60. It identifies the file's content: the manifest's checksum.
    public var headerCRC: UInt32

    public init(
        version: UInt16 = ShardHeader.currentVersion, shardIndex: UInt32, runCount: UInt32, entryCount: Int64,
        first: Int64, last: Int64, payloadLength: Int64, payloadCRC: UInt32, headerCRC: UInt32 = 0
    ) {
        self.version = version
        self.shardIndex = shardIndex
        self.runCount = runCount
        self.entryCount = entryCount
        self.first = first
        self.last = last
        self.payloadLength = payloadLength
        self.payloadCRC = payloadCRC
        self.headerCRC = headerCRC
    }

    /// The checksum as the manifest and the store write it: 8 lowercase hex digits.
    public var checksum: String { hex(headerCRC) }

    /// Writes the header into `bytes` (64 bytes), computing `headerCRC` over the first 60.
    package mutating func encode(into bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= Self.size)
        for (offset, byte) in Self.magic.enumerated() { bytes[offset] = byte }
        bytes.storeBytes(of: version.littleEndian, toByteOffset: 8, as: UInt16.self)
        bytes.storeBytes(of: UInt16(Self.size).littleEndian, toByteOffset: 10, as: UInt16.self)
        bytes.storeBytes(of: UInt32(0).littleEndian, toByteOffset: 12, as: UInt32.self)
        bytes.storeBytes(of: shardIndex.littleEndian, toByteOffset: 16, as: UInt32.self)
        bytes.storeBytes(of: runCount.littleEndian, toByteOffset: 20, as: UInt32.self)
        bytes.storeBytes(of: entryCount.littleEndian, toByteOffset: 24, as: Int64.self)
        bytes.storeBytes(of: first.littleEndian, toByteOffset: 32, as: Int64.self)
        bytes.storeBytes(of: last.littleEndian, toByteOffset: 40, as: Int64.self)
        bytes.storeBytes(of: payloadLength.littleEndian, toByteOffset: 48, as: Int64.self)
        bytes.storeBytes(of: payloadCRC.littleEndian, toByteOffset: 56, as: UInt32.self)
        headerCRC = crc32Update(0, UnsafeRawBufferPointer(rebasing: bytes[0..<60]))
        bytes.storeBytes(of: headerCRC.littleEndian, toByteOffset: 60, as: UInt32.self)
    }

    /// Reads and checks a header: magic, version, header size, CRC, and that its fields agree.
    ///
    /// - Parameters:
    ///   - bytes: the first 64 bytes of the file.
    ///   - path: the file, for error sentences.
    /// - Throws: `.notAShard` for a wrong magic, `.unsupportedVersion` for a newer version,
    ///   `.corruptShard` for anything else.
    package static func decode(_ bytes: UnsafeRawBufferPointer, path: String) throws(BlocklistError) -> ShardHeader {
        precondition(bytes.count >= Self.size)
        guard zip(bytes.prefix(8), magic).allSatisfy({ $0 == $1 }) else {
            throw BlocklistError(.notAShard, "\(path) is not a shard file: it does not start with the magic \"BLKSHARD\".")
        }
        let version = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        guard version >= 1 else {
            throw BlocklistError(.corruptShard, "\(path): format version at byte 8 is 0; versions start at 1.")
        }
        guard version <= currentVersion else {
            throw BlocklistError(
                .unsupportedVersion,
                "\(path) is shard format version \(version), newer than the version \(currentVersion) this tool reads; update blocklist.")
        }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 60, as: UInt32.self))
        let computed = crc32Update(0, UnsafeRawBufferPointer(rebasing: bytes[0..<60]))
        guard stored == computed else {
            throw BlocklistError(
                .corruptShard,
                "\(path): header checksum mismatch (bytes 0-59 give CRC-32 \(hex(computed)), byte 60 says \(hex(stored))); the header is damaged.")
        }
        let headerSize = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
        guard headerSize == size else {
            throw BlocklistError(.corruptShard, "\(path): header size at byte 10 is \(headerSize); version 1 headers are \(size) bytes.")
        }
        let flags = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard flags == 0 else {
            throw BlocklistError(.corruptShard, "\(path): flags at byte 12 are \(flags); version 1 defines none, so they must be 0.")
        }
        let header = ShardHeader(
            version: version,
            shardIndex: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
            runCount: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self)),
            entryCount: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: Int64.self)),
            first: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 32, as: Int64.self)),
            last: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 40, as: Int64.self)),
            payloadLength: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 48, as: Int64.self)),
            payloadCRC: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 56, as: UInt32.self)),
            headerCRC: stored)
        try header.checkConsistency(path: path)
        return header
    }

    /// Checks that the fields agree with each other; the payload is checked as it is read.
    func checkConsistency(path: String) throws(BlocklistError) {
        func fail(_ what: String) -> BlocklistError { BlocklistError(.corruptShard, "\(path): \(what).") }
        guard shardIndex >= 1 else { throw fail("shard index at byte 16 is 0; indexes start at 1") }
        guard entryCount >= 0, payloadLength >= 0 else { throw fail("entry count or payload length is negative") }
        if entryCount == 0 {
            guard runCount == 0, first == 0, last == 0 else {
                throw fail("an empty shard must have 0 runs and first = last = 0, but has \(runCount) runs, first \(first), last \(last)")
            }
        } else {
            guard runCount >= 1, Int64(runCount) <= entryCount else {
                throw fail("\(runCount) runs cannot hold \(entryCount) entries")
            }
            guard first > 0, first <= last, last - first + 1 >= entryCount else {
                throw fail("first \(first) and last \(last) cannot bound \(entryCount) distinct entries")
            }
        }
    }
}

func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}
