import BlocklistCore
import BlocklistSystem
internal import ByteCodecs
internal import LibC

/// A generation of shard files in an output directory, committed as a whole.
///
/// Layout of an output directory:
///
/// ```
/// DIR/manifest.json                        the current generation (replacing it is the commit)
/// DIR/set-<generation>/                    that generation's shard files, shard-01.blk …
/// DIR/set-<generation>/.blocklist-generation   ownership marker, and the readers' lock
/// DIR/.blocklist.lock                      held while a generate runs
/// ```
///
/// A generate writes a new set directory aside (as `.staging-<generation>`, its marker first),
/// with its manifest inside, renames it into place and then renames the manifest over the old
/// one. A reader therefore sees the old complete set or the new one, never a mix, and a failed or
/// killed generate leaves the previous set in place. Old generations are removed only when no
/// reader holds them, and only when `OutputDirectory` proves blocklist wrote them.
package enum ShardSet {
    /// The lock file, held by `generate` for its whole run.
    package static let lockFileName = ".blocklist.lock"
    static let stagingPrefix = ".staging-"
    static let setPrefix = "set-"
    /// Older versions wrote the new manifest beside the old one under this prefix.
    static let temporaryManifestPrefix = ".manifest-"
    /// The new manifest, inside the new set directory until it is renamed over the old one.
    static let pendingManifestName = ".manifest.json"

    /// The name of shard `index` in a set of `count` shards: `shard-01.blk`.
    package static func fileName(ofShard index: Int, of count: Int) -> String {
        let width = max(2, String(count).count)
        let digits = String(index)
        return "shard-" + String(repeating: "0", count: width - digits.count) + digits + ".blk"
    }
}

extension ShardSet {
    /// Where a running generate is.
    package struct Progress: Sendable {
        /// Shards written so far.
        package var shardsDone: Int
        /// Shards in the plan.
        package var shardCount: Int
        /// Entries written so far.
        package var entriesDone: Int64
        /// Entries in the plan.
        package var totalEntries: Int64
    }

    /// What a committed generate made.
    package struct Generated: Sendable, Equatable {
        /// The new generation's name.
        package var generation: String
        /// Its directory inside the output directory (`set-<generation>`).
        package var directory: String
        package var shardCount: Int
        package var totalEntries: Int64
        package var totalBytes: Int64
        /// Sentences about what was kept and why (an old set a reader still uses, a directory
        /// that holds files blocklist did not write) or allowed (`force`).
        package var notes: [String]
    }

    /// Writes `plan` as a new generation in `outputDirectory` and commits it.
    ///
    /// Creates `outputDirectory` if its parent exists. Refuses `/`, a `manifest.json` that
    /// blocklist did not write, and (unless `force`) a directory that is neither empty nor a
    /// blocklist set. Takes the directory's lock, so a second generate into the same directory is
    /// refused, removes leftovers of interrupted runs that it can prove are its own, writes every
    /// shard into a staging directory, renames it into place and then renames the new manifest
    /// over the old one; old generations no reader holds go last.
    ///
    /// - Parameters:
    ///   - plan: what to write.
    ///   - outputDirectory: where.
    ///   - sync: `fsync` files and directories so a power cut cannot lose the commit. Default: true.
    ///   - force: write into a non-empty directory that is not a blocklist set. It never allows
    ///     replacing a foreign `manifest.json` or removing anything blocklist did not write.
    ///   - progress: called after each shard; throwing from it cancels the run, which then cleans up.
    /// - Returns: what was committed.
    /// - Throws: `BlocklistError`; the previous generation is then untouched and nothing of the
    ///   new one is left behind.
    /// - Complexity: O(runs); memory is one shard writer's fixed buffers and the manifest
    ///   writer's: no per-shard record is kept.
    package static func generate(
        _ plan: ShardPlan,
        into outputDirectory: String,
        sync: Bool = true,
        force: Bool = false,
        progress: (Progress) throws(BlocklistError) -> Void = { _ in }
    ) throws(BlocklistError) -> Generated {
        try generate(producer: RangeProducer(plan), into: outputDirectory, sync: sync, force: force, progress: progress)
    }

