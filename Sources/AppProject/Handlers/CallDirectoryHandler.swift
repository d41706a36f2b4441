import BlocklistCore
import CallKit

/// A Call Directory extension's principal class: BlocklistCore's `ShardLoader.reload` loads the
/// shard its Info.plist names, keeping `loaded/NAME` equal to what CallKit stores, so that an
/// incremental request sends only the differences. Whole loads wait for the app. A request CallKit
/// fails (one started in Settings, too) is recorded for the app.
final class CallDirectoryHandler: CXCallDirectoryProvider, CXCallDirectoryExtensionContextDelegate {
    override func beginRequest(with context: CXCallDirectoryExtensionContext) {
        context.delegate = self
        let name = ExtensionSettings.info("BlocklistShard") ?? "CallDirectory"
        var settings: ExtensionSettings?
        do {
            settings = try ExtensionSettings.current()
            guard let settings, ExtensionSettings.info("BlocklistShard") != nil else {
                throw SettingsError("The extension's Info.plist has no BlocklistShard; blocklist xcodegen writes it.")
            }
            try ShardLoader.reload(
                installedShardAt: AppGroupLayout.installedShard(name, in: settings.path),
                loadedCopyAt: AppGroupLayout.loadedCopy(name, in: settings.path),
                into: CallKitCalls(context: context),
                wholeLoadsWaitForTheApp: true
            ) { outcome in
                if let failure = outcome.recordingFailure {
                    ExtensionSettings.recordFailure(failure, source: name, in: settings)
                }
            }
        } catch {
            ExtensionSettings.recordFailure(error, source: name, in: settings)
            context.cancelRequest(withError: error)
        }
    }

    func requestFailed(for extensionContext: CXCallDirectoryExtensionContext, withError error: any Error) {
        let name = ExtensionSettings.info("BlocklistShard") ?? "CallDirectory"
        ExtensionSettings.recordFailure(error, source: name, in: try? ExtensionSettings.current())
    }
}

/// CallKit's context as BlocklistCore's loader calls it: each call forwarded as it is.
struct CallKitCalls: CallDirectoryContext {
    let context: CXCallDirectoryExtensionContext
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
