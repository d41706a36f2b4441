internal import LibC

/// A ``MessageClassifier`` that any thread may call, for a Message Filter extension, where the
/// system may ask about two messages at once: one classifier behind a lock, made from the rules
/// the first time they load.
///
/// Until `load` returns rules (the app has not written them yet), ``classify(sender:body:)``
/// returns nil and the next call tries again; once they load, they stay for the process.
///
/// ```swift
/// static let classifier = SharedClassifier { try? CompiledRules(contentsOf: path) }
/// let decision = classifier.classify(sender: sender, body: body)  // nil: no rules yet
/// ```
public final class SharedClassifier: @unchecked Sendable {
    private let load: @Sendable () -> CompiledRules?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Read and written with `mutex` held only.
    private var classifier: MessageClassifier?

    /// - Parameter load: reads the compiled rules, or returns nil when there are none yet.
    public init(loading load: @escaping @Sendable () -> CompiledRules?) {
        self.load = load
        mutex = .allocate(capacity: 1)
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// The offline decision for a message, or nil while no rules are installed.
    public func classify(sender: String, body: String) -> MessageClassifier.Decision? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if classifier == nil, let rules = load() {
            classifier = MessageClassifier(
                rules: rules,
                regexCacheSize: MessageClassifier.extensionRegexCacheSize,
                lazyDFABudget: MessageClassifier.extensionLazyDFABudget
            )
        }
        return classifier?.classify(sender: sender, body: body)
    }

    /// The offline verdict as a Message Filter extension answers it: the action and sub-action
    /// of the deciding rule; nil when no rule decides or no rules are installed, and the message
    /// goes to the deferral server.
    public func verdict(sender: String, body: String) -> DeferralResponse? {
        guard let decision = classify(sender: sender, body: body), decision.action != .none else { return nil }
        return DeferralResponse(action: decision.action, subAction: decision.subAction)
    }
}
