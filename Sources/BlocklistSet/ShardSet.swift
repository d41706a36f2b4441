#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlocklistCore

/// A generation of shard files in an output directory, committed as a whole.
///
/// Layout of an output directory:
///
/// ```
/// DIR/manifest.json          the current generation (replacing it is the commit)
/// DIR/set-<generation>/      that generation's shard files, shard-01.blk …
/// DIR/.blocklist.lock        held while a generate runs
/// ```
///
/// A generate writes a new set directory aside, then renames a new manifest over the old one.
/// A reader therefore sees the old complete set or the new one, never a mix, and a failed or
/// killed generate leaves the previous set in place; its leftovers are removed by the next run.
public enum ShardSet {
    /// The lock file, held by `generate` for its whole run.
    public static let lockFileName = ".blocklist.lock"
    static let stagingPrefix = ".staging-"
    static let setPrefix = "set-"
    static let temporaryManifestPrefix = ".manifest-"

    /// The name of shard `index` in a set of `count` shards: `shard-01.blk`.
    public static func fileName(ofShard index: Int, of count: Int) -> String {
        let width = max(2, String(count).count)
        let digits = String(index)
        return "shard-" + String(repeating: "0", count: width - digits.count) + digits + ".blk"
    }
}

extension ShardSet {
    /// Where a running generate is.
    public struct Progress: Sendable {
        /// Shards written so far.
        public var shardsDone: Int
        /// Shards in the plan.
        public var shardCount: Int
        /// Entries written so far.
        public var entriesDone: Int64
        /// Entries in the plan.
        public var totalEntries: Int64
    }

    /// Writes `plan` as a new generation in `outputDirectory` and commits it.
    ///
    /// Creates `outputDirectory` if its parent exists. Takes the directory's lock, so a second
    /// generate into the same directory is refused, removes leftovers of interrupted runs, writes
    /// every shard into a staging directory, renames it into place and then renames the new
    /// manifest over the old one; the previous generation's files go last.
    ///
    /// - Parameters:
    ///   - plan: what to write.
    ///   - outputDirectory: where.
    ///   - sync: `fsync` files and directories so a power cut cannot lose the commit. Default: true.
    ///   - progress: called after each shard; throwing from it cancels the run, which then cleans up.
    /// - Returns: the committed manifest.
    /// - Throws: `BlocklistError`; the previous generation is then untouched and nothing of the
    ///   new one is left behind.
    /// - Complexity: O(runs); memory is one shard writer's fixed buffers.
    public static func generate(
        _ plan: ShardPlan, into outputDirectory: String, sync: Bool = true,
        progress: (Progress) throws(BlocklistError) -> Void = { _ in }
    ) throws(BlocklistError) -> Manifest {
        try prepareDirectory(outputDirectory)
        let lock = try FileLock(path: outputDirectory + "/" + lockFileName, what: "The output directory \(outputDirectory)")
        defer { lock.unlock() }
        // Staging directories and temporary manifests are never part of a committed set.
        try removeLeftovers(in: outputDirectory, keepingSets: true)

        var random = SystemRandomNumberGenerator()
        let generation = hex(UInt64(Date().timeIntervalSince1970 * 1000), width: 11) + hex(random.next() & 0xFFFFF, width: 5)
        let staging = outputDirectory + "/" + stagingPrefix + generation
        let setName = setPrefix + generation
        let setPath = outputDirectory + "/" + setName
        let temporaryManifest = outputDirectory + "/" + temporaryManifestPrefix + generation + ".json"
        var committed = false
        defer {
            if !committed {
                try? FileSystem.removeDirectory(staging)
                try? FileSystem.removeDirectory(setPath)
                try? FileSystem.removeFile(temporaryManifest)
            }
        }

        try FileSystem.makeDirectory(staging)
        var shards: [Manifest.Shard] = []
        var entriesDone: Int64 = 0
        let encoder = try ShardEncoder()
        for planned in plan.shards {
            let name = fileName(ofShard: planned.index, of: plan.shards.count)
            let writer = try ShardWriter(path: staging + "/" + name, shardIndex: planned.index, encoder: encoder)
            for run in plan.compiled.runs(ranks: planned.ranks) { try writer.append(run) }
            let header = try writer.finish(sync: sync)
            guard header.entryCount == planned.entryCount else {
                throw BlocklistError(
                    .manifestMismatch,
                    "Shard \(planned.index) got \(header.entryCount) entries but was planned with \(planned.entryCount); this is a bug in blocklist.")
            }
            shards.append(
                Manifest.Shard(
                    file: name, index: planned.index, count: header.entryCount, first: header.first, last: header.last,
                    bytes: Int64(ShardHeader.size) + header.payloadLength, checksum: header.checksum))
            entriesDone += header.entryCount
            try progress(Progress(shardsDone: shards.count, shardCount: plan.shards.count, entriesDone: entriesDone, totalEntries: plan.totalEntries))
        }
        if sync { try FileSystem.syncDirectory(staging) }
        try FileSystem.rename(staging, to: setPath)

        let manifest = Manifest(
            format: Manifest.formatName, version: Manifest.currentVersion, generation: generation, directory: setName,
            createdAt: Int64(Date().timeIntervalSince1970), spec: Manifest.Spec(plan.spec), totalEntries: entriesDone,
            totalBytes: shards.reduce(0) { $0 + $1.bytes }, shards: shards)
        try FileSystem.writeNewFile(temporaryManifest, try manifest.encoded(), sync: sync)
        try FileSystem.rename(temporaryManifest, to: outputDirectory + "/" + Manifest.fileName)
        committed = true
        if sync { try? FileSystem.syncDirectory(outputDirectory) }

        // The old generation is garbage now; a failure here leaves it for the next run to remove.
        try? removeLeftovers(in: outputDirectory, keepingSets: false, except: setName)
        return manifest
    }

    /// Makes sure `path` is a writable directory, creating it if its parent exists.
    static func prepareDirectory(_ path: String) throws(BlocklistError) {
        switch try FileSystem.kind(path) {
        case .directory:
            break
        case .missing:
            do {
                try FileSystem.makeDirectory(path)
            } catch {
                throw BlocklistError(.io, "Cannot create the output directory \(path): \(error.message)", underlying: error)
            }
        case .file, .other:
            throw BlocklistError(.io, "The output path \(path) is a file, not a directory; give a directory with --output.")
        }
        guard FileSystem.isWritableDirectory(path) else {
            throw BlocklistError(.io, "The output directory \(path) is not writable.")
        }
    }

    /// Removes staging directories and temporary manifests, and unless `keepingSets`, every set
    /// directory but `except`. Only call it under the directory's lock.
    static func removeLeftovers(in outputDirectory: String, keepingSets: Bool, except: String? = nil) throws(BlocklistError) {
        for name in try FileSystem.list(outputDirectory) {
            let path = outputDirectory + "/" + name
            if name.hasPrefix(stagingPrefix) || (!keepingSets && name.hasPrefix(setPrefix) && name != except) {
                try FileSystem.removeDirectory(path)
            } else if name.hasPrefix(temporaryManifestPrefix) {
                try FileSystem.removeFile(path)
            }
        }
    }

    private static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
