import BlocklistCore

/// What became of a blocklist push in a Notification Service Extension
/// (``InstalledShards/receive(push:trust:pushKey:now:in:fetch:)``), or of the app's catch-up
/// (``InstalledShards/catchUp(trust:now:in:fetch:)``).
public enum UpdateOutcome: Sendable {
    /// The installed set is now `generation`; the shards at `changedShards` (indices from 1)
    /// changed, and their extensions have a new shard to load.
    case updated(generation: UInt64, changedShards: [Int])
    /// Nothing newer than the installed generation.
    case current
    /// A newer generation, `generation`, was announced, but the push gives no way to reach it:
    /// the update file from the installed generation is not published (the phone is more
    /// generations behind than the publisher keeps), or the push names no URL. The app's
    /// catch-up brings the set forward, shard by shard.
    case behind(generation: UInt64)
    /// Refused or failed; the installed set is as it was. The sentence is recorded in the App
    /// Group's failures (`ExtensionFailures`), where the app shows it.
    case failed(UpdateError)

    /// What the notification says, written for people (no paths, no error codes); nil to leave
    /// the push's own alert as it came.
    ///
    /// - Parameter reloaded: whether CallKit already reloaded every extension whose shard changed;
    ///   if not, the lists take effect when the app is opened.
    public func notificationBody(reloaded: Bool) -> String? {
        switch self {
        case .updated(_, let changed) where changed.isEmpty: nil
        case .updated(_, let changed):
            reloaded
                ? "Block list updated: \(Figures.grouped(changed.count)) of its lists changed."
                : "Block list update ready: \(Figures.grouped(changed.count)) of its lists changed. Open the app to start blocking with it."
        case .current: nil
        case .behind: "A block list update is waiting. Open the app to get it."
        case .failed: "Block list not updated. The app shows why; the next update tries again."
        }
    }
}

extension InstalledShards {
    /// What a Notification Service Extension does with a blocklist push, end to end: decides the
    /// step (`step(inline:announcement:root:pushKey:now:)`), fetches the update file when the
    /// push points to one, and applies the update under the App Group's lock. A failure is
    /// recorded in the App Group's failures, with the source `NotificationService`.
    ///
    /// - Parameters:
    ///   - push: the push payload's `blocklist` member as JSON (`inline`, the sealed update in
    ///     base64; `announcement`, the signed announcement).
    ///   - trust: the app's `root.json`.
    ///   - pushKey: the app's `push.key`; nil for an app made without one, which takes every
    ///     update from the announcement's signed URL.
    ///   - now: seconds since 1970.
    ///   - directory: the App Group's directory (BlocklistCore's `AppGroupLayout`).
    ///   - fetch: reads an `http(s)` URL whole, at most `maximumBytes`; nil when the host has no
    ///     such file (``HostAnswer/missing``: 404 or 410, and for this file, which may be missing,
    ///     a 403 or a web page too).
    public static func receive(
        push: [UInt8],
        trust: [UInt8],
        pushKey: [UInt8]?,
        now: Int64,
        in directory: String,
        fetch: (_ url: String, _ maximumBytes: Int) async throws -> [UInt8]?
    ) async -> UpdateOutcome {
        let outcome: UpdateOutcome
        do {
            var root = try trustedRoot(shipped: trust, in: directory)
            let fields = try JSONFields(
                try JSONValue(parsing: push, what: "the push's blocklist member"),
                what: "the push"
            )
            // An app without the push key never opens the inline update, whatever it holds.
            let sealed = fields.members["inline"] == nil || pushKey == nil ? nil : try fields.base64("inline")
            let announcement = fields.members["announcement"]?.canonicalBytes
            guard announcement != nil || fields.members["inline"] != nil else {
                throw UpdateError(.malformed, "The push carries neither an announcement nor an inline update.")
            }
            try requireInstalled(in: directory)
            var installed = try read(in: directory)
            let decide = { (root: Root) throws(UpdateError) -> PushStep in
                try root.checkCurrent(now: now)
                return try installed.step(
                    inline: sealed,
                    announcement: announcement,
                    root: root,
                    pushKey: pushKey,
                    now: now
                )
            }
            let step: PushStep
            let first = Result { () throws(UpdateError) -> PushStep in try decide(root) }
            switch first {
            case .success(let decided):
                step = decided
            case .failure(let refusal):
                guard refusal.code == .badSignature || refusal.code == .expired else { throw refusal }
                // Signed by a newer root than the app holds: follow the roots from the
                // publication the announcement names (each checked by the one before, so the
                // URL needs no trust), keep them, and decide again.
                let followed = try await followRoots(from: root, announcement: announcement, fetch: fetch)
                guard let newest = followed.last else { throw refusal }
                try withLock(in: directory) { () throws(UpdateError) in
                    try keepRoots(followed.map { ($0.root.version, $0.bytes) }, in: directory)
                }
                root = newest.root
                step = try decide(root)
            }
            switch step {
            case .nothing:
                outcome = .current
            case .behind(let generation):
                outcome = .behind(generation: generation)
            case .apply(let update):
                outcome = .updated(generation: update.to, changedShards: try installed.apply(update, in: directory))
            case .fetch(let url, let name, let generation):
                // A host that hides a missing file behind a page (S3's 403, a CDN's HTML) has
                // none: the phone is further behind than the publisher keeps.
                guard let bytes = try await fetch(url, InlinePush.maximumFileBytes), !HostAnswer.isPage(bytes) else {
                    outcome = .behind(generation: generation)
                    break
                }
                let update = try InlinePush(signed: bytes, trusting: root, now: now, what: name)
                outcome = .updated(generation: update.to, changedShards: try installed.apply(update, in: directory))
            }
        } catch let error as UpdateError {
            outcome = .failed(error)
        } catch {
            outcome = .failed(UpdateError(.shard, "Fetching the update failed: \(error)."))
        }
        if case .failed(let error) = outcome {
            ExtensionFailures.record(error.message, source: "NotificationService", time: now, in: directory)
        }
        return outcome
    }

