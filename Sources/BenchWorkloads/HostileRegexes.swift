import CommandSupport
import MessageFilterCompiler
import MessageFilterCore

/// Regexes that make a backtracking engine work hard, regexes people write, and regexes whose DFA
/// is too large to ship, with 64 KiB bodies built to hurt them: the worst-case row of `bench`
/// (`sms-worst`) and `RegexEngineTests`' bounded-time test.
package enum HostileRegexes {
    package static let patterns = [
        "1.*\\d{1,16}y", "(a|aa)+b", ".*.*.*x", "\\w+\\s*\\w+\\s*\\w+z", "(a+)+$", "(a*)*b", "(.*a){12}y",
        "(\\w+\\.)+(xyz|top|click)/",
        "(?:a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r|s|t|u|v|w|x|y|z|aa|ab|ac|ad|ae|af)+!", "[가-힣]+\\s*대출\\d",
        "\\b\\w{1,100}\\b\\d{1,100}x",
        "(a?){30}a{30}z", "(\\d{3}-)?\\d{3}-\\d{4}", "^(a|b|ab)*c$", "1.{0,100}y", "(x+x+)+y", "\\D+\\S+\\W*q",
        "(?:\\s*\\w)+%",
        "https?://bit\\.ly/\\w+", "\\d{3}-\\d{4}", "code:? \\d{6}", "a[bc]", "b+a", "c.?a", "1\\d", "(?:ab|ba)c", "^a",
        "b$", "A{2}",
        "Code:? \\d{6}", "win|won", "(?:ab|cd)efg", "[0-9]+ usd", "ab+c", "x{0,3}yz",
        // DFAs too large to ship (2^11 and 2^498 states): they run as programs on a lazy DFA.
        "(?:a|b)*a[ab]{10}c", "(?:a|b)*a[ab]{497}c",
        "(?:a|b)*a[ab]{14}d", "[ab]*a[ab]{20}(?:x|y)[0-9]{3}",
    ]

    /// Bodies of 64 KiB (the most a message may have) that keep the patterns above busy.
    package static let bodies: [(name: String, text: String)] = [
        ("1s then ay", String(repeating: "1", count: 65_534) + "ay"),
        ("a only", String(repeating: "a", count: 65_536)),
        ("Hangul", String(repeating: "대출가", count: 7_281)),
        ("mixed", String(repeating: "a1 ab.가 1-", count: 65_536 / 14)),
        ("words", String(repeating: "aa.bb cc ", count: 7_281)),
        // NFC reorders a run of combining marks in time square in its length; the filter cuts
        // runs at 30 (the attack on this work found 0.41 s per message before).
        (
            "combining marks",
            "a" + String(repeating: "\u{301}", count: 16_000) + String(repeating: "\u{316}", count: 16_000)
        ),
        (
            "a and b",
            {
                var state: UInt64 = 5
                return String(
                    (0..<65_536).map { _ in
                        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        return state >> 63 == 0 ? "a" : "b"
                    }
                )
            }()
        ),
    ]

    /// The classifier the extension would run for one body rule with `pattern`, ignoring case,
    /// on the normalized view (the default).
    package static func classifier(_ pattern: String) throws -> MessageClassifier {
        let rule = MessageRule(
            name: "hostile",
            target: .body,
            match: .regex,
            value: pattern,
            action: .junk,
            caseSensitive: false
        )
        var file = RulesFile(rules: [rule])
        try file.check(source: "the hostile corpus")
        return MessageClassifier(rules: try CompiledRules(bytes: RulesCompiler.compile(file.rules), name: pattern))
    }

    /// The first `count` patterns each on each body, the best of three runs: the slowest pair,
    /// and how many pairs ran.
    package static func worst(
        patterns count: Int
    ) throws -> (pairs: Int, seconds: Double, pattern: String, body: String, form: String) {
        let clock = ContinuousClock()
        var worst = (pairs: 0, seconds: 0.0, pattern: "", body: "", form: "")
        for pattern in patterns.prefix(max(count, 0)) {
            let classifier = try classifier(pattern)
            let form = classifier.rules.regexForms.automata == 1 ? "DFA" : "program"
            for body in bodies {
                var best = Double.infinity
                for _ in 0..<3 {
                    let started = clock.now
                    _ = classifier.classify(sender: "+1", body: body.text)
                    best = min(best, (clock.now - started).seconds)
                }
                worst.pairs += 1
                if best > worst.seconds { worst = (worst.pairs, best, pattern, body.name, form) }
            }
        }
        return worst
    }
}
