import BlocklistCore
import CallKit

/// A Call Directory extension's principal class: reloads the shard its Info.plist names.
/// `ShardLoader.reload` keeps `loaded/NAME` equal to what CallKit stores, so that an incremental
/// request sends only the differences.
final class CallDirectoryHandler: CXCallDirectoryProvider {
    override func beginRequest(with context: CXCallDirectoryExtensionContext) {
        var settings: ExtensionSettings?
        do {
            let current = try ExtensionSettings.current()
            settings = current
            guard let name = current.shardName else {
                throw SettingsError("The extension's Info.plist has no BlocklistShard; blocklist xcodegen writes it.")
            }
            try current.makeLoadedDirectory()
            try ShardLoader.reload(
                installedShardAt: current.installedShard(name),
                loadedCopyAt: current.loadedShard(name),
                into: CallKitCalls(context),
                wholeLoadsWaitForTheApp: true
            ) { outcome in
                if let failure = outcome.recordingFailure { current.recordFailure(failure, source: name) }
            }
        } catch {
            settings?.recordFailure(error, source: settings?.shardName ?? "CallDirectory")
            context.cancelRequest(withError: error)
        }
    }
}

/// CallKit's context as BlocklistCore's loader calls it: each call forwarded as it is.
struct CallKitCalls: CallDirectoryContext {
    let context: CXCallDirectoryExtensionContext
    init(_ context: CXCallDirectoryExtensionContext) { self.context = context }

    var isIncremental: Bool { context.isIncremental }
    func addBlockingEntry(withNextSequentialPhoneNumber n: Int64) {
        context.addBlockingEntry(withNextSequentialPhoneNumber: n)
    }
    func removeBlockingEntry(withPhoneNumber n: Int64) { context.removeBlockingEntry(withPhoneNumber: n) }
    func removeAllBlockingEntries() { context.removeAllBlockingEntries() }
    func addIdentificationEntry(withNextSequentialPhoneNumber n: Int64, label: String) {
        context.addIdentificationEntry(withNextSequentialPhoneNumber: n, label: label)
    }
    func removeIdentificationEntry(withPhoneNumber n: Int64) { context.removeIdentificationEntry(withPhoneNumber: n) }
    func removeAllIdentificationEntries() { context.removeAllIdentificationEntries() }
    func completeRequest(completionHandler completion: (@Sendable (Bool) -> Void)?) {
        context.completeRequest(completionHandler: completion)
    }
}