    /// Brings the installed set to the newest generation of the publication that `fetch` reads:
    /// the update file from the installed generation when the publication has one, otherwise
    /// each changed shard's delta or the whole shard, as the signed snapshot lists them, every
    /// file checked against the signed metadata. What the app does when pushes were missed (the
    /// phone was off, or more generations behind than the publisher keeps): in a background
    /// refresh, and when it opens.
    ///
    /// Everything is downloaded and checked first, without the App Group's lock: iOS kills an
    /// app that is suspended while it holds a file lock in a shared container (docs/PLATFORM.md),
    /// and a download may take long. The lock is held for the install alone; if the set changed
    /// meanwhile (a push applied), nothing is installed and the next catch-up starts from it.
    ///
    /// - Parameters:
    ///   - trust: the app's `root.json`; the roots it rotated to are followed from the
    ///     publication each time.
    ///   - now: seconds since 1970.
    ///   - directory: the App Group's directory (BlocklistCore's `AppGroupLayout`).
    ///   - fetch: reads a file of the publication by its path (`timestamp.json`,
    ///     `deltas/...`), at most `maximumBytes`; nil when it does not exist (for an `optional`
    ///     file, a 403 or an HTML page too: ``HostAnswer``). Called from a task, a cancelled task
    ///     (a background refresh that expired) stops before the next file.
    /// - Returns: `.updated`, `.current`, or `.failed` with the sentence, also recorded in the
    ///   App Group's failures with the source `catch-up` (unless the task was cancelled).
    public static func catchUp(
        trust: [UInt8],
        now: Int64,
        in directory: String,
        fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
    ) -> UpdateOutcome {
        let outcome: UpdateOutcome
        func fetchUnlessCancelled(_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]? {
            guard !Task.isCancelled else {
                throw UpdateError(.unavailable, "The catch-up was cancelled before \(path); the next one starts over.")
            }
            do {
                return try fetch(path, maximumBytes, optional)
            } catch let error as UpdateError {
                throw error
            } catch {
                // URLSession's error (offline, a timeout), named with the file.
                throw UpdateError(.unavailable, "Fetching \(path) failed: \(error).")
            }
        }
        do {
            try requireInstalled(in: directory)
            let base = try read(in: directory)
            let installed = InstalledPublication(generation: base.generation, shardDigests: base.digests)
            let roots = try UpdatePlan.Roots(
                from: try trustedRoot(shipped: trust, in: directory),
                fetch: fetchUnlessCancelled
            )
            let route = try UpdatePlan.route(
                roots: roots,
                installed: installed,
                now: now,
                source: "the publication",
                fetch: fetchUnlessCancelled
            )
            // Downloads the plan's files, then installs them under the lock.
            func install(_ plan: UpdatePlan) throws -> UpdateOutcome {
                let files = try download(plan, fetch: fetchUnlessCancelled)
                return try withLock(in: directory) { () throws(UpdateError) -> UpdateOutcome in
                    var current = try read(in: directory)
                    guard current.generation < plan.snapshot.generation else { return .current }
                    guard current == base else {
                        throw UpdateError(
                            .wrongBase,
                            "The installed set changed to generation \(current.generation) while generation \(plan.snapshot.generation) downloaded; nothing was installed, and the next catch-up starts from it."
                        )
                    }
                    let changed = try current.follow(plan, files: files, in: directory)
                    return .updated(generation: plan.snapshot.generation, changedShards: changed)
                }
            }
            // The roots followed are kept first: a key rotated out stays out from now on.
            try withLock(in: directory) { () throws(UpdateError) in try keepRoots(roots.files, in: directory) }
            switch route {
            case nil:
                outcome = .current
            case .plan(let plan)?:
                outcome = try install(plan)
            case .updateFile(let update, _)?:
                let applied = try withLock(in: directory) { () throws(UpdateError) -> UpdateOutcome? in
                    var current = try read(in: directory)
                    guard current.generation < update.to else { return .current }
                    guard current == base else { return nil }
                    // An update file that does not fit the installed shards (a set shipped under
                    // another generation's number) is passed over for the snapshot's way, which
                    // compares every shard's digest.
                    guard let changed = try? current.applyUnlocked(update, in: directory) else { return nil }
                    return .updated(generation: update.to, changedShards: changed)
                }
                if let applied {
                    outcome = applied
                } else if let plan = try UpdatePlan.make(
                    roots: roots,
                    installed: installed,
                    now: now,
                    source: "the publication",
                    fetch: fetchUnlessCancelled
                ) {
                    outcome = try install(plan)
                } else {
                    outcome = .current
                }
            }
        } catch let error as UpdateError {
            outcome = .failed(error)
        } catch {
            outcome = .failed(UpdateError(.shard, "Reading the publication failed: \(error)."))
        }
        // Not a failure: a cancelled refresh, or a push that landed first (the next catch-up
        // starts from it).
        if case .failed(let error) = outcome, !Task.isCancelled, error.code != .wrongBase {
            ExtensionFailures.record(error.message, source: "catch-up", time: now, in: directory)
        }
        return outcome
    }

