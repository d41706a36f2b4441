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
        "\\b\\w{1,100}\\b \\d{1,100}x",
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
        // Text that NFC must take apart and put together again at every scalar: the
        // standard library's NFC costs about 65 ns a scalar there (found by the second attack).
        ("dotted I", String(repeating: "\u{130}", count: 32_768)),
        ("Greek with tonos", String(repeating: "\u{1F71}", count: 21_845)),
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
        try classifier([MessageRule(name: "hostile", target: .body, match: .regex, value: pattern, action: .junk)])
    }

    static func classifier(_ rules: [MessageRule]) throws -> MessageClassifier {
        var file = RulesFile(rules: rules)
        try file.check(source: "the hostile corpus")
        return MessageClassifier(rules: try CompiledRules(bytes: RulesCompiler.compile(file.rules), name: "hostile"))
    }

    /// What classifying a body costs before any hostile regex runs: a keyword that never occurs
    /// and a regex with no literal (so it always runs, and cheaply), both ignoring case on the
    /// normalized view, as the hostile rules do. The text is folded for both views, as it is for
    /// a hostile regex.
    static func baseline() throws -> MessageClassifier {
        try classifier([
            MessageRule(name: "never", target: .body, match: .contains, value: "zq#zq", action: .junk),
            MessageRule(name: "cheap", target: .body, match: .regex, value: "[#%][#%]", action: .junk),
        ])
    }

    /// The best of three classifications of `body`, in seconds.
    static func time(_ classifier: MessageClassifier, _ body: String) -> Double {
        let clock = ContinuousClock()
        var best = Double.infinity
        for _ in 0..<3 {
            let started = clock.now
            _ = classifier.classify(sender: "+1", body: body)
            best = min(best, (clock.now - started).seconds)
        }
        return best
    }

    /// What the first `count` patterns cost on each body: the slowest regex's own work (its
    /// classification less the baseline's on the same body) among those shipped as DFAs; among
    /// those shipped as programs, which read the whole text at up to one step per instruction
    /// and character, the slowest per instruction and byte; and the slowest baseline, the
    /// message's folding, which every rule of a view shares.
    package static func worst(patterns count: Int) throws -> (
        pairs: Int, seconds: Double, pattern: String, body: String, form: String,
        folding: Double, foldingBody: String,
        program: (nanosecondsPerStep: Double, seconds: Double, pattern: String, body: String)
    ) {
        let baseline = try baseline()
        let costs = bodies.map { time(baseline, $0.text) }
        var worst = (
            pairs: 0, seconds: 0.0, pattern: "", body: "", form: "DFA", folding: 0.0, foldingBody: "",
            program: (nanosecondsPerStep: 0.0, seconds: 0.0, pattern: "", body: "")
        )
        for (body, cost) in zip(bodies, costs) where cost > worst.folding {
            (worst.folding, worst.foldingBody) = (cost, body.name)
        }
        for pattern in patterns.prefix(max(count, 0)) {
            let classifier = try classifier(pattern)
            let instructions = classifier.rules.programRegexes.first?.instructions
            for (body, cost) in zip(bodies, costs) {
                let own = max(0, time(classifier, body.text) - cost)
                worst.pairs += 1
                if let instructions {
                    let perStep = own * 1e9 / Double(instructions * body.text.utf8.count)
                    if perStep > worst.program.nanosecondsPerStep {
                        worst.program = (perStep, own, pattern, body.name)
                    }
                } else if own > worst.seconds {
                    (worst.seconds, worst.pattern, worst.body) = (own, pattern, body.name)
                }
            }
        }
        return worst
    }
}
