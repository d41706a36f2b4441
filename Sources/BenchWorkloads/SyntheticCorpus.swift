import BlocklistCore
import MessageFilterCompiler
import MessageFilterCore

/// Seeded rules and messages for benchmarks and memory checks: keyword rules made of
/// pseudo-words, regex rules each with a literal, and 160-byte message bodies of which a few
/// contain a rule's keyword or trigger a regex's literal. The same seed gives the same corpus.
package struct SyntheticCorpus {
    private var random: SplitMix64

    package init(seed: UInt64) { random = SplitMix64(state: seed) }

    private mutating func next() -> UInt64 { random.next() }

    private mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    private static let syllables = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pa", "qu", "bo", "di", "fe", "gu", "ha", "ji", "wo",
        "xe", "yo",
    ]

    /// Everyday words that fill message bodies; rules are made of pseudo-words, so that a body
    /// matches a rule about as rarely as real texts do, unless it was made to.
    private static let filler = [
        "the", "and", "see", "you", "at", "six", "tonight", "your", "order", "is", "on", "its", "way", "call", "me",
        "when", "free", "we", "are", "meeting", "for", "lunch", "thanks", "again", "ok", "sure", "will", "be", "there",
        "soon", "please", "check", "new", "time", "today", "tomorrow", "home", "work", "love", "happy", "birthday",
    ]

    /// A pseudo-word of 2 to 4 syllables.
    package mutating func word() -> String {
        (0..<(2 + below(3))).map { _ in Self.syllables[below(Self.syllables.count)] }.joined()
    }

    /// `contains` rules on the body (two-word keywords), then `prefix` rules on the sender, then
    /// `suffix` rules on the body, then regex rules, with mixed actions.
    package mutating func rules(contains: Int, prefix: Int = 0, suffix: Int = 0, regex: Int) -> [MessageRule] {
        var rules: [MessageRule] = []
        let actions: [MessageAction] = [.junk, .junk, .junk, .promotion, .transaction, .allow]
        var seen: Set<String> = []
        func unique(_ make: () -> String) -> String {
            while true {
                let value = make()
                if seen.insert(value).inserted { return value }
            }
        }
        for index in 0..<contains {
            let value = unique { word() + " " + word() }
            rules.append(
                MessageRule(
                    name: "contains \(index)",
                    target: .body,
                    match: .contains,
                    value: value,
                    action: actions[below(actions.count)]
                )
            )
        }
        for index in 0..<prefix {
            let value = unique { "+\(1 + below(998))\(below(1000))" }
            rules.append(
                MessageRule(
                    name: "prefix \(index)",
                    target: .sender,
                    match: .prefix,
                    value: value,
                    action: actions[below(actions.count)]
                )
            )
        }
        for index in 0..<suffix {
            let value = unique { word() + "." }
            rules.append(
                MessageRule(
                    name: "suffix \(index)",
                    target: .body,
                    match: .suffix,
                    value: value,
                    action: actions[below(actions.count)]
                )
            )
        }
        let shapes = [
            "LIT[0-9]{2,4} ?(?:usd|eur)", "https?://LIT\\.[a-z]{2,3}/\\w+", "LIT:? ?\\d{4,6}", "(?:win|won) LIT\\b",
            "LIT\\s[a-z]+ly",
        ]
        for index in 0..<regex {
            let literal = unique { word() }
            let value = shapes[index % shapes.count].replacingOccurrences(of: "LIT", with: literal)
            rules.append(
                MessageRule(
                    name: "regex \(index)",
                    target: .body,
                    match: .regex,
                    value: value,
                    action: actions[below(actions.count)]
                )
            )
        }
        return rules
    }

    /// Messages with bodies of `length` bytes of pseudo-words; one in `hitEvery` carries a
    /// rule's keyword (or a regex's literal) somewhere in it.
    package mutating func messages(_ count: Int, length: Int = 160, rules: [MessageRule], hitEvery: Int = 20) -> [(
        sender: String, body: String
    )] {
        var messages: [(String, String)] = []
        messages.reserveCapacity(count)
        for index in 0..<count {
            var body = ""
            if index % hitEvery == 0, !rules.isEmpty {
                let rule = rules[below(rules.count)]
                var value = rule.value
                if rule.match == .regex {
                    value = String(value.prefix { $0.isLetter }) + "1234 usd"
                }
                body = value + " "
            }
            while body.utf8.count < length { body += (body.isEmpty ? "" : " ") + Self.filler[below(Self.filler.count)] }
            while body.utf8.count > length { body.removeLast() }
            messages.append(("+1\(555_000_0000 + below(10_000))", body))
        }
        return messages
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
