import TestSupport

#if canImport(ExtensionHandlers)
    import AppGroupContainers
    import AppProject
    import BlocklistCore
    import CallKit
    @testable import ExtensionHandlers
    import IdentityLookup
    import MessageFilterCore
    import SetReading
    import SetStorage
    import Testing
    import UpdateCore
    import UserNotifications
    import LoggerStandIn

    /// What CallKit stores for one Call Directory extension, with the rules its documentation
    /// gives (docs/PLATFORM.md): a request's changes are kept only when it completes without
    /// expiring; a non-incremental request starts from nothing; removals are for incremental
    /// requests; additions come in strictly ascending order and are not already stored.
    final class CallKitStore {
        var numbers: Set<Int64> = []
    }

    /// CallKit's manager for one extension, as the app and the Notification Service Extension
    /// call it: every extension is on, and a reload runs the handler with a request that is
    /// incremental once the store was loaded (expiring while `expires` is set).
    final class ReloadingManager: CXCallDirectoryManager, @unchecked Sendable {
        let store: CallKitStore
        var expires = false
        var loadedOnce = false
        var requests: [RecordingContext] = []
        init(store: CallKitStore) { self.store = store }

        override func reloadExtension(
            withIdentifier identifier: String,
            completionHandler completion: (@Sendable ((any Error)?) -> Void)? = nil
        ) {
            let context = RecordingContext(incremental: loadedOnce, store: store, expires: expires)
            requests.append(context)
            CallDirectoryHandler().beginRequest(with: context)
            loadedOnce = loadedOnce || (context.completed && !expires)
            completion?(context.cancelled)
        }
        override func getEnabledStatusForExtension(
            withIdentifier identifier: String,
            completionHandler completion:
                @escaping @Sendable (CXCallDirectoryManager.EnabledStatus, (any Error)?) -> Void
        ) {
            completion(.enabled, nil)
        }
    }

    /// The notification the Notification Service Extension delivers for `content`.
    func deliver(_ content: UNNotificationContent, _ identifier: String) async -> UNNotificationContent {
        /// The content crosses from the extension's task to the test once, and is not shared.
        struct Delivered: @unchecked Sendable { let content: UNNotificationContent }
        return await withCheckedContinuation { continuation in
            NotificationService().didReceive(UNNotificationRequest(identifier: identifier, content: content)) {
                continuation.resume(returning: Delivered(content: $0))
            }
        }.content
    }

    /// A Call Directory context that records what the handler sends and applies it to `store` as
    /// CallKit would, unless `expires`: then the completion says expired and nothing is stored.
    final class RecordingContext: CXCallDirectoryExtensionContext {
        let incremental: Bool
        let store: CallKitStore
        let expires: Bool
        var added: [Int64] = []
        var removed: [Int64] = []
        var removedAll = 0
        var completed = false
        var expiredReported: Bool?
        var cancelled: Error?
        /// Breaks of CallKit's rules, which would fail the request on a device.
        var violations: [String] = []
        private var pending: Set<Int64>

        init(incremental: Bool, store: CallKitStore = CallKitStore(), expires: Bool = false) {
            self.incremental = incremental
            self.store = store
            self.expires = expires
            pending = incremental ? store.numbers : []
        }

        override var isIncremental: Bool { incremental }
        override func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {
            if let last = added.last, phoneNumber <= last { violations.append("\(phoneNumber) after \(last)") }
            if pending.contains(phoneNumber) { violations.append("\(phoneNumber) is already stored") }
            added.append(phoneNumber)
            pending.insert(phoneNumber)
        }
        override func removeBlockingEntry(withPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {
            if !incremental { violations.append("a removal in a request that is not incremental") }
            removed.append(phoneNumber)
            pending.remove(phoneNumber)
        }
        override func removeAllBlockingEntries() {
            if !incremental { violations.append("removeAll in a request that is not incremental") }
            removedAll += 1
            pending.removeAll()
        }
        override func completeRequest(completionHandler completion: (@Sendable (Bool) -> Void)? = nil) {
            completed = true
            if !expires { store.numbers = pending }
            expiredReported = expires
            completion?(expires)
        }
        override func cancelRequest(withError error: Error) { cancelled = error }
    }

    /// What a `@Sendable` completion hands back, kept under a lock.
    final class Answer<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    /// A Message Filter context whose server answers `answer`.
    final class AnsweringContext: ILMessageFilterExtensionContext, @unchecked Sendable {
        let answer: Data
        var deferred = 0
        init(answer: String) { self.answer = Data(answer.utf8) }
        override func deferQueryRequestToNetwork(
            completion: @escaping @Sendable (ILNetworkResponse?, (any Error)?) -> Void
        ) {
            deferred += 1
            completion(ILNetworkResponse(data: answer), nil)
        }
    }

    /// The handler sources an app compiles (Sources/AppProject/Handlers), run here against
    /// stand-ins for the iOS SDK on files the tools made, the docs' listings held to them, and
    /// the project spec `blocklist xcodegen` writes held to its manifest.
    @Suite(.serialized) struct AppProjectTests {
        static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path

        /// A set, a second generation published as an inline push, and compiled SMS rules.
        @Test func theHandlersRunAsAnAppsExtensionsRunThem() async throws {
            let dir = try TemporaryDirectory()
            var random = SplitMix64(state: 28)
            var first = Set<Int64>()
            while first.count < 5000 { first.insert(827_000_000_000 + Int64(random.next() % 100_000_000)) }
            var second = Set(first.sorted().dropFirst(7))
            while second.count < 5018 { second.insert(827_000_000_000 + Int64(random.next() % 100_000_000)) }
            try Data(first.sorted().map { "+\($0)\n" }.joined().utf8).write(to: URL(fileURLWithPath: dir.file("a.txt")))
            try Data(second.sorted().map { "+\($0)\n" }.joined().utf8).write(
                to: URL(fileURLWithPath: dir.file("b.txt"))
            )

            func run(_ arguments: [String]) throws -> String {
                let result = try runBlocklist(arguments, in: dir.path)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                return result.stdout
            }
            _ = try run(["generate", "--numbers", "a.txt", "-o", "set", "--no-sync"])
            let manifest = try Manifest.load(from: dir.file("set"))
            try FileManager.default.createDirectory(atPath: dir.file("shipped"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: manifest.path(of: manifest.shards[0], in: dir.file("set")),
                toPath: dir.file("shipped/shard-01.blk")
            )
            _ = try run(["keys", "create", "keys"])
            _ = try run(["publish", "set", "--key", "keys/signing.key", "--to", "pub"])
            _ = try run(["generate", "--numbers", "b.txt", "-o", "set", "--no-sync"])
            _ = try run(["publish", "set", "--key", "keys/signing.key", "--to", "pub"])
            let payload = try run(["push", "payload", "--from", "pub", "--key", "keys/signing.key"])
            _ = try run(["sms", "compile", Self.packageRoot + "/docs/examples/sms-rules.json", "-o", "rules"])

            // The extension's bundle: its Info.plist (as blocklist xcodegen writes it) and resources.
            try FileManager.default.createDirectory(atPath: dir.file("bundle"), withIntermediateDirectories: true)
            let plist: [String: Any] = [
                "BlocklistAppGroup": "group.com.example.test", "BlocklistShard": "shard-01.blk",
                "BlocklistCallDirectoryExtensions": "com.example.CallDirectory01",
            ]
            try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
                .write(to: URL(fileURLWithPath: dir.file("bundle/Info.plist")))
            try FileManager.default.copyItem(atPath: dir.file("keys/root.json"), toPath: dir.file("bundle/root.json"))
            try FileManager.default.copyItem(atPath: dir.file("keys/push.key"), toPath: dir.file("bundle/push.key"))
            ExtensionSettings.bundle = try #require(Bundle(path: dir.file("bundle")))
            AppGroupContainers.directories["group.com.example.test"] = URL(fileURLWithPath: dir.file("group"))
            defer { AppGroupContainers.directories = [:] }
            let settings = try ExtensionSettings.current()
            let loadedCopy = AppGroupLayout.loadedCopy("shard-01.blk", in: settings.path)
            let installedShard = AppGroupLayout.installedShard("shard-01.blk", in: settings.path)

            // The app installs the set it ships.
            let shipped = [dir.file("shipped/shard-01.blk")]
            #expect(
                try InstalledShards.installIfNeeded(shippedShardsAt: shipped, generation: 1, in: settings.path)
                    .installedNow
            )
            let store = CallKitStore()
            let manager = ReloadingManager(store: store)
            let saved = CXCallDirectoryManager.standInShared
            CXCallDirectoryManager.standInShared = manager
            defer { CXCallDirectoryManager.standInShared = saved }
            // The user turns the extension on in Settings: its whole load waits for the app, and
            // Settings does not wait for it.
            let fromSettings = RecordingContext(incremental: false, store: store)
            CallDirectoryHandler().beginRequest(with: fromSettings)
            #expect(fromSettings.completed && fromSettings.cancelled == nil && fromSettings.added.isEmpty)
            #expect(store.numbers.isEmpty && !FileManager.default.fileExists(atPath: loadedCopy))
            // The app finds it on and holding nothing, asks for its whole load, and reloads it.
            let installed = try InstalledShards.read(in: settings.path)
            let opened = await installed.reloadCallKit(
                extensions: ExtensionSettings.callDirectoryExtensions,
                using: CallKitManager(),
                in: settings.path
            )
            #expect(opened.isLoaded && opened.report.outcomes.map(\.outcome) == [.reloaded])
            let whole = try #require(manager.requests.last)
            #expect(!whole.isIncremental && whole.cancelled == nil && whole.violations.isEmpty)
            #expect(whole.completed && whole.added == first.sorted() && store.numbers == first)
            #expect(FileManager.default.contentsEqual(atPath: loadedCopy, andPath: shipped[0]))
            // Loaded, nothing is reloaded again, and the app's mark is gone.
            let again = await installed.reloadCallKit(
                extensions: ExtensionSettings.callDirectoryExtensions,
                using: CallKitManager(),
                in: settings.path
            )
            #expect(again.isLoaded && again.report.outcomes.isEmpty && manager.requests.count == 1)
            #expect(!FileManager.default.fileExists(atPath: settings.path + "/loaded/.shard-01.blk.requested"))
            // A run killed before its renames left a new shard beside the installed one: the next
            // push is applied all the same.
            try Data("left by a killed run".utf8).write(
                to: URL(fileURLWithPath: settings.path + "/shards/.shard-01.blk.new")
            )

            // A push: the extension opens it, applies it (generation 2), and asks CallKit to
            // reload the extension. The reload sends only the difference (+25 −7), and CallKit
            // reports it expired: it stored nothing, so the loaded copy stays the first shard, and
            // the notification does not say the list is blocking.
            let userInfo = try #require(
                try JSONSerialization.jsonObject(with: Data(payload.split(separator: "\n")[0].utf8)) as? [String: Any]
            )
            let content = UNMutableNotificationContent()
            content.userInfo = userInfo
            manager.expires = true
            var delivered = await deliver(content, "push")
            #expect(
                delivered.body
                    == "Block list update ready: 1 of its lists changed. Open the app to start blocking with it.",
                "\(delivered.body)"
            )
            #expect(try InstalledShards.read(in: settings.path).generation == 2)
            #expect(try readNumbers(installedShard) == second.sorted())
            #expect(InstalledShards.isWhole(in: settings.path))
            #expect(!FileManager.default.fileExists(atPath: settings.path + "/shards/.shard-01.blk.new"))
            let expired = try #require(manager.requests.last)
            #expect(manager.requests.count == 2 && expired.isIncremental)
            #expect(expired.completed && expired.cancelled == nil && expired.expiredReported == true)
            #expect(expired.violations.isEmpty)
            #expect(expired.removedAll == 0 && expired.removed.count == 7 && expired.added.count == 25)
            #expect(store.numbers == first)
            #expect(try readNumbers(loadedCopy) == first.sorted())
            manager.expires = false

            // The reload after it diffs against what CallKit really holds, and is stored.
            let reload = RecordingContext(incremental: true, store: store)
            CallDirectoryHandler().beginRequest(with: reload)
            #expect(reload.completed && reload.cancelled == nil && reload.violations.isEmpty)
            #expect(reload.removedAll == 0)
            #expect(reload.removed == first.subtracting(second).sorted())
            #expect(reload.added == second.subtracting(first).sorted())
            #expect(store.numbers == second)
            #expect(try readNumbers(loadedCopy) == second.sorted())
            #expect(!FileManager.default.fileExists(atPath: settings.path + "/loaded/.shard-01.blk.loading"))

            // A request CallKit stored, killed before its copy was renamed: the copy is left, and
            // loaded/ still holds the first shard while CallKit holds the second. The next request
            // must not diff against loaded/; here it expires as well, and the one after it must
            // still send the whole shard.
            try FileManager.default.removeItem(atPath: loadedCopy)
            try FileManager.default.copyItem(atPath: dir.file("shipped/shard-01.blk"), toPath: loadedCopy)
            try Data("left by a killed request".utf8).write(
                to: URL(fileURLWithPath: settings.path + "/loaded/.shard-01.blk.loading")
            )
            let afterKill = RecordingContext(incremental: true, store: store, expires: true)
            CallDirectoryHandler().beginRequest(with: afterKill)
            #expect(afterKill.cancelled == nil && afterKill.violations.isEmpty)
            #expect(afterKill.removedAll == 1 && afterKill.added == second.sorted() && store.numbers == second)
            #expect(!FileManager.default.fileExists(atPath: loadedCopy))
            let afterThat = RecordingContext(incremental: true, store: store)
            CallDirectoryHandler().beginRequest(with: afterThat)
            #expect(afterThat.cancelled == nil && afterThat.violations.isEmpty, "\(afterThat.violations.prefix(3))")
            #expect(afterThat.removedAll == 1 && afterThat.added == second.sorted() && store.numbers == second)
            #expect(try readNumbers(loadedCopy) == second.sorted())
            #expect(!FileManager.default.fileExists(atPath: settings.path + "/loaded/.shard-01.blk.loading"))

            // The same push again finds the set current: the push's alert is left as it came.
            delivered = await deliver(content, "again")
            #expect(delivered.body == content.body)
            #expect(try InstalledShards.read(in: settings.path).generation == 2)
            // A push that cannot be opened: the notification speaks to people (no path, no
            // code), and the sentence goes to the app's list of problems.
            let damaged = UNMutableNotificationContent()
            damaged.userInfo = ["blocklist": ["inline": Data("not sealed".utf8).base64EncodedString()]]
            delivered = await deliver(damaged, "damaged")
            #expect(delivered.body == "Block list not updated. The app shows why; the next update tries again.")
            let recorded = try #require(ExtensionFailures.read(in: settings.path).last)
            #expect(recorded.source == "NotificationService" && !recorded.sentence.isEmpty)
            // An app made without --push-key has no push.key: an inline push is not an error
            // there; the extension goes to the signed URL (this push names none: unchanged).
            try FileManager.default.removeItem(atPath: dir.file("bundle/push.key"))
            ExtensionSettings.bundle = try #require(Bundle(path: dir.file("bundle")))
            delivered = await deliver(content, "no key")
            #expect(delivered.body == content.body, "\(delivered.body)")
            #expect(try InstalledShards.read(in: settings.path).generation == 2)

            // Messages: classified offline, or deferred when no rule decides.
            #expect(try AppGroupLayout.installRules(copying: dir.file("rules/rules.blsms"), in: settings.path))
            #expect(!(try AppGroupLayout.installRules(copying: dir.file("rules/rules.blsms"), in: settings.path)))
            func verdict(_ body: String, server: String) -> (ILMessageFilterAction, Int) {
                let context = AnsweringContext(answer: server)
                let action = Answer(ILMessageFilterAction.none)
                MessageFilterExtension().handle(
                    ILMessageFilterQueryRequest(sender: "+821012345678", messageBody: body),
                    context: context
                ) { action.value = $0.action }
                return (action.value, context.deferred)
            }
            // The server's sub-action reaches the response, as IdentityLookup numbers it.
            let subAction = Answer(ILMessageFilterSubAction.none)
            MessageFilterExtension().handle(
                ILMessageFilterQueryRequest(sender: "+821012345678", messageBody: "see you at five"),
                context: AnsweringContext(answer: #"{"action":"transaction","subAction":"transactionalFinance"}"#)
            ) { subAction.value = $0.subAction }
            #expect(subAction.value == .transactionalFinance)
            // Messages asks once which sub-actions the extension sorts into: every one.
            let answered = Answer(
                (transactional: [ILMessageFilterSubAction](), promotional: [ILMessageFilterSubAction]())
            )
            MessageFilterExtension().handle(
                ILMessageFilterCapabilitiesQueryRequest(),
                context: ILMessageFilterExtensionContext()
            ) { answered.value = ($0.transactionalSubActions, $0.promotionalSubActions) }
            let capabilities = answered.value
            #expect(capabilities.transactional.count == 9)
            #expect(capabilities.promotional.map(\.rawValue) == [20_000, 20_001, 20_002])
            #expect(capabilities.transactional.contains(.transactionalFinance))
            for (action, names) in DeferralResponse.subActions {
                for name in names {
                    let response = MessageFilterExtension.response(DeferralResponse(action: action, subAction: name))
                    #expect("\(response.subAction)" == name, "\(action) \(name)")
                }
            }
            #expect(verdict("Congratulations, you have won a car", server: #"{"action":"allow"}"#) == (.junk, 0))
            #expect(verdict("see you at five", server: #"{"action":"promotion"}"#) == (.promotion, 1))
            #expect(verdict("see you at five", server: #"{"action":"junk","action":"none"}"#) == (.none, 1))
            #expect(verdict("see you at five", server: "not json") == (.none, 1))

            // A shard that is not the one recorded (a kill between renames): the app reinstalls.
            try FileManager.default.removeItem(atPath: installedShard)
            try FileManager.default.copyItem(
                atPath: dir.file("shipped/shard-01.blk"),
                toPath: installedShard
            )
            #expect(!InstalledShards.isWhole(in: settings.path))

            // A request that fails is cancelled with its error, which the App Group keeps for the
            // app to show, with the extension that met it.
            try Data("not a shard".utf8).write(to: URL(fileURLWithPath: installedShard))
            let broken = RecordingContext(incremental: true, store: store)
            CallDirectoryHandler().beginRequest(with: broken)
            #expect(broken.cancelled != nil && !broken.completed && store.numbers == second)
            let failure = try #require(ExtensionFailures.read(in: settings.path).last)
            #expect(failure.source == "shard-01.blk" && failure.sentence == "\(broken.cancelled!)", "\(failure)")
            // A request CallKit fails (here one started in Settings) reaches the extension's
            // delegate, which records it for the app: Settings shows no reason.
            let handler = CallDirectoryHandler()
            let fromSettingsAgain = RecordingContext(incremental: false, store: store)
            handler.beginRequest(with: fromSettingsAgain)
            let delegate = try #require(fromSettingsAgain.delegate)
            delegate.requestFailed(
                for: fromSettingsAgain,
                withError: CXErrorCodeCallDirectoryManagerError(.maximumEntriesExceeded)
            )
            let heard = try #require(ExtensionFailures.read(in: settings.path).last)
            #expect(heard.source == "shard-01.blk" && heard.sentence.contains("maximumEntriesExceeded"), "\(heard)")
        }

        /// CallKit's manager, as the app's adapter hands it to the reload chain: CallKit's error
        /// codes keep their meaning (a load already running is retried, a disabled extension
        /// skipped), and any other error is `unknown`.
        @Test func theAppsManagerAdapterKeepsCallKitsErrorCodes() async {
            final class Scripted: CXCallDirectoryManager, @unchecked Sendable {
                let lock = NSLock()
                var answers: [String: [(any Error)?]] = [
                    "a": [CXErrorCodeCallDirectoryManagerError(.currentlyLoading), nil],
                    "b": [CXErrorCodeCallDirectoryManagerError(.extensionDisabled)],
                    "c": [CocoaError(.fileReadNoPermission)],
                ]
                override func reloadExtension(
                    withIdentifier identifier: String,
                    completionHandler completion: (@Sendable ((any Error)?) -> Void)? = nil
                ) {
                    let answer = lock.withLock { answers[identifier]?.removeFirst() ?? nil }
                    completion?(answer)
                }
                override func getEnabledStatusForExtension(
                    withIdentifier identifier: String,
                    completionHandler completion:
                        @escaping @Sendable (CXCallDirectoryManager.EnabledStatus, (any Error)?)
                        -> Void
                ) {
                    completion(identifier == "b" ? .disabled : .enabled, nil)
                }
            }
            let saved = CXCallDirectoryManager.standInShared
            CXCallDirectoryManager.standInShared = Scripted()
            defer { CXCallDirectoryManager.standInShared = saved }
            let chain = CallDirectoryReloadChain(identifiers: ["a", "b", "c"], attempts: 1, retryDelayNanoseconds: 0)
            let once = await chain.run(using: CallKitManager(), sleep: { _ in })
            let codes = once.outcomes.map { (outcome) -> String in
                if case .failed(let error) = outcome.outcome { "\(error.code)" } else { "\(outcome.outcome)" }
            }
            #expect(codes == ["currentlyLoading", "disabled", "unknown"])
            #expect(once.failures.last?.error.detail.isEmpty == false)
            #expect(await chain.enabledStatuses(using: CallKitManager()) == [.enabled, .disabled, .enabled])
            // The second answer for a is a success: retried, it reloads.
            let again = await CallDirectoryReloadChain(identifiers: ["a"]).run(using: CallKitManager(), sleep: { _ in })
            #expect(again.outcomes.map(\.outcome) == [.reloaded])
        }

        /// A shard the Info.plist does not name, or an App Group the extension is not entitled
        /// to, cancels the request with a sentence; nothing is added.
        @Test func aMissingSettingCancelsTheRequest() throws {
            let dir = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: dir.file("bundle"), withIntermediateDirectories: true)
            try PropertyListSerialization.data(
                fromPropertyList: ["BlocklistAppGroup": "group.none"],
                format: .xml,
                options: 0
            )
            .write(to: URL(fileURLWithPath: dir.file("bundle/Info.plist")))
            ExtensionSettings.bundle = try #require(Bundle(path: dir.file("bundle")))
            let context = RecordingContext(incremental: false)
            CallDirectoryHandler().beginRequest(with: context)
            #expect(
                "\(context.cancelled.map { "\($0)" } ?? "")"
                    == "The App Group group.none is not in the extension's entitlements."
            )
            #expect(context.added.isEmpty && !context.completed)
            // With no App Group to record it in, the failure is in the log (os.Logger).
            #expect(
                Logger.standInLogged.last
                    == "error CallDirectory: The App Group group.none is not in the extension's entitlements."
            )
        }

        /// What an app shows of blocklist's errors through Foundation (`localizedDescription`, as
        /// SwiftUI's alerts read it) is each error's sentence, not "The operation couldn't be
        /// completed": the handler files make them `LocalizedError` (docs/PLATFORM.md).
        @Test func errorsReadAsTheirSentenceThroughFoundation() {
            let errors: [any Error & CustomStringConvertible] = [
                BlocklistError(.invalidSpec, "The spec 070 names no number."),
                CallDirectoryManagerError(.noExtensionFound, detail: "com.example.app.CallDirectory01"),
                UpdateError(.malformed, "The push has two deltas for shard 3."),
                MessageFilterError(.invalidRules, "The rules file ends inside a rule."),
                SettingsError("The App Group group.none is not in the extension's entitlements."),
            ]
            for error in errors {
                #expect(error.localizedDescription == error.description)
                #expect(!error.description.isEmpty)
            }
        }

        /// Every Swift listing in the three extension articles is a run of lines of a handler
        /// file, the files this suite compiles and runs (indentation aside).
        @Test func theArticlesListingsAreTheHandlerFiles() throws {
            let articles = [
                "Sources/BlocklistCore/BlocklistCore.docc/LoadingShardsInACallDirectoryExtension.md",
                "Sources/MessageFilterCore/MessageFilterCore.docc/ClassifyingInAMessageFilterExtension.md",
                "Sources/UpdateCore/UpdateCore.docc/ApplyingUpdatesInANotificationServiceExtension.md",
            ]
            let handlers = AppProject.handlerSources.map { String(decoding: $0.bytes, as: UTF8.self) }
            for article in articles {
                let text = try String(contentsOfFile: Self.packageRoot + "/" + article, encoding: .utf8)
                let blocks = text.components(separatedBy: "```swift\n").dropFirst().map {
                    $0.components(separatedBy: "```")[0]
                }
                #expect(!blocks.isEmpty, "\(article) has no Swift listing")
                for block in blocks {
                    #expect(
                        handlers.contains { Self.contains($0, block) },
                        "\(article): this listing is in no handler file:\n\(block)"
                    )
                }
            }
        }

        /// The files embedded in `blocklist` are the files compiled here, byte for byte.
        @Test func theEmbeddedHandlersAreTheFiles() throws {
            for source in AppProject.handlerSources {
                let path = Self.packageRoot + "/Sources/AppProject/Handlers/" + source.name
                #expect(try readBytes(path) == source.bytes, "\(source.name)")
            }
        }

        /// Whether `block`'s lines appear in `file` in a row, each with the same added indentation.
        static func contains(_ file: String, _ block: String) -> Bool {
            let lines = file.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let wanted = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
            guard let head = wanted.first, !head.isEmpty else { return false }
            for start in lines.indices where lines[start].hasSuffix(head) {
                let indent = String(lines[start].dropLast(head.count))
                guard indent.allSatisfy({ $0 == " " }), start + wanted.count <= lines.count else { continue }
                let matches = wanted.enumerated().allSatisfy { offset, line in
                    line.isEmpty ? lines[start + offset].isEmpty : lines[start + offset] == indent + line
                }
                if matches { return true }
            }
            return false
        }

        /// The spec names one Call Directory extension per shard of the manifest, with its shard,
        /// bundle identifier and App Group, as Python's YAML reader reads the file.
        @Test func theProjectSpecHoldsEveryShardOfItsManifest() throws {
            let dir = try TemporaryDirectory()
            let generated = try runBlocklist(
                ["generate", "--pattern", "+827012#####", "--range-size", "40000", "-o", "set", "--no-sync"],
                in: dir.path
            )
            #expect(generated.status == 0, "\(generated.stderr)")
            _ = try runBlocklist(["keys", "create", "keys"], in: dir.path)
            let result = try runBlocklist(
                [
                    "xcodegen", "set", "--bundle-id", "com.example.blocklist", "-o", "proj", "--trust",
                    "keys/root.json", "--generation", "1",
                    "--push-key", "keys/push.key",
                ],
                in: dir.path
            )
            #expect(result.status == 0, "\(result.stderr)")
            let manifest = try Manifest.load(from: dir.file("set"))
            #expect(manifest.shards.count == 3)
            let json = try runProcess(
                "/usr/bin/python3",
                [
                    "-c", "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)",
                    dir.file("proj/project.yml"),
                ]
            )
            #expect(json.status == 0)
            let spec = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
            let targets = try #require(spec["targets"] as? [String: [String: Any]])
            #expect(targets.count == manifest.shards.count + 3)
            var identifiers = Set<String>()
            for (name, target) in targets {
                let settings = (target["settings"] as? [String: Any])?["base"] as? [String: Any]
                let identifier = try #require(settings?["PRODUCT_BUNDLE_IDENTIFIER"] as? String)
                identifiers.insert(identifier)
                #expect(identifier == "com.example.blocklist" || identifier == "com.example.blocklist." + name)
                let groups =
                    ((target["entitlements"] as? [String: Any])?["properties"] as? [String: Any])?[
                        "com.apple.security.application-groups"
                    ] as? [String]
                #expect(groups == ["group.com.example.blocklist"], "\(name)")
                let sources = (target["sources"] as? [[String: String]] ?? []).compactMap { $0["path"] }
                for source in sources {
                    #expect(FileManager.default.fileExists(atPath: dir.file("proj/" + source)), "\(name): \(source)")
                }
            }
            #expect(identifiers.count == targets.count)
            // Settings lists each extension by its name: no two alike.
            let names = targets.values.compactMap {
                ($0["info"] as? [String: Any]).flatMap { $0["properties"] as? [String: Any] }?["CFBundleDisplayName"]
                    as? String
            }
            #expect(names.count == targets.count && Set(names).count == names.count - 1, "\(names.sorted())")
            // Every bundle takes its version and build from the project's settings.
            let base = (spec["settings"] as? [String: Any])?["base"] as? [String: Any]
            #expect(
                base?["MARKETING_VERSION"] as? String == "1.0" && base?["CURRENT_PROJECT_VERSION"] as? String == "1"
            )
            #expect(base?["SWIFT_VERSION"] as? String == "6.0")
            for (name, target) in targets {
                let properties = (target["info"] as? [String: Any])?["properties"] as? [String: Any]
                #expect(properties?["CFBundleShortVersionString"] as? String == "$(MARKETING_VERSION)", "\(name)")
                #expect(properties?["CFBundleVersion"] as? String == "$(CURRENT_PROJECT_VERSION)", "\(name)")
            }
            let app = try #require(targets["Blocklist"])
            let appInfo = (app["info"] as? [String: Any])?["properties"] as? [String: Any]
            #expect(appInfo?["UILaunchScreen"] as? [String: Any] != nil)
            let appEntitlements = (app["entitlements"] as? [String: Any])?["properties"] as? [String: Any]
            #expect(appEntitlements?["aps-environment"] as? String == "development")
            for shard in manifest.shards {
                let name = AppProject.callDirectoryTarget(shard.index, of: manifest.shards.count)
                let properties = try #require(
                    (targets[name]?["info"] as? [String: Any])?["properties"] as? [String: Any]
                )
                #expect(properties["BlocklistShard"] as? String == URL(fileURLWithPath: shard.file).lastPathComponent)
                let nsExtension = properties["NSExtension"] as? [String: String]
                #expect(nsExtension?["NSExtensionPointIdentifier"] == "com.apple.callkit.call-directory")
                #expect(
                    try readBytes(dir.file("proj/Set/" + URL(fileURLWithPath: shard.file).lastPathComponent))
                        == readBytes(manifest.path(of: shard, in: dir.file("set")))
                )
            }
            // The directory exists now: a second run is refused and changes nothing.
            let again = try runBlocklist(
                ["xcodegen", "set", "--bundle-id", "com.example.blocklist", "-o", "proj"],
                in: dir.path
            )
            #expect(again.status != 0 && again.stderr.contains("already exists"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["keys", "proj", "set"])
        }

        /// The options land where the app reads them (rules shipped, the deferral URL in the
        /// Message Filter's Info.plist, the team, the first generation), and what the extensions
        /// would refuse is refused before anything is written: rules that are not compiled, a
        /// root or push key that is not one, a deferral URL that is not https.
        @Test func theOptionsReachTheAppAndBadFilesAreRefusedFirst() throws {
            let dir = try TemporaryDirectory()
            #expect(
                try runBlocklist(["generate", "--pattern", "+8270123#####", "-o", "set", "--no-sync"], in: dir.path)
                    .status == 0
            )
            _ = try runBlocklist(["keys", "create", "keys"], in: dir.path)
            let rules = #"[{"name":"prize","target":"body","match":"contains","value":"prize","action":"junk"}]"#
            try writeBytes(Array(rules.utf8), to: dir.file("rules.json"))
            #expect(try runBlocklist(["sms", "compile", "rules.json", "-o", "."], in: dir.path).status == 0)
            let base = ["xcodegen", "set", "--bundle-id", "com.example.blocklist"]
            // A file the extensions would refuse exits 1; a malformed value is a usage error (64).
            for (extra, fault, status) in [
                (["--rules", "rules.json"], "rules.json", Int32(1)),
                (["--trust", "keys/push.key", "--generation", "1"], "keys/push.key", 1),
                (
                    ["--trust", "keys/root.json", "--generation", "1", "--push-key", "keys/root.json"],
                    "keys/root.json", 1
                ),
                (["--trust", "keys/root.json"], "no --generation was given", 64),
                (["--publication-url", "https://cdn.example/pub"], "needs --trust", 64),
                (
                    ["--trust", "keys/root.json", "--generation", "1", "--publication-url", "http://cdn.example/pub"],
                    "https://", 64
                ),
                (["--deferral-url", "http://filter.example/q"], "https://", 64),
                (["--deferral-url", "https://user@filter.example/q"], "userinfo", 64),
                (["--name", "MessageFilter"], "an extension's target name", 64),
                (["--name", "callDirectory01"], "an extension's target name", 64),
                (["--deferral-url", "https://[::1]/q"], "not a domain name", 64),
                (["--deferral-url", "https://1.2.3.4/q"], "not a domain name", 64),
                (["--deferral-url", "https://localhost/q"], "not a domain name", 64),
                (["--deferral-url", "https://filter.example/q#f"], "fragment", 64),
                (
                    ["--trust", "keys/root.json", "--generation", "1", "--push-key", "keys/signing.key"],
                    "secret signing key", 1
                ),
                (["--team", "abc"], "not an Apple team ID", 64),
                (["--generation", "0"], "generation is 0", 64),
                (["--bundle-id", "blocklist"], "not a reverse-DNS identifier", 64),
            ] {
                let refused = try runBlocklist(base + ["-o", "bad"] + extra, in: dir.path)
                #expect(refused.status == status && refused.stderr.contains(fault), "\(extra): \(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: dir.file("bad")), "\(extra)")
                #expect(!FileManager.default.fileExists(atPath: dir.file(".bad.xcodegen-tmp")), "\(extra)")
            }
            // Inside the set, or nowhere: refused too.
            for (output, status) in [("set/inner", Int32(1)), ("", 64)] {
                let refused = try runBlocklist(base + ["-o", output], in: dir.path)
                #expect(
                    refused.status == status && refused.stderr.contains(output.isEmpty ? "empty" : "inside the set")
                )
                #expect(!FileManager.default.fileExists(atPath: dir.file("set/inner")))
            }
            let made = try runBlocklist(
                base + [
                    "-o", "proj", "--rules", "rules.blsms", "--deferral-url", "https://filter.example/q", "--team",
                    "ABCDE12345", "--generation", "7", "--trust", "keys/root.json", "--publication-url",
                    "https://cdn.example/pub",
                ],
                in: dir.path
            )
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try readBytes(dir.file("proj/Set/rules.blsms")) == readBytes(dir.file("rules.blsms")))
            let json = try runProcess(
                "/usr/bin/python3",
                [
                    "-c", "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)",
                    dir.file("proj/project.yml"),
                ]
            )
            let spec = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
            let settings = (spec["settings"] as? [String: Any])?["base"] as? [String: Any]
            #expect(settings?["DEVELOPMENT_TEAM"] as? String == "ABCDE12345")
            let filter = (spec["targets"] as? [String: [String: Any]])?["MessageFilter"]
            let properties = (filter?["info"] as? [String: Any])?["properties"] as? [String: Any]
            let attributes = (properties?["NSExtension"] as? [String: Any])?["NSExtensionAttributes"] as? [String: Any]
            #expect(attributes?["ILMessageFilterExtensionNetworkURL"] as? String == "https://filter.example/q")
            // The system defers only to a domain the app and the extension are associated with.
            let targets = try #require(spec["targets"] as? [String: [String: Any]])
            for name in ["Blocklist", "MessageFilter"] {
                let entitlements =
                    (targets[name]?["entitlements"] as? [String: Any])?["properties"] as? [String: Any]
                #expect(
                    entitlements?["com.apple.developer.associated-domains"] as? [String]
                        == ["messagefilter:filter.example"],
                    "\(name)"
                )
            }
            // iOS 16: the promotion and transaction actions the handler gives.
            let deployment = (spec["options"] as? [String: Any])?["deploymentTarget"] as? [String: Any]
            #expect(deployment?["iOS"] as? String == "16.0")
            let app = try String(contentsOfFile: dir.file("proj/App/BlocklistApp.swift"), encoding: .utf8)
            #expect(app.contains("generation: 7"))
            // The app catches up from the publication in a background refresh, with the root it
            // ships; the app and the Notification Service Extension reload the extensions.
            let appInfo = (targets["Blocklist"]?["info"] as? [String: Any])?["properties"] as? [String: Any]
            #expect(appInfo?["BlocklistPublication"] as? String == "https://cdn.example/pub")
            #expect(appInfo?["BGTaskSchedulerPermittedIdentifiers"] as? [String] == ["com.example.blocklist.catch-up"])
            #expect(appInfo?["UIBackgroundModes"] as? [String] == ["fetch"])
            #expect(app.contains("\"com.example.blocklist.catch-up\""))
            #expect(try readBytes(dir.file("proj/Set/root.json")) == readBytes(dir.file("keys/root.json")))
            let service = targets["NotificationService"]
            let serviceInfo = (service?["info"] as? [String: Any])?["properties"] as? [String: Any]
            let extensions = try #require(serviceInfo?["BlocklistCallDirectoryExtensions"] as? String)
            #expect(extensions.split(separator: ",").first == "com.example.blocklist.CallDirectory01")
            #expect(appInfo?["BlocklistCallDirectoryExtensions"] as? String == extensions)
            let serviceSources = (service?["sources"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
            #expect(serviceSources?.contains("Extensions/CallKitManager.swift") == true)
        }
    }
#endif
