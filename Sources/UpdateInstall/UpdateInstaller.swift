import BlocklistCore
import BlocklistSystem
import Crypto
import SetStorage
import UpdateCore

/// The app's update step: verifies a publication, then installs its newest generation into the
/// App Group as a new generation of the set there, atomically (`ShardSet`'s commit). Deltas are
/// applied to the installed shards; unchanged shards are copied; the rest are downloaded whole.
///
/// Nothing in the App Group changes until every signature, length and hash has checked and every
/// shard has been written and matched its published content digest; a failure or a kill at any
/// moment leaves the old generation. Downloads go to a temporary directory of their own, removed
/// at the end.
package enum UpdateInstaller {
    /// What an update did.
    package struct Outcome: Sendable {
        package var fromGeneration: UInt64
        package var generation: UInt64
        /// Shards rewritten, by index.
        package var changedShards: [Int]
        /// Blocking numbers added and removed, whether by deltas or by whole shards.
        package var added: Int64
        package var removed: Int64
        /// Identification entries (numbers with a label) added and removed; a changed label
        /// counts once each way.
        package var labelsAdded: Int64 = 0
        package var labelsRemoved: Int64 = 0
        package var totalEntries: Int64
        package var bytesDownloaded: Int64
        package var deltas: Int
        package var fullShards: Int
        /// The set generation written in the App Group (empty if already current).
        package var setGeneration: String
        /// Why the update file from the installed generation was refused, when the snapshot's
        /// way was taken instead.
        package var updateFileRefusal: String?
        /// Why the deltas did not apply to the installed shards (one damaged or changed by hand),
        /// when the changed shards were downloaded whole instead.
        package var deltaRefusal: String?
        package var upToDate: Bool { fromGeneration == generation }
    }

    /// What the App Group holds now: its publication state and shard paths.
    package struct Installed {
        package var publication: InstalledPublication
        /// Shard file paths, by index.
        package var shardPaths: [String]
        /// The installed manifest's spec, canonical.
        package var specJSON: [UInt8]?
        package var totalEntries: Int64
        /// The root rotations earlier updates followed, oldest first (`N.root.json` bytes).
        package var rotations: [(version: Int64, bytes: [UInt8])] = []

        /// The root to trust: the app's, then every rotation an earlier update followed, each
        /// checked again. A key a rotation retired stays retired even if a publication leaves
        /// the newer roots out.
        package func root(trusting trust: [UInt8]) throws -> Root {
            var root = try Root.trusted(trust, what: "the trust root")
            for (version, bytes) in rotations where version > root.version {
                root = try root.next(bytes, what: "the App Group's \(version).root.json")
            }
            return root
        }
    }

    /// Reads what `appGroup` holds; an empty or missing App Group holds nothing.
    package static func installed(in appGroup: String) throws -> Installed {
        let manifestPath = appGroup + "/" + Manifest.fileName
        guard try FileSystem.kind(appGroup) == .directory, try FileSystem.kind(manifestPath) != .missing else {
            return Installed(publication: .none, shardPaths: [], specJSON: nil, totalEntries: 0)
        }
        // The set's one manifest reader, and its check that every name stays inside the App Group.
        // The spec is carried to the next generation as the JSON it is.
        let bytes = try FileSystem.readFile(manifestPath, limit: 16 << 20)
        let manifest = try Manifest.decode(bytes, path: manifestPath)
        try manifest.validate(path: manifestPath)
        let directory = manifest.directory
        let paths = manifest.shards.map { manifest.path(of: $0, in: appGroup) }
        let total = manifest.shards.reduce(Int64(0)) { $0 + $1.count + ($1.identified ?? 0) }
        var specJSON: [UInt8]?
        if case .object(let members) = try JSONValue(parsing: bytes, what: manifestPath) {
            specJSON = members["spec"]?.canonicalBytes
        }
        let statePath = appGroup + "/" + directory + "/" + ShardSet.publicationStateName
        var publication = InstalledPublication.none
        // A damaged state file costs a full download, as a missing one does, rather than every
        // update from now on: the shards themselves are verified against the publication anyway.
        if try FileSystem.kind(statePath) != .missing,
            let state = try? InstalledPublication(
                stateBytes: try FileSystem.readFile(statePath, limit: 16 << 20),
                what: statePath
            ),
            state.shardDigests.count == paths.count
        {
            publication = state
        }
        var installed = Installed(
            publication: publication,
            shardPaths: paths,
            specJSON: specJSON,
            totalEntries: total
        )
        let rootsPath = appGroup + "/" + directory + "/" + ShardSet.trustedRootsName
        if try FileSystem.kind(rootsPath) != .missing {
            let files = try UpdateBundle.decode(try FileSystem.readFile(rootsPath, limit: 16 << 20), what: rootsPath)
            installed.rotations = files.compactMap { name, bytes in
                guard name.hasSuffix(".root.json"), let version = Int64(name.dropLast(".root.json".count)) else {
                    return nil
                }
                return (version, bytes)
            }.sorted { $0.version < $1.version }
        }
        return installed
    }

    /// Verifies the publication `reader` reads and installs its newest generation in `appGroup`.
    ///
    /// - Parameters:
    ///   - trust: the trust root's bytes (`root.json`, as the app ships it).
    ///   - now: seconds since 1970, for expiry.
    ///   - isCancelled: polled between downloads and shards; a cancelled update leaves the App Group unchanged.
    package static func update(
        from reader: some PublicationReader,
        trust: [UInt8],
        appGroup: String,
        now: Int64,
        isCancelled: @escaping () -> Bool = { false },
        sync: Bool = true
    ) throws -> Outcome {
        let installed = try installed(in: appGroup)
        let root = try installed.root(trusting: trust)
        try reader.prepare(installedGeneration: installed.publication.generation)
        var bytes: Int64 = 0
        func fetch(_ path: String, _ maximum: Int, _ optional: Bool) throws -> [UInt8]? {
            let data = try reader.read(path, maximumBytes: maximum, optional: optional)
            bytes += Int64(data?.count ?? 0)
            return data
        }
        let route = try UpdatePlan.route(
            trusting: root,
            installed: installed.publication,
            now: now,
            source: reader.name,
            fetch: fetch
        )
        var plan: UpdatePlan?
        var refusal: String?
        switch route {
        case .updateFile(let update, _)?:
            do {
                var outcome = try apply(update, appGroup: appGroup, now: now, isCancelled: isCancelled, sync: sync)
                outcome.bytesDownloaded = reader.bytesOnTheWire ?? bytes
                DownloadCache.emptyIfPresent(in: appGroup)
                return outcome
            } catch  where !isCancelled() {
                refusal = "\(error)"
                // The App Group is unchanged; the update file did not fit what is installed (a
                // base of other content under the same generation number: a PUBDIR restored
                // from a backup): the snapshot's way compares every shard's digest.
                plan = try UpdatePlan.make(
                    trusting: root,
                    installed: installed.publication,
                    now: now,
                    source: reader.name,
                    fetch: fetch
                )
            }
        case .plan(let made)?: plan = made
        case nil: plan = nil
        }
        guard let plan else {
            return Outcome(
                fromGeneration: installed.publication.generation,
                generation: installed.publication.generation,
                changedShards: [],
                added: 0,
                removed: 0,
                totalEntries: installed.totalEntries,
                bytesDownloaded: reader.bytesOnTheWire ?? bytes,
                deltas: 0,
                fullShards: 0,
                setGeneration: ""
            )
        }
        // Over a network, downloads go to the App Group's cache, named by content: what an
        // interrupted run got is resumed; what no step of this plan needs (an older plan's)
        // goes. From a directory there is nothing to resume: a temporary directory, removed.
        let cache = try DownloadCache(in: reader.bytesOnTheWire != nil ? appGroup : nil)
        defer { cache.removeTemporary() }
        let needed: [FileInfo] = plan.steps.compactMap {
            switch $0 {
            case .keep: nil
            case .delta(let delta): delta.file
            case .full(let shard): shard.file
            }
        }
        try cache.prune(keeping: Set(needed.map(\.sha256)))
        // Installed shards past the new shard count go with this generation: what they held is
        // removed (read before the commit, which may remove their files).
        var vanished = (blocking: Int64(0), labels: Int64(0))
        for path in installed.shardPaths.dropFirst(plan.snapshot.shards.count) {
            guard let header = try? ShardReader(path: path).header else { continue }
            vanished.blocking += header.entryCount
            vanished.labels += header.identificationCount
        }
        /// Whether the deltas were being applied (their files downloaded and checked) when an
        /// install failed: only then can the installed shards be at fault.
        var applying = false
        /// Installs the plan; `whole` downloads each changed shard whole instead of its delta.
        func install(whole: Bool) throws -> (generated: ShardSet.Generated, producer: UpdateProducer, deltas: Int) {
            var sources: [ShardSource] = []
            var deltas = 0
            for (offset, step) in plan.steps.enumerated() {
                if isCancelled() {
                    throw UpdateError(.shard, "The update was cancelled before it was installed; nothing changed.")
                }
                let index = offset + 1
                switch step {
                case .keep:
                    sources.append(
                        .installed(installed.shardPaths[offset], digest: installed.publication.shardDigests[offset])
                    )
                case .delta(let delta) where !whole:
                    let path = cache.path(of: delta.file)
                    if !cache.holds(delta.file) {
                        try reader.download(delta.file, to: path, isCancelled: isCancelled)
                        bytes += delta.file.length
                    }
                    let decoded = try DeltaFile.decode(
                        try FileSystem.readFile(path, limit: Int(delta.file.length)),
                        what: "\(reader.name)/\(delta.file.path)"
                    )
                    guard decoded.index == index, decoded.from == delta.from,
                        decoded.to == plan.snapshot.generation
                    else {
                        throw UpdateError(
                            .mismatch,
                            "\(reader.name)/\(delta.file.path) is the delta of shard \(decoded.index) from \(decoded.from) to \(decoded.to), not the one the snapshot names."
                        )
                    }
                    sources.append(
                        .delta(
                            decoded.payload,
                            base: installed.shardPaths[offset],
                            what: "\(reader.name)/\(delta.file.path) (the delta of shard \(index))"
                        )
                    )
                    deltas += 1
                case .delta, .full:
                    let shard = plan.snapshot.shards[offset]
                    let path = cache.path(of: shard.file)
                    if !cache.holds(shard.file) {
                        try reader.download(shard.file, to: path, isCancelled: isCancelled)
                        bytes += shard.file.length
                    }
                    sources.append(
                        .copy(
                            path,
                            base: installed.shardPaths.indices.contains(offset) ? installed.shardPaths[offset] : nil
                        )
                    )
                }
            }
            let producer = UpdateProducer(
                sources: sources,
                expected: plan.snapshot.shards.map(\.digest),
                setDigest: nil,
                specJSON: try checkedSpec(plan.snapshot.spec.canonicalBytes, from: "The signed snapshot"),
                state: InstalledPublication(
                    generation: plan.snapshot.generation,
                    shardDigests: plan.snapshot.shards.map(\.digest)
                ),
                totalEntries: plan.snapshot.shards.reduce(0) { $0 + $1.entries },
                isCancelled: isCancelled
            )
            producer.rotations = installed.rotations + plan.rootFiles.map { ($0.version, $0.bytes) }
            producer.expectedEntries = plan.snapshot.shards.map(\.entries)
            applying = deltas > 0
            return (try producer.generate(into: appGroup, sync: sync), producer, deltas)
        }
        let installation: (generated: ShardSet.Generated, producer: UpdateProducer, deltas: Int)
        var deltaRefusal: String?
        do {
            installation = try install(whole: false)
        } catch  where applying && !isCancelled() {
            // A delta that does not fit the installed shard (damaged, or changed by hand) would be
            // refused on every later update too: the changed shards come whole instead, checked
            // against the signed snapshot as any download is.
            deltaRefusal = "\(error)"
            installation = try install(whole: true)
        }
        let (generated, producer, deltaCount) = installation
        try? cache.prune(keeping: [])
        if cache.isTemporary { DownloadCache.emptyIfPresent(in: appGroup) }
        let changedCount = plan.steps.filter { if case .keep = $0 { false } else { true } }.count
        return Outcome(
            fromGeneration: installed.publication.generation,
            generation: plan.snapshot.generation,
            changedShards: plan.changedShards,
            added: producer.added,
            removed: producer.removed + vanished.blocking,
            labelsAdded: producer.labelsAdded,
            labelsRemoved: producer.labelsRemoved + vanished.labels,
            totalEntries: generated.totalEntries,
            bytesDownloaded: reader.bytesOnTheWire ?? bytes,
            deltas: deltaCount,
            fullShards: changedCount - deltaCount,
            setGeneration: generated.generation,
            updateFileRefusal: refusal,
            deltaRefusal: deltaRefusal
        )
    }

    /// The spec an update writes into the manifest it installs, checked first as the manifest's
    /// reader will read it back (SetStorage's `Manifest.decodeSpec`) and as canonical JSON, as the
    /// publisher writes it: a signed spec that fails either would leave a phone whose manifest
    /// cannot be read, and which no later update could repair.
    ///
    /// - Throws: `UpdateError` `.malformed` naming `what`.
    static func checkedSpec(_ bytes: [UInt8], from what: String) throws(UpdateError) -> [UInt8] {
        do throws(BlocklistError) {
            _ = try Manifest.decodeSpec(bytes, path: "\(what)'s spec")
        } catch {
            throw UpdateError(.malformed, error.message.hasSuffix(".") ? error.message : error.message + ".")
        }
        let value = try JSONValue(parsing: bytes, what: "\(what)'s spec")
        guard value.canonicalBytes == bytes else {
            throw UpdateError(
                .malformed,
                "\(what) carries a spec that is not canonical JSON (sorted keys, no spaces), as a publisher writes it."
            )
        }
        return bytes
    }

    /// Applies an opened inline push to `appGroup`: its deltas to the installed shards, checked
    /// against the push's set digest before the commit.
    ///
    /// - Throws: `.wrongBase` if the App Group does not hold the push's base generation (the
    ///   caller then fetches the update instead).
    package static func apply(
        _ push: InlinePush,
        appGroup: String,
        now: Int64,
        isCancelled: @escaping () -> Bool = { false },
        sync: Bool = true
    ) throws -> Outcome {
        let installed = try installed(in: appGroup)
        guard installed.shardPaths.count == installed.publication.shardDigests.count else {
            throw UpdateError(
                .wrongBase,
                "The push leads from generation \(push.from), but the App Group holds generation \(installed.publication.generation)."
            )
        }
        let byShard = try push.deltasByShard(
            installedGeneration: installed.publication.generation,
            shardCount: installed.shardPaths.count
        )
        var sources = zip(installed.shardPaths, installed.publication.shardDigests).map {
            ShardSource.installed($0, digest: $1)
        }
        let changed = byShard.keys.sorted()
        for index in changed {
            sources[index - 1] = .delta(
                byShard[index]!,
                base: installed.shardPaths[index - 1],
                what: "the push's delta of shard \(index)"
            )
        }
        let producer = UpdateProducer(
            sources: sources,
            expected: nil,
            setDigest: push.setDigest,
            specJSON: try push.spec.map { (spec) throws(UpdateError) in try checkedSpec(spec, from: "The push") }
                ?? installed.specJSON ?? Array("{}".utf8),
            state: InstalledPublication(generation: push.to, shardDigests: installed.publication.shardDigests),
            totalEntries: installed.totalEntries,
            isCancelled: isCancelled
        )
        producer.rotations = installed.rotations
        let generated = try producer.generate(into: appGroup, sync: sync)
        return Outcome(
            fromGeneration: push.from,
            generation: push.to,
            changedShards: changed,
            added: producer.added,
            removed: producer.removed,
            labelsAdded: producer.labelsAdded,
            labelsRemoved: producer.labelsRemoved,
            totalEntries: generated.totalEntries,
            bytesDownloaded: 0,
            deltas: changed.count,
            fullShards: 0,
            setGeneration: generated.generation
        )
    }

}