    /// The file of each step of `plan` that is not kept (a delta or a whole shard), by step,
    /// checked against the snapshot's length and SHA-256.
    static func download(
        _ plan: UpdatePlan,
        fetch: (_ path: String, _ maximumBytes: Int, _ optional: Bool) throws -> [UInt8]?
    ) throws -> [Int: [UInt8]] {
        var files: [Int: [UInt8]] = [:]
        for (offset, step) in plan.steps.enumerated() {
            let file: FileInfo
            switch step {
            case .keep: continue
            case .delta(let delta): file = delta.file
            case .full(let shard): file = shard.file
            }
            guard let bytes = try fetch(file.path, Int(file.length), false) else {
                throw UpdateError(.mismatch, "The publication lacks \(file.path), which its snapshot names.")
            }
            try file.check(bytes, what: file.path)
            files[offset] = bytes
        }
        return files
    }

    /// Stages each changed shard of `plan` (from its delta, or whole, out of `files`) beside
    /// its place, checks its content digest against the snapshot's, and commits the set. Called
    /// under the lock.
    mutating func follow(_ plan: UpdatePlan, files: [Int: [UInt8]], in directory: String) throws(UpdateError)
        -> [Int]
    {
        let shards = plan.snapshot.shards
        guard shards.count == names.count else {
            throw UpdateError(
                .wrongBase,
                "The publication's generation \(plan.snapshot.generation) has \(shards.count) shards, and this app has \(names.count) Call Directory extensions: a new version of the app is needed to install it."
            )
        }
        var written: [String] = []
        do throws(UpdateError) {
            for (offset, step) in plan.steps.enumerated() {
                let staged = Self.stagedPath(names[offset], in: directory)
                let bytes = files[offset] ?? []
                let digest: [UInt8]
                switch step {
                case .keep:
                    continue
                case .delta(let delta):
                    let decoded = try DeltaFile.decode(bytes, what: delta.file.path)
                    guard decoded.index == offset + 1, decoded.from == generation,
                        decoded.to == plan.snapshot.generation
                    else {
                        throw UpdateError(
                            .mismatch,
                            "\(delta.file.path) is the delta of shard \(decoded.index) from \(decoded.from) to \(decoded.to), not the one the snapshot names."
                        )
                    }
                    written.append(staged)
                    digest = try ShardDelta.apply(
                        decoded.payload,
                        what: delta.file.path,
                        baseAt: Self.shardPath(names[offset], in: directory),
                        to: staged
                    ).digest
                case .full:
                    written.append(staged)
                    do throws(BlocklistError) {
                        try FileDescriptor.writeNewFile(staged, bytes, sync: true)
                    } catch {
                        throw UpdateError(error)
                    }
                    digest = try ShardContent.digest(ofShardAt: staged)
                }
                guard digest == shards[offset].digest else {
                    throw UpdateError(
                        .mismatch,
                        "Shard \(offset + 1) of generation \(plan.snapshot.generation) is not the one the snapshot signs once installed; nothing was installed."
                    )
                }
            }
            var next = self
            next.generation = plan.snapshot.generation
            next.digests = shards.map(\.digest)
            try next.commit(plan.changedShards, in: directory)
            self = next
            return plan.changedShards
        } catch {
            for path in written { FileDescriptor.removeCreated(path) }
            throw error
        }
    }

