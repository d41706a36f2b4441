import Foundation
import MessageFilterCompiler
import MessageFilterCore
import Testing

let sampleRules = [
    MessageRule(name: "Bank", target: .sender, match: .prefix, value: "BANK", action: .allow),
    MessageRule(name: "Prize", target: .body, match: .contains, value: "you have won", action: .junk),
    MessageRule(name: "Links", target: .body, match: .regex, value: "https?://bit\\.ly/\\w+", action: .junk),
    MessageRule(name: "Any digits", target: .any, match: .regex, value: "\\d{3}-\\d{4}", action: .promotion),
    MessageRule(name: "Stop", target: .body, match: .suffix, value: "stop", action: .promotion, caseSensitive: true),
]

@Suite struct CompiledRulesTests {
    @Test func roundTripsRulesAndRefusesEveryChangedByte() throws {
        let bytes = RulesCompiler.compile(sampleRules)
        let rules = try CompiledRules(bytes: bytes, name: "sample")
        #expect(rules.rules.map(\.name) == sampleRules.map(\.name))
        #expect(rules.rules.map(\.value) == sampleRules.map(\.value))
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x01
            #expect(throws: MessageFilterError.self, "byte \(index)") {
                try CompiledRules(bytes: changed, name: "changed")
            }
        }
        for length in [0, 7, 31, bytes.count - 1] {
            #expect(throws: MessageFilterError.self) {
                try CompiledRules(bytes: Array(bytes.prefix(length)), name: "cut")
            }
        }
        #expect(throws: MessageFilterError.self) { try CompiledRules(bytes: bytes + [0], name: "longer") }
    }

    /// A file cut inside its header is named as such, and a directory's rules.blsms is read as
    /// compiled rules whatever it holds, never as JSON (found by the attack on this work).
    @Test func cutAndEmptyFilesAreNamedForWhatTheyAre() throws {
        let bytes = RulesCompiler.compile(sampleRules)
        #expect {
            try CompiledRules(bytes: Array(bytes.prefix(31)), name: "cut")
        } throws: { error in
            (error as? MessageFilterError)?.message.contains("31 bytes, fewer than its 32-byte header") == true
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        FileManager.default.createFile(atPath: directory.appendingPathComponent("rules.blsms").path, contents: Data())
        #expect {
            try RulesLoader.load(directory.path)
        } throws: { error in
            guard let error = error as? MessageFilterError else { return false }
            return error.message.contains("not a compiled rules file") && !error.message.contains("JSON")
        }
    }

    /// The file is mapped, not read: a classifier over the mapping decides as one over a copy in
    /// the heap, names included, and the mapping outlives the file's replacement by rename.
    @Test func aMappedFileDecidesAsACopyDoes() throws {
        let directory = try TemporaryFiles()
        let path = try CompiledRulesFile.write(RulesCompiler.compile(sampleRules), toDirectory: directory.path + "/out")
        let copy = MessageClassifier(
            rules: try CompiledRules(bytes: RulesCompiler.compile(sampleRules), name: "copy", denseTableBudget: 0)
        )
        let mapped = MessageClassifier(rules: try CompiledRules(contentsOf: path, denseTableBudget: 0))
        #expect(mapped.rules.rules.map(\.name) == sampleRules.map(\.name))
        // Replaced by rename, as the app writes it: the mapping keeps the file it checked.
        _ = try CompiledRulesFile.write(
            RulesCompiler.compile(Array(sampleRules.prefix(1))),
            toDirectory: directory.path + "/out"
        )
        for (sender, body) in [
            ("BANK", "x"), ("+1", "YOU HAVE WON"), ("+1", "go https://bit.ly/abc"), ("555-1234", "hi"), ("+1", "STOP"),
            ("+1", "stop"),
        ] {
            #expect(
                mapped.classify(sender: sender, body: body) == copy.classify(sender: sender, body: body),
                "\(sender) \(body)"
            )
        }
        #expect(mapped.rules.ruleCount == sampleRules.count)
    }

    @Test func writerReplacesOnlyCompiledRules() throws {
        let directory = try TemporaryFiles()
        let output = directory.path + "/out"
        let bytes = RulesCompiler.compile(sampleRules)
        _ = try CompiledRulesFile.write(bytes, toDirectory: output)
        _ = try CompiledRulesFile.write(bytes, toDirectory: output)  // its own file: replaced
        let foreign = directory.path + "/foreign"
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        try Data("not mine".utf8).write(to: URL(fileURLWithPath: foreign + "/" + CompiledRulesFile.name))
        #expect(throws: (any Error).self) { try CompiledRulesFile.write(bytes, toDirectory: foreign) }
        #expect(try String(contentsOfFile: foreign + "/" + CompiledRulesFile.name, encoding: .utf8) == "not mine")
        let linked = directory.path + "/linked"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: linked + "/" + CompiledRulesFile.name,
            withDestinationPath: foreign + "/" + CompiledRulesFile.name
        )
        #expect(throws: (any Error).self) { try CompiledRulesFile.write(bytes, toDirectory: linked) }
        #expect(try String(contentsOfFile: foreign + "/" + CompiledRulesFile.name, encoding: .utf8) == "not mine")
        // Nothing temporary is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: output) == [CompiledRulesFile.name])
        // A file larger than a reader takes is refused before anything is written.
        let tooLarge = directory.path + "/too-large"
        #expect {
            try CompiledRulesFile.write(
                [UInt8](repeating: 0, count: CompiledRulesFormat.maximumFileSize + 1),
                toDirectory: tooLarge
            )
        } throws: { error in
            (error as? MessageFilterError)?.message.contains("Nothing was written") == true
        }
        #expect(!FileManager.default.fileExists(atPath: tooLarge))
        #expect(try FileManager.default.contentsOfDirectory(atPath: linked) == [CompiledRulesFile.name])
    }
}

