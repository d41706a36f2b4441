import SetStorage

extension AppProject {
    /// The host app's source: when the App Group holds no whole set (the first launch, or a kill
    /// between an update's renames), it installs the set shipped in the app (and the SMS rules);
    /// it shows each extension's state in Settings with a button that opens them, the reloads
    /// with the time left while they run, and the failures the extensions recorded; whenever
    /// the installed generation is not the one CallKit last loaded (an update the Notification
    /// Service Extension applied), it asks CallKit to reload each extension, one at a time; with
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
                @StateObject private var lists = Lists()

                init() {
                    Self.installShippedSet()
                }

                var body: some Scene {
                    WindowGroup {
                        ListsView(lists: lists)
                            .task { await lists.refresh() }
                            // An update the Notification Service Extension applied while the app was
                            // in the background reaches CallKit when the app comes back.
                            .onReceive(NotificationCenter.default.publisher(for: UIApplication.willEnterForegroundNotification)) { _ in
                                Task { await lists.refresh() }
                            }
                    }
                }

                /// When the App Group holds no whole set (the first launch, or an update killed between
                /// its renames): installs the shards shipped in Set/ as generation \(options.generation) (later
                /// generations come as updates to the Notification Service Extension) and copies the SMS
                /// rules.
                static func installShippedSet() {
                    guard let settings = try? ExtensionSettings.current(),
                        let shipped = Bundle.main.resourceURL?.appendingPathComponent("Set")
                    else { return }
                    do {
                        if !InstalledShards.isWhole(in: settings.path) {
                            let shards = try FileManager.default.contentsOfDirectory(atPath: shipped.path)
                                .filter { $0.hasSuffix(".blk") }.sorted()
                            try InstalledShards.install(
                                shardsAt: shards.map { shipped.appendingPathComponent($0).path }, generation: \(options.generation), in: settings.path)
                        }
                        // Rules shipped with a newer version of the app reach those who had the older.
                        let rules = shipped.appendingPathComponent("rules.blsms")
                        if FileManager.default.fileExists(atPath: rules.path),
                            !FileManager.default.contentsEqual(atPath: rules.path, andPath: settings.rules)
                        {
                            try settings.replace(settings.rules, withCopyOf: rules.path)
                        }
                    } catch {
                        print("Installing the shipped block list failed: \\(error)")
                    }
                }
            }

            /// What the app shows: each extension's state in Settings, the reloads while they run,
            /// and what the extensions could not do. The logic is BlocklistCore's and UpdateCore's.
            @MainActor final class Lists: ObservableObject {
                @Published var statuses: [CallDirectoryEnabledStatus] = []
                @Published var progress: CallDirectoryReloadChain.Progress?
                @Published var failures: [ExtensionFailures.Entry] = []
                /// When the reloads running now started, for the time left.
                @Published var started = Date()
                private var reloading = false
                let chain = CallDirectoryReloadChain(identifiers: \(options.name)App.callDirectoryExtensions)

                /// Reads the extensions' states and failures, and reloads CallKit when the installed
                /// generation is not the one it last loaded (each extension then loads only its shard's
                /// differences, one at a time), or loads the extensions turned on that hold nothing
                /// yet. The generation is recorded only when every enabled extension reloaded, so a
                /// failed one is tried again the next time.
                func refresh() async {
                    statuses = await chain.enabledStatuses(using: CallKitManager())
                    guard let settings = try? ExtensionSettings.current() else { return }
                    failures = ExtensionFailures.read(in: settings.path)
                    let key = "blocklistLoadedGeneration"
                    guard !reloading, let installed = try? InstalledShards.read(in: settings.path) else { return }
                    // Extensions turned on in Settings load here, with their progress shown, not in
                    // Settings (their handlers send nothing until the app asks).
                    let waiting = chain.awaitingWholeLoad(
                        statuses: statuses, loadedCopies: installed.names.map(settings.loadedShard))
                    let updated = UserDefaults.standard.object(forKey: key) as? UInt64 != installed.generation
                    guard updated || !waiting.identifiers.isEmpty else { return }
                    reloading = true
                    started = Date()
                    let report = await (updated ? chain : waiting).run(using: CallKitManager()) { step in
                        Task { @MainActor in self.progress = step }
                    }
                    reloading = false
                    progress = nil
                    failures = ExtensionFailures.read(in: settings.path)
                    statuses = await chain.enabledStatuses(using: CallKitManager())
                    // Recorded only when every extension that is on holds the installed shard: a
                    // request CallKit reported expired leaves the copy of what it held before.
                    if updated && report.isComplete && installed.isLoaded(statuses: statuses, in: settings.path) {
                        UserDefaults.standard.set(installed.generation, forKey: key)
                    }
                }
            }

            struct ListsView: View {
                @ObservedObject var lists: Lists

                var body: some View {
                    List {
                        Section("Block lists") {
                            ForEach(Array(lists.statuses.enumerated()), id: \\.offset) { index, status in
                                LabeledContent("List \\(index + 1)", value: status == .enabled ? "On" : status == .disabled ? "Off" : "…")
                            }
                            Button("Open Settings") {
                                Task { try? await CXCallDirectoryManager.sharedInstance.openSettings() }
                            }
                        }
                        if let progress = lists.progress {
                            Section("Updating") {
                                let perList = Date().timeIntervalSince(lists.started) / Double(max(progress.done, 1))
                                let left = Int(perList * Double(progress.total - progress.done) / 60) + 1
                                ProgressView(value: Double(progress.done), total: Double(progress.total)) {
                                    Text("\\(progress.done) of \\(progress.total) lists, about \\(left) min left")
                                }
                            }
                        }
                        if !lists.failures.isEmpty {
                            Section("Problems") {
                                ForEach(Array(lists.failures.enumerated().reversed()), id: \\.offset) { _, failure in
                                    Text(failure.sentence).font(.footnote)
                                }
                                Button("Clear") {
                                    if let settings = try? ExtensionSettings.current() {
                                        ExtensionFailures.clear(in: settings.path)
                                    }
                                    lists.failures = []
                                }
                            }
                        }
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
