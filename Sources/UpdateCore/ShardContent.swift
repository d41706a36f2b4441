import BlocklistCore
import Crypto

/// What a shard holds, independent of how its payload was compressed: its format version, index
/// and lower bound, its blocking runs, and its identification runs with their labels' text.
///
/// Publication compares shards by this content, not by their bytes: a phone that applies a delta
/// writes the shard again with its own zlib, whose deflate output may differ from the
/// publisher's, yet must arrive at the same content. `digest` is SHA-256 over a canonical stream
/// (docs/FORMAT.md, "Shard content digest").
public struct ShardContent: Hashable, Sendable {
    /// The shard format version (1 or 2).
    public var version: UInt16
    /// The shard's index, from 1.
    public var index: Int
    /// The packed layout's lower bound (version 2), else 0.
    public var lowerBound: Int64
    /// Blocking runs, ascending and never touching.
    public var blocking: [NumberRun]
    /// The label table.
    public var labels: [[UInt8]]
    /// Identification runs, ascending, with an index into `labels`.
    public var identification: [(run: NumberRun, label: Int)]

    public static func == (a: Self, b: Self) -> Bool {
        a.version == b.version && a.index == b.index && a.lowerBound == b.lowerBound && a.blocking == b.blocking
            && a.identification.count == b.identification.count
            && zip(a.identification, b.identification).allSatisfy {
                $0.run == $1.run && a.labels[$0.label] == b.labels[$1.label]
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(blocking)
    }

    public init(
        version: UInt16,
        index: Int,
        lowerBound: Int64,
        blocking: [NumberRun],
        labels: [[UInt8]],
        identification: [(run: NumberRun, label: Int)]
    ) {
        self.version = version
        self.index = index
        self.lowerBound = lowerBound
        self.blocking = blocking
        self.labels = labels
        self.identification = identification
    }

    /// Reads every run of the shard at `path` into memory (the publisher's side; a phone streams).
    ///
    /// - Throws: `UpdateError` `.shard` with the reader's sentence.
    public init(shardAt path: String) throws(UpdateError) {
        do throws(BlocklistError) {
            let reader = try ShardReader(path: path)
            version = reader.header.version
            index = Int(reader.header.shardIndex)
            lowerBound = reader.header.lowerBound
            blocking = []
            while let run = try reader.nextRun() { blocking.append(run) }
            labels = try reader.readLabels()
            identification = []
            while let (run, label) = try reader.nextIdentificationRun() { identification.append((run, label)) }
        } catch {
            throw UpdateError(error)
        }
    }

    /// The canonical digest of a shard file's content, streaming (fixed memory plus its labels).
    ///
    /// - Throws: `UpdateError` `.shard` if the file is not a sound shard.
    public static func digest(ofShardAt path: String) throws(UpdateError) -> [UInt8] {
        do throws(BlocklistError) {
            let reader = try ShardReader(path: path)
            var hasher = ContentHasher(
                version: reader.header.version,
                index: Int(reader.header.shardIndex),
                lowerBound: reader.header.lowerBound
            )
            while let run = try reader.nextRun() { hasher.blocking(run) }
            let labels = try reader.readLabels()
            hasher.beginIdentification()
            while let (run, label) = try reader.nextIdentificationRun() {
                hasher.identification(run, label: labels[label])
            }
            return hasher.finish()
        } catch {
            throw UpdateError(error)
        }
    }

    /// This content's canonical digest.
    public var digest: [UInt8] {
        var hasher = ContentHasher(version: version, index: index, lowerBound: lowerBound)
        for run in blocking { hasher.blocking(run) }
        hasher.beginIdentification()
        for (run, label) in identification { hasher.identification(run, label: labels[label]) }
        return hasher.finish()
    }
}

/// SHA-256 over a shard's canonical content, fed a run at a time through a fixed buffer:
/// `BLKCONT1`, version (u16), index (u32), lower bound (i64); per blocking run its start and
/// count (i64 each); the byte 0xFF eight times; per identification run its start, count, label
/// length (i64 each) and the label's bytes. All integers little-endian.
package struct ContentHasher {
    private var sha = SHA256()
    private var buffer = [UInt8](repeating: 0, count: 4096)
    private var used = 0

    package init(version: UInt16, index: Int, lowerBound: Int64) {
        append(bytes: Array("BLKCONT1".utf8))
        append(UInt64(version), width: 2)
        append(UInt64(index), width: 4)
        append(UInt64(bitPattern: lowerBound), width: 8)
    }

    @inline(__always)
    package mutating func blocking(_ run: NumberRun) {
        // A run's 16 bytes in one store each: this is called once per run of a phone's rewrite.
        if used + 16 > buffer.count { flush() }
        let offset = used
        buffer.withUnsafeMutableBytes {
            $0.storeBytes(of: UInt64(bitPattern: run.start).littleEndian, toByteOffset: offset, as: UInt64.self)
            $0.storeBytes(of: UInt64(bitPattern: run.count).littleEndian, toByteOffset: offset + 8, as: UInt64.self)
        }
        used += 16
    }

    /// Takes blocking runs in bulk, merged as in `blocking(_:)`'s callers (no two touching).
    package mutating func blocking(contentsOf runs: UnsafeBufferPointer<NumberRun>) {
        // A NumberRun is its start and count, 8 bytes each in that order: on a little-endian
        // machine its bytes in memory are the bytes hashed.
        if MemoryLayout<NumberRun>.size == 16, MemoryLayout<NumberRun>.offset(of: \.count) == 8,
            1.littleEndian == 1
        {
            flush()
            sha.update(bufferPointer: UnsafeRawBufferPointer(runs))
        } else {
            for run in runs { blocking(run) }
        }
    }

    package mutating func beginIdentification() {
        append(UInt64.max, width: 8)
    }

    package mutating func identification(_ run: NumberRun, label: [UInt8]) {
        append(UInt64(bitPattern: run.start), width: 8)
        append(UInt64(bitPattern: run.count), width: 8)
        append(UInt64(label.count), width: 8)
        append(bytes: label)
    }

    package mutating func finish() -> [UInt8] {
        flush()
        return Array(sha.finalize())
    }

    private mutating func append(_ value: UInt64, width: Int) {
        if used + width > buffer.count { flush() }
        if width == 8 {
            let offset = used
            buffer.withUnsafeMutableBytes {
                $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
            }
        } else {
            for byte in 0..<width { buffer[used + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte)) }
        }
        used += width
    }

    private mutating func append(bytes: [UInt8]) {
        flush()
        sha.update(data: bytes)
    }

    private mutating func flush() {
        guard used > 0 else { return }
        buffer.withUnsafeBytes { sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<used])) }
        used = 0
    }
}
