/// The calls a Call Directory extension makes on its request context, shaped like CallKit's
/// `CXCallDirectoryExtensionContext`, so the same handler code runs on a device and in the
/// simulator.
///
/// On iOS one line makes CallKit's context conform:
///
/// ```swift
/// extension CXCallDirectoryExtensionContext: CallDirectoryContext {}
/// ```
///
/// Numbers are `CXCallDirectoryPhoneNumber` values (`Int64`): country code and digits, no `+`.
public protocol CallDirectoryContext: AnyObject {
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
    /// Ends the request; the handler is told whether the system accepted it.
    func completeRequest(completionHandler: ((Bool) -> Void)?)
}

/// Streams one shard into a Call Directory context: the whole body of a blocking extension.
public enum ShardLoader {
    /// Adds every number of the shard at `path` to `context`, after removing what an incremental
    /// request has stored, then completes the request: blocking entries first, then identification
    /// entries, each label made into a `String` once.
    ///
    /// Opening the shard checks its checksums first, so a damaged file adds nothing; a shard that
    /// says it holds more than `capacity` numbers of either kind is refused before anything is added.
    ///
    /// - Returns: how many entries of both kinds were added.
    /// - Throws: `BlocklistError` if the shard cannot be read or is too large; the request is then
    ///   not completed.
    /// - Complexity: O(entries) time, fixed memory (the reader's buffers).
    @discardableResult
    public static func load(
        shardAt path: String,
        into context: some CallDirectoryContext,
        capacity: Int64 = BlockSpec.defaultCapacity,
        completionHandler: ((Bool) -> Void)? = nil
    ) throws(BlocklistError) -> Int64 {
        let reader = try ShardReader(path: path)
        try reader.checkCapacity(capacity)
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
        context.completeRequest(completionHandler: completionHandler)
        return reader.entriesRead + reader.identificationEntriesReadSoFar
    }
}