    /// The positions (from 0) of the extensions that are turned on and hold another version of
    /// their shard than the installed one: their loaded copy's content digest is not the
    /// installed shard's, or they hold none yet. The app (and the Notification Service
    /// Extension, after an update) reloads exactly these.
    ///
    /// - Parameters:
    ///   - statuses: each extension's status, extension `i` loading shard `i` (index order).
    ///   - directory: the App Group's directory.
    public func stalePositions(statuses: [CallDirectoryEnabledStatus], in directory: String) -> [Int] {
        names.indices.filter { index in
            index < statuses.count && statuses[index] == .enabled
                && (try? ShardContent.digest(ofShardAt: AppGroupLayout.loadedCopy(names[index], in: directory)))
                    != digests[index]
        }
    }
}

extension InstalledShards {
    /// The root the app trusts now: the one it ships (`shipped`, its `root.json`), then each
    /// newer root kept in the App Group (`roots/N.root.json`, followed by a catch-up or a push),
    /// each signed by the one before. A key rotated out stays out, even for a publication that
    /// leaves the newer roots out.
    ///
    /// - Throws: `UpdateError` when the shipped root is not one, or a kept root does not follow.
    public static func trustedRoot(shipped: [UInt8], in directory: String) throws(UpdateError) -> Root {
        var root = try Root.trusted(shipped, what: "the app's root.json")
        while root.version < Int64(Int32.max) {
            let path = AppGroupLayout.root(root.version + 1, in: directory)
            guard FileDescriptor.nameExists(path) else { break }
            let bytes: [UInt8]
            do throws(BlocklistError) {
                bytes = try FileDescriptor.readWholeFile(path, limit: SignedDocument.maximumBytes)
            } catch {
                throw UpdateError(error)
            }
            root = try root.next(bytes, what: path)
        }
        return root
    }

    /// Keeps roots followed from a publication (each verified by the one before) in the App
    /// Group, written aside and renamed. Called under the lock.
    static func keepRoots(_ roots: [(version: Int64, bytes: [UInt8])], in directory: String) throws(UpdateError) {
        guard !roots.isEmpty else { return }
        do throws(BlocklistError) {
            try FileDescriptor.makeDirectory(directory + "/roots")
            for (version, bytes) in roots where !FileDescriptor.nameExists(AppGroupLayout.root(version, in: directory))
            {
                try replace(AppGroupLayout.root(version, in: directory)) { aside throws(BlocklistError) in
                    try FileDescriptor.writeNewFile(aside, bytes, sync: true)
                }
            }
        } catch {
            throw UpdateError(error)
        }
    }

    /// Throws when the App Group holds no installed set yet, in words for people.
    static func requireInstalled(in directory: String) throws(UpdateError) {
        guard FileDescriptor.nameExists(recordPath(in: directory)) else {
            throw UpdateError(
                .wrongBase,
                "No set is installed in the App Group yet: the app installs the set it ships first (InstalledShards.installIfNeeded)."
            )
        }
    }

