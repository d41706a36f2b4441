/// The calls a Call Directory extension makes on its request context, shaped like CallKit's
/// `CXCallDirectoryExtensionContext` (docs/PLATFORM.md gives each declaration with its source),
/// so the same loader runs on a device and in the simulator.
///
/// On iOS, the extension hands CallKit's context over through a small adapter in its own file
/// (``ShardLoader`` documents it); an adapter, not a retroactive conformance, so that the handler
/// compiles in the Swift 6 language mode without a warning.
///
/// Numbers are `CXCallDirectoryPhoneNumber` values (`Int64`): country code and digits, no `+`.
public protocol CallDirectoryContext {
    /// False on an extension's first load and after it is re-enabled: the request must add the
    /// full list and remove nothing. True when it may change what is stored.
    var isIncremental: Bool { get }
    /// Adds a number to block; numbers must come in strictly ascending order within a request.
    func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: Int64)
    /// Removes a stored number (incremental requests only).
    func removeBlockingEntry(withPhoneNumber phoneNumber: Int64)
    /// Removes every stored number (incremental requests only).
    func removeAllBlockingEntries()
    /// Adds a number to identify with `label`; numbers must come in strictly ascending order
    /// within a request, separately from blocking entries.
    func addIdentificationEntry(withNextSequentialPhoneNumber phoneNumber: Int64, label: String)
    /// Removes a stored identification entry (incremental requests only).
    func removeIdentificationEntry(withPhoneNumber phoneNumber: Int64)
    /// Removes every stored identification entry (incremental requests only).
    func removeAllIdentificationEntries()
    /// Ends the request. CallKit calls `completion` with `expired`, as its header declares
    /// (`void (^)(BOOL expired)`): `false` when it stored what the request sent, `true` when the
    /// request expired and "any identification or blocking entries added by the extension
    /// context were not added".
    func completeRequest(completionHandler completion: (@Sendable (_ expired: Bool) -> Void)?)
}

/// Streams one shard into a Call Directory context: the whole body of a blocking extension.
public enum ShardLoader {
    /// The most entries of either kind a shard may hold, the default of `reload`'s `capacity`:
    /// 1,999,999, what one Call Directory extension accepts (fewer than 2,000,000).
    public static let defaultCapacity: Int64 = BlockSpec.defaultCapacity

    /// Adds every number of the shard at `path` to `context`, then completes the request:
    /// blocking entries first, then identification entries, each label made into a `String` once.
    ///
    /// An incremental request (`context.isIncremental`) changes what the system stores. Given
    /// `previousPath`, the shard this extension loaded last time (the app keeps a copy in its App
    /// Group), only the differences are sent, compared run by run:
    /// removing one number from a 1,992,600-number shard is one call. Without it, an incremental
    /// request removes everything stored and adds the whole shard.
    ///
    /// Opening a shard checks its checksums first, so a damaged file adds nothing, and a previous
    /// shard of another index (another extension's) is refused before any call; a shard that
    /// says it holds more than `capacity` numbers of either kind is refused before anything is added.
    ///
    /// `completionHandler` gets CallKit's `expired`: `false` when CallKit stored the request.
    /// ``reload(installedShardAt:loadedCopyAt:into:capacity:wholeLoadsWaitForTheApp:completion:)`` keeps the copy of what
    /// it stored; an extension calls that.
    ///
    /// - Returns: how many entries of both kinds were added.
    /// - Throws: `BlocklistError` if a shard cannot be read or is too large; the request is then
    ///   not completed (cancel it with the error).
    /// - Complexity: O(entries) time (O(runs) for unchanged runs of a diff), fixed memory: the
    ///   readers' buffers, about 80 KiB each.
    @discardableResult
    public static func load(
        shardAt path: String,
        previousShardAt previousPath: String? = nil,
        into context: some CallDirectoryContext,
        capacity: Int64 = BlockSpec.defaultCapacity,
        completionHandler: (@Sendable (_ expired: Bool) -> Void)? = nil
    ) throws(BlocklistError) -> Int64 {
        let reader = try ShardReader(path: path)
        try reader.checkCapacity(capacity)
        var added: Int64 = 0
        if context.isIncremental, let previousPath {
            let previousReader = try ShardReader(path: previousPath)
            // Another extension's shard would make the diff remove numbers never stored and add
            // numbers already stored.
            guard previousReader.header.shardIndex == reader.header.shardIndex else {
                throw BlocklistError(
                    .wrongShard,
                    "\(previousPath) is shard \(previousReader.header.shardIndex), not shard \(reader.header.shardIndex) like \(path); it cannot be what this extension loaded last time, and nothing was sent."
                )
            }
            let previous = ShardRuns(previousReader)
            let current = ShardRuns(reader)
            var diff = RunDiff(old: previous, new: current)
            while let change = diff.next() {
                switch change {
                case .remove(let run):
                    for number in run.start...run.last { context.removeBlockingEntry(withPhoneNumber: number) }
                case .add(let run):
                    for number in run.start...run.last {
                        context.addBlockingEntry(withNextSequentialPhoneNumber: number)
                    }
                    added += run.count
                }
            }
            if let error = previous.error ?? current.error { throw error }
            // Identification entries: a changed label is a removal and an addition.
            var labelDiff = try IdentificationDiff(old: previous.reader, new: reader)
            let labels = try reader.readLabels().map { String(decoding: $0, as: UTF8.self) }
            while let change = try labelDiff.next() {
                switch change {
                case .remove(let run):
                    for number in run.start...run.last { context.removeIdentificationEntry(withPhoneNumber: number) }
                case .add(let run, let label):
                    for number in run.start...run.last {
                        context.addIdentificationEntry(withNextSequentialPhoneNumber: number, label: labels[label])
                    }
                    added += run.count
                }
            }
        } else {
            if context.isIncremental {
                context.removeAllBlockingEntries()
                context.removeAllIdentificationEntries()
            }
            while let number = try reader.next() {
                context.addBlockingEntry(withNextSequentialPhoneNumber: number)
            }
            let labels = try reader.readLabels().map { String(decoding: $0, as: UTF8.self) }
            while let (run, label) = try reader.nextIdentificationRun() {
                for number in run.start...run.last {
                    context.addIdentificationEntry(withNextSequentialPhoneNumber: number, label: labels[label])
                }
            }
            added = reader.entriesRead + reader.identificationEntriesReadSoFar
        }
        context.completeRequest(completionHandler: completionHandler)
        return added
    }
}
