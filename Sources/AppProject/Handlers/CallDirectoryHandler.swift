import BlocklistCore
import CallKit

/// A Call Directory extension's principal class: reloads the shard its Info.plist names.
/// `ShardLoader.reload` keeps `loaded/NAME` equal to what CallKit stores, so that an incremental
/// request sends only the differences.
final class CallDirectoryHandler: CXCallDirectoryProvider {
    override func beginRequest(with context: CXCallDirectoryExtensionContext) {
        do {
            let settings = try ExtensionSettings.current()
            guard let name = settings.shardName else {
                throw SettingsError("The extension's Info.plist has no BlocklistShard; blocklist xcodegen writes it.")
            }
            try settings.makeLoadedDirectory()
            try ShardLoader.reload(
                installedShardAt: settings.installedShard(name),
                loadedCopyAt: settings.loadedShard(name),
                into: CallKitCalls(context)
            )
        } catch {
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
