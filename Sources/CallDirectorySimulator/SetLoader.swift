import BlocklistCore
import SetReading
import SetStorage

/// Loads a shard set into the store the way the app side does: each extension in order, one at a
/// time, skipping disabled and unchanged ones, so a rerun after a failure resumes where it stopped.
package struct SetLoader {
    /// What happened to one extension.
    package enum Outcome: Sendable, Equatable {
        case loaded(ReloadResult)
        case skippedUnchanged
        case skippedDisabled
        case failed(code: CallDirectoryError.Code, message: String)
        /// Registered, but the manifest no longer has it: emptied and unregistered, as iOS does with
        /// an extension an app update removed.
        case removed(entries: Int64)
    }

    /// Progress reports.
    package enum Event: Sendable {
        /// Extension `identifier` starts; `entries` is its shard's count of both kinds.
        case started(identifier: String, entries: Int64)
        /// Entries applied so far for the current extension.
        case progress(identifier: String, done: Int64)
        case finished(identifier: String, outcome: Outcome)
    }

    package let system: CallDirectorySystem
    package let directory: String
    /// The generation being loaded, held (shared lock) for as long as this loader lives, so a
    /// generate that commits a new set meanwhile does not remove the shards under it.
    package let readingSet: ReadingSet
    package var manifest: Manifest { readingSet.manifest }

    /// Reads `directory`'s manifest, holds its generation and registers its extensions in the
    /// system's store.
    package init(system: CallDirectorySystem, directory: String) throws(BlocklistError) {
        self.system = system
        self.directory = directory
        readingSet = try ReadingSet(directory: directory)
        try system.store.register(readingSet.manifest)
    }

    /// The registered extensions this set does not have (left by a larger or older set).
    package func staleExtensions() throws(BlocklistError) -> [CallDirectoryStore.Extension] {
        let current = Set(
            manifest.shards.map { CallDirectoryStore.identifier(ofShard: $0.index, of: manifest.shards.count) }
        )
        return try system.store.extensions().filter { !current.contains($0.identifier) }
    }

    /// The identifiers of the shards `only` names (indexes from 1), or of all.
    package func identifiers(only: [Int]? = nil) throws(BlocklistError) -> [(identifier: String, shard: Manifest.Shard)]
    {
        var result: [(String, Manifest.Shard)] = []
        for index in only ?? manifest.shards.map(\.index) {
            guard index >= 1, index <= manifest.shards.count else {
                throw BlocklistError(
                    .invalidInput,
                    "\(directory)/\(Manifest.fileName) has shards 1...\(manifest.shards.count); there is no shard \(index)."
                )
            }
            let shard = manifest.shards[index - 1]
            result.append((CallDirectoryStore.identifier(ofShard: index, of: manifest.shards.count), shard))
        }
        return result
    }

    /// Reloads the extensions in order.
    ///
    /// - Parameters:
    ///   - only: shard indexes to load (from 1); default all.
    ///   - force: reload even when the loaded checksum equals the shard's.
    /// - Returns: the outcome per extension, in order.
    package func load(
        only: [Int]? = nil,
        options: ReloadOptions = ReloadOptions(),
        force: Bool = false,
        events: (Event) -> Void = { _ in }
    ) throws(BlocklistError) -> [(identifier: String, outcome: Outcome)] {
        var outcomes: [(String, Outcome)] = []
        for stale in try staleExtensions() {
            let outcome: Outcome
            do {
                outcome = .removed(entries: try system.unregister(stale.identifier))
            } catch {
                outcome = .failed(code: error.code, message: error.message)
            }
            events(.finished(identifier: stale.identifier, outcome: outcome))
            outcomes.append((stale.identifier, outcome))
        }
        for (identifier, shard) in try identifiers(only: only) {
            let outcome = try loadOne(identifier, shard: shard, options: options, force: force, events: events)
            events(.finished(identifier: identifier, outcome: outcome))
            outcomes.append((identifier, outcome))
        }
        return outcomes
    }

    private func loadOne(
        _ identifier: String,
        shard: Manifest.Shard,
        options: ReloadOptions,
        force: Bool,
        events: (Event) -> Void
    ) throws(BlocklistError) -> Outcome {
        guard let row = try system.store.extension(identifier) else {
            return .failed(code: .noExtensionFound, message: "No extension \(identifier) is registered.")
        }
        guard row.enabled else { return .skippedDisabled }
        if !force, row.state == .loaded, !row.needsFullReload, row.loadedChecksum == shard.checksum {
            return .skippedUnchanged
        }
        let path = readingSet.path(of: shard)
        // Refuse a shard that is not the one the manifest describes before the extension sees it.
        do {
            let header = try ShardReader(path: path).header
            guard header.checksum == shard.checksum else {
                return .failed(
                    code: .unknown,
                    message:
                        "\(path) has checksum \(header.checksum), but the manifest says \(shard.checksum); refusing to load it."
                )
            }
        } catch {
            return .failed(code: .unknown, message: error.message)
        }
        events(.started(identifier: identifier, entries: shard.count + (shard.identified ?? 0)))
        do {
            let result = try system.reload(identifier, shardPath: path, checksum: shard.checksum, options: options) {
                done in
                events(.progress(identifier: identifier, done: done))
            }
            return .loaded(result)
        } catch {
            return .failed(code: error.code, message: error.message)
        }
    }
}
