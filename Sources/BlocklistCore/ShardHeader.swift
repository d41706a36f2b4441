internal import ByteCodecs

/// The fixed header at the start of every shard file: 64 bytes in version 1, 128 in version 2.
/// docs/FORMAT.md gives the layout.
///
/// All integers are little-endian. The header's CRC-32 covers every header byte before it
/// (including the payload's CRC-32), so together they cover every byte of the file.

public struct ShardHeader: Hashable, Sendable {
    /// "BLKSHARD".
    public static let magic: [UInt8] = Array("BLKSHARD".utf8)
    /// The format version this library writes and the newest it reads.
    public static let currentVersion: UInt16 = 2
    /// Bytes in a version 1 header; also the least a reader reads before it knows the version.
    public static let size = 64
    /// Bytes in a version 2 header.
    public static let version2Size = 128
    /// The most distinct labels one shard's label table may hold.
    public static let maximumLabelCount: UInt32 = 65_535
    /// The most bytes of label text one shard may hold: the reader keeps them in memory.
    public static let maximumLabelBytes: UInt32 = 1 << 20

    /// Bytes in a header of `version`.
    public static func size(ofVersion version: UInt16) -> Int { version >= 2 ? version2Size : size }

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
    /// CRC-32 of the header bytes before it. It identifies the file's content: the manifest's checksum.
    public var headerCRC: UInt32
    /// Version 2: how many identification runs (numbers with one label) the payload encodes.
    public var identificationRunCount: UInt32 = 0
    /// Version 2: how many identification entries the shard holds.
    public var identificationCount: Int64 = 0
    /// Version 2: the smallest identified number, or 0 if none.
    public var identificationFirst: Int64 = 0
    /// Version 2: the largest identified number, or 0 if none.
    public var identificationLast: Int64 = 0
    /// Version 2: distinct labels in the shard's label table.
    public var labelCount: UInt32 = 0
    /// Version 2: bytes of label text in the label table.
    public var labelBytes: UInt32 = 0
    /// Version 2: the smallest number the shard covers in a packed layout (shard boundaries of the
    /// next generation start from these), 0 in a range layout.
    public var lowerBound: Int64 = 0

    /// Bytes in this header; the payload starts here.
    public var byteCount: Int { Self.size(ofVersion: version) }
    /// Bytes in the file: header and payload.
    public var fileSize: Int64 { Int64(byteCount) + payloadLength }
    /// Numbers of both kinds.
    public var totalEntries: Int64 { entryCount + identificationCount }