    /// Writes what `producer` makes as a new generation in `outputDirectory` and commits it, as
    /// `generate(_:into:sync:force:progress:)` describes. The producer may keep temporary files in
    /// the staging directory while it works; they go before the commit, and with the staging
    /// directory if the run fails or dies.
    package static func generate(
        producer: some ShardProducer,
        into outputDirectory: String,
        sync: Bool = true,
        force: Bool? = false,
        progress: (Progress) throws(BlocklistError) -> Void = { _ in }
    ) throws(BlocklistError) -> Generated {
        let (directory, created) = try prepareDirectory(outputDirectory)
        // A run that fails leaves nothing of its own: a directory it created goes again (last,
        // and only if empty), and before that, still under the lock, the lock file it made.
        var succeeded = false
        defer { if created && !succeeded { try? FileSystem.removeEmptyDirectory(outputDirectory) } }
        // Refuse before creating the lock file, so a refused directory is not touched at all;
        // then check again under the lock.
        var notes = try checkOwnership(directory, force: force)
        let lock = try directory.lock(
            lockFileName,
            exclusive: true,
            what: "The output directory \(outputDirectory)",
            patienceMilliseconds: 250
        )
        defer { lock.unlock() }
        defer { if created && !succeeded { try? directory.removeRegularFile(lockFileName) } }
        _ = try checkOwnership(directory, force: force)
        // Staging directories and older versions' temporary manifests are never part of a
        // committed set: remove those that are provably ours.
        for name in try directory.entries() {
            switch try OutputDirectory.classify(name, in: directory) {
            case .generation(_, let legacy) where name.hasPrefix(stagingPrefix):
                if let note = OutputDirectory.removeGeneration(name, legacy: legacy, in: directory) {
                    notes.append(note)
                }
            case .temporaryManifest:
                try? directory.removeRegularFile(name)
            case .foreign where name.hasPrefix(stagingPrefix):
                // A run killed between creating its staging directory and writing the marker
                // leaves it empty; rmdir removes only an empty directory, never a symlink.
                try? directory.removeEmptyDirectory(name)
            default:
                break
            }
        }

        let generation = newGenerationName()
        let stagingName = stagingPrefix + generation
        let setName = setPrefix + generation
        var committed = false
        var staged = false
        defer {
            if !committed && staged {
                for name in [stagingName, setName]
                where (try? OutputDirectory.classify(name, in: directory)) == .generation(generation, legacy: false) {
                    _ = OutputDirectory.removeGeneration(name, legacy: false, in: directory)
                }
            }
        }

        try directory.makeDirectory(stagingName)
        staged = true
        let staging = try directory.openDirectory(stagingName)
        try FileSystem.writeNewFile(
            staging.path(of: OutputDirectory.markerName),
            OutputDirectory.markerContent(generation),
            sync: sync
        )
        defer { producer.cleanUp() }
        let (shardCount, totalEntries) = try producer.prepare(staging: staging) {
            previousLowerBounds(in: directory, excluding: stagingName)
        }
        let manifest = try ManifestWriter(
            path: staging.path(of: pendingManifestName),
            generation: generation,
            directory: setName,
            createdAt: Int64(time(nil)),
            spec: producer.manifestSpec,
            specJSON: producer.manifestSpecJSON
        )
        var shardsDone = 0
        var entriesDone: Int64 = 0
        var bytesDone: Int64 = 0
        let encoder = try ShardEncoder()
        for index in 1...max(shardCount, 1) where shardCount > 0 {
            let name = fileName(ofShard: index, of: shardCount)
            let header = try producer.writeShard(index, path: staging.path(of: name), encoder: encoder, sync: sync)
            let bytes = header.fileSize
            let packed = header.version >= 2
            try manifest.add(
                Manifest.Shard(
                    file: name,
                    index: index,
                    count: header.entryCount,
                    first: header.first,
                    last: header.last,
                    bytes: bytes,
                    checksum: header.checksum,
                    identified: packed ? header.identificationCount : nil,
                    lowerBound: packed ? header.lowerBound : nil
                )
            )
            shardsDone += 1
            entriesDone += header.totalEntries
            bytesDone += bytes
            try progress(
                Progress(
                    shardsDone: shardsDone,
                    shardCount: shardCount,
                    entriesDone: entriesDone,
                    totalEntries: totalEntries
                )
            )
        }
        producer.cleanUp()
        try manifest.finish(sync: sync)
        if sync { try staging.sync() }
        try directory.rename(stagingName, to: setName)
        let set = try directory.openDirectory(setName)
        try set.rename(pendingManifestName, to: Manifest.fileName, in: directory)
        committed = true
        if sync { try? directory.sync() }

        // Old generations are garbage now. One a reader still holds stays for a later run, and a
        // failure here only leaves files behind: the commit stands.
        for name in (try? directory.entries()) ?? [] where name.hasPrefix(setPrefix) && name != setName {
            if case .generation(_, let legacy)? = try? OutputDirectory.classify(name, in: directory),
                let note = OutputDirectory.removeGeneration(name, legacy: legacy, in: directory)
            {
                notes.append(note)
            }
        }
        succeeded = true
        return Generated(
            generation: generation,
            directory: setName,
            shardCount: shardsDone,
            totalEntries: entriesDone,
            totalBytes: bytesDone,
            notes: notes
        )
    }

