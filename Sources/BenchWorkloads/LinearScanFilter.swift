import MessageFilterCompiler
import MessageFilterCore

/// Today's approach, for comparison: every rule checked in turn against the lowercased target,
/// with `hasPrefix`, `hasSuffix`, `contains`, or a regex (as the filtering apps this project
/// started from do). Kinder than those apps in two ways: each target is lowercased once per message,
/// not once per rule, and regexes are compiled once, not per message.
public final class LinearScanFilter {
    private let rules: [MessageRule]
    private let values: [String]
    private let regexes: [Regex<AnyRegexOutput>?]

    public init(rules: [MessageRule]) throws {
        self.rules = rules
        values = rules.map { $0.caseSensitive ? $0.value : $0.value.lowercased() }
        regexes = try rules.map { rule in
            guard rule.match == .regex else { return nil }
            let regex = try Regex(rule.value)
            return rule.caseSensitive ? regex : regex.ignoresCase()
        }
    }

    /// The decision, with the same precedence as `MessageClassifier`.
    public func classify(sender: String, body: String) -> MessageClassifier.Decision {
        let lowerSender = sender.lowercased()
        let lowerBody = body.lowercased()
        var best: (rank: UInt32, rule: Int)? = nil
        var hosts: [String]? = nil
        for (index, rule) in rules.enumerated() {
            if let best, best.rank <= rule.action.rank { continue }
            if rule.target == .links {
                hosts = hosts ?? LinkExtractor.hosts(ofBody: body)
                let value = values[index]
                let matched = hosts!.contains { host in
                    value.hasPrefix("*.")
                        ? host == value.dropFirst(2) || host.hasSuffix(value.dropFirst()) : host == value
                }
                if matched { best = (rule.action.rank, index) }
                continue
            }
            var matched = false
            for target in [RuleTarget.sender, .body] where rule.target == target || rule.target == .any {
                let text =
                    target == .sender
                    ? (rule.caseSensitive ? sender : lowerSender) : (rule.caseSensitive ? body : lowerBody)
                switch rule.match {
                case .prefix: matched = text.hasPrefix(values[index])
                case .suffix: matched = text.hasSuffix(values[index])
                case .contains: matched = text.contains(values[index])
                case .regex: matched = (try? regexes[index]!.firstMatch(in: target == .sender ? sender : body)) != nil
                case .domain: matched = false
                }
                if matched { break }
            }
            if matched { best = (rule.action.rank, index) }
        }
        guard let best else { return .noMatch }
        return MessageClassifier.Decision(action: rules[best.rule].action, rule: best.rule)
    }
}