    /// The roots after `root` at the publication the announcement names (its URL read without
    /// trust: every root must be signed by the one before), in order; none when it names none.
    static func followRoots(
        from root: Root,
        announcement: [UInt8]?,
        fetch: (_ url: String, _ maximumBytes: Int) async throws -> [UInt8]?
    ) async throws -> [(root: Root, bytes: [UInt8])] {
        guard let announcement,
            let payload = try? SignedDocument(parsing: announcement, what: "the push's announcement").payload,
            let url = (try? PushAnnouncement(payload: payload, what: "the push's announcement"))?.url, !url.isEmpty
        else { return [] }
        var followed: [(root: Root, bytes: [UInt8])] = []
        var current = root
        while current.version < Int64(Int32.max) {
            let name = "\(current.version + 1).root.json"
            guard
                let bytes = try await fetch(
                    url.hasSuffix("/") ? url + name : url + "/" + name,
                    SignedDocument.maximumBytes
                ),
                !HostAnswer.isPage(bytes), SignedDocument.isDocument(bytes)
            else { break }
            current = try current.next(bytes, what: name)
            followed.append((current, bytes))
        }
        return followed
    }
}

/// What ``InstalledShards/reloadCallKit(extensions:using:incrementalOnly:in:progress:)`` did.
public struct CallKitReload: Sendable {
    /// Each extension's status in Settings after the reloads, in index order.
    public var statuses: [CallDirectoryEnabledStatus]
    /// The reloads asked of CallKit, one per extension whose shard it did not hold.
    public var report: CallDirectoryReloadChain.Report
    /// Whether every extension that is on now holds its installed shard, and CallKit told every
    /// extension's status: only then is the installed set what blocks calls.
    public var isLoaded: Bool
    /// Why the installed set cannot all be loaded, in one sentence, when the app names another
    /// number of extensions than the set has shards; nil otherwise.
    public var problem: String?
}

extension InstalledShards {
    /// Asks CallKit to reload, one at a time, each extension that is on and does not hold its
    /// installed shard (``stalePositions(statuses:in:)``), and tells whether all of them hold it
    /// afterwards. What the app does when it opens and after a catch-up, and the Notification
    /// Service Extension after an update.
    ///
    /// An extension that holds nothing yet (turned on in Settings, whose handler left its whole
    /// load to the app: `ShardLoader.reload`'s `wholeLoadsWaitForTheApp`) is marked for its
    /// whole load (`ShardLoader.requestWholeLoad`) and reloaded, unless `incrementalOnly`: a
    /// Notification Service Extension has about 30 seconds, and a whole load of 2 million
    /// entries waits for the app, where its progress shows.
    ///
    /// - Parameters:
    ///   - identifiers: the Call Directory extensions' bundle identifiers, extension `i` loading
    ///     shard `i` (index order).
    ///   - manager: CallKit's manager (the app's adapter of `CXCallDirectoryManager`).
    ///   - incrementalOnly: leaves an extension that holds nothing yet to the app.
    ///   - directory: the App Group's directory.
    ///   - progress: awaited after each reload, in order, all before this returns.
    public func reloadCallKit(
        extensions identifiers: [String],
        using manager: some CallDirectoryManaging,
        incrementalOnly: Bool = false,
        in directory: String,
        progress: @Sendable (CallDirectoryReloadChain.Progress) async -> Void = { _ in }
    ) async -> CallKitReload {
        let all = CallDirectoryReloadChain(identifiers: identifiers)
        var chain = all
        chain.identifiers = []
        for index in stalePositions(statuses: await all.enabledStatuses(using: manager), in: directory)
        where index < identifiers.count {
            let copy = AppGroupLayout.loadedCopy(names[index], in: directory)
            if ShardLoader.needsWholeLoad(loadedCopyAt: copy) {
                // An extension that cannot be marked is left for the next time.
                guard !incrementalOnly, (try? ShardLoader.requestWholeLoad(loadedCopyAt: copy)) != nil else {
                    continue
                }
            }
            chain.identifiers.append(identifiers[index])
        }
        let report = await chain.run(using: manager, progress: progress)
        let statuses = await all.enabledStatuses(using: manager)
        let problem =
            identifiers.count == names.count
            ? nil
            : "The app names \(identifiers.count) Call Directory extensions, but the installed set has \(names.count) shards: each shard needs an extension of its own (BlocklistCallDirectoryExtensions in the Info.plist)."
        return CallKitReload(
            statuses: statuses,
            report: report,
            isLoaded: problem == nil && report.isComplete && !statuses.contains(.unknown)
                && isLoaded(statuses: statuses, in: directory),
            problem: problem
        )
    }
}
