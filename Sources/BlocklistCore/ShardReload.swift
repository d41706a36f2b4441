internal import LibC

/// How a reload ended, as CallKit reported it and as the loaded copy now stands.
public struct ShardReloadOutcome: Sendable, Equatable {
    /// CallKit's flag: `true` when the request expired and CallKit stored nothing it sent.
    public var expired: Bool
    /// Whether the request was a diff against the loaded copy (`false`: the whole shard, after
    /// removing everything on an incremental request).
    public var diffed: Bool
    /// Set when CallKit stored the request but its copy could not be recorded: the loaded copy
    /// was then removed, so that the next reload sends the whole shard rather than a diff against
    /// a shard CallKit no longer holds.
    public var recordingFailure: BlocklistError?
    /// The request was a whole load the app had not asked for (the user turned the extension on
    /// in Settings) and sent nothing: the app loads the extension with its progress shown.
    public var deferred: Bool = false

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.expired == rhs.expired && lhs.diffed == rhs.diffed && lhs.deferred == rhs.deferred
            && lhs.recordingFailure?.message == rhs.recordingFailure?.message
    }
}

extension ShardLoader {
    /// The whole work of a Call Directory extension's `beginRequest(with:)`: loads the installed
    /// shard and keeps `loadedCopy` equal to the shard CallKit holds for this extension, so that
    /// an incremental request sends only the differences.
    ///
    /// 1. The installed shard is copied beside the loaded copy, as `.NAME.loading`, and the
    ///    request is made from that copy: an update that replaces the installed shard meanwhile
    ///    changes nothing here.
    /// 2. An incremental request is a diff against the loaded copy when that copy is a readable
    ///    shard of the same index and no earlier request left its `.loading` copy behind. A
    ///    leftover means a request whose outcome is unknown (the extension was killed, or CallKit
    ///    failed the request, between its start and its completion), so the request removes
    ///    everything and adds the whole shard instead.
    /// 3. When CallKit reports the request stored (`expired == false`), the `.loading` copy is
    ///    renamed over the loaded copy. When it expired, CallKit kept what it held before, and
    ///    so does the loaded copy (a first load that expired removes it: nothing is known then).
    ///
    /// Every step is safe to kill: the worst a kill leaves is a request sent whole next time. One
    /// request of an extension runs at a time, as CallKit runs them: two at once would share the
    /// `.loading` name.
    ///
    /// On iOS the extension hands CallKit's context over through an adapter, and cancels the
    /// request with the error this throws:
    ///
    /// ```swift
    /// let calls = CallKitCalls(context: context)  // forwards each CallDirectoryContext call
    /// try ShardLoader.reload(installedShardAt: installed, loadedCopyAt: loaded, into: calls)
    /// ```
    ///
    /// - Parameters:
    ///   - installed: the installed shard, which the app and its updates replace by rename.
    ///   - loaded: where the copy of what CallKit holds is kept; its directory must exist.
    ///   - context: the request's context: CallKit's, through an adapter.
    ///   - capacity: the most entries of either kind the shard may hold (what devices accept).
    ///   - wholeLoadsWaitForTheApp: a request that is not incremental and that the app did not ask
    ///     for with ``requestWholeLoad(loadedCopyAt:)`` (the user turned the extension on in
    ///     Settings) sends nothing, so that Settings does not wait 10 to 20 seconds for each
    ///     extension; the app then loads it, one at a time, with its progress shown.
    ///   - completion: called once CallKit completes the request, with how it ended.
    /// - Returns: how many entries of both kinds were added.
    /// - Throws: `BlocklistError` if the installed shard cannot be copied or read, or is too
    ///   large; nothing was completed then, the loaded copy stands, and the request should be
    ///   cancelled with the error.
    @discardableResult
    public static func reload(
        installedShardAt installed: String,
        loadedCopyAt loaded: String,
        into context: some CallDirectoryContext,
        capacity: Int64 = ShardLoader.defaultCapacity,
        wholeLoadsWaitForTheApp: Bool = false,
        completion: (@Sendable (ShardReloadOutcome) -> Void)? = nil
    ) throws(BlocklistError) -> Int64 {
        let staging = stagingPath(forLoadedCopy: loaded)
        let requested = requestPath(forLoadedCopy: loaded)
        if wholeLoadsWaitForTheApp, !context.isIncremental, !FileDescriptor.nameExists(requested) {
            // CallKit will hold nothing for this extension: no loaded copy describes that but
            // none, so the app's request that follows sends the whole shard.
            FileDescriptor.removeCreated(loaded)
            FileDescriptor.removeCreated(staging)
            context.completeRequest { expired in
                completion?(ShardReloadOutcome(expired: expired, diffed: false, recordingFailure: nil, deferred: true))
            }
            return 0
        }
        // A copy left by an earlier request: CallKit may hold it or what it held before, so the
        // loaded copy describes nothing for sure. It goes first, then the marker, so that a kill
        // between the two leaves the marker: no diff until a request is stored again.
        if FileDescriptor.nameExists(staging) {
            FileDescriptor.removeCreated(loaded)
            FileDescriptor.removeCreated(staging)
        }
        // `loaded/` is made on the first request, beside the installed shards.
        try makeParentDirectory(of: staging)
        try FileDescriptor.copy(installed, toNew: staging, sync: true)
        let diffed = context.isIncremental && isLoadedCopy(loaded, of: staging)
        let incremental = context.isIncremental
        do throws(BlocklistError) {
            return try load(
                shardAt: staging,
                previousShardAt: diffed ? loaded : nil,
                into: context,
                capacity: capacity
            ) { expired in
                var outcome = ShardReloadOutcome(expired: expired, diffed: diffed, recordingFailure: nil)
                if expired {
                    // An incremental request that expired changed nothing CallKit holds (Apple:
                    // "any identification or blocking entries added by the extension context were
                    // not added"), and the loaded copy still describes it. After a first load
                    // nothing is known: the copy goes, before the marker.
                    if !incremental { FileDescriptor.removeCreated(loaded) }
                    FileDescriptor.removeCreated(staging)
                } else {
                    do throws(BlocklistError) {
                        try FileDescriptor.rename(staging, over: loaded)
                        FileDescriptor.removeCreated(requested)
                    } catch {
                        FileDescriptor.removeCreated(loaded)
                        outcome.recordingFailure = error
                    }
                }
                completion?(outcome)
            }
        } catch {
            // Nothing was completed: CallKit keeps what it held, and so does the loaded copy.
            FileDescriptor.removeCreated(staging)
            throw error
        }
    }