    /// The lower bounds of the newest committed generation's shards (shards 2…n), if it is a
    /// packed set: a packed layout keeps them while every shard still fits, so a small change to a
    /// list leaves most shards unchanged. Only a hint: any problem gives `nil`.
    static func previousLowerBounds(in directory: DirectoryHandle, excluding staging: String) -> [Int64]? {
        guard let names = try? directory.entries() else { return nil }
        var newest: (name: String, generation: String)?
        for name in names where name.hasPrefix(setPrefix) && name != staging {
            guard case .generation(let generation, false)? = try? OutputDirectory.classify(name, in: directory) else {
                continue
            }
            if newest.map({ generation > $0.generation }) ?? true { newest = (name, generation) }
        }
        guard let newest, let set = try? directory.openDirectory(newest.name), let files = try? set.entries() else {
            return nil
        }
        let shards = files.filter { $0.hasPrefix("shard-") && $0.hasSuffix(".blk") }.sorted()
        guard shards.count >= 2 else { return nil }
        var bounds: [Int64] = []
        for name in shards.dropFirst() {
            // The headers alone: each is checked by its CRC, and the bounds are only a hint.
            guard let header = try? ShardHeader.read(path: set.path(of: name)), header.version >= 2,
                header.lowerBound > 0,
                bounds.last.map({ header.lowerBound > $0 }) ?? true
            else { return nil }
            bounds.append(header.lowerBound)
        }
        return bounds
    }

    /// Makes sure `path` is a writable directory other than `/`, creating it if its parent exists.
    ///
    /// - Returns: the directory, and whether this call created it.
    static func prepareDirectory(_ path: String) throws(BlocklistError) -> (DirectoryHandle, created: Bool) {
        var created = false
        switch try FileSystem.kind(path) {
        case .directory:
            break
        case .missing:
            do {
                created = try FileSystem.makeDirectory(path)
            } catch {
                throw BlocklistError(
                    .io,
                    "Cannot create the output directory \(path): \(error.message)",
                    underlying: error
                )
            }
            // Made by another process since we looked: it must be a directory all the same.
            if !created, try FileSystem.kind(path) != .directory {
                throw BlocklistError(.io, "The output path \(path) is not a directory; give a directory with --output.")
            }
        case .file, .symlink, .other:
            throw BlocklistError(.io, "The output path \(path) is not a directory; give a directory with --output.")
        }
        guard try FileSystem.resolvedPath(path) != "/" else {
            throw BlocklistError(
                .invalidInput,
                "Refusing to use / as the output directory; give a directory of its own, such as Output."
            )
        }
        guard FileSystem.isWritableDirectory(path) else {
            throw BlocklistError(.io, "The output directory \(path) is not writable.")
        }
        return (try DirectoryHandle(path: path), created)
    }

    /// Refuses a foreign `manifest.json` always, and a non-empty directory that is not a
    /// blocklist set unless `force` (nil: the command has no --force to offer, as `update`).
    ///
    /// - Returns: the sentence `force` earned, if any.
    static func checkOwnership(_ directory: DirectoryHandle, force: Bool?) throws(BlocklistError) -> [String] {
        var isSet = false
        var foreign: [String] = []
        for name in try directory.entries() {
            let entry = try OutputDirectory.classify(name, in: directory)
            switch entry {
            case .manifest, .lock, .generation: isSet = true
            case .temporaryManifest, .placeholder, .downloads: break
            case .foreign(let why):
                if name == Manifest.fileName {
                    throw BlocklistError(
                        .invalidInput,
                        "\(why ?? directory.path(of: name)); refusing to replace it. Give another --output directory, or move that file away."
                    )
                }
                foreign.append(name)
            }
        }
        guard !isSet, !foreign.isEmpty else { return [] }
        let shown =
            foreign.prefix(3).joined(separator: ", ") + (foreign.count > 3 ? " and \(foreign.count - 3) more" : "")
        guard force == true else {
            throw BlocklistError(
                .invalidInput,
                "The output directory \(directory.path) is not empty and holds no blocklist set (it has \(shown)); give an empty or new directory\(force == nil ? "" : ", or --force to write beside those files")."
            )
        }
        return [
            "writing into \(directory.path), which holds files blocklist did not write (\(shown)), because of --force; they are left untouched."
        ]
    }

    /// The file in a generation's directory that records which publication it was installed
    /// from (`blocklist update`); removed with the generation.
    package static let publicationStateName = "publication.json"
    /// The file beside it that keeps the root rotations an update followed (`N.root.json` files in
    /// an update bundle), so that a retired key stays retired; removed with the generation.
    package static let trustedRootsName = "roots.bundle"

