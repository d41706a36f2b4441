import BlocklistCore
import Foundation
import MessageFilterCompiler
import MessageFilterCore
import TestSupport
import Testing

/// Rules that match through confusables (issue 29, item 4): the UTS #39 skeleton against a
/// skeleton written again in Python, which reads confusables.txt itself (17.0.0, as
/// Scripts/data/confusables.txt vendors it and Scripts/unicode-confusables.py reads it) and takes
/// NFD from Python's own `unicodedata` (Unicode 14.0: the random texts hold only scalars it
/// knows) and the default-ignorable property from the `regex` module; and against ICU 78.3's
/// SpoofChecker (Unicode 17.0), where `icukit-pyicu` is installed (issue 45, item 4).
@Suite struct ConfusablesTests {
    static let pythonSkeleton = """
        import json, os, sys, unicodedata
        import regex
        path = \(String(reflecting: packageRoot.appendingPathComponent("Scripts/data/confusables.txt").path))
        table = {}
        for line in open(path, encoding="utf-8-sig"):
            fields = line.split("#")[0].split(";")
            if len(fields) == 3:
                table[chr(int(fields[0], 16))] = "".join(chr(int(x, 16)) for x in fields[1].split())
        ignorable = regex.compile(r"\\p{Default_Ignorable_Code_Point}")
        def normalized(t):
            t = "".join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else c for c in t
                if not ignorable.match(c))
            return unicodedata.normalize("NFC", t)
        def skeleton(t):
            t = unicodedata.normalize("NFD", t)
            t = "".join(c for c in t if not ignorable.match(c))
            return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in t))
        def fold(c):
            if c == "\\u0130": return "i"
            if c == "\\u017f": return "s"
            lower = c.lower()
            return lower if len(lower) == 1 else c
        def view(t, case_insensitive):
            t = normalized(t)
            if not case_insensitive:
                return skeleton(t)
            t = skeleton("".join(c.lower() if "A" <= c <= "Z" else c for c in t))
            return skeleton("".join(map(fold, t)))
        for line in sys.stdin:
            texts, case_insensitive = json.loads(line)
            print(json.dumps([view(t, case_insensitive) for t in texts]), flush=True)
        """

    /// Look-alikes of Latin letters and digits from many scripts and blocks, with what they are
    /// mistaken for, marks, ignorables, and Hangul.
    static let alphabet: [String] = [
        "c", "l", "a", "i", "m", "C", "L", "A", "I", "M", "0", "1", "O", "o", "rn", "vv", "w", " ", "-", ".",
        "\u{0441}", "\u{0430}", "\u{0456}", "\u{043E}", "\u{0421}", "\u{0410}", "\u{041C}",  // Cyrillic
        "\u{03BF}", "\u{0391}", "\u{039C}", "\u{03B9}",  // Greek
        "\u{1D41C}", "\u{1D425}", "\u{1D41A}", "\u{1D422}", "\u{1D426}", "\u{1D402}", "\u{1D5BA}",  // mathematical
        "\u{FF43}", "\u{FF4C}", "\u{FF21}", "\u{FF2D}", "\u{FF11}",  // fullwidth
        "\u{13DF}", "\u{13DE}", "\u{13AA}", "\u{13A5}", "\u{13B7}", "\u{AB6F}",  // Cherokee
        "\u{0131}", "\u{0130}", "\u{017F}", "\u{212A}", "\u{2160}", "\u{217C}", "\u{24D2}", "\u{0299}", "\u{029C}",
        "\u{0301}", "\u{0308}", "\u{0327}", "\u{0323}", "\u{05B4}", "\u{064E}", "é", "Å", "ñ", "ǅ", "ﬁ",
        "\u{200B}", "\u{00AD}", "\u{034F}", "\u{180E}", "\u{115F}", "\u{3164}", "\u{FE0F}",
        "한", "글", "\u{1100}", "\u{1161}", "\u{11A8}", "ㅣ", "ー", "一", "丨", "|", "!", "\u{01C3}", "$", "€",
    ]

    static func randomTexts(count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(state: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: 1...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
        }
    }