/// Where each shard of the new generation comes from.
enum ShardSource {
    /// A shard the App Group holds, unchanged: copied, its digest the one recorded when it was
    /// installed (not read and hashed again on every update).
    case installed(String, digest: [UInt8])
    /// A downloaded shard: copied and hashed; `base`, the installed shard it replaces (its
    /// changes are counted), if any.
    case copy(String, base: String?)
    case delta([UInt8], base: String, what: String)
}

/// Writes the new generation's shards for `ShardSet.generate`, checking each against its
/// published content digest (or, for a push, the whole set against its digest, before the commit).
final class UpdateProducer: ShardProducer {
    let sources: [ShardSource]
    let expected: [[UInt8]]?
    let setDigest: [UInt8]?
    let specJSON: [UInt8]
    var state: InstalledPublication
    let total: Int64
    let isCancelled: () -> Bool
    private(set) var added: Int64 = 0
    private(set) var removed: Int64 = 0
    private(set) var labelsAdded: Int64 = 0
    private(set) var labelsRemoved: Int64 = 0
    /// The error that stopped `writeShard`, kept in this module's own type: SetStorage's commit
    /// sees only that the producer failed, and `generate(into:sync:)` throws this once it returns
    /// (errors are wrapped up the module graph only, never by a module's own dependency).
    private var failure: UpdateError?
    /// Root rotations to keep with the new generation.
    var rotations: [(version: Int64, bytes: [UInt8])] = []
    /// The entries each shard must hold, as the signed snapshot gives them (an update).
    var expectedEntries: [Int64]?
    private var staging: DirectoryHandle?
    /// Deltas are applied with `ShardEncoder(fast:)` (a version 2 shard's stream stored, not
    /// deflated): deflate took a third of a rewrite's time, for a payload that is Rice-coded already.
    private lazy var fastEncoder = try? ShardEncoder(fast: true)

