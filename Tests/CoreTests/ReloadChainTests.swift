import BlocklistCore
import Foundation
import Testing

/// The app's reload chain over its Call Directory extensions (issue 44, item 4), against a manager
/// that answers as scripted and a clock of the test's own: nothing here waits.
@Suite struct ReloadChainTests {
    /// A manager whose answers are scripted per extension (a queue of errors, then success), and
    /// which records every call and whether two overlapped.
    final class ScriptedManager: CallDirectoryManaging, @unchecked Sendable {
        private let lock = NSLock()
        private var scripts: [String: [CallDirectoryManagerError]]
        private var running = 0
        private(set) var calls: [String] = []
        private(set) var overlapped = false

        init(_ scripts: [String: [CallDirectoryManagerError.Code]]) {
            self.scripts = scripts.mapValues { $0.map { CallDirectoryManagerError($0) } }
        }

        func reloadExtension(withIdentifier identifier: String) async throws(CallDirectoryManagerError) {
            let next: CallDirectoryManagerError? = lock.withLock {
                calls.append(identifier)
                running += 1
                if running > 1 { overlapped = true }
                return scripts[identifier]?.isEmpty == false ? scripts[identifier]!.removeFirst() : nil
            }
            await Task.yield()
            lock.withLock { running -= 1 }
            if let next { throw next }
        }

        func enabledStatus(ofExtension identifier: String) async throws(CallDirectoryManagerError)
            -> CallDirectoryEnabledStatus
        {
            if identifier == "broken" { throw CallDirectoryManagerError(.noExtensionFound) }
            return identifier == "off" ? .disabled : .enabled
        }
    }

    /// The waits the chain asked for, in nanoseconds.
    final class Waits: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [UInt64] = []
        var all: [UInt64] { lock.withLock { stored } }
        func add(_ nanoseconds: UInt64) { lock.withLock { stored.append(nanoseconds) } }
    }

    @Test func transientFailuresAreRetriedWithGrowingWaitsAndTheRestGoOn() async {
        let manager = ScriptedManager([
            "a": [.currentlyLoading, .loadingInterrupted],
            "b": [.extensionDisabled],
            "c": [.maximumEntriesExceeded],
            "d": [],
        ])
        let waits = Waits()
        let chain = CallDirectoryReloadChain(identifiers: ["a", "b", "c", "d"], attempts: 4, retryDelayNanoseconds: 10)
        let progress = Waits()
        let report = await chain.run(
            using: manager,
            sleep: { waits.add($0) },
            progress: { progress.add(UInt64($0.done)) }
        )
        #expect(
            report.outcomes.map(\.outcome) == [
                .reloaded, .disabled, .failed(.init(.maximumEntriesExceeded)), .reloaded,
            ]
        )
        #expect(waits.all == [10, 20])
        // A refusal for good is not retried; one extension at a time.
        #expect(manager.calls == ["a", "a", "a", "b", "c", "d"])
        #expect(!manager.overlapped)
        #expect(!report.isComplete)
        #expect(report.failures.map(\.identifier) == ["c"])
        #expect(progress.all == [1, 2, 3, 4])
    }

    @Test func aTransientFailureThatLastsFailsAfterEveryAttempt() async {
        let manager = ScriptedManager(["a": Array(repeating: .currentlyLoading, count: 10)])
        let waits = Waits()
        let report = await CallDirectoryReloadChain(identifiers: ["a"], attempts: 3, retryDelayNanoseconds: 5)
            .run(using: manager, sleep: { waits.add($0) })
        #expect(report.outcomes.map(\.outcome) == [.failed(.init(.currentlyLoading))])
        #expect(manager.calls.count == 3 && waits.all == [5, 10])
    }

    @Test func disabledExtensionsLeaveTheReportComplete() async {
        let manager = ScriptedManager(["a": [.extensionDisabled], "b": []])
        let report = await CallDirectoryReloadChain(identifiers: ["a", "b"]).run(using: manager, sleep: { _ in })
        #expect(report.isComplete && report.failures.isEmpty)
    }

    @Test func aCancelledTaskStopsBeforeTheNextExtension() async {
        let manager = ScriptedManager([:])
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await CallDirectoryReloadChain(identifiers: ["a", "b"]).run(using: manager, sleep: { _ in })
        }
        let report = await task.value
        #expect(report.outcomes.map(\.outcome) == [.notTried, .notTried])
        #expect(manager.calls.isEmpty && !report.isComplete)
    }

    @Test func statusesAreInTheChainsOrderAndUnknownWhereCallKitCannotTell() async {
        let chain = CallDirectoryReloadChain(identifiers: ["on", "off", "broken"])
        #expect(await chain.enabledStatuses(using: ScriptedManager([:])) == [.enabled, .disabled, .unknown])
    }

    /// CallKit's raw codes (docs/PLATFORM.md) map to the cases of the same value; a code CallKit
    /// may add later is `unknown`, which is retried.
    @Test func rawCodesAreCallKits() {
        #expect(CallDirectoryManagerError(rawCode: 7).code == .currentlyLoading)
        #expect(CallDirectoryManagerError(rawCode: 8).code == .unexpectedIncrementalRemoval)
        #expect(CallDirectoryManagerError(rawCode: 99).code == .unknown)
        #expect(CallDirectoryManagerError(rawCode: 99).isTransient)
        #expect(!CallDirectoryManagerError(rawCode: 5).isTransient)
        #expect(!"\(CallDirectoryManagerError(.duplicateEntries))".contains("/"))
    }
}