    @Test(arguments: [false, true])
    func theSkeletonAgreesWithOneWrittenInPython(caseInsensitive: Bool) throws {
        let texts = Self.randomTexts(count: SeededRuns.count(20_000, short: 3_000), seed: caseInsensitive ? 7 : 8)
        let view = TextView(caseInsensitive: caseInsensitive, normalized: true, confusables: true)
        let ours = texts.map { String(decoding: view.fold($0), as: UTF8.self) }
        let theirs = try #require(
            try PythonReference.answers(Self.pythonSkeleton, [[texts, caseInsensitive]]).first as? [String]
        )
        try #require(theirs.count == ours.count)
        var disagreements = 0
        for index in texts.indices where ours[index].unicodeScalars.elementsEqual(theirs[index].unicodeScalars) == false
        {
            disagreements += 1
            if disagreements <= 6 {
                Issue.record(
                    "\(texts[index].unicodeScalars.map { String($0.value, radix: 16) }): ours \(ours[index].unicodeScalars.map { String($0.value, radix: 16) }), Python \(theirs[index].unicodeScalars.map { String($0.value, radix: 16) })"
                )
            }
        }
        #expect(disagreements == 0)
        // The skeleton changes most texts: the test compares more than copies.
        #expect(texts.indices.count(where: { ours[$0] != texts[$0] }) > texts.count / 2)
    }

    /// Look-alikes that confusables.txt 13.0 lacked and 17.0 has (issue 45, item 4), with the
    /// letter each is taken for.
    static let newerLookAlikes: [(String, String)] = [
        ("\u{192}", "f"), ("\u{4CF}", "l"), ("\u{FE}", "p"), ("\u{17E0}", "o"), ("\u{1004}", "c"),
    ]

    /// Enables the test that asks ICU: a new machine has no `icu` module (`.ci/run` installs
    /// icukit-pyicu 78.3.1 and requires the test to run).
    static let hasICU = PythonReference.available("icu")

    /// The skeleton against ICU 78.3's SpoofChecker (Unicode 17.0, UTS #39 as ICU implements it:
    /// NFD, default ignorables removed, prototypes, NFD), on every scalar confusables.txt maps,
    /// alone and between letters, and on random texts of look-alikes, marks and ignorables.
    @Test(.enabled(if: hasICU, "needs Python's icu module, ICU 78's SpoofChecker: \(PythonReference.installs["icu"]!)"))
    func theSkeletonAgreesWithICUsSpoofChecker() throws {
        let vendored = try String(
            contentsOf: packageRoot.appendingPathComponent("Scripts/data/confusables.txt"),
            encoding: .utf8
        )
        let sources = vendored.split(separator: "\n").compactMap { line -> String? in
            guard !line.hasPrefix("#"), let field = line.split(separator: ";").first,
                let value = UInt32(field.trimmingCharacters(in: .whitespaces), radix: 16),
                let scalar = Unicode.Scalar(value)
            else { return nil }
            return String(scalar)
        }
        #expect(sources.count == 6_565)
        var texts = sources + sources.map { "a" + $0 + "b" }
        texts += Self.randomTexts(count: SeededRuns.count(20_000, short: 3_000), seed: 45)
        texts += Self.newerLookAlikes.map(\.0)
        let script = """
            import json, sys, icu
            assert icu.ICU_VERSION.split(".")[0] >= "78", icu.ICU_VERSION
            checker = icu.SpoofChecker()
            for line in sys.stdin:
                print(json.dumps([checker.getSkeleton(0, t) for t in json.loads(line)]), flush=True)
            """
        let theirs = try #require(try PythonReference.answers(script, [texts]).first as? [String])
        try #require(theirs.count == texts.count)
        var disagreements = 0
        for (text, expected) in zip(texts, theirs) {
            let ours = Skeleton.skeleton(of: text)
            guard !ours.unicodeScalars.elementsEqual(expected.unicodeScalars) else { continue }
            disagreements += 1
            if disagreements <= 6 {
                Issue.record(
                    "\(text.unicodeScalars.map { String($0.value, radix: 16) }): ours \(ours.unicodeScalars.map { String($0.value, radix: 16) }), ICU \(expected.unicodeScalars.map { String($0.value, radix: 16) })"
                )
            }
        }
        #expect(disagreements == 0, "\(disagreements) of \(texts.count) texts")
    }

    /// A keyword of 3 letters or fewer through confusables gets a warning naming a Cyrillic or
    /// Greek spelling that it matches (issue 45, item 4: `cop` junked `Сор на улице убрали`), and
    /// the spelling named is matched indeed; longer keywords, keywords without the option and
    /// keywords no such script spells get none.
    @Test func shortKeywordsThroughConfusablesAreWarnedAbout() throws {
        let values = ["cop", "top", "ok", "claim", "zq", "ay", "tom", "ноу"]
        var rules = values.map {
            MessageRule(name: $0, target: .body, match: .contains, value: $0, action: .junk, confusables: true)
        }
        rules.append(MessageRule(name: "plain", target: .body, match: .contains, value: "cop", action: .junk))
        var file = RulesFile(rules: rules)
        try file.check(source: "rules.json")
        let warned = file.warnings.filter { $0.contains("through confusables") }
        #expect(warned.count == 5, "\(file.warnings)")
        // `tom`'s skeleton is `torn`: `М` reads as `rn`, as `m` does (found by the field test).
        for name in ["cop", "top", "ok", "ay", "tom"] {
            let warning = try #require(warned.first { $0.contains("(\"\(name)\")") }, "no warning for \(name)")
            // The spelling the warning names, between the script and "has its skeleton".
            let spelling = try #require(warning.split(separator: "\"").dropFirst(5).first.map(String.init))
            #expect(spelling.unicodeScalars.allSatisfy { $0.value >= 0x370 && $0.value < 0x500 }, "\(warning)")
            let classifier = try compiled([
                MessageRule(name: name, target: .body, match: .contains, value: name, action: .junk, confusables: true)
            ])
            #expect(classifier.classify(sender: "+1", body: "… \(spelling) …").rule == 0, "\(warning)")
        }
    }

    /// A keyword or regex of characters normalization removes is refused with a sentence that
    /// offers `"normalize": false` (the field test found a literal zero-width space refused as an
    /// empty pattern, with no way out named).
    @Test(arguments: ["contains", "regex"]) func invisibleOnlyValuesOfferTheWayOut(match: String) {
        let json = #"[{"name":"zw","target":"body","match":"\#(match)","value":"\#u{200B}\#u{2060}","action":"junk"}]"#
        do {
            _ = try RulesFile.load(bytes: Array(json.utf8), source: "rules.json")
            Issue.record("accepted \(match)")
        } catch {
            #expect("\(error)".contains("empty once normalized"), "\(error)")
            #expect("\(error)".contains(#""normalize": false"#), "\(error)")
        }
    }

    /// The look-alikes that 13.0 lacked read as their letters (`ƒree` is `free`, `l០an` is `loan`).
    @Test func newerLookAlikesReadAsTheirLetters() {
        for (lookAlike, letter) in Self.newerLookAlikes {
            #expect(Skeleton.skeleton(of: lookAlike) == letter, "\(lookAlike.unicodeScalars.first!.value)")
        }
    }

    /// Keyword rules through confusables, in every position, against Python's containment of
    /// skeletons: the compiled automata agree with the definition.
    @Test func rulesAgreeWithSkeletonContainmentInPython() throws {
        var random = SplitMix64(state: 29)
        let values = (0..<40).map { _ in
            (0..<Int.random(in: 1...2, using: &random)).map { _ in Self.alphabet.randomElement(using: &random)! }
                .joined()
        }
        var rules: [MessageRule] = []
        for (index, value) in values.enumerated() {
            let rule = MessageRule(
                name: "r\(index)",
                target: .body,
                match: [MatchKind.prefix, .suffix, .contains].randomElement(using: &random)!,
                value: value,
                action: .junk,
                caseSensitive: Bool.random(using: &random),
                confusables: true
            )
            // A value whose skeleton is empty (ignorables only) is refused; leave it out.
            if !rule.view.fold(rule.value).isEmpty { rules.append(rule) }
        }
        let file = RulesFile(rules: rules)
        let classifier = try compiled(file.rules)
        let bodies = Self.randomTexts(count: SeededRuns.count(3_000, short: 600), seed: 31)
        var requests: [Any] = []
        for caseInsensitive in [false, true] { requests.append([bodies, caseInsensitive]) }
        requests.append([file.rules.map(\.value), false])
        requests.append([file.rules.map(\.value), true])
        let answers = try PythonReference.answers(Self.pythonSkeleton, requests).compactMap { $0 as? [String] }
        try #require(answers.count == 4)
        var matched = 0
        for (index, body) in bodies.enumerated() {
            var expected: Int?
            for (ruleIndex, rule) in file.rules.enumerated() {
                let text = answers[rule.caseSensitive ? 0 : 1][index]
                let value = answers[rule.caseSensitive ? 2 : 3][ruleIndex]
                let hit =
                    switch rule.match {
                    case .prefix: text.unicodeScalars.starts(with: value.unicodeScalars)
                    case .suffix: text.unicodeScalars.reversed().starts(with: value.unicodeScalars.reversed())
                    default: String(text.unicodeScalars).utf8.firstRange(of: value.utf8) != nil
                    }
                if hit {
                    expected = ruleIndex
                    break
                }
            }
            let decision = classifier.classify(sender: "+1", body: body)
            #expect(decision.rule == expected, "\(body.debugDescription)")
            if expected != nil { matched += 1 }
        }
        #expect(matched > bodies.count / 10)
    }

    /// Each disguise, with whether a case-sensitive rule and a rule ignoring case catch it.
    /// Ignoring case, ASCII capitals are lowercased first, so `I` is `i` there and never `l`:
    /// `cIaim` passes a rule ignoring case, and a case-sensitive rule catches it
    /// (MESSAGE-FILTER.md).
    @Test(arguments: [
        ("claim", "\u{0441}laim your prize", true, true),  // Cyrillic с
        ("claim", "\u{1D41C}\u{1D425}\u{1D41A}\u{1D422}\u{1D426} now", true, true),  // mathematical bold
        ("claim", "\u{FF43}\u{FF4C}\u{FF41}\u{FF49}\u{FF4D}", true, true),  // fullwidth
        ("claim", "c\u{200B}l\u{00AD}aim", true, true),  // invisible
        ("claim", "c1aim", true, true),  // digit 1 for l
        ("claim", "clairn", true, true),  // rn for m
        ("claim", "\u{0441}\u{217C}\u{0430}\u{0456}m", true, true),  // Cyrillic с, roman ⅼ, Cyrillic а, і
        ("claim", "CLAIM", false, true),
        ("claim", "\u{0421}LAIM", false, true),  // Cyrillic С
        ("claim", "\u{13DF}\u{13DE}\u{13AA}\u{13A5}\u{13B7}", false, true),  // Cherokee capitals
        ("bank", "\u{0412}\u{0410}N\u{041A}", false, true),  // Cyrillic В, А, К
        ("BANK", "\u{0412}\u{0410}N\u{041A}", true, true),
        ("claim", "cIaim", true, false),  // capital I for l
        ("claim", "clean", false, false), ("claim", "cl aim", false, false),
        ("paypal", "p\u{0430}yp\u{0430}l", true, true), ("대출", "대출 가능", true, true),
    ])
    func disguisesMatchAsDocumented(value: String, body: String, caseSensitive: Bool, ignoringCase: Bool) throws {
        for sensitive in [false, true] {
            let classifier = try compiled([
                MessageRule(
                    name: "r",
                    target: .body,
                    match: .contains,
                    value: value,
                    action: .junk,
                    caseSensitive: sensitive,
                    confusables: true
                )
            ])
            let expected = sensitive ? caseSensitive : ignoringCase
            #expect(
                (classifier.classify(sender: "+1", body: body).rule == 0) == expected,
                "\(value) on \(body), case-sensitive \(sensitive)"
            )
        }
    }

    /// Without the option, a disguise in another script passes; the normalized view alone folds
    /// only fullwidth forms.
    @Test func withoutTheOptionADisguisePasses() throws {
        let plain = try compiled([
            MessageRule(name: "r", target: .body, match: .contains, value: "claim", action: .junk)
        ])
        #expect(plain.classify(sender: "+1", body: "\u{0441}laim your prize").rule == nil)
        #expect(plain.classify(sender: "+1", body: "\u{1D41C}\u{1D425}\u{1D41A}\u{1D422}\u{1D426}").rule == nil)
        #expect(plain.classify(sender: "+1", body: "c1aim").rule == nil)
        #expect(plain.classify(sender: "+1", body: "\u{FF43}\u{FF4C}\u{FF41}\u{FF49}\u{FF4D}").rule == 0)
    }

    @Test(arguments: [
        (
            #"{"name":"a","target":"body","match":"regex","value":"claim","action":"junk","confusables":true}"#,
            "confusables are for keywords"
        ),
        (
            #"{"name":"a","target":"links","match":"domain","value":"bit.ly","action":"junk","confusables":true}"#,
            "never through confusables"
        ),
        (
            #"{"name":"a","target":"body","match":"contains","value":"claim","action":"junk","confusables":true,"normalize":false}"#,
            "read on the normalized text"
        ),
        (
            #"{"name":"a","target":"body","match":"contains","value":"claim","action":"junk","confusables":null}"#,
            "should be a boolean"
        ),
        (
            #"{"name":"a","target":"body","match":"contains","value":"\u200b\u2060","action":"junk","confusables":true}"#,
            "empty once normalized"
        ),
    ])
    func refusesWhatConfusablesCannotMean(json: String, expected: String) {
        do {
            _ = try RulesFile.load(bytes: Array("[\(json)]".utf8), source: "rules.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    /// No dead rule (issue 45, item 3): a regex of a normalized rule that names a scalar no
    /// normalized text holds, where it would have to match, is refused with the way out; a class
    /// that holds it beside other scalars, a case-insensitive rule where NFC's replacement folds
    /// alike, and a rule that reads the text as it comes are accepted.
    @Test(
        arguments: [
            (#"[\\u200B\\u200C\\u200D\\uFEFF]"#, "false", "true", "U+200B"),
            (#"win\\u200Bner"#, "true", "true", "U+200B"),
            (#"\\u212Aing"#, "true", "true", "U+212A"),
            (#"\\u212Bngstrom"#, "true", "true", "U+212B"),
            (#"\\u212Aing"#, "false", "true", nil),
            (#"[\\u200Bx]"#, "true", "true", nil),
            (#"[\\u200B\\u200C\\u200D\\uFEFF]"#, "true", "false", nil),
            // Scalars in a row that NFC composes (field test of issue 45): as escapes they never
            // matched; written as themselves they are composed with the pattern.
            (#"cafe\\u0301"#, "true", "true", #"cafe<U+0301>, which no normalized text holds (NFC makes them "café")"#),
            (#"\\u1100\\u1161"#, "false", "true", "<U+1100><U+1161>"),
            (#"A\\u030A"#, "true", "true", "A<U+030A>"),
            (#"cafe\\u0301"#, "true", "false", nil),
            ("cafe\u{301}", "true", "true", nil),
            (#"x\\u0301"#, "true", "true", nil),
            // Under an inline flag, in a group, or repeated (session 30's field test: each was
            // accepted and never matched); an optional part need not match.
            (#"(?i)caf\\x{65}\\x{301}"#, "false", "true", "cafe<U+0301>"),
            (#"(?-i)e\\x{301}"#, "false", "true", "e<U+0301>"),
            (#"caf(?i)e\\x{301}"#, "false", "true", "e<U+0301>"),
            (#"(?i:\\x{1100}\\x{1161})"#, "true", "true", "<U+1100><U+1161>"),
            (#"(?i)\\x{1107}\\x{1161}\\x{11AF}"#, "false", "true", "<U+1107><U+1161><U+11AF>"),
            (#"e\\x{301}+"#, "true", "true", "e<U+0301>"),
            (#"(?i)\\x{212A}ing"#, "false", "true", nil),
            (#"\\x{3164}?대출"#, "false", "true", nil),
            (#"(?:e\\x{301})?x"#, "false", "true", nil),
            // A class or a repetition under a flag is walked once (a first version recursed).
            (#"(?i)[ab]+x\\d{2}"#, "false", "true", nil),
        ] as [(String, String, String, String?)]
    )
    func aRegexNoNormalizedTextCanMatchIsRefused(
        value: String,
        caseSensitive: String,
        normalize: String,
        named: String?
    ) {
        let json =
            #"[{"name":"a","target":"body","match":"regex","value":"\#(value)","action":"junk","caseSensitive":\#(caseSensitive),"normalize":\#(normalize)}]"#
        do {
            _ = try RulesFile.load(bytes: Array(json.utf8), source: "rules.json")
            #expect(named == nil, "accepted \(json)")
        } catch {
            #expect(named != nil, "\(error.message)")
            #expect(error.message.contains("the regex names \(named ?? "")"), "\(error.message)")
            #expect(error.message.contains("\"normalize\": false"))
        }
    }

    /// Found by the second field test of issue 29: U+FDFA's prototype is 18 scalars, so 64 KiB of
    /// it made a skeleton of 393,000 scalars (70 ms and 12 MiB a message in the extension). A
    /// skeleton now holds at most `Skeleton.maximumScalars`; what comes first still matches.
    @Test func aSkeletonIsCutAtItsLimit() throws {
        let body = "\u{0441}laim " + String(repeating: "\u{FDFA}", count: 21_800)
        #expect(body.utf8.count <= MessageClassifier.maximumBodyBytes)
        for caseInsensitive in [false, true] {
            let view = TextView(caseInsensitive: caseInsensitive, normalized: true, confusables: true)
            let skeleton = view.fold(body)
            #expect(String(decoding: skeleton, as: UTF8.self).unicodeScalars.count <= Skeleton.maximumScalars)
            #expect(skeleton.starts(with: Array("clairn ".utf8)))
        }
        let classifier = try compiled([
            MessageRule(name: "r", target: .body, match: .contains, value: "claim", action: .junk, confusables: true)
        ])
        #expect(classifier.classify(sender: "+1", body: body).rule == 0)
    }

    /// Found by the field test of issue 45: with a limit of 65,536 scalars, 32,900 `m`s (each
    /// `rn`) or 62 KB of ordinary text hid a plain `free` at the end from a rule through
    /// confusables. Every ASCII body's skeleton is now whole, whatever it holds, and it is made a
    /// piece at a time.
    @Test func anASCIIBodyIsReadWholeThroughConfusables() throws {
        let classifier = try compiled([
            MessageRule(name: "r", target: .body, match: .contains, value: "free", action: .junk, confusables: true)
        ])
        let lorem = String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit, mm. ", count: 1_000)
        let paddings = [
            String(repeating: "m", count: 65_000), String(repeating: "%", count: 65_000), String(lorem.prefix(65_000)),
        ]
        for padding in paddings {
            for disguise in [" free gift", " \u{192}ree gift"] {
                let body = padding + disguise
                #expect(body.utf8.count <= MessageClassifier.maximumBodyBytes)
                #expect(
                    classifier.classify(sender: "+1", body: body).rule == 0,
                    "\(padding.prefix(12))… \(disguise)"
                )
            }
        }
    }

    /// The skeleton made a piece at a time is the skeleton made at once, on long texts of
    /// look-alikes, marks and ignorables, against the Python skeleton.
    @Test func longTextsAgreeWithOneWrittenInPython() throws {
        var random = SplitMix64(state: 451)
        let texts = (0..<12).map { _ in
            (0..<Int.random(in: 2_000...9_000, using: &random)).map { _ in
                Self.alphabet.randomElement(using: &random)!
            }
            .joined()
        }
        let view = TextView(caseInsensitive: false, normalized: true, confusables: true)
        let ours = texts.map { String(decoding: view.fold($0), as: UTF8.self) }
        let theirs = try #require(
            try PythonReference.answers(Self.pythonSkeleton, [[texts, false]]).first as? [String]
        )
        try #require(theirs.count == ours.count)
        for index in texts.indices {
            #expect(ours[index].unicodeScalars.elementsEqual(theirs[index].unicodeScalars), "text \(index + 1)")
        }
        #expect(texts.allSatisfy { $0.unicodeScalars.count > Skeleton.pieceScalars })
    }

    /// The compiled file keeps the option: its flag, its automaton, and its reader's checks.
    @Test func theCompiledFileKeepsTheOption() throws {
        let rules = [
            MessageRule(name: "a", target: .any, match: .contains, value: "claim", action: .junk, confusables: true),
            MessageRule(name: "b", target: .body, match: .contains, value: "claim", action: .allow),
        ]
        let compiledRules = try CompiledRules(bytes: RulesCompiler.compile(rules), name: "test")
        #expect(compiledRules.rules.map(\.view.confusables) == [true, false])
        #expect(compiledRules.automatonCount == 3)
        let classifier = MessageClassifier(rules: compiledRules)
        #expect(classifier.classify(sender: "\u{0441}laim", body: "hi").rule == 0)
        #expect(classifier.classify(sender: "+1", body: "claim").rule == 1)
        #expect(classifier.classify(sender: "+1", body: "\u{0441}laim").rule == 0)
    }
}
