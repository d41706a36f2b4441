import BlocklistCore
import BlocklistSystem

/// How an extension sends its list when the request is incremental.
package enum ReloadStrategy: String, Sendable, CaseIterable, Codable {
    /// removeAll, then add everything (the original app's way).
    case full
    /// Only the differences from the shard loaded last time.
    case delta
}

/// Whether the capacity counts what an extension holds or what one request adds. Devices are
/// measured per extension; bulk blockers that load many incremental chunks suggest per request.
package enum CapacityScope: String, Sendable, CaseIterable, Codable {
    case perExtension = "extension"
    case perRequest = "request"
}

/// Settings of one reload.
package struct ReloadOptions: Sendable {
    package var strategy: ReloadStrategy = .full
    /// The extension host is killed above this resident memory, in KiB. Default: 7 MiB.
    package var memoryBudgetKiB: Int = 7 * 1024
    /// The most entries. Default: 1,999,999.
    package var capacity: Int64 = 1_999_999
    package var capacityScope: CapacityScope = .perExtension
    /// Test hook: the host kills itself after this many calls.
    package var crashAfter: Int64?

    package init() {}
}

/// What a successful reload did.
package struct ReloadResult: Sendable, Codable, Equatable {
    package var identifier: String
    package var incremental: Bool
    /// Blocking entries added.
    package var added: Int64
    /// Blocking entries removed, one by one or all at once.
    package var removed: Int64
    /// Identification entries (numbers with a label) added and removed, counted apart from the
    /// blocking ones.
    package var identificationAdded: Int64
    package var identificationRemoved: Int64
    /// The context calls that did the work: additions, removals and removeAll, each one call. A
    /// device's time goes with this, not with `removed` (removeAll is one call).
    package var calls: Int64
    /// Entries the extension holds afterwards, of both kinds (blocking and identification).
    package var entries: Int64
    /// Of `entries`, the identification entries.
    package var identificationEntries: Int64
    package var milliseconds: Int64
    package var peakMemoryKiB: Int
    /// Something that failed after the commit and so does not undo it: the App Group copy that
    /// the delta strategy diffs against could not be saved (the next delta request then sends
    /// the whole list).
    package var warning: String?
}