    /// Asks that the extension's next request send its whole shard even when it is not
    /// incremental, for a `reload` with `wholeLoadsWaitForTheApp`: the app calls this before it
    /// asks CallKit to reload an extension that holds nothing yet (no loaded copy). The mark
    /// goes when a request is stored.
    public static func requestWholeLoad(loadedCopyAt loaded: String) throws(BlocklistError) {
        let requested = requestPath(forLoadedCopy: loaded)
        if !FileDescriptor.nameExists(requested) {
            try makeParentDirectory(of: requested)
            try FileDescriptor.writeNewFile(requested, [], sync: false)
        }
    }

    /// Whether the extension of the loaded copy `loaded` holds nothing CallKit stored from it:
    /// no loaded copy. The app asks for a whole load of each such extension that is turned on.
    public static func needsWholeLoad(loadedCopyAt loaded: String) -> Bool {
        !FileDescriptor.nameExists(loaded)
    }

    /// Makes the directory `path` is in (`loaded/`) when it is not there yet.
    private static func makeParentDirectory(of path: String) throws(BlocklistError) {
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex {
            try FileDescriptor.makeDirectory(String(path[..<slash]))
        }
    }

    /// `DIR/.NAME.requested` for the loaded copy `DIR/NAME`: the app's mark that it asked for a
    /// whole load.
    package static func requestPath(forLoadedCopy loaded: String) -> String { besideLoadedCopy(loaded, ".requested") }

    /// `DIR/.NAME.loading` for the loaded copy `DIR/NAME`: the shard a request is made from.
    package static func stagingPath(forLoadedCopy loaded: String) -> String { besideLoadedCopy(loaded, ".loading") }

    /// `DIR/.NAME` + `suffix` for the loaded copy `DIR/NAME`.
    private static func besideLoadedCopy(_ loaded: String, _ suffix: String) -> String {
        let slash = loaded.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { String(loaded[...$0]) } ?? ""
        let name = slash.map { String(loaded[loaded.index(after: $0)...]) } ?? loaded
        return directory + "." + name + suffix
    }

    /// Whether `loaded` is a readable shard of the same index as `current`, one a diff may start
    /// from.
    private static func isLoadedCopy(_ loaded: String, of current: String) -> Bool {
        guard FileDescriptor.nameExists(loaded),
            let previous = try? ShardReader(path: loaded),
            let now = try? ShardReader(path: current)
        else { return false }
        return previous.header.shardIndex == now.header.shardIndex
    }
}
