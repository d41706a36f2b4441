import BenchWorkloads
import BlocklistCore
import ByteCodecs
import Foundation
import MessageFilterCompiler
import MessageFilterCore
import TestSupport
import Testing

/// A regex rule on the body, compiled alone; nil when the rules file refuses it.
private func regexClassifier(_ pattern: String, caseInsensitive: Bool = false, normalize: Bool = false)
    -> MessageClassifier?
{
    try? compiled([
        MessageRule(
            name: "r",
            target: .body,
            match: .regex,
            value: pattern,
            action: .junk,
            caseSensitive: !caseInsensitive,
            normalize: normalize
        )
    ])
}

private func verdict(_ classifier: MessageClassifier, _ text: String) -> Bool {
    classifier.classify(sender: "+1", body: text).rule == 0
}

/// Random patterns within the accepted syntax, written twice: for our parser and for Python's
/// `re`, where `$` is `\Z` (Python's `$` also matches before a final line break).
struct PatternGenerator {
    var random: SplitMix64
    let literals: [String]
    /// Whether groups may carry inline flags, `(?i:…)` and `(?-i:…)`.
    var inlineFlags = false
    /// Whether to write the syntax issue 29 added too: `\Q…\E`, ASCII POSIX classes in brackets,
    /// and `{,n}`, each given to Python in a form its `re` reads (`re.escape`, the ASCII ranges,
    /// `{0,n}`).
    var quotedPOSIXAndOpenCounts = false

    mutating func below(_ n: Int) -> Int { Int.random(in: 0..<n, using: &random) }

    mutating func literal() -> String {
        let c = literals[below(literals.count)]
        // One in four by its code, `\xHH` or `\uHHHH`, which Python's `re` reads too.
        if below(4) == 0, let value = c.unicodeScalars.first?.value, value < 0x10000 {
            return value < 0x100
                ? "\\x" + Hex.padded(UInt64(value), width: 2) : "\\u" + Hex.padded(UInt64(value), width: 4)
        }
        return ".-[](){}*+?|^$\\".contains(c) ? "\\" + c : c
    }

    /// POSIX classes and the ASCII members Python's `re` reads for each.
    static let posix: [(String, String)] = [
        ("[:alpha:]", "A-Za-z"), ("[:digit:]", "0-9"), ("[:alnum:]", "0-9A-Za-z"), ("[:upper:]", "A-Z"),
        ("[:lower:]", "a-z"), ("[:space:]", "\\t-\\r "), ("[:xdigit:]", "0-9A-Fa-f"), ("[:word:]", "0-9A-Z_a-z"),
        ("[:punct:]", "!-/:-@\\[-`{-~"),
    ]

    mutating func atom(_ depth: Int) -> (String, String) {
        if quotedPOSIXAndOpenCounts, below(6) == 0 {
            if below(2) == 0 {
                // A quoted run of literals, specials included.
                let run = (0..<(1 + below(3))).map { _ in literals[below(literals.count)] }.joined()
                let quoted = below(2) == 0 ? run + ".*(" : run
                return (
                    "\\Q" + quoted + "\\E",
                    quoted.unicodeScalars.map { scalar in
                        let c = String(scalar)
                        return ".-[](){}*+?|^$\\ ".contains(c) ? "\\" + c : c
                    }.joined()
                )
            }
            var ours = below(3) == 0 ? "[^" : "["
            var python = ours
            for _ in 0..<(1 + below(2)) {
                if below(3) == 0 {
                    let l = literal()
                    ours += l
                    python += l
                } else {
                    let (name, ranges) = Self.posix[below(Self.posix.count)]
                    ours += name
                    python += ranges
                }
            }
            return (ours + "]", python + "]")
        }
        switch below(depth > 2 ? 7 : 9) {
        case 0, 1, 2:
            let l = literal()
            return (l, l)
        case 3: return (".", ".")
        case 4:
            let e = ["\\d", "\\w", "\\s", "\\D", "\\W", "\\S"][below(6)]
            return (e, e)
        case 5:
            var members = ""
            for _ in 0..<(1 + below(3)) {
                switch below(4) {
                case 0: members += ["a-c", "0-9", "A-Z", "가-힣", "\\d", "\\s", "\\w"][below(7)]
                default: members += literal()
                }
            }
            let c = (below(3) == 0 ? "[^" : "[") + members + "]"
            return (c, c)
        case 6:
            let a = ["^", "$", "\\b", "\\B"][below(4)]
            return (a, a == "$" ? "\\Z" : a)
        default:
            let inner = alternation(depth + 1)
            let open = inlineFlags ? ["(", "(?:", "(?i:", "(?-i:"][below(4)] : below(2) == 0 ? "(" : "(?:"
            return (open + inner.0 + ")", open + inner.1 + ")")
        }
    }

    mutating func piece(_ depth: Int) -> (String, String) {
        let a = atom(depth)
        if a.0.hasPrefix("^") || a.0 == "$" || a.0.hasPrefix("\\b") || a.0.hasPrefix("\\B") { return a }
        guard below(3) == 0 else { return a }
        var q = ["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"][below(7)]
        var python = q
        if quotedPOSIXAndOpenCounts, below(5) == 0 {
            let most = below(3)
            q = "{,\(most)}"
            python = "{0,\(most)}"
        }
        if below(4) == 0 {
            q += "?"
            python += "?"
        }
        return (a.0 + q, a.1 + python)
    }

    mutating func concatenation(_ depth: Int) -> (String, String) {
        var ours = ""
        var python = ""
        for _ in 0..<(below(4) + (depth == 0 ? 1 : 0)) {
            let p = piece(depth)
            ours += p.0
            python += p.1
        }
        return (ours, python)
    }

    mutating func alternation(_ depth: Int) -> (String, String) {
        var (ours, python) = concatenation(depth)
        while below(4) == 0 {
            let c = concatenation(depth)
            ours += "|" + c.0
            python += "|" + c.1
        }
        return (ours, python)
    }
}

/// One `python3` process answering batches of (pattern, flags, texts) on stdin.
private func pythonVerdicts(_ cases: [(pattern: String, caseInsensitive: Bool, texts: [String])]) throws -> [[Bool]] {
    let script = """
        import json, re, sys
        for line in sys.stdin:
            case = json.loads(line)
            r = re.compile(case["p"], re.I if case["i"] else 0)
            print(json.dumps([r.search(t) is not None for t in case["t"]]), flush=True)
        """
    return try PythonReference.answers(script, cases.map { ["p": $0.pattern, "i": $0.caseInsensitive, "t": $0.texts] })
        .map { $0 as! [Bool] }
}

@Suite struct RegexEngineTests {
    /// Patterns that make a backtracking engine work hard, and every regex of the other tests.
    /// Every hostile regex under .ci/run; the first 12 for `swift test` alone. Not the
    /// 506-instruction program, which the bench's worst-case row measures: it reads the whole
    /// message since issue 45 at one step per thread and character, 145 ms per 64 KiB in a
    /// release build and 4–8 s in a debug one on a loaded machine.
    static let hostile = (SeededRuns.long ? HostileRegexes.patterns : Array(HostileRegexes.patterns.prefix(12)))
        .filter { !$0.contains("{497}") }

    /// Every accepted regex of the corpus classifies a 64 KiB adversarial body within a bound
    /// that only linear work meets (one table lookup, or one step per thread, per scalar; the
    /// former engine took a second per KiB): generous for a shared machine, a debug build and tests
    /// running in parallel (the figures in docs/MESSAGE-FILTER.md are release measurements; the former engine
    /// took over a second on the first pattern with a 1 KiB window).
    @Test(arguments: hostile)
    func everyAcceptedHostileRegexRunsInBoundedTime(pattern: String) throws {
        let classifier = try #require(regexClassifier(pattern, caseInsensitive: true), "refused: \(pattern)")
        for (name, body) in HostileRegexes.bodies {
            #expect(body.utf8.count <= MessageClassifier.maximumBodyBytes)
            let clock = ContinuousClock()
            let start = clock.now
            _ = classifier.classify(sender: "+1", body: body)
            let elapsed = clock.now - start
            #expect(elapsed < .seconds(3), "\(pattern) on \(name): \(elapsed)")
        }
    }

