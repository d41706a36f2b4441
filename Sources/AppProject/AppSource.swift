import SetStorage

extension AppProject {
    /// The host app's source: at launch it installs the set shipped in the app when the App
    /// Group holds no whole set or an older one (and the SMS rules, when they changed); whenever
    /// it comes to the foreground it catches up from the publication (with `--publication-url`,
    /// also in a background refresh) and asks CallKit to reload each extension that does not hold
    /// its installed shard, one at a time, showing each extension's state in Settings with a
    /// button that opens them, the reloads with the time left, and the failures the extensions
    /// recorded; with `--trust` it registers for the pushes that carry updates. Every decision is
    /// UpdateCore's or BlocklistCore's. It uses SwiftUI, UIKit and BackgroundTasks, which have no
    /// stand-ins here: unlike the handlers, this file is not compiled on this machine.
    static func appSource(_ manifest: Manifest, _ options: Options) -> String {
        let pushes = options.root != nil
        let catchUp = options.publicationURL != nil
        return """
            import BackgroundTasks
            import BlocklistCore
            import CallKit
            import SwiftUI
            import UpdateCore
            import UserNotifications

            @main
            struct \(options.name)App: App {
                @UIApplicationDelegateAdaptor(AppDelegate.self) var delegate
                @StateObject private var lists = Lists()

                var body: some Scene {
                    WindowGroup {
                        ListsView(lists: lists)
                            .task { await lists.refresh() }
                            // An update the Notification Service Extension applied, or one the app
                            // missed, reaches CallKit whenever the app comes back to the foreground.
                            .onReceive(NotificationCenter.default.publisher(for: UIApplication.willEnterForegroundNotification)) { _ in
                                Task { await lists.refresh() }
                            }
                    }
                }
            }

            /// What the app does, each step BlocklistCore's or UpdateCore's; nothing here decides.
            enum AppWork {
                /// The bundle's Set/ folder: the shards shipped as generation \(options.generation.map(String.init) ?? "1"), the SMS rules, the root.
                static let shipped = Bundle.main.resourceURL!.appendingPathComponent("Set")

                /// Installs the shipped set when the App Group holds no whole one or an older one,
                /// after finishing an update a kill interrupted; and the rules, when they changed.
                static func installShipped(in settings: ExtensionSettings) throws {
                    let shards = try FileManager.default.contentsOfDirectory(atPath: shipped.path)
                        .filter { $0.hasSuffix(".blk") }.sorted().map { shipped.appendingPathComponent($0).path }
                    try InstalledShards.installIfNeeded(shippedShardsAt: shards, generation: \(options.generation ?? 1), in: settings.path)
                    let rules = shipped.appendingPathComponent("rules.blsms").path
                    if FileManager.default.fileExists(atPath: rules) {
                        try AppGroupLayout.installRules(copying: rules, in: settings.path)
                    }
                }

                /// Brings the set to the publication's newest generation, shard by shard when the
                /// phone missed more generations than the publisher keeps. Blocks: not on the main
                /// thread.
                static func catchUp(in settings: ExtensionSettings) -> UpdateOutcome? {
                    guard let publication = ExtensionSettings.info("BlocklistPublication"),
                        let trust = try? Data(contentsOf: shipped.appendingPathComponent("root.json"))
                    else { return nil }
                    let base = publication.hasSuffix("/") ? publication : publication + "/"
                    return InstalledShards.catchUp(trust: [UInt8](trust), now: Int64(Date().timeIntervalSince1970), in: settings.path) {
                        path, limit, optional in
                        try URLSession.fetchWaiting(base + path, limit: limit, optional: optional)
                    }
                }
            }

            /// Registers the background refresh that catches up\(pushes ? ", and the pushes that carry updates" : "").
            final class AppDelegate: NSObject, UIApplicationDelegate {
                nonisolated static let catchUpTask = "\(options.bundleIdentifier).catch-up"

                func application(
                    _ application: UIApplication,
                    didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
                ) -> Bool {
                    if let settings = try? ExtensionSettings.current() {
                        do { try AppWork.installShipped(in: settings) } catch {
                            ExtensionSettings.recordFailure(error, source: "app", in: settings)
                        }
                    }
            \(catchUp ? Self.backgroundRefresh : "")\(pushes ? Self.pushRegistration : "")
                    return true
                }
            \(pushes ? Self.tokenHandling : "")\(catchUp ? Self.scheduling : "")
            }

            /// What the app shows: each extension's state in Settings, the reloads while they run,
            /// and what the extensions could not do.
            @MainActor final class Lists: ObservableObject {
                @Published var statuses: [CallDirectoryEnabledStatus] = []
                @Published var progress: CallDirectoryReloadChain.Progress?
                @Published var failures: [ExtensionFailures.Entry] = []
                /// When the reloads running now started, for the time left.
                @Published var started = Date()
                private var refreshing = false

                /// Catches up from the publication, then asks CallKit to reload, one at a time,
                /// each extension that is on and does not hold its installed shard: after an update,
                /// only its differences; an extension just turned on in Settings, its whole shard
                /// (its handler left that to the app, where the progress shows).
                func refresh() async {
                    guard !refreshing, let settings = try? ExtensionSettings.current() else { return }
                    refreshing = true
                    defer { refreshing = false }
                    let extensions = ExtensionSettings.callDirectoryExtensions
                    statuses = await CallDirectoryReloadChain(identifiers: extensions).enabledStatuses(using: CallKitManager())
                    failures = ExtensionFailures.read(in: settings.path)
                    _ = await Task.detached { AppWork.catchUp(in: settings) }.value
                    guard let installed = try? InstalledShards.read(in: settings.path) else { return }
                    started = Date()
                    // Each step on the main actor, in order, before the reload returns.
                    let reload = await installed.reloadCallKit(extensions: extensions, using: CallKitManager(), in: settings.path) { step in
                        await MainActor.run { self.progress = step }
                    }
                    progress = nil
                    statuses = reload.statuses
                    if let problem = reload.problem {
                        ExtensionSettings.recordFailure(SettingsError(problem), source: "app", in: settings)
                    }
                    failures = ExtensionFailures.read(in: settings.path)
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

            """
    }

