import SetStorage

extension AppProject {
    /// The host app's source: at first launch it installs the set shipped in the app (and the
    /// SMS rules) into the App Group and asks CallKit to load each extension. It uses SwiftUI and
    /// CallKit's manager, which have no stand-ins here: unlike the handlers, this file is not
    /// compiled on this machine.
    static func appSource(_ manifest: Manifest, _ options: Options) -> String {
        let count = manifest.shards.count
        let identifiers = manifest.shards.map {
            "\"\(options.bundleIdentifier).\(callDirectoryTarget($0.index, of: count))\""
        }
        return """
            import CallKit
            import SwiftUI

            @main
            struct \(options.name)App: App {
                /// The Call Directory extensions, one per shard.
                static let callDirectoryExtensions = [
                    \(identifiers.joined(separator: ",\n        "))
                ]

                init() { Self.installShippedSet() }

                var body: some Scene {
                    WindowGroup {
                        Text("Turn the block lists on in Settings › Apps › Phone › Call Blocking & Identification.")
                            .padding()
                    }
                }

                /// At first launch: installs the shards shipped in Set/ as generation \(options.generation) (later
                /// generations come as updates to the Notification Service Extension), copies the SMS
                /// rules, and asks CallKit to load each extension.
                static func installShippedSet() {
                    guard let settings = try? ExtensionSettings.current(),
                        !FileManager.default.fileExists(atPath: settings.installedRecord.path),
                        let shipped = Bundle.main.resourceURL?.appendingPathComponent("Set")
                    else { return }
                    do {
                        try FileManager.default.createDirectory(
                            at: settings.directory.appendingPathComponent("shards"), withIntermediateDirectories: true)
                        let shards = try FileManager.default.contentsOfDirectory(atPath: shipped.path)
                            .filter { $0.hasSuffix(".blk") }.sorted()
                        try InstalledSet.install(
                            shardsAt: shards.map { shipped.appendingPathComponent($0).path }, generation: \(options.generation), settings)
                        let rules = shipped.appendingPathComponent("rules.blsms")
                        if FileManager.default.fileExists(atPath: rules.path) {
                            try settings.replace(settings.rules, withCopyOf: rules.path)
                        }
                    } catch {
                        print("Installing the shipped block list failed: \\(error)")
                        return
                    }
                    for identifier in callDirectoryExtensions {
                        CXCallDirectoryManager.sharedInstance.reloadExtension(withIdentifier: identifier) { _ in }
                    }
                }
            }

            """
    }
}