    /// A regex whose DFA is too large to ship runs as its program: its lazy DFA reads the text
    /// while its states stay in the cache, so a match after 60,000 bytes of padding is found; a
    /// text that keeps it computing states (random `a` and `b`: the DFA has 2^15) hands its
    /// state over to the NFA simulation, which reads the rest, so a match after 60,000 such
    /// bytes is found too (before issue 45 the NFA read a window from the start, and missed it),
    /// and one that began before the handover is finished by it.
    @Test func aProgramReadsTheWholeTextWhenItsStatesDoNotFit() throws {
        let classifier = try #require(regexClassifier("(?:a|b)*a[ab]{14}d"))
        #expect(classifier.rules.regexForms.programs == 1)
        let match = "a" + String(repeating: "b", count: 14) + "d"
        #expect(verdict(classifier, match + String(repeating: "x", count: 60_000)))
        #expect(verdict(classifier, String(repeating: "x", count: 100) + match))
        #expect(verdict(classifier, String(repeating: "x", count: 60_000) + match))
        var random = SplitMix64(state: 5)
        let churn = String((0..<60_000).map { _ in Bool.random(using: &random) ? "a" : "b" })
        #expect(verdict(classifier, String(churn.prefix(100)) + "x" + match))
        #expect(verdict(classifier, churn + "x" + match))
        // The churn's last `a` then 14 letters and `d`: a match the DFA began and the NFA ends.
        #expect(verdict(classifier, churn + "a" + String(repeating: "b", count: 14) + "d"))
        #expect(!verdict(classifier, churn + "x" + String(match.dropFirst())))
        // The DFA stopped inside the churn, so the NFA read the rest.
        let program = try RegexProgram(pattern: "(?:a|b)*a[ab]{14}d", caseInsensitive: false)
        let dfa = RegexDFA(program)
        var text = churn + "x" + match
        let outcome = text.withUTF8 {
            dfa.firstMatch($0, transitionBudget: RegexLimits.transitionBudget(instructions: program.count))
        }
        guard case .exhausted(let scanned) = outcome else {
            Issue.record("the churn stayed in the cache: \(outcome)")
            return
        }
        #expect(scanned > 0 && scanned < 60_000)
        #expect(text.withUTF8 { dfa.finish($0, from: scanned, with: RegexMatcher()) })
    }

    /// Ignoring case, `İ` (U+0130) folds to `i`, its simple lowercase mapping, though Swift gives
    /// only the full one (two scalars) (found by the attack on this work: `İ` and `i` did not
    /// match); a class holds what folds as its members do, ASCII or not (`[a-z]` missed `İ`).
    @Test func dottedCapitalIFoldsToI() throws {
        let cases: [(pattern: String, text: String, matches: Bool)] = [
            ("i", "xİ", true), ("İ", "xi", true), ("İ", "XI", true), ("[a-zé]", "İ", true), ("[a-z]", "İ", true),
            ("[^a-z]", "İ", false),
        ]
        for (pattern, text, expected) in cases {
            let classifier = try #require(regexClassifier(pattern, caseInsensitive: true))
            #expect(verdict(classifier, text) == expected, "\(pattern) on \(text)")
        }
    }

