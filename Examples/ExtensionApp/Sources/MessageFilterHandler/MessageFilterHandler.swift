import MessageFilterCore

/// What a Message Filter extension's `handle(_:context:completion:)` does offline: the compiled
/// rules are loaded once per process, then each message is classified.
public final class MessageFilterHandler {
    private let classifier: MessageClassifier

    /// Loads the rules the app wrote to its App Group (`blocklist sms compile`), mapped read-only.
    public init(rulesAt path: String) throws {
        classifier = MessageClassifier(rules: try CompiledRules(contentsOf: path))
    }

    /// The action for a message, by name: "none", "allow", "junk", "promotion", "transaction".
    public func action(sender: String, body: String) -> String {
        classifier.classify(sender: sender, body: body).action.description
    }
}