    /// A new generation name: the time in milliseconds (11 hex digits) and 20 random bits.
    static func newGenerationName() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
        var random = SystemRandomNumberGenerator()
        return hex(milliseconds & 0xFFF_FFFF_FFFF, width: 11) + hex(random.next() & 0xFFFFF, width: 5)
    }

    private static func hex(_ value: UInt64, width: Int) -> String { Hex.padded(value, width: width) }
}

/// What a generate writes: planned inside the staging directory (where it may keep temporary
/// files), then written a shard at a time.
package protocol ShardProducer: AnyObject {
    /// What the manifest records as the spec.
    var manifestSpec: Manifest.Spec { get }
    /// The spec as one JSON object, written as it is instead of `manifestSpec` (an update writes
    /// the spec its signed publication carries); `nil` by default.
    var manifestSpecJSON: [UInt8]? { get }
    /// Reads the inputs and plans the shards.
    ///
    /// - Parameters:
    ///   - staging: the new generation's directory, for temporary files named `.sort-*.tmp`.
    ///   - previousLowerBounds: reads the previous packed generation's shard bounds, a hint;
    ///     called only by producers that use them.
    /// - Returns: how many shards, and how many entries of both kinds they hold.
    func prepare(staging: DirectoryHandle, previousLowerBounds: () -> [Int64]?) throws(BlocklistError) -> (
        shardCount: Int, totalEntries: Int64
    )
    /// Writes shard `index` (from 1) to the new file `path`.
    func writeShard(_ index: Int, path: String, encoder: ShardEncoder, sync: Bool) throws(BlocklistError) -> ShardHeader
    /// Removes temporary files; called before the commit and on failure.
    func cleanUp()
}

extension ShardProducer {
    package var manifestSpecJSON: [UInt8]? { nil }
}

/// A range layout: shard i holds a pattern spec's candidate ranks [(i-1)·rangeSize, i·rangeSize).
package final class RangeProducer: ShardProducer {
    let plan: ShardPlan
    package init(_ plan: ShardPlan) { self.plan = plan }

    package var manifestSpec: Manifest.Spec { Manifest.Spec(plan.spec) }

    package func prepare(staging: DirectoryHandle, previousLowerBounds: () -> [Int64]?) throws(BlocklistError) -> (
        shardCount: Int, totalEntries: Int64
    ) {
        (plan.shards.count, plan.totalEntries)
    }

    package func writeShard(_ index: Int, path: String, encoder: ShardEncoder, sync: Bool) throws(BlocklistError)
        -> ShardHeader
    {
        let planned = plan.shards[index - 1]
        // Version 1: a pattern spec's runs compress best as varints, and older readers read it.
        let writer = try ShardWriter(path: path, shardIndex: planned.index, encoder: encoder, version: 1)
        for run in plan.compiled.runs(ranks: planned.ranks) { try writer.append(run) }
        let header = try writer.finish(sync: sync)
        guard header.entryCount == planned.entryCount else {
            throw BlocklistError(
                .manifestMismatch,
                "Shard \(planned.index) got \(header.entryCount) entries but was planned with \(planned.entryCount); this is a bug in blocklist."
            )
        }
        return header
    }

    package func cleanUp() {}
}

/// A packed set from runs held in memory, shard by shard (each with its lower bound): what
/// tests and benchmarks publish, committed as `generate` commits any set.
package final class RunsProducer: ShardProducer {
    let shards: [(lowerBound: Int64, runs: [NumberRun])]

    /// - Parameter shards: each shard's lower bound and ascending runs; the bounds ascend, and
    ///   a shard's numbers lie between its bound and the next one's.
    package init(_ shards: [(lowerBound: Int64, runs: [NumberRun])]) { self.shards = shards }

    package var manifestSpec: Manifest.Spec {
        Manifest.Spec(
            patterns: [],
            exclusions: [],
            rangeSize: 0,
            capacity: BlockSpec.defaultCapacity,
            layout: .packed,
            allowPatterns: nil,
            inputs: nil
        )
    }

    package func prepare(staging: DirectoryHandle, previousLowerBounds: () -> [Int64]?) throws(BlocklistError) -> (
        shardCount: Int, totalEntries: Int64
    ) {
        (shards.count, shards.reduce(0) { $0 + $1.runs.reduce(0) { $0 + $1.count } })
    }

    package func writeShard(_ index: Int, path: String, encoder: ShardEncoder, sync: Bool) throws(BlocklistError)
        -> ShardHeader
    {
        let shard = shards[index - 1]
        let writer = try ShardWriter(path: path, shardIndex: index, encoder: encoder, lowerBound: shard.lowerBound)
        for run in shard.runs { try writer.append(run) }
        return try writer.finish(sync: sync)
    }

    package func cleanUp() {}
}