    /// Issue 29's evasions and the rule for classes ignoring case: one folded view for the
    /// prefilter and the automata, so `claim` meets `CLAİM` and `t` meets `T` + U+0308 (which NFC
    /// would have composed into `ẗ` after lowercasing); a class holds every scalar that folds as a
    /// member does, so `[\u{2100}-\u{214F}]` holds `k` through Kelvin (U+212A), and `[^A-F]` is
    /// `[^a-f]`. Default rules (ignoring case, normalized), as a user writes them; a keyword too
    /// where the pattern is one.
    @Test(arguments: [
        ("claim", "CLA\u{130}M your prize", true), ("bit", "b\u{130}t", true), ("t", "T\u{308}", true),
        ("^[\u{2100}-\u{214F}]$", "k", true), ("^[\u{2100}-\u{214F}]$", "K", true),
        ("^[\u{2100}-\u{214F}]$", "x", false), ("^[^A-F]$", "a", false),
        ("^[^a-f]$", "A", false), ("^[^A-F]$", "g", true), ("^[^a-f]$", "G", true), ("s", "\u{17F}", true),
        ("\u{17F}", "S", true), ("^[a-z]$", "\u{212A}", true), ("^[a-z]+$", "\u{131}", false),
    ])
    func caseIsOneFoldForPrefilterAndAutomaton(pattern: String, text: String, matches: Bool) throws {
        var kinds = [MatchKind.regex]
        if !pattern.contains(where: { "^$[]".contains($0) }) { kinds.append(.contains) }
        for match in kinds {
            let classifier = try compiled([
                MessageRule(name: "r", target: .body, match: match, value: pattern, action: .junk)
            ])
            #expect(
                (classifier.classify(sender: "+1", body: text).rule == 0) == matches,
                "\(match) \(pattern.debugDescription) on \(text.debugDescription)"
            )
        }
    }

    /// The whole body is searched, not its first KiB.
    @Test func seesTheWholeBody() throws {
        let classifier = try #require(regexClassifier("ab\\d{3}"))
        #expect(verdict(classifier, String(repeating: "x", count: 60_000) + "ab123"))
        #expect(!verdict(classifier, String(repeating: "x", count: 60_000) + "ab12"))
    }

    /// Random patterns and texts, our verdict against Python's `re` (`$` written `\Z`). The
    /// alphabet keeps to what both define alike: ASCII letters, digits, space, `-` and `.`, Hangul
    /// (a letter for both), and the scalars that fold to ASCII or across scripts' blocks (`K`
    /// Kelvin, `İ`, `ſ`, `ẞ`), a carriage return and U+2028; no `\n`, where `$` differs, and no `ı` or `ς`, which
    /// Python's `re` takes for `i` and `σ` and simple lowercase mappings do not. Two texts of each
    /// pattern follow varied text in five scripts. 3,000 patterns under `.ci/run`.
    @Test(arguments: [false, true]) func agreesWithPythonOnRandomPatterns(quotedPOSIXAndOpenCounts: Bool) throws {
        var generator = PatternGenerator(
            random: SplitMix64(state: quotedPOSIXAndOpenCounts ? 31 : 17),
            literals: ["a", "b", "A", "1", " ", "-", ".", "가", "k", "\u{212A}", "s", "\u{17F}", "\u{130}", "ß", "ẞ"],
            inlineFlags: true,
            quotedPOSIXAndOpenCounts: quotedPOSIXAndOpenCounts
        )
        var textRandom = SplitMix64(state: 18)
        // A carriage return and U+2028: `.` matches them, as Python's does (not `\n`, where `$` differs).
        let alphabet = Array("ab1 -.가ABkKsSiI\u{212A}\u{17F}\u{130}ßẞ\r\u{2028}")
        var cases: [(pattern: String, caseInsensitive: Bool, texts: [String])] = []
        var ours: [[Bool]] = []
        var padded: [(pattern: String, caseInsensitive: Bool, texts: [String])] = []
        var paddedOurs: [[Bool]] = []
        var refused = 0
        while cases.count < SeededRuns.count(1_500, short: 100) {
            let (pattern, python) = generator.alternation(0)
            // Python's `\B` never matches an empty text and disagrees elsewhere too (found by this
            // test, not characterised yet); Swift's oracle and the fuzzer's reference check `\B`.
            if pattern.contains("\\B") { continue }
            let caseInsensitive = generator.below(2) == 0
            guard let classifier = regexClassifier(pattern, caseInsensitive: caseInsensitive) else {
                refused += 1
                continue
            }
            var texts = (0..<10).map { _ in
                String(
                    (0..<Int.random(in: 0...12, using: &textRandom)).map { _ in
                        alphabet.randomElement(using: &textRandom)!
                    }
                )
            }
            // Adversarial but short: Python's `re` backtracks, and is the oracle here.
            texts += [
                String(repeating: "a", count: 14) + "b", String(repeating: "1a ", count: 5),
                String(repeating: "가", count: 12) + "-",
            ]
            cases.append((python, caseInsensitive, texts))
            ours.append(texts.map { verdict(classifier, $0) })
            // Two texts after 1,500 bytes of Hangul, Chinese, Cyrillic, Arabic and emoji, the
            // padding a scam hides behind (issue 45), for Python's `regex`, which can give up
            // (`re` backtracks for minutes on some patterns over such text).
            // `regex` folds `İ` as `re` does not (it matches no `i`), so those are left to `re`.
            let padding = PaddedScams.padding(seed: UInt64(cases.count), bytes: 1_500)
            let dottedI = [python, texts[0], texts[1]].contains {
                $0.contains("\u{130}") || $0.contains("\\u0130") || $0.contains("\\x{130}")
            }
            if !dottedI {
                padded.append((python, caseInsensitive, [padding + texts[0], padding + texts[1]]))
                paddedOurs.append(padded[padded.count - 1].texts.map { verdict(classifier, $0) })
            }
        }
        let script = """
            import json, regex, sys
            for line in sys.stdin:
                case = json.loads(line)
                r = regex.compile(case["p"], (regex.I if case["i"] else 0) | regex.V0)
                answers = []
                for t in case["t"]:
                    try:
                        answers.append(r.search(t, timeout=0.2) is not None)
                    except TimeoutError:
                        answers.append(None)
                print(json.dumps(answers), flush=True)
            """
        let paddedTheirs = try PythonReference.answers(
            script,
            padded.map { ["p": $0.pattern, "i": $0.caseInsensitive, "t": $0.texts] }
        )
        .map { ($0 as! [Any]).map { $0 as? Bool } }
        try #require(paddedTheirs.count == padded.count)
        var decided = 0
        for index in padded.indices {
            for (column, answer) in paddedTheirs[index].enumerated() {
                guard let answer else { continue }
                decided += 1
                if answer != paddedOurs[index][column] {
                    Issue.record(
                        "\(padded[index].pattern) (ignoring case: \(padded[index].caseInsensitive)) after padding: ours \(paddedOurs[index][column]), regex \(answer) on \(padded[index].texts[column].suffix(20).debugDescription)"
                    )
                }
            }
        }
        // Python gives up on few of them: the padded texts are compared, not skipped.
        #expect(decided > padded.count * 2 * 9 / 10, "regex decided \(decided) of \(padded.count * 2) padded texts")
        let theirs = try pythonVerdicts(cases)
        try #require(theirs.count == cases.count)
        var disagreements = 0
        for index in cases.indices where ours[index] != theirs[index] {
            disagreements += 1
            if disagreements <= 5 {
                Issue.record(
                    "\(cases[index].pattern) (ignoring case: \(cases[index].caseInsensitive)): ours \(ours[index]), Python \(theirs[index]) on \(cases[index].texts)"
                )
            }
        }
        #expect(disagreements == 0)
        // The generator reaches both: most patterns are accepted, and some match the empty string.
        #expect(refused > 0 && refused < cases.count)
    }

    /// The same kind of patterns over a wider alphabet (case pairs without simple folding, `²`,
    /// Arabic digits, line breaks, no-break space), against Swift's `Regex` as an oracle, with the
    /// options that state our semantics: scalars and simple word boundaries.
    @Test(
        .disabled(
            "Swift's Regex is no oracle here: with scalar semantics it matched `\\W{1,3}\\W.` on \"K 1σ가sÉ\" and `\\Wı*` on \"ß1ςé\" (no or one non-word scalar) and missed `[ıKİ]\\D` ignoring case on \"٣Kßs٣\"; Python's re (agreesWithPythonOnRandomPatterns) and the fuzzer's reference matcher check these"
        )
    )
    func agreesWithSwiftRegexOnUnicodeScalars() throws {
        // Not `_`: Swift's Regex misses `\w` on `_` before a scalar above U+00FF (" _σ" has no
        // `\s\w` for it), a bug of the oracle; Python's `re` and the fuzzer's reference cover `_`.
        let wide = [
            "a", "k", "K", "s", "ß", "ẞ", "σ", "ς", "Σ", "\u{212A}", "ſ", "ı", "İ", "i", "²", "٣", "\u{A0}", "\n", "\r",
            "é", "É", "가", "1", " ",
        ]
        var generator = PatternGenerator(random: SplitMix64(state: 23), literals: wide)
        var textRandom = SplitMix64(state: 24)
        var checked = 0
        while checked < SeededRuns.count(600, short: 15) {
            let (pattern, _) = generator.alternation(0)
            // Swift's simple word boundaries take digits for non-word characters, unlike its own
            // `\w`; Python's `re` checks `\b` and `\B` instead.
            if pattern.contains("\\b") || pattern.contains("\\B") { continue }
            // A line break in a pattern string changes how Swift's Regex parses the rest (it took
            // `\w..⏎|a\s*[A-ZK ]` not to match "aK"); ours reads it as a literal.
            if pattern.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) { continue }
            let caseInsensitive = generator.below(2) == 0
            guard let classifier = regexClassifier(pattern, caseInsensitive: caseInsensitive) else { continue }
            var oracle = try Regex(pattern).matchingSemantics(.unicodeScalar).wordBoundaryKind(.simple)
            if caseInsensitive { oracle = oracle.ignoresCase() }
            for _ in 0..<8 {
                let text = (0..<Int.random(in: 0...8, using: &textRandom)).map { _ in
                    wide.randomElement(using: &textRandom)!
                }.joined()
                let expected = (try? oracle.firstMatch(in: text)) != nil
                let actual = verdict(classifier, text)
                #expect(
                    actual == expected,
                    "\(pattern) (ignoring case: \(caseInsensitive)) on \(text.debugDescription)"
                )
                if actual != expected { return }
            }
            checked += 1
        }
    }

    /// Against Swift's `Regex` as the filter ran it before (characters, Unicode word boundaries):
    /// where those agree with scalars, that is without `\b`, `\B` and multi-scalar characters.
    @Test func agreesWithTheFormerSwiftRegexWhereTheSemanticsMeet() throws {
        // Not Kelvin's K (U+212A): ignoring case, Swift's Regex leaves it out of `[A-Z]` (a class
        // of ASCII characters does not look at a non-ASCII scalar's case), where the documented
        // rule and Python's `re` hold it.
        let alphabet = ["a", "b", "A", "k", "ß", "ẞ", "1", " ", "-", ".", "가", "\n", "\u{A0}", "_"]
        var generator = PatternGenerator(random: SplitMix64(state: 29), literals: alphabet)
        var textRandom = SplitMix64(state: 30)
        var checked = 0
        while checked < 600 {
            let (pattern, _) = generator.alternation(0)
            if pattern.contains("\\b") || pattern.contains("\\B") { continue }
            let caseInsensitive = generator.below(2) == 0
            // Swift's Regex ignoring case lets `\W` match letters (`\W{1,3}\W.` matched "K 1σ가sÉ",
            // which has one non-word scalar; Python's `re` agrees with ours): its bug, so `\W` is
            // checked without case here and against Python's `re` with it.
            if caseInsensitive && pattern.contains("\\W") { continue }
            guard let classifier = regexClassifier(pattern, caseInsensitive: caseInsensitive) else { continue }
            var oracle = try Regex(pattern)
            if caseInsensitive { oracle = oracle.ignoresCase() }
            for _ in 0..<8 {
                let text = (0..<Int.random(in: 0...8, using: &textRandom)).map { _ in
                    alphabet.randomElement(using: &textRandom)!
                }.joined()
                let expected = (try? oracle.firstMatch(in: text)) != nil
                let actual = verdict(classifier, text)
                #expect(
                    actual == expected,
                    "\(pattern) (ignoring case: \(caseInsensitive)) on \(text.debugDescription)"
                )
                if actual != expected { return }
            }
            checked += 1
        }
    }

    /// Documented differences from the former engine: a `.` is one scalar, not one character,
    /// and `\b` sits between a word and a non-word scalar, not at a Unicode word boundary.
    @Test(arguments: [
        ("a..b", "a👍🏽b", true),
        ("a.b", "a👍🏽b", false),
        ("\\bb", "a.b", true),
        ("!\\b.", "!!", false),
        ("e$", "e\u{301}", false),
        ("\\r\\n", "x\r\ny", true),
        // `.` is any scalar but `\n`, as Python and RE2 read it (issue 45, item 6): a carriage
        // return or a line separator between the words of a scam does not break the rule.
        ("prize.{0,5}claim", "prize\r\u{B}\u{C}claim", true),
        ("prize.{0,5}claim", "prize\u{85}\u{2028}\u{2029}claim", true),
        ("prize.{0,5}claim", "prize\nclaim", false),
        ("(?s)prize.{0,5}claim", "prize\nclaim", true),
    ])
    func matchesScalarsNotCharacters(pattern: String, text: String, matches: Bool) throws {
        let classifier = try #require(regexClassifier(pattern))
        #expect(verdict(classifier, text) == matches)
    }

    /// A negated property ignoring case is the complement of the property's case closure, as
    /// Python's `regex`, RE2 and PCRE read it (issue 45, item 2): `(?i)\P{ASCII}` takes no
    /// scalar that folds to ASCII, so not the ASCII letters that the Kelvin sign, `ſ` and `İ`
    /// fold to; before, it took them, and junked `kiss me tonight`.
    @Test(arguments: [
        (#"\P{ASCII}{4,}"#, true, "kiss me tonight", false),
        (#"\P{ASCII}{4,}"#, true, "ISIS", false),
        (#"\P{ASCII}{4,}"#, true, "привет", true),
        (#"(?i)\P{ASCII}{4,}"#, false, "kiss", false),
        (#"\P{ASCII}"#, true, "\u{17F}", false),
        (#"\P{ASCII}"#, false, "\u{17F}", true),
        (#"\P{ASCII}"#, true, "\u{212A}", false),
        (#"(?-i:\P{ASCII})"#, true, "\u{212A}", true),
        (#"[\P{ASCII}x]"#, true, "X", true),
        (#"[\P{ASCII}x]"#, true, "k", false),
        (#"[^k]x"#, true, "\u{212A}x", false),
        (#"[^k]x"#, true, "ax", true),
        (#"\P{Lu}x"#, false, "ax", true),
        (#"\P{Lu}x"#, true, "ax", false),
        (#"\P{Lu}x"#, true, "1x", true),
    ])
    func negatedPropertiesIgnoringCaseAreTheComplementOfTheClosure(
        pattern: String,
        caseInsensitive: Bool,
        text: String,
        matches: Bool
    ) throws {
        let classifier = try #require(regexClassifier(pattern, caseInsensitive: caseInsensitive))
        #expect(verdict(classifier, text) == matches)
    }

    /// No backtracking engine in the extension's library.
    @Test func messageFilterCoreHasNoSwiftRegex() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = root.appendingPathComponent("Sources/MessageFilterCore")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".swift")
        }
        #expect(names.count >= 8)
        for name in names {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for word in [
                "Regex<", "try Regex(", "import RegexBuilder", "import _StringProcessing", "firstMatch(in:",
                "wholeMatch(in:",
            ] {
                #expect(!text.contains(word), "\(name) uses \(word)")
            }
        }
    }
}

@Suite struct RegexMessageTests {
    @Test(arguments: [
        ("a{1001}", "the quantifier at character 2 repeats more than 1000 times, the largest bound allowed"),
        (
            "a{99999999999999999999}",
            "the quantifier at character 2 repeats more than 1000 times, the largest bound allowed"
        ),
        ("a{2,1001}", "the quantifier at character 2 repeats more than 1000 times, the largest bound allowed"),
        ("a{2,1}", "the quantifier at character 2 has its bounds backwards: {2,1} asks for at least 2 but at most 1"),
        (
            "a{",
            "the { at character 2 must start a quantifier {m}, {m,}, {m,n} or {,n}; escape it as \\{ for a literal {"
        ),
        (
            "a{x}",
            "the { at character 2 must start a quantifier {m}, {m,}, {m,n} or {,n}; escape it as \\{ for a literal {"
        ),
        (
            "a{,5}",
            "the pattern matches the empty string, so it would match every message; require at least one character"
        ),
        ("a{1", "the quantifier at character 2 is never closed with }"),
        ("a{1,", "the quantifier at character 2 is never closed with }"),
        ("a{1,2x}", "the quantifier at character 2 is never closed with }"),
        (
            "(a{100}){11}",
            "the pattern needs 1,100 instructions once its repetitions are expanded; at most 1,000 are allowed, so narrow the {m,n} bounds"
        ),
        (
            "\\w{1,1000}",
            "the pattern needs 1,999 instructions once its repetitions are expanded; at most 1,000 are allowed, so narrow the {m,n} bounds"
        ),
        (
            "((a{1000}){1000}){1000}",
            "the pattern needs over 1,000,000 instructions once its repetitions are expanded; at most 1,000 are allowed, so narrow the {m,n} bounds"
        ),
        ("[z-a]", "the range at character 2 runs backwards; write the smaller character first"),
        ("(ab", "the group at character 1 is never closed with )"),
        ("ab)", "the ) at character 3 closes no group"),
        ("a**", "the quantifier * at character 3 follows nothing it can repeat"),
        ("^*", "the quantifier * at character 2 follows nothing it can repeat"),
        ("\\b?x", "the quantifier ? at character 3 follows nothing it can repeat"),
        (
            "a\\\n",
            "the escape \\U+000A at character 2 is not in the allowed subset (\\d \\w \\s, their capitals, \\b \\B \\A \\z, \\n \\r \\t \\f \\v, \\xHH, \\x{H…}, \\uHHHH, \\UHHHHHHHH, \\p{…}, \\Q…\\E and escaped punctuation are)"
        ),
    ])
    func namesTheProblem(pattern: String, sentence: String) {
        do {
            _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
            Issue.record("accepted \(pattern)")
        } catch {
            #expect(error.description == sentence)
        }
    }

    /// Inline flags and named groups, as spam-filter authors write them (issue 29, item 2): `i`
    /// and `s`, set for the rest of the group or for `(?flags:…)`; a name is a plain group.
    @Test(arguments: [
        ("(?i)free\\s+(bet|spins?)", "FREE  Spins", true), ("(?i:free)BET", "FreeBET", true),
        ("(?i:free)BET", "FreeBet", false), ("a(?i)b", "aB", true), ("a(?i)b", "AB", false),
        ("a(?i)b|c", "C", true), ("((?i)a)b", "Ab", true), ("((?i)a)b", "AB", false), ("(?s)a.b", "a\nb", true),
        ("a.b", "a\nb", false), ("(?s:a.)b", "a\nb", true), ("(?P<amount>\\d+)원", "5000원", true),
        ("(?<n>x)y", "xy", true), ("(?'n'x)y", "xy", true), ("(?i-s)a.b", "A\nB", false), ("(?is)a.b", "A\nB", true),
    ])
    func readsInlineFlagsAndNamedGroups(pattern: String, text: String, matches: Bool) throws {
        let classifier = try #require(regexClassifier(pattern), "refused: \(pattern)")
        #expect(verdict(classifier, text) == matches, "\(pattern) on \(text.debugDescription)")
    }

    /// Ignoring case by the rule, `(?-i)` makes a part exact again, and its literal still serves
    /// as the prefilter (lowercased, as the folded view holds it).
    @Test func anExactPartInARuleIgnoringCase() throws {
        let classifier = try #require(regexClassifier("(?-i:ABC)def", caseInsensitive: true))
        #expect(verdict(classifier, "xxABCDEF"))
        #expect(!verdict(classifier, "xxabcdef"))
        #expect(
            try RegexSubset.analyze("(?-i:ABC)def", caseInsensitive: true).requiredLiterals == [Array("abcdef".utf8)]
        )
        // Under `(?i)` in a case-sensitive rule, the literal could be in any case: none is required.
        #expect(try RegexSubset.analyze("(?i:abc)", caseInsensitive: false).requiredLiterals.isEmpty)
    }

    /// A required literal other than ASCII filters its regex as the rule's view holds it: in NFC
    /// (a decomposed `É` is `É`), folded when the rule ignores case (`ÉTUDE`, `ΣΟΦΙΑ`), and
    /// Hangul as it is.
    @Test func aLiteralBeyondASCIIFiltersAsTheViewHoldsIt() throws {
        func classifier(_ pattern: String, caseSensitive: Bool) throws -> MessageClassifier {
            try #require(regexClassifier(pattern, caseInsensitive: !caseSensitive, normalize: true))
        }
        let etude = try classifier("ÉTUDE \\d", caseSensitive: false)
        for text in ["une ÉTUDE 5", "une E\u{301}TUDE 5", "une étude 5", "Étude 5"] {
            #expect(verdict(etude, text), "\(text.debugDescription)")
        }
        #expect(!verdict(etude, "une etude 5"))
        let sophia = try classifier("ΣΟΦΙΑ", caseSensitive: false)
        #expect(verdict(sophia, "ΣΟΦΙΑ") && verdict(sophia, "Σοφια") && !verdict(sophia, "sofia"))
        let exact = try classifier("Étude", caseSensitive: true)
        #expect(verdict(exact, "E\u{301}tude") && !verdict(exact, "étude"))
        let abroad = try classifier("\\[(국외|국제)발신\\]", caseSensitive: true)
        #expect(verdict(abroad, "[국제발신]\n대출") && !verdict(abroad, "[국제수신]"))
        #expect(try RegexSubset.analyze("ΣΟΦΙΑ", caseInsensitive: true).requiredLiterals == [Array("σοφια".utf8)])
    }

    /// What needs backtracking is refused with a sentence naming the construct and why.
    @Test(arguments: [
        ("(\\w+) \\1", "the backreference \\1 at character 7 cannot be used: matching what a group captured"),
        ("(?P<n>a)(?P=n)", "the backreference (?P= at character 9 cannot be used: it needs a backtracking engine"),
        ("(?<n>a)\\k<n>", "the backreference \\k at character 8 cannot be used"),
        ("free(?=bet)", "the lookahead (?= at character 5 cannot be used: it needs a backtracking engine"),
        ("free(?!bet)", "the lookahead (?! at character 5 cannot be used"),
        ("(?<=won)\\d", "the lookbehind (?<= at character 1 cannot be used"),
        ("(?<!won)\\d", "the lookbehind (?<! at character 1 cannot be used"),
        ("(?>a+)b", "the atomic group (?> at character 1 cannot be used"),
        ("(?m)^a", "the inline flag m at character 1 cannot be used: ^ and $ hold only at the ends of the text"),
        ("(?x)a b", "the inline flag x at character 1 cannot be used"),
        ("(?q)a", "the group at character 1 starts with (?q, which is no group or flag here"),
        ("(?i", "the group at character 1 is never closed with )"),
    ])
    func refusesWhatNeedsBacktrackingWithASentence(pattern: String, sentence: String) {
        do {
            _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
            Issue.record("accepted \(pattern)")
        } catch {
            #expect(error.description.hasPrefix(sentence), "\(error)")
        }
    }

    @Test(arguments: [
        "a{999}", "a{1000}", "a{0,499}b", "(?:ab){3,5}", "(a|b)*c", "(\\d{3}-)?\\d{3}-\\d{4}", "(?:\\b)?x", "(\\b)+x",
        "(?:^){2}x",
    ])
    func acceptsBoundsUpToTheLimit(pattern: String) throws {
        _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
    }

    /// A regex that matches the empty string matches every message: refused like an empty value.
    @Test(arguments: [
        ".*", "a|", "(|a)", "x*", "(?:)", "()", "^", "$", "\\d?", "^a*", "(?:a*|b)$", "[a-z]{0,5}", "(?:\\b|\\B)",
        "(?:\\b|\\B)x?", "^|\\b",
    ])
    func refusesRegexesThatMatchEveryMessage(pattern: String) {
        let json =
            #"[{"name":"all","target":"body","match":"regex","value":"\#(pattern.replacingOccurrences(of: "\\", with: "\\\\"))","action":"junk"}]"#
        do {
            _ = try RulesFile.load(bytes: Array(json.utf8), source: "rules.json")
            Issue.record("accepted \(pattern)")
        } catch {
            #expect(
                error.message
                    == "rules.json: rule 1 (\"all\"), field \"value\": the regex is refused: the pattern matches the empty string, so it would match every message; require at least one character."
            )
        }
    }

    /// A regex that matches any one character, of every kind, matches every message but the empty one.
    @Test(arguments: [
        "[\\s\\S]", "(.|\\n)", "\\w|\\W", "[^x]", "^[\\d\\D]", "[\\s\\S]$", "(?:.|\\s)+", "\\b|\\B[\\s\\S]",
    ])
    func refusesRegexesThatMatchAnyOneCharacter(pattern: String) {
        do {
            _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
            Issue.record("accepted \(pattern)")
        } catch {
            #expect(error.description.hasPrefix("the pattern matches any single character"), "\(error)")
        }
    }

    @Test(arguments: ["^$", "\\b", "\\B", "^\\d*$", "a?b", ".", "\\S", "\\w", "[^a-z]", "\\W"])
    func acceptsRegexesThatMatchOnlySomeMessages(pattern: String) throws {
        _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
    }
}

@Suite struct NormalizationTests {
    /// U+061C, the Arabic letter mark, is a bidirectional control like U+200F.
    @Test func removesTheArabicLetterMark() throws {
        let view = TextView(caseInsensitive: true, normalized: true)
        #expect(view.fold("pr\u{061C}ize") == Array("prize".utf8))
        let classifier = try compiled([
            MessageRule(name: "x", target: .body, match: .contains, value: "prize", action: .junk)
        ])
        #expect(classifier.classify(sender: "+1", body: "a pr\u{061C}ize") == .init(action: .junk, rule: 0))
    }

    /// The scalars the case-insensitive view passes over without folding fold to themselves.
    @Test func caselessScalarsFoldToThemselves() {
        var changed: [UInt32] = []
        var caseless = 0
        for value in UInt32(0)..<0x11_0000 where TextView.isCaseless(value) {
            caseless += 1
            if RegexProgram.fold(value) != value { changed.append(value) }
        }
        #expect(changed.isEmpty, "folded: \(changed.prefix(10).map { String($0, radix: 16) })")
        #expect(caseless > 35_000 && !TextView.isCaseless(0x2126) && !TextView.isCaseless(0x24B6))
    }

    /// A text `TextView.normalizedForm(of:)` finds unchanged is its own normalized view, which the
    /// classifier then does not make; a plain one is also its own fold ignoring case but for ASCII
    /// capitals, which the keyword automata then read as it is. Seeded texts of Hangul, Latin with
    /// marks (composed and not), Greek, Cyrillic, fullwidth forms, invisible characters, `İ` and
    /// the Kelvin sign, each form compared with the views the classifier would have made.
    @Test func textsFoundUnchangedAreTheirOwnNormalizedView() {
        let alphabet: [UInt32] = [
            0x61, 0x41, 0x20, 0x31, 0xAC00, 0xD55C, 0x3131, 0x4E2D, 0xE9, 0xC9, 0x65, 0x301, 0x3B1, 0x391, 0x434,
            0x414, 0xFF21, 0xFF41, 0x200B, 0xAD, 0x130, 0x212A, 0x20AC, 0x1F600, 0x1100, 0x1161, 0xDF, 0x1E9E,
            // Around the Hangul syllables, which are known by their first two bytes.
            0xABFF, 0xD7A3, 0xD7A4, 0xD7B0, 0xA9D0,
        ]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        let normalized = TextView(caseInsensitive: false, normalized: true)
        let folded = TextView(caseInsensitive: true, normalized: true)
        var counts: [TextView.NormalizedForm: Int] = [:]
        for _ in 0..<SeededRuns.count(20_000, short: 5_000) {
            var text = ""
            for _ in 0..<(1 + next() % 6) {
                text.unicodeScalars.append(Unicode.Scalar(alphabet[next() % alphabet.count])!)
            }
            let bytes = Array(text.utf8)
            let form = bytes.withUnsafeBufferPointer { TextView.normalizedForm(of: $0) }
            counts[form, default: 0] += 1
            guard form != .changed else { continue }
            #expect(normalized.fold(text) == bytes, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            if form == .plain {
                #expect(
                    folded.fold(text) == bytes.map(asciiLowercase),
                    "plain: \(text.unicodeScalars.map { String($0.value, radix: 16) })"
                )
            }
        }
        #expect(counts.count == 3 && counts.values.allSatisfy { $0 > 100 }, "\(counts)")
    }

    /// The scalars the normalized view takes to be in NFC wherever they stand (and so passes
    /// over without normalizing) are: of combining class 0, their own NFC, by the standard
    /// library (Unicode 17) and by Python's `unicodedata`, and second in no canonical composition
    /// (Python's decompositions, and Hangul's rule). A scalar wrongly taken for one would keep a
    /// text from NFC.
    @Test func stableScalarsAreStableInNFC() throws {
        let ranges = TextView.stableInNFCRanges
        #expect(ranges.allSatisfy { range in range.allSatisfy(TextView.isStableInNFC) })
        #expect(!TextView.isStableInNFC(0x301) && !TextView.isStableInNFC(0x1161) && !TextView.isStableInNFC(0x2126))
        var ours: [UInt32] = []
        for range in ranges {
            for value in range where (0xD800...0xDFFF).contains(value) == false {
                let scalar = Unicode.Scalar(value)!
                let nfc = Array(String(Character(scalar))._nfcCodeUnits)
                if scalar.properties.canonicalCombiningClass.rawValue != 0 || nfc != Array(String(scalar).utf8) {
                    ours.append(value)
                }
            }
        }
        #expect(ours.isEmpty, "not stable by the standard library: \(ours.prefix(10).map { String($0, radix: 16) })")
        let script = """
            import json, sys, unicodedata as u
            second = set()
            for cp in range(0x110000):
                d = u.decomposition(chr(cp))
                if d and not d.startswith('<'):
                    parts = [int(x, 16) for x in d.split()]
                    if len(parts) == 2 and u.normalize('NFC', chr(parts[0]) + chr(parts[1])) == chr(cp):
                        second.add(parts[1])
            # Hangul syllables compose by rule, not by a listed decomposition: a vowel after a
            # leading consonant, a trailing consonant after an LV syllable.
            second.update(range(0x1161, 0x1176))
            second.update(range(0x11A8, 0x11C3))
            for line in sys.stdin:
                bad = []
                for low, high in json.loads(line):
                    for cp in range(low, high + 1):
                        if 0xD800 <= cp <= 0xDFFF:
                            continue
                        c = chr(cp)
                        if u.combining(c) != 0 or u.normalize('NFC', c) != c or cp in second:
                            bad.append(cp)
                print(json.dumps(bad), flush=True)
            """
        let request = ranges.map { [Int($0.lowerBound), Int($0.upperBound)] }
        let theirs = try #require(try PythonReference.answers(script, [request]).first as? [Int])
        #expect(theirs.isEmpty, "not stable by Python: \(theirs.prefix(10).map { String($0, radix: 16) })")
    }

    /// The views as the standard library makes them: normalized, the invisible characters
    /// dropped, fullwidth ASCII made ASCII, and NFC; then, ignoring case, each scalar's
    /// `lowercased()` where it is one scalar (`İ` to `i`, its simple mapping, and `ſ` to `s`, as
    /// the docs say), with no NFC after. The filter's own fold skips lookups for caseless scalars
    /// and NFC for text already in it; it must give the same bytes.
    static func referenceFold(_ view: TextView, _ text: String) -> [UInt8] {
        var string = text
        if view.normalized {
            var kept = String.UnicodeScalarView()
            for scalar in string.unicodeScalars where !TextView.isInvisibleFormat(scalar.value) {
                kept.append((0xFF01...0xFF5E).contains(scalar.value) ? Unicode.Scalar(scalar.value - 0xFEE0)! : scalar)
            }
            string = String(decoding: Array(String(kept)._nfcCodeUnits), as: UTF8.self)
        }
        if view.caseInsensitive {
            var folded = String.UnicodeScalarView()
            for scalar in string.unicodeScalars {
                let lower = String(scalar).lowercased().unicodeScalars
                folded.append(scalar == "ſ" ? "s" : scalar == "İ" ? "i" : lower.count == 1 ? lower.first! : scalar)
            }
            string = String(folded)
        }
        return Array(string.utf8)
    }

    @Test func foldsAsTheStandardLibraryDoes() {
        let alphabet = Array(
            ("aAzZtT09 -.ſẞßİıΣσςKkÅÅΩΩéÉ\u{301}\u{316}\u{327}\u{345}\u{308}가각\u{1100}\u{1161}\u{11A8}ḉẛ\u{307}ＡＢａ！"
                + "\u{200B}\u{AD}\u{34F}\u{FEFF}\u{202E}か\u{3099}大\u{F900}😀\u{2000}\u{2019}「ǅǄǆΐ\u{0344}\u{0958}Ⅻⓐ")
                .unicodeScalars
        )
        var random = SplitMix64(state: 31)
        // The views through confusables are held to a skeleton in Python (ConfusablesTests).
        for view in TextView.all where !view.confusables {
            for _ in 0..<SeededRuns.count(3_000, short: 500) {
                var text = String.UnicodeScalarView()
                for _ in 0..<Int.random(in: 1...24, using: &random) {
                    text.append(alphabet.randomElement(using: &random)!)
                }
                let string = String(text)
                #expect(view.fold(string) == Self.referenceFold(view, string), "\(view): \(string.debugDescription)")
            }
        }
    }

    /// A run of combining marks keeps its first 30, so that 64 KiB of marks costs what other text
    /// does (normalizing them took 0.41 s, in time square in the run).
    @Test func keepsThirtyCombiningMarksOfARun() {
        let view = TextView(caseInsensitive: true, normalized: true)
        let long = "x" + String(repeating: "\u{301}", count: 1_000) + "y" + String(repeating: "\u{316}", count: 31)
        let kept = "x" + String(repeating: "\u{301}", count: 30) + "y" + String(repeating: "\u{316}", count: 30)
        #expect(view.fold(long) == Self.referenceFold(view, kept))
        let short = "e" + String(repeating: "\u{301}", count: 30)
        #expect(view.fold(short) == Self.referenceFold(view, short))
        // Counted on the NFC text, and after the invisible characters go, so that equivalent
        // texts agree and a zero-width space does not reset the count (the second attack).
        #expect(
            view.fold("a" + String(repeating: "\u{301}", count: 40) + "b")
                == view.fold("\u{E1}" + String(repeating: "\u{301}", count: 39) + "b")
        )
        #expect(
            view.fold("a" + String(repeating: "\u{301}\u{200B}", count: 35) + "b")
                == view.fold("a" + String(repeating: "\u{301}", count: 35) + "b")
        )
        #expect(view.fold("cafe\u{200B}\u{301}") == view.fold("caf\u{E9}"))
    }
}

/// `\p{…}` and `\P{…}` (issue 29, item 2), held to Python's `regex` module, an independent
/// implementation of the same properties, scalar by scalar over a sample of every plane.
@Suite struct PropertyClassTests {
    static let names = [
        "L", "Lu", "Ll", "Lt", "Lm", "Lo", "N", "Nd", "Nl", "No", "P", "Pd", "Ps", "Po", "S", "Sm", "Sc", "So", "Z",
        "Zs", "M", "Mn", "Mc", "C", "Cc", "Cf", "Co", "Cn", "Hangul", "Han", "Latin", "Cyrillic", "Greek", "Arabic",
        "Hebrew", "Thai", "Hiragana", "Katakana", "Devanagari", "Common", "Inherited", "Script=Hangul", "sc=Hang",
        "gc=Lu", "General_Category=Letter", "Tolong_Siki", "Beria_Erfe", "ASCII",
    ]

    @Test func agreesWithPythonsRegexModule() throws {
        var scalars: [UInt32] = Array(stride(from: 0, to: 0x3_2000, by: SeededRuns.long ? 2 : 7))
        scalars += [0xA7CE, 0xA7CF, 0x11DE0, 0x16EA0, 0x10FFFD, 0xE0001, 0x1F600, 0xAC00, 0xD7A3, 0x3400]
        scalars = scalars.filter { !(0xD800...0xDFFF).contains($0) }
        // Only scalars assigned in the compiler's Unicode version (17.0): a `regex` of a later
        // Unicode assigns more (2026.11.19 assigns U+209F, U+A7DD and others that 17.0 leaves
        // unassigned), which the compiler's tables call unassigned.
        let unassigned = try #require(RegexProgram(pattern: "\\p{Cn}", caseInsensitive: false).parts.classes.first)
        scalars = scalars.filter { scalar in !unassigned.ranges.contains { $0.contains(scalar) } }
        #expect(scalars.count > 10_000)
        // Each name and its negation, as the compiler makes the class (what the file then
        // ships; `readsPropertiesAsWritten` classifies messages end to end).
        var patterns: [String] = []
        var ours: [[Bool]] = []
        for name in Self.names {
            for letter in ["p", "P"] {
                let pattern = "\\\(letter){\(name)}"
                let set = try #require(RegexProgram(pattern: pattern, caseInsensitive: false).parts.classes.first)
                #expect(!set.negated && set.escapes == 0)
                patterns.append(pattern)
                ours.append(
                    scalars.map { scalar in
                        // The ranges are sorted and disjoint: the last that starts at or before.
                        var low = 0
                        var high = set.ranges.count
                        while low < high {
                            let middle = (low + high) / 2
                            if set.ranges[middle].lowerBound <= scalar { low = middle + 1 } else { high = middle }
                        }
                        return low > 0 && set.ranges[low - 1].contains(scalar)
                    }
                )
            }
        }
        let script = """
            import json, regex, sys
            for line in sys.stdin:
                request = json.loads(line)
                r = regex.compile(request["p"])
                print(json.dumps([r.fullmatch(chr(c)) is not None for c in request["c"]]), flush=True)
            """
        let requests: [Any] = patterns.map { ["p": $0, "c": scalars] as [String: Any] }
        let theirs = try PythonReference.answers(script, requests).map { $0 as! [Bool] }
        try #require(theirs.count == ours.count)
        var disagreements = 0
        for (row, pattern) in patterns.enumerated() {
            for (column, scalar) in scalars.enumerated() where ours[row][column] != theirs[row][column] {
                disagreements += 1
                if disagreements <= 8 {
                    Issue.record(
                        "\(pattern) on U+\(String(scalar, radix: 16)): ours \(ours[row][column]), regex \(theirs[row][column])"
                    )
                }
            }
        }
        #expect(disagreements == 0)
    }

    /// Names match loosely (UAX #44), in and out of classes, and ignoring case a property class is
    /// closed under case like any class.
    @Test(arguments: [
        ("^\\p{uppercase letter}$", "A", true), ("^\\p{Uppercase-Letter}$", "a", false), ("^\\pL+$", "가a", true),
        ("\\p{Hangul}+\\s*대출", "급전대출", true), ("^[\\p{Hangul}\\d]+$", "대출24", true),
        ("^[^\\p{Hangul}]$", "가", false), ("^\\P{Hangul}$", "a", true), ("^[\\P{L}]$", "1", true),
        ("^\\p{script=latin}+$", "Claim", true), ("^\\p{Cyrillic}$", "с", true), ("^\\p{Latin}$", "с", false),
    ])
    func readsPropertiesAsWritten(pattern: String, text: String, matches: Bool) throws {
        let classifier = try compiled([
            MessageRule(name: "r", target: .body, match: .regex, value: pattern, action: .junk, caseSensitive: true)
        ])
        #expect((classifier.classify(sender: "+1", body: text).rule == 0) == matches, "\(pattern) on \(text)")
    }

    @Test(arguments: [
        ("\\p{Klingon}", "the \\p{Klingon} at character 1 cannot be used: it names no general category or script"),
        ("\\p{scx=Hang}", "the \\p{scx=Hang} at character 1 cannot be used: Script_Extensions is not supported"),
        ("a\\p{Emoji}", "the \\p{Emoji} at character 2 cannot be used"),
        ("\\p{L", "the \\p{ at character 1 is never closed"),
        ("\\p", "the \\p at character 1 needs a property"),
        ("[a-\\p{L}]", "the range at character 2 has a class escape"),
        // A line break in a name is shown as its code point, so that the sentence stays on one
        // line (found by the regex fuzzer in .ci/run).
        ("\\p{N\nd}", "the \\p{NU+000Ad} at character 1 cannot be used"),
        ("(?P\n)", "the group (?PU+000A at character 1 cannot be used"),
        ("[[:pun\nct:]]", "the class [:punU+000Act:] at character 2 is not one of"),
    ])
    func refusesWhatItCannotName(pattern: String, sentence: String) {
        do {
            _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
            Issue.record("accepted \(pattern)")
        } catch {
            #expect(error.description.hasPrefix(sentence), "\(error)")
        }
    }
}

/// The scalars normalization removes, as docs/MESSAGE-FILTER.md lists them, are exactly those the
/// code removes (issue 29: U+2061–U+2064 went unlisted).
@Suite struct RemovedScalarsTests {
    @Test func theDocsListEveryScalarNormalizationRemoves() throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("docs/MESSAGE-FILTER.md"), encoding: .utf8)
        let start = try #require(text.range(of: "Normalization removes exactly these scalars, and no\nothers: "))
        let end = try #require(text.range(of: " (soft hyphen;", range: start.upperBound..<text.endIndex))
        let sentence = text[start.upperBound..<end.lowerBound].split(whereSeparator: \.isWhitespace).joined(
            separator: " "
        )
        var listed: Set<UInt32> = []
        for item in sentence.replacingOccurrences(of: " and ", with: ", ").components(separatedBy: ", ") {
            let bounds = item.components(separatedBy: "–").compactMap { UInt32($0.dropFirst(2), radix: 16) }
            #expect(item.hasPrefix("U+") && (1...2).contains(bounds.count), "\(item)")
            if let low = bounds.first, let high = bounds.last { listed.formUnion(low...high) }
        }
        let removed = Set((UInt32(0)..<0x11_0000).filter { TextView.isInvisibleFormat($0) })
        #expect(listed == removed)
        let ignorable = Set(
            (UInt32(0)..<0x11_0000).filter { Unicode.Scalar($0)?.properties.isDefaultIgnorableCodePoint == true }
        )
        #expect(removed == ignorable)
        #expect(listed.contains(0x2061) && listed.contains(0x3164) && listed.contains(0xFE0F))
        // And the view drops each of them, between two letters.
        let view = TextView(caseInsensitive: false, normalized: true)
        for value in removed { #expect(view.fold("a\(Unicode.Scalar(value)!)b") == Array("ab".utf8)) }
    }
}

/// The Unicode version the docs name is the toolchain's, and its newest scalars reach compiled rules.
@Suite struct UnicodeVersionTests {
    @Test func theTablesAreUnicode17() throws {
        var newest = (major: 0, minor: 0)
        for value in UInt32(0)..<0x11_0000 {
            guard let age = Unicode.Scalar(value)?.properties.age else { continue }
            if (age.major, age.minor) > newest { newest = (age.major, age.minor) }
        }
        #expect(
            newest == (17, 0),
            "the standard library's tables are Unicode \(newest); docs/MESSAGE-FILTER.md names 17.0"
        )
        let text = try String(contentsOf: packageRoot.appendingPathComponent("docs/MESSAGE-FILTER.md"), encoding: .utf8)
        #expect(text.contains("Unicode \(newest.major).\(newest.minor) in Swift"))
        let cases: [(pattern: String, text: String)] = [("\u{A7CE}", "x\u{A7CF}"), ("\\d", "\u{11DE0}")]
        for (pattern, body) in cases {
            let classifier = try compiled([
                MessageRule(name: "r", target: .body, match: .regex, value: pattern, action: .junk, normalize: false)
            ])
            #expect(classifier.classify(sender: "+1", body: body).rule == 0, "\(pattern) on \(body)")
        }
    }
}

/// MessageFilterCore checks UTF-8 with the standard library's forward parser (every iOS has it),
/// and bytes in memory by RFC 3629's table, instead of `String(validating:as:)` (iOS 18): each
/// must accept and refuse the same bytes.
@Suite struct UTF8ValidationTests {
    @Test func agreesWithStringValidatingOnSeededBytes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        // Bytes drawn mostly from UTF-8's lead and continuation ranges, so that near-valid
        // sequences (overlong, surrogate, truncated, out of range) are common.
        let alphabet: [UInt8] = [
            0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
            0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
        ]
        var refused = 0
        let count = SeededRuns.count(50_000, short: 10_000)
        for _ in 0..<count {
            // An ASCII run first, of 0 to 11 bytes, so that the fast path's 8-byte steps end
            // anywhere before the rest.
            let bytes =
                Array(repeating: UInt8(0x61), count: Int(next() % 12))
                + (0..<Int(next() % 6)).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            #expect(isValidUTF8(bytes) == expected, "\(bytes)")
            #expect(bytes.withUnsafeBufferPointer { isValidUTF8($0) } == expected, "\(bytes), in memory")
            if !expected { refused += 1 }
        }
        #expect(refused > count / 5 && refused < count * 49 / 50)
        #expect(isValidUTF8(Array("대출 ß ✓ 👍🏽".utf8)))
        #expect(!isValidUTF8([0xED, 0xA0, 0x80]))  // a surrogate
        #expect(!isValidUTF8([0xC0, 0xAF]))  // an overlong "/"
    }
}

/// The syntax people paste (found by the field test of issue 29): scalars by their code, `\A`,
/// `\z`, `\Q…\E`, POSIX classes and `{,n}` are read; a possessive quantifier is named.
@Suite struct PastedSyntaxTests {
    @Test(arguments: [
        ("\\x41B", "xABx", true), ("\\x{D55C}", "한", true), ("[^\\x00-\\x7F]+대출", "저금리대출", true),
        ("[^\\x00-\\x7F]+대출", "a대출", false), ("[\\u3131-\\u318E\\uAC00-\\uD7A3]+ 대출", "급전 대출", true),
        ("[\\u4e00-\\u9fff]{2,}", "中文", true), ("[\\u4e00-\\u9fff]{2,}", "中", false), ("\\U0001F600", "x😀", true),
        ("\\Abit", "bit.ly", true), ("\\Abit", "a bit", false), ("ly\\z", "bit.ly", true), ("ly\\Z", "bit.lyx", false),
        ("\\Qbit.ly\\E", "bit.ly", true), ("\\Qbit.ly\\E", "bitxly", false), ("\\Qa+\\E+", "a++", true),
        ("\\Q(a|b)", "x(a|b)", true), ("[[:alpha:]]+[[:digit:]]{3}", "abc123", true),
        ("[[:upper:]]{3}", "ABC", true), ("x[[:punct:]]", "x!", true), ("x[[:punct:]]", "xa", false),
        ("ab{,3}c", "ac", true), ("ab{,3}c", "abbbc", true), ("ab{,3}c", "abbbbc", false),
    ])
    func readsWhatPeoplePaste(pattern: String, text: String, matches: Bool) throws {
        let classifier = try compiled([
            MessageRule(name: "r", target: .body, match: .regex, value: pattern, action: .junk, caseSensitive: true)
        ])
        #expect((classifier.classify(sender: "+1", body: text).rule == 0) == matches, "\(pattern) on \(text)")
    }

    @Test(arguments: [
        ("a++b", "the possessive quantifier ++ at character 2 cannot be used"),
        ("\\x4", "needs 2 hex digits"), ("\\x{}", "needs hex digits and a closing }"),
        ("\\uD800", "names no Unicode scalar"), ("[[:alpha]]", "is never closed with :]"),
        ("[[:letter:]]", "is not one of alpha"), ("a{,}", "gives no bound"), ("\\q", "\\xHH"),
    ])
    func namesWhatItCannotRead(pattern: String, expected: String) {
        do {
            _ = try RegexSubset.analyze(pattern, caseInsensitive: false)
            Issue.record("accepted \(pattern)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    /// In a normalized rule, a fullwidth character named by its code folds as if written.
    @Test func aFullwidthEscapeFoldsAsTheCharacter() throws {
        #expect(RegexSubset.normalizedPattern("[\\uFF10-\\uFF19]{3}") == "[0-9]{3}")
        #expect(RegexSubset.normalizedPattern("\\uFF08x\\uFF09") == "\\(x\\)")
        #expect(RegexSubset.normalizedPattern("\\Q（a\\E（") == "\\Q(a\\E\\(")
        let classifier = try compiled([
            MessageRule(name: "r", target: .body, match: .regex, value: "[\\uFF10-\\uFF19]{3}원", action: .junk)
        ])
        #expect(classifier.classify(sender: "+1", body: "５００원").rule == 0)
        #expect(classifier.classify(sender: "+1", body: "500원").rule == 0)
    }
}

/// Found by the field test of issue 29: `\d` took any scalar with a numeric value, so
/// `code: 一二三四五六` passed for six digits. It is now a decimal digit (Nd), as Python's `re` has it.
@Suite struct DecimalDigitTests {
    @Test(arguments: [
        ("code: 123456", true), ("code: \u{661}\u{662}\u{663}\u{664}\u{665}\u{666}", true),
        ("code: \u{FF11}\u{FF12}\u{FF13}\u{FF14}\u{FF15}\u{FF16}", true), ("code: 一二三四五六", false),
        ("code: ①②③④⑤⑥", false), ("code: ½½½½½½", false), ("code: ⅠⅡⅢⅣⅤⅥ", false), ("code: ¹²³⁴⁵⁶", false),
    ])
    func aDigitIsADecimalDigit(body: String, matches: Bool) throws {
        let classifier = try compiled([
            MessageRule(name: "OTP", target: .body, match: .regex, value: "code:? \\d{6}", action: .transaction)
        ])
        #expect((classifier.classify(sender: "+1", body: body).rule == 0) == matches, "\(body)")
    }
}
