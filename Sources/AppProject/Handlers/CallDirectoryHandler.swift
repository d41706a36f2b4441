import BlocklistCore
import CallKit

// CallKit's context meets BlocklistCore's protocol here, in the app: `@retroactive` says so (both
// types come from other modules).
// swift-format-ignore: AvoidRetroactiveConformances
extension CXCallDirectoryExtensionContext: @retroactive CallDirectoryContext {}

/// A Call Directory extension's principal class: loads the shard its Info.plist names.
final class CallDirectoryHandler: CXCallDirectoryProvider {
    override func beginRequest(with context: CXCallDirectoryExtensionContext) {
        do {
            let settings = try ExtensionSettings.current()
            guard let name = settings.shardName else {
                throw SettingsError("The extension's Info.plist has no BlocklistShard; blocklist xcodegen writes it.")
            }
            let shard = settings.installedShard(name)
            let previous = settings.loadedShard(name)
            try ShardLoader.load(
                shardAt: shard,
                previousShardAt: FileManager.default.fileExists(atPath: previous) ? previous : nil,
                into: context
            ) { accepted in
                // Only after the system accepted the request: CallKit now holds this shard.
                if accepted { try? settings.replace(previous, withCopyOf: shard) }
            }
        } catch {
            context.cancelRequest(withError: error)
        }
    }
}
