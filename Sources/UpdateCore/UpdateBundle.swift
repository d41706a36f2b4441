/// Several publication files in one body: what `GET /v1/update?from=N` answers, so that a phone
/// gets everything from its generation to the newest in one request (docs/FORMAT.md, "Update
/// bundle"). `BLKBNDL1`, then per file its path length (u16), path, length (u32) and bytes, to
/// the end. Every file is still checked against the signed metadata as if fetched alone: the
/// bundle itself is not trusted.
package enum UpdateBundle {
    package static let magic = Array("BLKBNDL1".utf8)
    /// The largest bundle a reader takes (64 MiB).
    package static let maximumBytes = 64 << 20
    /// The largest bundle `updates serve` answers and a phone takes over HTTP (1 MiB): a phone
    /// holds a bundle in memory, so a larger update goes file by file, shards streamed to disk.
    /// One definition for both sides, so that the server never builds what the client refuses.
    package static let maximumServedBytes = 1 << 20

    /// The bytes a file of `length` bytes at `path` takes in a bundle: its path length, path,
    /// length and bytes. A bundle is ``magic`` plus this for each of its files.
    package static func encodedLength(path: String, length: Int) -> Int {
        2 + path.utf8.count + 4 + length
    }

    /// The bundle of `files`.
    package static func encode(_ files: [(path: String, bytes: [UInt8])]) -> [UInt8] {
        var out = magic
        out.reserveCapacity(files.reduce(magic.count) { $0 + encodedLength(path: $1.path, length: $1.bytes.count) })
        for (path, bytes) in files {
            let name = Array(path.utf8)
            out += InlinePush.littleEndian(UInt64(name.count), 2) + name
            out += InlinePush.littleEndian(UInt64(bytes.count), 4) + bytes
        }
        return out
    }

    /// The files of a bundle, by path.
    ///
    /// - Throws: `.malformed` for a bundle cut short, a path that is not plain or given twice.
    package static func decode(_ bytes: [UInt8], what: String) throws(UpdateError) -> [String: [UInt8]] {
        try index(bytes, what: what).mapValues { Array(bytes[$0]) }
    }

    /// Where each file of a bundle lies in `bytes`, by path: what a phone keeps, rather than a
    /// copy of every file.
    ///
    /// - Throws: `.malformed` for a bundle cut short, a path that is not plain or given twice.
    package static func index(_ bytes: [UInt8], what: String) throws(UpdateError) -> [String: Range<Int>] {
        guard bytes.count <= maximumBytes else {
            throw UpdateError(.limitExceeded, "\(what) is \(bytes.count) bytes; a bundle is at most \(maximumBytes).")
        }
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
            throw UpdateError(.malformed, "\(what) is not an update bundle (it does not start with BLKBNDL1).")
        }
        var files: [String: Range<Int>] = [:]
        var reader = BitReader(bytes, at: magic.count, what: what)
        while reader.position < bytes.count {
            let nameLength = try reader.bytes(2, "a path length")
            let name = try reader.bytes(Int(nameLength[0]) | Int(nameLength[1]) << 8, "a path")
            let path = String(decoding: name, as: UTF8.self)
            guard Array(path.utf8) == name, FileInfo.isSafe(path) else {
                throw UpdateError(.malformed, "\(what) holds a file whose path is not a plain relative path.")
            }
            let length = try reader.bytes(4, "the length of \(path)")
            let count = length.enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            let start = reader.position
            try reader.skip(count, "\(path)")
            guard files.updateValue(start..<reader.position, forKey: path) == nil else {
                throw UpdateError(.malformed, "\(what) holds \(path) twice.")
            }
        }
        return files
    }
}