    public init(
        version: UInt16 = ShardHeader.currentVersion,
        shardIndex: UInt32,
        runCount: UInt32,
        entryCount: Int64,
        first: Int64,
        last: Int64,
        payloadLength: Int64,
        payloadCRC: UInt32,
        headerCRC: UInt32 = 0
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

    /// Writes the header into `bytes` (`byteCount` bytes), computing `headerCRC` over all but its
    /// last 4 bytes.
    package mutating func encode(into bytes: UnsafeMutableRawBufferPointer) {
        let size = byteCount
        precondition(bytes.count >= size)
        for offset in 0..<size { bytes[offset] = 0 }
        for (offset, byte) in Self.magic.enumerated() { bytes[offset] = byte }
        bytes.storeBytes(of: version.littleEndian, toByteOffset: 8, as: UInt16.self)
        bytes.storeBytes(of: UInt16(size).littleEndian, toByteOffset: 10, as: UInt16.self)
        bytes.storeBytes(of: UInt32(0).littleEndian, toByteOffset: 12, as: UInt32.self)
        bytes.storeBytes(of: shardIndex.littleEndian, toByteOffset: 16, as: UInt32.self)
        bytes.storeBytes(of: runCount.littleEndian, toByteOffset: 20, as: UInt32.self)
        bytes.storeBytes(of: entryCount.littleEndian, toByteOffset: 24, as: Int64.self)
        bytes.storeBytes(of: first.littleEndian, toByteOffset: 32, as: Int64.self)
        bytes.storeBytes(of: last.littleEndian, toByteOffset: 40, as: Int64.self)
        bytes.storeBytes(of: payloadLength.littleEndian, toByteOffset: 48, as: Int64.self)
        bytes.storeBytes(of: payloadCRC.littleEndian, toByteOffset: 56, as: UInt32.self)
        if version >= 2 {
            bytes.storeBytes(of: identificationRunCount.littleEndian, toByteOffset: 60, as: UInt32.self)
            bytes.storeBytes(of: identificationCount.littleEndian, toByteOffset: 64, as: Int64.self)
            bytes.storeBytes(of: identificationFirst.littleEndian, toByteOffset: 72, as: Int64.self)
            bytes.storeBytes(of: identificationLast.littleEndian, toByteOffset: 80, as: Int64.self)
            bytes.storeBytes(of: labelCount.littleEndian, toByteOffset: 88, as: UInt32.self)
            bytes.storeBytes(of: labelBytes.littleEndian, toByteOffset: 92, as: UInt32.self)
            bytes.storeBytes(of: lowerBound.littleEndian, toByteOffset: 96, as: Int64.self)
        }
        headerCRC = crc32Update(0, UnsafeRawBufferPointer(rebasing: bytes[0..<(size - 4)]))
        bytes.storeBytes(of: headerCRC.littleEndian, toByteOffset: size - 4, as: UInt32.self)
    }

    /// The version at byte 8 of a header's first 64 bytes, checked, so the caller knows how many
    /// header bytes to read.
    package static func version(_ bytes: UnsafeRawBufferPointer, path: String) throws(BlocklistError) -> UInt16 {
        precondition(bytes.count >= Self.size)
        guard zip(bytes.prefix(8), magic).allSatisfy({ $0 == $1 }) else {
            throw BlocklistError(
                .notAShard,
                "\(path) is not a shard file: it does not start with the magic \"BLKSHARD\"."
            )
        }
        let version = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        guard version >= 1 else {
            throw BlocklistError(.corruptShard, "\(path): format version at byte 8 is 0; versions start at 1.")
        }
        guard version <= currentVersion else {
            throw BlocklistError(
                .unsupportedVersion,
                "\(path) is shard format version \(version), newer than the version \(currentVersion) this tool reads; update blocklist."
            )
        }
        return version
    }

    /// Reads and checks the header at the start of `file` (64 or 128 bytes, by its version),
    /// using `buffer` (at least 128 bytes); the payload is not read.
    package static func read(
        _ file: borrowing FileDescriptor,
        buffer: UnsafeMutableRawBufferPointer,
        path: String
    ) throws(BlocklistError) -> ShardHeader {
        var headerBytes = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size])
        var read = try file.read(into: headerBytes, at: 0)
        if read == size {
            let versionSize = Self.size(ofVersion: try version(UnsafeRawBufferPointer(headerBytes), path: path))
            headerBytes = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<versionSize])
            read = try file.read(into: headerBytes, at: 0)
        }
        guard read == headerBytes.count else {
            if read >= 8, zip(headerBytes.prefix(8), magic).allSatisfy({ $0 == $1 }) {
                throw BlocklistError(
                    .corruptShard,
                    "\(path) is truncated: \(read) bytes, shorter than the \(headerBytes.count)-byte header."
                )
            }
            throw BlocklistError(
                .notAShard,
                "\(path) is not a shard file: \(read) bytes, shorter than the \(headerBytes.count)-byte header."
            )
        }
        return try decode(UnsafeRawBufferPointer(headerBytes), path: path)
    }

    /// Reads and checks the header of the shard at `path` alone, without reading its payload.
    package static func read(path: String) throws(BlocklistError) -> ShardHeader {
        let file = try FileDescriptor.openForReading(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: version2Size, alignment: 8)
        defer { buffer.deallocate() }
        return try read(file, buffer: buffer, path: path)
    }

    /// Reads and checks a header: magic, version, header size, CRC, and that its fields agree.
    ///
    /// - Parameters:
    ///   - bytes: the header's bytes: 64 for version 1, 128 for version 2.
    ///   - path: the file, for error sentences.
    /// - Throws: `.notAShard` for a wrong magic, `.unsupportedVersion` for a newer version,
    ///   `.corruptShard` for anything else.
    package static func decode(_ bytes: UnsafeRawBufferPointer, path: String) throws(BlocklistError) -> ShardHeader {
        let version = try Self.version(bytes, path: path)
        let size = Self.size(ofVersion: version)
        precondition(bytes.count >= size)
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: size - 4, as: UInt32.self))
        let computed = crc32Update(0, UnsafeRawBufferPointer(rebasing: bytes[0..<(size - 4)]))
        guard stored == computed else {
            throw BlocklistError(
                .corruptShard,
                "\(path): header checksum mismatch (bytes 0-\(size - 5) give CRC-32 \(hex(computed)), byte \(size - 4) says \(hex(stored))); the header is damaged."
            )
        }
        let headerSize = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
        guard headerSize == size else {
            throw BlocklistError(
                .corruptShard,
                "\(path): header size at byte 10 is \(headerSize); version \(version) headers are \(size) bytes."
            )
        }
        let flags = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard flags == 0 else {
            throw BlocklistError(
                .corruptShard,
                "\(path): flags at byte 12 are \(flags); version \(version) defines none, so they must be 0."
            )
        }
        var header = ShardHeader(
            version: version,
            shardIndex: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
            runCount: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self)),
            entryCount: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: Int64.self)),
            first: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 32, as: Int64.self)),
            last: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 40, as: Int64.self)),
            payloadLength: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 48, as: Int64.self)),
            payloadCRC: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 56, as: UInt32.self)),
            headerCRC: stored
        )
        if version >= 2 {
            header.identificationRunCount = UInt32(
                littleEndian: bytes.loadUnaligned(fromByteOffset: 60, as: UInt32.self)
            )
            header.identificationCount = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 64, as: Int64.self))
            header.identificationFirst = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 72, as: Int64.self))
            header.identificationLast = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 80, as: Int64.self))
            header.labelCount = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 88, as: UInt32.self))
            header.labelBytes = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 92, as: UInt32.self))
            header.lowerBound = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 96, as: Int64.self))
            for offset in 104..<(size - 4) where bytes[offset] != 0 {
                throw BlocklistError(
                    .corruptShard,
                    "\(path): reserved header byte \(offset) is \(bytes[offset]); version 2 reserves bytes 104-123 as 0."
                )
            }
        }
        try header.checkConsistency(path: path)
        return header
    }

    /// Checks that the fields agree with each other; the payload is checked as it is read.
    func checkConsistency(path: String) throws(BlocklistError) {
        func fail(_ what: String) -> BlocklistError { BlocklistError(.corruptShard, "\(path): \(what).") }
        guard shardIndex >= 1 else { throw fail("shard index at byte 16 is 0; indexes start at 1") }
        guard entryCount >= 0, payloadLength >= 0 else { throw fail("entry count or payload length is negative") }
        // One kind's runs, count and bounds agree: none at all, or runs that can hold the count
        // between first and last.
        func checkKind(_ kind: String, runs: UInt32, count: Int64, first: Int64, last: Int64) throws(BlocklistError) {
            if count == 0 {
                guard runs == 0, first == 0, last == 0 else {
                    throw fail(
                        "no \(kind) entries needs 0 runs and first = last = 0, but the header has \(runs) runs, first \(first), last \(last)"
                    )
                }
            } else {
                guard runs >= 1, Int64(runs) <= count else {
                    throw fail("\(runs) \(kind) runs cannot hold \(count) entries")
                }
                guard first > 0, first <= last, last - first + 1 >= count else {
                    throw fail("\(kind) first \(first) and last \(last) cannot bound \(count) distinct entries")
                }
            }
        }
        try checkKind("blocking", runs: runCount, count: entryCount, first: first, last: last)
        guard identificationCount >= 0, lowerBound >= 0 else {
            throw fail("identification count or lower bound is negative")
        }
        try checkKind(
            "identification",
            runs: identificationRunCount,
            count: identificationCount,
            first: identificationFirst,
            last: identificationLast
        )
        guard identificationCount == 0 || labelCount >= 1 else {
            throw fail("\(identificationCount) identification entries need at least one label")
        }
        guard labelCount <= Self.maximumLabelCount, labelBytes <= Self.maximumLabelBytes else {
            throw fail(
                "the label table of \(labelCount) labels and \(labelBytes) bytes is over the limits of \(Self.maximumLabelCount) labels and \(Self.maximumLabelBytes) bytes"
            )
        }
        guard labelBytes >= labelCount else {
            throw fail("\(labelCount) labels, each at least 1 byte, cannot fit \(labelBytes) bytes")
        }
    }
}

/// A CRC-32 as eight hex digits.
func hex(_ value: UInt32) -> String { Hex.padded(UInt64(value), width: 8) }