@Suite struct RegexSubsetTests {
    /// `literals`: what every match contains one of, `|` between them.
    @Test(arguments: [
        ("https?://bit\\.ly/\\w+", "://bit.ly/"),
        ("Code:? \\d{6}", "code"),
        ("win|won", "win|won"),
        ("(?:ab|cd)efg", "efg"),
        ("[0-9]+ usd", " usd"),
        ("ab+c", "ab"),
        ("x{0,3}yz", "yz"),
        ("(a+)+$", "a"),
        (".*a.*b", "a"),
        ("a+b+", "a"),
        ("a{1000}", "a"),
        ("xy(?:ab)*cd", "xy"),
        ("\\b(usps|ups|fedex|dhl)\\b.{0,30}\\b(package|parcel|shipment)\\b", "package|parcel|shipment"),
        ("(colis|package|parcel).{0,40}(frais|fee)", "colis|package|parcel"),
        ("(gagn|remport)\\w*.{0,30}", "gagn|remport"),
        ("(a|b)|c", "a|b|c"),
        ("(ab|c?)d", "d"),
        ("(ab|c?)[0-9]", ""),
        ("(?:X|y)+z", "z"),
        ("(?:Xy|yZ)+", "xy|yz"),
        // Other scalars than ASCII are literals too, folded: 7 bytes of `발신]` beat 6 of `국외`.
        ("\\[(국외|국제)발신\\]", "발신]"),
        ("(대출|카드).{0,9}승인", "승인"),
        ("(대출|카드).{0,9}승", "대출|카드"),
        ("ÉTUDE", "étude"),
        ("ΣΟΦΙΑ", "σοφια"),
    ])
    func acceptsAndFindsTheRequiredLiterals(pattern: String, literals: String) throws {
        let analysis = try RegexSubset.analyze(pattern, caseInsensitive: true)
        let expected = literals.isEmpty ? [] : literals.split(separator: "|").map { Array($0.utf8) }
        #expect(analysis.requiredLiterals == expected)
        _ = try Regex(pattern)
    }

