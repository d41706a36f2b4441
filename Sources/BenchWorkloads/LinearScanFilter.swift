import MessageFilterCompiler
import MessageFilterCore

/// Today's approach, for comparison: every rule checked in turn against the lowercased target,
/// with `hasPrefix`, `hasSuffix`, `contains`, or a regex (as the filtering apps this project
/// started from do). Kinder than those apps in two ways: each target is lowercased once per message,
/// not once per rule, and regexes are compiled once, not per message. A rule that combines
/// conditions checks each in turn.
package final class LinearScanFilter {
    private let rules: [MessageRule]
    private let values: [String]
    private let regexes: [Regex<AnyRegexOutput>?]
    /// Each combined rule's conditions, as filters of their own: (all, none).
    private let conditions: [Int: (all: LinearScanFilter, none: LinearScanFilter)]

    package init(rules: [MessageRule]) throws {
        self.rules = rules
        values = rules.map { $0.caseSensitive ? $0.value : $0.value.lowercased() }
        regexes = try rules.map { rule in
            guard rule.match == .regex else { return nil }
            let regex = try Regex(rule.value)
            return rule.caseSensitive ? regex : regex.ignoresCase()
        }
        var conditions: [Int: (all: LinearScanFilter, none: LinearScanFilter)] = [:]
        for (index, rule) in rules.enumerated() where rule.match == .all {
            conditions[index] = (try LinearScanFilter(rules: rule.all), try LinearScanFilter(rules: rule.none))
        }
        self.conditions = conditions
    }

    /// The decision, with the same precedence as `MessageClassifier`.
    package func classify(sender: String, body: String) -> MessageClassifier.Decision {
        let texts = Texts(sender: sender, body: body)
        var best: (rank: UInt32, rule: Int)? = nil
        for (index, rule) in rules.enumerated() {
            if let best, best.rank <= rule.action.rank { continue }
            if holds(index, texts) { best = (rule.action.rank, index) }
        }
        guard let best else { return .noMatch }
        return MessageClassifier.Decision(action: rules[best.rule].action, rule: best.rule)
    }

    /// A message's texts, lowercased once, and its hosts, found once.
    private final class Texts {
        let sender: String
        let body: String
        let lowerSender: String
        let lowerBody: String
        lazy var hosts: [String] = LinkExtractor.hosts(ofBody: body)

        init(sender: String, body: String) {
            self.sender = sender
            self.body = body
            lowerSender = sender.lowercased()
            lowerBody = body.lowercased()
        }
    }

    /// Whether rule `index` matches.
    private func holds(_ index: Int, _ texts: Texts) -> Bool {
        let rule = rules[index]
        if let (all, none) = conditions[index] {
            return all.rules.indices.allSatisfy { all.holds($0, texts) }
                && !none.rules.indices.contains { none.holds($0, texts) }
        }
        if rule.target == .links {
            let value = values[index]
            return texts.hosts.contains { host in
                value.hasPrefix("*.") ? host == value.dropFirst(2) || host.hasSuffix(value.dropFirst()) : host == value
            }
        }
        for target in [RuleTarget.sender, .body] where rule.target == target || rule.target == .any {
            let text =
                target == .sender
                ? (rule.caseSensitive ? texts.sender : texts.lowerSender)
                : (rule.caseSensitive ? texts.body : texts.lowerBody)
            let matched =
                switch rule.match {
                case .prefix: text.hasPrefix(values[index])
                case .suffix: text.hasSuffix(values[index])
                case .contains: text.contains(values[index])
                case .regex: (try? regexes[index]!.firstMatch(in: target == .sender ? texts.sender : texts.body)) != nil
                case .domain, .all: false
                }
            if matched { return true }
        }
        return false
    }
}