/// The simulated CallKit daemon: runs one extension request at a time against the store, enforcing
/// CallKit's rules on the calls the extension host streams to it.
package final class CallDirectorySystem {
    package let store: CallDirectoryStore
    /// The extension-host executable.
    package let hostPath: String

    package init(store: CallDirectoryStore, hostPath: String) {
        self.store = store
        self.hostPath = hostPath
    }

    /// Reloads extension `identifier` from the shard at `shardPath`, as
    /// `CXCallDirectoryManager.reloadExtension(withIdentifier:)` does.
    ///
    /// The whole request is one SQLite transaction: committed when the extension completes the
    /// request and the system accepts it, rolled back on any error, crash, kill or memory-budget
    /// overrun, which leaves the extension's previous entries as they were.
    ///
    /// - Parameters:
    ///   - checksum: the shard's manifest checksum, recorded with the load.
    ///   - progress: called with the context calls applied so far (`ReloadResult.calls`), about
    ///     every 65,536.
    /// - Throws: `CallDirectoryError` with CallKit's code.
    package func reload(
        _ identifier: String,
        shardPath: String,
        checksum: String,
        options: ReloadOptions = ReloadOptions(),
        progress: (Int64) -> Void = { _ in }
    ) throws(CallDirectoryError) -> ReloadResult {
        let lock: FileLock
        do {
            lock = try FileLock(path: store.path + ".lock", what: "The store \(store.path)")
        } catch {
            throw CallDirectoryError(
                error.code == .busy ? .currentlyLoading : .unknown,
                error.code == .busy
                    ? "\(identifier): another reload is running on the store \(store.path)." : error.message
            )
        }
        defer { lock.unlock() }

        let row: CallDirectoryStore.Extension
        do {
            guard let found = try store.extension(identifier) else {
                throw CallDirectoryError(
                    .noExtensionFound,
                    "No extension \(identifier) is registered in the store \(store.path)."
                )
            }
            row = found
        } catch let error as CallDirectoryError {
            throw error
        } catch {
            throw CallDirectoryError(.unknown, "\(error)")
        }
        guard row.enabled else {
            throw CallDirectoryError(.extensionDisabled, "\(identifier) is disabled in Settings; enable it first.")
        }

        let clock = ContinuousClock()
        let started = clock.now
        let incremental = row.state == .loaded && !row.needsFullReload
        var identified: Int64 = 0
        if incremental {
            do {
                identified = try store.identificationCount(of: identifier)
            } catch {
                throw CallDirectoryError(.unknown, "\(identifier): \(error.message)")
            }
        }
        var request = Request(
            store: store,
            identifier: identifier,
            incremental: incremental,
            previousCount: row.loadedCount,
            previousIdentificationCount: identified,
            options: options
        )
        var peak = 0
        do {
            let copy = store.appGroupDirectory + "/" + identifier + ".blk"
            var arguments = [shardPath, "--strategy", options.strategy.rawValue]
            if incremental { arguments.append("--incremental") }
            if incremental, options.strategy == .delta,
                (try? ShardReader(path: copy))?.header.checksum == row.loadedChecksum
            {
                arguments += ["--previous", copy]
            }
            if let crashAfter = options.crashAfter { arguments += ["--crash-after", String(crashAfter)] }
            try request.begin()
            let child = try ChildProcess(path: hostPath, arguments: arguments)
            peak = try request.run(child, progress: progress)
            try request.commit(checksum: checksum, milliseconds: (clock.now - started).milliseconds, peakKiB: peak)
            // From here the load stands: what follows can only add a warning.
            var warning: String?
            do {
                try saveAppGroupCopy(of: shardPath, to: copy)
            } catch {
                warning =
                    "\(identifier) loaded, but saving its App Group copy failed (\(error.message)); its next delta reload sends the whole list."
            }
            return ReloadResult(
                identifier: identifier,
                incremental: incremental,
                added: request.added,
                removed: request.removed,
                identificationAdded: request.identificationAdded,
                identificationRemoved: request.identificationRemoved,
                calls: request.calls,
                entries: request.count + request.identificationCount,
                identificationEntries: request.identificationCount,
                milliseconds: (clock.now - started).milliseconds,
                peakMemoryKiB: peak,
                warning: warning
            )
        } catch {
            let failure = error as? CallDirectoryError ?? CallDirectoryError(.unknown, "\(identifier): \(error)")
            request.fail(failure, milliseconds: (clock.now - started).milliseconds, peakKiB: max(peak, request.peakKiB))
            throw failure
        }
    }

    /// Empties and unregisters `identifier`, as iOS does when an app update drops an extension.
    /// Waits for no reload: refused with `currentlyLoading` while one runs.
    ///
    /// - Returns: how many entries it held.
    package func unregister(_ identifier: String) throws(CallDirectoryError) -> Int64 {
        let lock: FileLock
        do {
            lock = try FileLock(path: store.path + ".lock", what: "The store \(store.path)")
        } catch {
            throw CallDirectoryError(
                error.code == .busy ? .currentlyLoading : .unknown,
                "\(identifier): \(error.message)"
            )
        }
        defer { lock.unlock() }
        do {
            let entries = try store.unregister(identifier)
            try? FileSystem.removeFile(store.appGroupDirectory + "/" + identifier + ".blk")
            return entries
        } catch {
            throw CallDirectoryError(.unknown, "\(identifier): \(error.message)")
        }
    }

    private func saveAppGroupCopy(of shard: String, to copy: String) throws(BlocklistError) {
        if try FileSystem.kind(store.appGroupDirectory) == .missing {
            try FileSystem.makeDirectory(store.appGroupDirectory)
        }
        let temporary = copy + ".tmp"
        try FileSystem.removeFile(temporary)
        try FileSystem.writeNewFile(temporary, try FileSystem.readFile(shard), sync: true)
        try FileSystem.rename(temporary, to: copy)
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