    @Test(arguments: [
        "(ab)*", "\\1", "(?=a)b", "(?>a)", "(?m)a", "[[a]]", "a{1001}",
        "a{3,1}", "[a-z", "[a\\", "(a", "a)", "*a", "a**", "", "\\", "[a-z]{0,64}[a-z]{0,64}", "(a{100}){101}",
        String(repeating: "a", count: 257),
    ])
    func refusesWhatIsNotInTheSubsetOrTooLargeOrMatchesEverything(pattern: String) {
        #expect(throws: RegexSubsetError.self) { try RegexSubset.analyze(pattern, caseInsensitive: false) }
    }
}

@Suite struct DeferralResponseTests {
    @Test(arguments: [
        (#"{"action":"junk"}"#, MessageAction.junk, nil as String?),
        (#" { "action" : "allow" , "rule": "x", "n": [1, 2.5e3, {"a": null}], "t": true } "#, .allow, nil),
        (#"{"action":"filter"}"#, .junk, nil),
        (#"{"action":"transaction","subAction":"transactionalFinance"}"#, .transaction, "transactionalFinance"),
        (#"{"action":"none"}"#, MessageAction.none, nil),
        (#"{"action":"\u006Aunk"}"#, .junk, nil),
        // A UTF-8 byte-order mark is skipped (RFC 8259 §8.1 lets a reader do so).
        ("\u{FEFF}" + #"{"action":"junk"}"#, .junk, nil),
        (
            #"{"action":"junk","x":"# + String(repeating: "[", count: 32) + String(repeating: "]", count: 32) + "}",
            .junk, nil
        ),
    ])
    func reads(json: String, action: MessageAction, subAction: String?) throws {
        let response = try Array(json.utf8).withUnsafeBytes { try DeferralResponse.parse($0) }
        #expect(response == DeferralResponse(action: action, subAction: subAction))
    }

    @Test(arguments: [
        "", "null", "[]", "{", #"{"action":"junk""#, #"{"action":"spam"}"#, #"{"rule":"x"}"#, #"{"action":junk}"#,
        #"{"action":"junk"} x"#, #"{"action":"promotion","subAction":"transactionalFinance"}"#, #"{"action":"\ud800"}"#,
        #"{"a":01,"action":"junk"}"#, "{\"action\":\"ju\u{1}nk\"}", String(repeating: "[", count: 40),
        #"{"x":"# + String(repeating: "[", count: 40) + #"}"#,
        // Two actions are ambiguous: JSONReader refuses a member named twice.
        #"{"action":"allow","action":"junk"}"#, #"{"action":"junk","subAction":"x","subAction":"y"}"#,
        #"{"action":"junk","x":"# + String(repeating: "[", count: 33) + String(repeating: "]", count: 33) + "}",
    ])
    func refuses(json: String) {
        #expect(throws: MessageFilterError.self) {
            try Array(json.utf8).withUnsafeBytes { try DeferralResponse.parse($0) }
        }
    }
}

@Suite struct RulesFileTests {
    @Test(arguments: [
        (#"[{"name":"a","target":"bodyy","match":"contains","value":"x","action":"junk"}]"#, "field \"target\""),
        (#"[{"name":"a","target":"body","match":"contains","value":"","action":"junk"}]"#, "field \"value\""),
        (#"[{"name":"a","target":"body","match":"regex","value":"(?=a)b","action":"junk"}]"#, "lookahead"),
        (#"[{"name":"a","target":"body","match":"contains","value":"x","action":"none"}]"#, "field \"action\""),
        (#"[{"name":"a","target":"body","match":"contains","value":"x","action":"junk","extra":1}]"#, "unknown field"),
        (#"[{"name":"a","target":"body","match":"contains","action":"junk"}]"#, "no field \"value\""),
        (#"[{"name":"","target":"body","match":"contains","value":"x","action":"junk"}]"#, "name is empty"),
        (#"[{"name":"a","target":"body","match":"contains","value":"\u200B","action":"junk"}]"#, "only invisible"),
        (#"{"rules": []}"#, "JSON array"),
        ("[1]", "rule 1 should be an object"), ("[null]", "rule 1 is null; it should be an object"),
        (
            #"[{"name":1,"target":"body","match":"contains","value":"x","action":"junk"}]"#,
            "field \"name\" should be a string"
        ),
        ("[", "not valid JSON"),
        (
            #"[{"name":"a","target":"body","match":"contains","value":"x","action":"junk","action":"allow"}]"#,
            "rules.json gives a key twice: line 1, column 77: the key \"action\" appears twice in one object"
        ),
        ("[" + String(repeating: "[", count: 70) + "]]", "rules.json is nested too deep: line 1, column 65"),
        // Regexes no text can match, and an option given as null (found by the attack on this
        // work: each was accepted).
        (
            #"[{"name":"a","target":"body","match":"regex","value":"\\b\\Bx","action":"junk"}]"#,
            "no message can match it"
        ),
        (#"[{"name":"a","target":"body","match":"regex","value":"a^b","action":"junk"}]"#, "no message can match it"),
        (
            #"[{"name":"a","target":"body","match":"contains","value":"x","action":"junk","normalize":null}]"#,
            "normalize"
        ),
    ])
    func refusesWithASentenceNamingTheField(json: String, expected: String) {
        do {
            _ = try RulesFile.load(bytes: Array(json.utf8), source: "rules.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.hasPrefix("rules.json"))
        }
    }

    /// In a normalized rule the pattern is folded as the text is (issue 29, item 2: these were
    /// refused): invisible characters dropped, fullwidth forms made ASCII (escaped where they are
    /// syntax), NFC; with `normalize` false the pattern stays as written and the text keeps what
    /// it needs.
    @Test(arguments: [
        ("\u{200B}x", "x", true), ("\u{FF41}bc", "ABC", true), ("[e\u{301}]x", "e\u{301}x", true),
        ("[e\u{301}]x", "\u{E9}x", true), ("\u{FF08}\\d+\u{FF09}", "(123)", true),
        ("\u{FF08}\\d+\u{FF09}", "\u{FF08}\u{FF11}\u{FF12}\u{FF09}", true), ("\u{FF08}\\d+\u{FF09}", "123", false),
        ("[0-9\u{FF10}-\u{FF19}]{4,}\\s*원", "\u{FF11}\u{FF12}\u{FF13}\u{FF14} 원", true),
        ("[0-9\u{FF10}-\u{FF19}]{4,}\\s*원", "1234원", true), ("a[:\u{FF1A}]b", "a:b", true),
        ("^[\u{212A}]$", "k", true), ("a\u{FF0B}", "aa", false), ("a\u{FF0B}", "a+", true),
        ("\\\u{FF0B}", "+", true),
    ])
    func foldsANormalizedRulesPattern(pattern: String, text: String, matches: Bool) throws {
        let classifier = try compiled([
            MessageRule(name: "r", target: .body, match: .regex, value: pattern, action: .junk)
        ])
        #expect(
            (classifier.classify(sender: "+1", body: text).rule == 0) == matches,
            "\(pattern.debugDescription) on \(text.debugDescription) as \(RegexSubset.normalizedPattern(pattern))"
        )
    }

    @Test func unnormalizedRegexesKeepWhatNormalizationRemoves() throws {
        let json =
            #"[{"name":"a","target":"body","match":"regex","value":"[e\u0301]x\u200B","action":"junk","normalize":false}]"#
        let file = try RulesFile.load(bytes: Array(json.utf8), source: "rules.json")
        let classifier = MessageClassifier(
            rules: try CompiledRules(bytes: RulesCompiler.compile(file.rules), name: "t")
        )
        #expect(classifier.classify(sender: "+1", body: "\u{301}x\u{200B}").rule == 0)
        #expect(classifier.classify(sender: "+1", body: "\u{E9}x\u{200B}").rule == nil)
    }

    /// A rule may give one of iOS 16's sub-actions of its action; the compiled file carries it
    /// (the high four bits of the action byte) and the classifier answers with it.
    @Test func subActionsAreCompiledAndAnswered() throws {
        var rules: [MessageRule] = []
        for action in [MessageAction.transaction, .promotion] {
            for (index, sub) in (DeferralResponse.subActions[action] ?? []).enumerated() {
                rules.append(
                    MessageRule(
                        name: sub,
                        target: .body,
                        match: .contains,
                        value: "k\(action)\(index)x",
                        action: action,
                        subAction: sub
                    )
                )
            }
        }
        rules.append(MessageRule(name: "plain", target: .body, match: .contains, value: "plain", action: .promotion))
        let classifier = try compiled(rules)
        #expect(rules.count == 13)
        for (index, rule) in rules.enumerated() {
            #expect(classifier.rules.rule(index).subAction == rule.subAction)
            let decision = classifier.classify(sender: "+1", body: "a \(rule.value) b")
            #expect(decision == .init(action: rule.action, rule: index, subAction: rule.subAction))
        }
        let json =
            #"[{"name":"a","target":"body","match":"contains","value":"x","action":"promotion","subAction":"transactionalFinance"}]"#
        do {
            _ = try RulesFile.load(bytes: Array(json.utf8), source: "rules.json")
            Issue.record("accepted a transactional sub-action on a promotion")
        } catch {
            #expect(
                error.message.contains("promotionalOthers, promotionalOffers, promotionalCoupons"),
                "\(error.message)"
            )
        }
    }

    @Test func warnsAboutContradictionsAndRepeatsAndAppliesPrecedence() throws {
        let json = #"""
            [{"name":"a","target":"body","match":"contains","value":"Sale","action":"promotion"},
             {"name":"b","target":"body","match":"contains","value":"sale","action":"junk"},
             {"name":"c","target":"body","match":"contains","value":"SALE","action":"promotion"}]
            """#
        let file = try RulesFile.load(bytes: Array(json.utf8), source: "r.json")
        #expect(file.warnings.count == 2)
        #expect(file.warnings[0].contains("junk wins by precedence"))
        #expect(file.warnings[1].contains("repeats rule 1"))
        let classifier = MessageClassifier(
            rules: try CompiledRules(bytes: RulesCompiler.compile(file.rules), name: "r")
        )
        #expect(classifier.classify(sender: "+1", body: "big sale") == .init(action: .junk, rule: 1))
    }

    @Test func refusesMessagesOutsideTheLimits() throws {
        let lines = [
            #"{"sender":"","body":"x"}"#, #"{"sender":"+1"}"#,
            "{\"sender\":\"+1\",\"body\":\"" + String(repeating: "a", count: 70_000) + "\"}",
        ]
        for line in lines {
            #expect(throws: MessageFilterError.self) { try TestMessage.load(Array(line.utf8), source: "m.jsonl") }
        }
        #expect(throws: MessageFilterError.self) { try TestMessage.load([0x7B, 0xFF, 0x7D], source: "m.jsonl") }
        // A BOM, CRLF, NUL and a right-to-left override are fine.
        let good = "\u{FEFF}{\"sender\":\"+1\",\"body\":\"a\\u0000b\u{202E}\"}\r\n"
        #expect(try TestMessage.load(Array(good.utf8), source: "m.jsonl").count == 1)
    }
}

/// A fresh temporary directory, removed when the value goes away.
final class TemporaryFiles {
    let path: String

    init() throws {
        var bytes = Array((FileManager.default.temporaryDirectory.path + "/blocklist-test-XXXXXX").utf8CString)
        guard mkdtemp(&bytes) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