    /// Registers the background refresh task (BackgroundTasks: registered before launching ends).
    static let backgroundRefresh = """
                // On the main queue: this closure is the main actor's, as the delegate is.
                BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.catchUpTask, using: .main) { task in
                    // The handler is not @Sendable; the task is used by this closure and the one below.
                    nonisolated(unsafe) let task = task
                    Self.scheduleCatchUp()
                    let work = Task.detached {
                        guard let settings = try? ExtensionSettings.current() else { return }
                        _ = AppWork.catchUp(in: settings)
                        // Whatever the catch-up did (an update, or one a kill interrupted and
                        // it finished), only the extensions that do not hold their shard reload.
                        guard let installed = try? InstalledShards.read(in: settings.path) else { return }
                        // Only differences: a whole load waits for the app, in the foreground.
                        _ = await installed.reloadCallKit(
                            extensions: ExtensionSettings.callDirectoryExtensions, using: CallKitManager(),
                            incrementalOnly: true, in: settings.path)
                    }
                    // Not the main actor's: iOS may call it on any queue.
                    task.expirationHandler = { @Sendable in work.cancel() }
                    Task { await work.value; task.setTaskCompleted(success: !work.isCancelled) }
                }
                Self.scheduleCatchUp()

        """

    /// Asks for the next background refresh.
    static let scheduling = """

            /// At most one refresh request is pending; iOS chooses when it runs.
            nonisolated static func scheduleCatchUp() {
                let request = BGAppRefreshTaskRequest(identifier: catchUpTask)
                request.earliestBeginDate = Date(timeIntervalSinceNow: 6 * 3600)
                try? BGTaskScheduler.shared.submit(request)
            }

        """

    /// Registers for the pushes the Notification Service Extension opens: iOS runs the
    /// extension only for a notification it may show, so the app asks to show alerts.
    static let pushRegistration = """
                UNUserNotificationCenter.current().requestAuthorization(options: [.alert]) { _, _ in }
                application.registerForRemoteNotifications()

        """

    /// The device token, for the server that sends the pushes.
    static let tokenHandling = """

            func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken token: Data) {
                // Send the token to the server that sends your pushes (APNs needs it to reach this phone).
            }

        """
}
