import SetStorage

extension AppProject {
    /// The host app's source: when the App Group holds no whole set (the first launch, or a kill
    /// between an update's renames), it installs the set shipped in the app (and the SMS rules);
    /// whenever the installed generation is not the one CallKit last loaded (an update the
    /// Notification Service Extension applied), it asks CallKit to reload each extension; with
    /// `--trust` it registers for the pushes that carry updates. It uses SwiftUI, UIKit and
    /// CallKit's manager, which have no stand-ins here: unlike the handlers, this file is not
    /// compiled on this machine.
    static func appSource(_ manifest: Manifest, _ options: Options) -> String {
        let count = manifest.shards.count
        let identifiers = manifest.shards.map {
            "\"\(options.bundleIdentifier).\(callDirectoryTarget($0.index, of: count))\""
        }
        let pushes = options.root != nil
        return """
            import BlocklistCore
            import CallKit
            import SwiftUI
            import UpdateCore
            import UserNotifications

            @main
            struct \(options.name)App: App {
                /// The Call Directory extensions, one per shard.
                static let callDirectoryExtensions = [
                    \(identifiers.joined(separator: ",\n        "))
                ]
            \(pushes ? "    @UIApplicationDelegateAdaptor(PushRegistration.self) var pushRegistration\n" : "")
                init() {
                    Self.installShippedSet()
                    Self.reloadIfUpdated()
                }

                var body: some Scene {
                    WindowGroup {
                        Text("Turn the block lists on in Settings › Apps › Phone › Call Blocking & Identification.")
                            .padding()
                            // An update the Notification Service Extension applied while the app was
                            // in the background reaches CallKit when the app comes back.
                            .onReceive(NotificationCenter.default.publisher(for: UIApplication.willEnterForegroundNotification)) { _ in
                                Self.reloadIfUpdated()
                            }
                    }
                }

                /// When the App Group holds no whole set (the first launch, or an update killed between
                /// its renames): installs the shards shipped in Set/ as generation \(options.generation) (later
                /// generations come as updates to the Notification Service Extension) and copies the SMS
                /// rules.
                static func installShippedSet() {
                    guard let settings = try? ExtensionSettings.current(), !InstalledShards.isWhole(in: settings.path),
                        let shipped = Bundle.main.resourceURL?.appendingPathComponent("Set")
                    else { return }
                    do {
                        let shards = try FileManager.default.contentsOfDirectory(atPath: shipped.path)
                            .filter { $0.hasSuffix(".blk") }.sorted()
                        try InstalledShards.install(
                            shardsAt: shards.map { shipped.appendingPathComponent($0).path }, generation: \(options.generation), in: settings.path)
                        let rules = shipped.appendingPathComponent("rules.blsms")
                        if FileManager.default.fileExists(atPath: rules.path) {
                            try settings.replace(settings.rules, withCopyOf: rules.path)
                        }
                    } catch {
                        print("Installing the shipped block list failed: \\(error)")
                    }
                }

                /// Asks CallKit to reload each extension when the installed generation is not the one
                /// it last loaded: each extension then loads only its shard's differences.
                /// BlocklistCore's chain reloads them one at a time, as CallKit loads them, retrying
                /// what may pass and skipping what is turned off; the generation is recorded only when
                /// every enabled extension reloaded, so a failed one is tried again the next time.
                static func reloadIfUpdated() {
                    guard let settings = try? ExtensionSettings.current(),
                        let installed = try? InstalledShards.read(in: settings.path)
                    else { return }
                    let key = "blocklistLoadedGeneration"
                    guard UserDefaults.standard.object(forKey: key) as? UInt64 != installed.generation else { return }
                    Task {
                        let report = await CallDirectoryReloadChain(identifiers: callDirectoryExtensions)
                            .run(using: CallKitManager())
                        if report.isComplete { UserDefaults.standard.set(installed.generation, forKey: key) }
                    }
                }
            }
            \(pushes ? Self.pushRegistration : "")
            """
    }

    /// The app delegate that registers for the pushes the Notification Service Extension opens.
    static let pushRegistration = """

        /// Registers for remote notifications: the pushes `blocklist push payload` makes reach the
        /// Notification Service Extension, which applies them. iOS runs the extension only for a
        /// notification it may show, so the app asks to show alerts.
        final class PushRegistration: NSObject, UIApplicationDelegate {
            func application(
                _ application: UIApplication,
                didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
            ) -> Bool {
                UNUserNotificationCenter.current().requestAuthorization(options: [.alert]) { _, _ in }
                application.registerForRemoteNotifications()
                return true
            }

            func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken token: Data) {
                // Send the token to the server that sends your pushes (APNs needs it to reach this phone).
            }
        }

        """
}