    init(
        sources: [ShardSource],
        expected: [[UInt8]]?,
        setDigest: [UInt8]?,
        specJSON: [UInt8],
        state: InstalledPublication,
        totalEntries: Int64,
        isCancelled: @escaping () -> Bool
    ) {
        self.sources = sources
        self.expected = expected
        self.setDigest = setDigest
        self.specJSON = specJSON
        self.state = state
        total = totalEntries
        self.isCancelled = isCancelled
    }

    var manifestSpec: Manifest.Spec { .empty }
    var manifestSpecJSON: [UInt8]? { specJSON }

    func prepare(staging: DirectoryHandle, previousLowerBounds: () -> [Int64]?) throws(BlocklistError) -> (
        shardCount: Int, totalEntries: Int64
    ) {
        self.staging = staging
        return (sources.count, total)
    }

    func writeShard(_ index: Int, path: String, encoder: ShardEncoder, sync: Bool) throws(BlocklistError) -> ShardHeader
    {
        do {
            if isCancelled() {
                throw UpdateError(.shard, "The update was cancelled before it was installed; nothing changed.")
            }
            let digest: [UInt8]
            // The installed shard a delta was applied to, named if the result is not the one signed.
            var deltaBase: String?
            switch sources[index - 1] {
            case .installed(let source, let recorded):
                try FileDescriptor.copy(source, toNew: path, sync: sync)
                digest = recorded
            case .copy(let source, let base):
                try FileDescriptor.copy(source, toNew: path, sync: sync)
                digest = try ShardContent.digest(ofShardAt: path)
                // A base that cannot be read (damaged: its delta was refused) says nothing of
                // what changed; the whole shard then counts as added.
                if let base, let counts = try? ShardChangeCounts(from: base, to: path) {
                    added += counts.added
                    removed += counts.removed
                    labelsAdded += counts.labelsAdded
                    labelsRemoved += counts.labelsRemoved
                } else {
                    let header = try ShardHeader.read(path: path)
                    added += header.entryCount
                    labelsAdded += header.identificationCount
                }
            case .delta(let payload, let base, let what):
                deltaBase = base
                let (_, counts, written) = try ShardDelta.apply(
                    payload,
                    what: what,
                    baseAt: base,
                    to: path,
                    encoder: fastEncoder,
                    sync: sync
                )
                added += counts.blockingAdded
                removed += counts.blockingRemoved
                labelsAdded += counts.identificationAdded
                labelsRemoved += counts.identificationRemoved
                digest = written
            }
            if let expected {
                guard digest == expected[index - 1] else {
                    throw UpdateError(
                        .mismatch,
                        "Shard \(index) as written does not have the content digest the signed snapshot gives\(deltaBase.map { " (its delta was applied to \($0), which may have been changed)" } ?? ""); nothing was installed."
                    )
                }
            } else {
                state.shardDigests[index - 1] = digest
            }
            if index == sources.count {
                if let setDigest, Snapshot.setDigest(state.shardDigests) != setDigest {
                    throw UpdateError(
                        .mismatch,
                        "The set the update leads to does not have the digest it was signed with; nothing was installed."
                    )
                }
                try FileSystem.writeNewFile(
                    staging!.path(of: ShardSet.publicationStateName),
                    state.stateBytes,
                    sync: sync
                )
                if !rotations.isEmpty {
                    let bundle = UpdateBundle.encode(rotations.map { ("\($0.version).root.json", $0.bytes) })
                    try FileSystem.writeNewFile(staging!.path(of: ShardSet.trustedRootsName), bundle, sync: sync)
                }
            }
            let header = try ShardHeader.read(path: path)
            if let expectedEntries, header.totalEntries != expectedEntries[index - 1] {
                throw UpdateError(
                    .mismatch,
                    "Shard \(index) holds \(header.totalEntries) entries, but the signed snapshot says \(expectedEntries[index - 1]); nothing was installed."
                )
            }
            return header
        } catch let error as BlocklistError {
            throw error
        } catch let error as UpdateError {
            failure = error
            throw BlocklistError(.invalidInput, error.message)
        } catch {
            throw BlocklistError(.invalidInput, "\(error)")
        }
    }

    /// Commits this producer's shards as the App Group's next generation (SetStorage's atomic
    /// commit); an UpdateError that stopped a shard is thrown as itself.
    func generate(into appGroup: String, sync: Bool) throws -> ShardSet.Generated {
        do {
            return try ShardSet.generate(producer: self, into: appGroup, sync: sync, force: nil)
        } catch {
            if let failure { throw failure }
            throw error
        }
    }

    func cleanUp() {}
}
