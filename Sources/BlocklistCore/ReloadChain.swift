/// The app's side of CallKit: `CXCallDirectoryManager` as the reload chain calls it. On iOS a
/// small adapter in the app wraps `CXCallDirectoryManager.sharedInstance` and hands CallKit's
/// error codes over as ``CallDirectoryManagerError`` (docs/PLATFORM.md gives the declarations).
public protocol CallDirectoryManaging: Sendable {
    /// `reloadExtension(withIdentifier:)`: asks CallKit to run the extension's request.
    func reloadExtension(withIdentifier identifier: String) async throws(CallDirectoryManagerError)
    /// `getEnabledStatusForExtension(withIdentifier:)`: whether the user turned it on in Settings.
    func enabledStatus(ofExtension identifier: String) async throws(CallDirectoryManagerError)
        -> CallDirectoryEnabledStatus
}

/// `CXCallDirectoryManager.EnabledStatus`, with its raw values.
public enum CallDirectoryEnabledStatus: Int, Sendable, Hashable {
    case unknown = 0
    case disabled = 1
    case enabled = 2
}

/// An error CallKit's manager reported: `CXErrorCodeCallDirectoryManagerError.Code`'s raw value,
/// or another error the adapter met (`code` is then `unknown`).
public struct CallDirectoryManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `CXErrorCodeCallDirectoryManagerError.Code`, with its raw values (docs/PLATFORM.md).
    public enum Code: Int, Sendable, Hashable {
        case unknown = 0
        case noExtensionFound = 1
        case loadingInterrupted = 2
        case entriesOutOfOrder = 3
        case duplicateEntries = 4
        case maximumEntriesExceeded = 5
        case extensionDisabled = 6
        case currentlyLoading = 7
        case unexpectedIncrementalRemoval = 8
    }

    public var code: Code
    /// What the adapter could say of it (the underlying error's description).
    public var detail: String

    /// The error of CallKit's raw code `rawCode` (an unknown code is `unknown`).
    public init(rawCode: Int, detail: String = "") {
        code = Code(rawValue: rawCode) ?? .unknown
        self.detail = detail
    }

    public init(_ code: Code, detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// Whether the same request may succeed later: CallKit was loading another extension, the
    /// load was interrupted, or the cause is unknown.
    public var isTransient: Bool { code == .currentlyLoading || code == .loadingInterrupted || code == .unknown }

    /// A sentence for people, without paths or numbers they cannot act on.
    public var description: String {
        switch code {
        case .unknown: "CallKit could not load the list" + (detail.isEmpty ? "." : ": \(detail)")
        case .noExtensionFound: "This block list is not part of the app."
        case .loadingInterrupted: "Loading was interrupted; it will be tried again."
        case .entriesOutOfOrder: "The list's numbers were not in order, so CallKit refused it."
        case .duplicateEntries: "The list holds a number twice, so CallKit refused it."
        case .maximumEntriesExceeded: "The list holds more numbers than one extension may."
        case .extensionDisabled: "This block list is turned off in Settings."
        case .currentlyLoading: "CallKit is loading another list; it will be tried again."
        case .unexpectedIncrementalRemoval: "CallKit refused a change to the list."
        }
    }
}

/// Asks CallKit to reload the app's Call Directory extensions one at a time, as CallKit loads
/// them, with retries for what may pass (another load running, an interrupted load).
///
/// A disabled extension is skipped (it loads when the user turns it on); an extension CallKit
/// refuses for good is reported and the chain goes on with the next. The report tells the app
/// whether every enabled extension now holds the installed set, the moment to record the
/// generation as loaded.
public struct CallDirectoryReloadChain: Sendable {
    /// The extensions' bundle identifiers, in the order to reload them.
    public var identifiers: [String]
    /// How many times one extension is tried when its failure is transient.
    public var attempts: Int
    /// The wait before the first retry, doubled before each later one.
    public var retryDelayNanoseconds: UInt64

    public init(identifiers: [String], attempts: Int = 4, retryDelayNanoseconds: UInt64 = 2_000_000_000) {
        self.identifiers = identifiers
        self.attempts = max(1, attempts)
        self.retryDelayNanoseconds = retryDelayNanoseconds
    }

    /// How one extension's reload ended.
    public enum Outcome: Sendable, Hashable {
        /// CallKit ran the extension's request and it succeeded.
        case reloaded
        /// Turned off in Settings: nothing to load until the user turns it on.
        case disabled
        /// Refused, or still failing after every attempt.
        case failed(CallDirectoryManagerError)
        /// The task was cancelled before this extension.
        case notTried
    }

    /// Where the chain is, after each extension.
    public struct Progress: Sendable {
        /// How many extensions are done (reloaded, disabled or failed).
        public var done: Int
        /// How many there are.
        public var total: Int
        /// The extension just done and how it ended.
        public var identifier: String
        public var outcome: Outcome
    }

    /// Every extension's outcome, in the chain's order.
    public struct Report: Sendable {
        public var outcomes: [(identifier: String, outcome: Outcome)]

        /// Every enabled extension reloaded: record the installed generation as loaded.
        public var isComplete: Bool {
            outcomes.allSatisfy { $0.outcome == .reloaded || $0.outcome == .disabled }
        }
        /// The extensions that failed, with why.
        public var failures: [(identifier: String, error: CallDirectoryManagerError)] {
            outcomes.compactMap {
                if case .failed(let error) = $0.outcome { ($0.identifier, error) } else { nil }
            }
        }
    }

    /// Reloads every extension, one at a time; `sleep` waits between attempts (a test passes its
    /// own clock). A cancelled task stops before the next extension or retry. `progress` is
    /// awaited after each extension, so its calls arrive in order and all before this returns:
    /// an app hands each to its main actor with `await`.
    public func run(
        using manager: some CallDirectoryManaging,
        sleep: @Sendable (UInt64) async -> Void = { try? await Task.sleep(nanoseconds: $0) },
        progress: @Sendable (Progress) async -> Void = { _ in }
    ) async -> Report {
        var outcomes: [(identifier: String, outcome: Outcome)] = []
        for (index, identifier) in identifiers.enumerated() {
            let outcome: Outcome
            if Task.isCancelled {
                outcome = .notTried
            } else {
                outcome = await reload(identifier, using: manager, sleep: sleep)
            }
            outcomes.append((identifier, outcome))
            await progress(
                Progress(done: index + 1, total: identifiers.count, identifier: identifier, outcome: outcome)
            )
        }
        return Report(outcomes: outcomes)
    }

    private func reload(
        _ identifier: String,
        using manager: some CallDirectoryManaging,
        sleep: @Sendable (UInt64) async -> Void
    ) async -> Outcome {
        var delay = retryDelayNanoseconds
        var attempt = 1
        while true {
            do {
                try await manager.reloadExtension(withIdentifier: identifier)
                return .reloaded
            } catch {
                if error.code == .extensionDisabled { return .disabled }
                guard error.isTransient, attempt < attempts, !Task.isCancelled else { return .failed(error) }
            }
            await sleep(delay)
            delay = delay.multipliedReportingOverflow(by: 2).overflow ? delay : delay * 2
            attempt += 1
        }
    }

    /// Each extension's status in Settings, in the chain's order (`unknown` where CallKit could
    /// not tell).
    public func enabledStatuses(using manager: some CallDirectoryManaging) async -> [CallDirectoryEnabledStatus] {
        var statuses: [CallDirectoryEnabledStatus] = []
        for identifier in identifiers {
            statuses.append((try? await manager.enabledStatus(ofExtension: identifier)) ?? .unknown)
        }
        return statuses
    }
}
