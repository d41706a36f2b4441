import JSONStream
import MessageFilterCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A rules file: a JSON array of `MessageRule`s, read and checked.
package struct RulesFile: Sendable {
    package var rules: [MessageRule]
    /// Rules that contradict or repeat others: the same value, target, match and view. The
    /// precedence decides between them (`MessageAction.rank`, then file order); each is one
    /// sentence for a `warning:` line.
    package var warnings: [String]

    /// The largest rules file read: 64 MiB.
    package static let maximumBytes = 64 << 20

    /// Reads and checks the rules file at `path` (`-` for standard input is the caller's job).
    ///
    /// - Throws: `MessageFilterError.invalidRules` with a sentence naming the file, the rule (by
    ///   number and name) and the field.
    package static func load(_ data: Data, source: String) throws(MessageFilterError) -> RulesFile {
        try checkStrictly(Array(data), source: source)
        let rules: [MessageRule]
        do {
            rules = try JSONDecoder().decode([MessageRule].self, from: data)
        } catch let error as DecodingError {
            throw MessageFilterError(.invalidRules, Self.sentence(for: error, source: source, data: data))
        } catch {
            throw MessageFilterError(.invalidRules, "\(source) is not a rules file: \(error).")
        }
        var file = RulesFile(rules: rules, warnings: [])
        try file.check(source: source)
        return file
    }

    /// Reads the document once as strict JSON (RFC 8259) before the decoder does: JSONDecoder
    /// keeps one of two duplicate keys without a word and calls deep nesting "not valid JSON".
    ///
    /// - Throws: `.invalidRules` naming the key given twice, nesting past 64, or the line and
    ///   column of broken JSON.
    static func checkStrictly(_ bytes: [UInt8], source: String) throws(MessageFilterError) {
        if let sentence = TextFormat.notUTF8JSON(bytes, name: source) {
            throw MessageFilterError(.invalidRules, sentence)
        }
        let reader = JSONReader(bytes: bytes)
        do {
            while try reader.next() != nil {}
        } catch {
            switch error.kind {
            case .duplicateKey:
                throw MessageFilterError(
                    .invalidRules,
                    "\(source) gives a key twice: \(error.description); give each key once."
                )
            case .tooDeep:
                throw MessageFilterError(.invalidRules, "\(source) is nested too deep: \(error.description).")
            case .syntax, .limit, .io:
                throw MessageFilterError(.invalidRules, "\(source) is not valid JSON: \(error.description).")
            }
        }
    }

    /// Reads and checks a rules file's bytes; see `load(_:source:)`.
    package static func load(bytes: [UInt8], source: String) throws(MessageFilterError) -> RulesFile {
        try load(Data(bytes), source: source)
    }

    package init(rules: [MessageRule], warnings: [String] = []) {
        self.rules = rules
        self.warnings = warnings
    }

    /// Why a links rule's value is not a host to match, or nil: `bit.ly`, `*.example.com`,
    /// `1.2.3.4`, letters of any script; not a URL, a path, a port, an address or a space.
    static func domainProblem(_ value: String) -> String? {
        let host = value.hasPrefix("*.") ? String(value.dropFirst(2)) : value
        if let bad = host.unicodeScalars.first(where: {
            "/:@?#[]*\\,;".unicodeScalars.contains($0) || $0.properties.isWhitespace
        }) {
            return
                "the value holds \"\(bad)\"; write the host alone, as bit.ly, or *.example.com for it and every host under it"
        }
        if host.isEmpty || host.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "the value has an empty label; write a host such as bit.ly, or *.example.com"
        }
        return nil
    }

    /// Checks every rule's values and finds contradictions.
    package mutating func check(source: String) throws(MessageFilterError) {
        func fail(_ index: Int, _ field: String, _ what: String) -> MessageFilterError {
            let rule = rules[index]
            let label = rule.name.isEmpty ? "" : " (\"\(rule.name)\")"
            return MessageFilterError(
                .invalidRules,
                "\(source): rule \(index + 1)\(label), field \"\(field)\": \(what)."
            )
        }
        if rules.count > CompiledRulesFormat.maximumRules {
            throw MessageFilterError(
                .invalidRules,
                "\(source) has \(rules.count) rules; at most \(CompiledRulesFormat.maximumRules) are accepted."
            )
        }
        let entries = rules.reduce(0) { $0 + 1 + $1.all.count + $1.none.count }
        if entries > CompiledRulesFormat.maximumRules {
            throw MessageFilterError(
                .invalidRules,
                "\(source) has \(entries) rules and conditions together; at most \(CompiledRulesFormat.maximumRules) are accepted."
            )
        }
        /// Checks a plain rule's target, match, value and options, or a condition's (`place`
        /// names it: `all[2]`).
        func checkMatch(_ rule: MessageRule, _ index: Int, place: String?) throws(MessageFilterError) {
            func field(_ name: String) -> String { place.map { "\($0).\(name)" } ?? name }
            if rule.value.isEmpty {
                throw fail(index, field("value"), "the value is empty; an empty keyword would match every message")
            }
            if rule.match != .regex, rule.value.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
                throw fail(
                    index,
                    field("value"),
                    "the value is only white space, which nearly every message holds; write the words around it"
                )
            }
            if rule.value.utf8.count > CompiledRulesFormat.maximumValueBytes {
                throw fail(
                    index,
                    field("value"),
                    "the value has \(rule.value.utf8.count) bytes; at most \(CompiledRulesFormat.maximumValueBytes) are allowed"
                )
            }
            if (rule.target == .links) != (rule.match == .domain) {
                throw fail(
                    index,
                    field(rule.target == .links ? "match" : "target"),
                    "a domain is matched against the body's links, and the links only as domains: write \"target\": \"links\" with \"match\": \"domain\""
                )
            }
            if rule.target == .links {
                if rule.caseSensitive || !rule.normalize {
                    throw fail(
                        index,
                        field(rule.caseSensitive ? "caseSensitive" : "normalize"),
                        "links are compared ignoring case, on the normalized text; leave the option out"
                    )
                }
                if let problem = Self.domainProblem(rule.value) { throw fail(index, field("value"), problem) }
            }
            if rule.confusables {
                if rule.target == .links || rule.match == .regex {
                    throw fail(
                        index,
                        field("confusables"),
                        rule.target == .links
                            ? "links are compared as hosts, never through confusables; leave the option out"
                            : "confusables are for keywords (prefix, suffix, contains): a skeleton turns `m` into `rn`, which a regex would not expect; write the keyword instead"
                    )
                }
                if !rule.normalize {
                    throw fail(
                        index,
                        field("confusables"),
                        "confusables are read on the normalized text; leave \"normalize\": false out"
                    )
                }
            }
            if rule.match == .regex {
                do {
                    _ = try RegexSubset.analyze(rule.pattern, caseInsensitive: !rule.caseSensitive)
                } catch {
                    if rule.pattern.isEmpty, !rule.value.isEmpty {
                        // Only characters normalization removes (a literal zero-width space).
                        throw fail(
                            index,
                            field("value"),
                            "the regex is empty once normalized (it holds only invisible characters, which normalization removes from every message); set \"normalize\": false to match them as they are"
                        )
                    }
                    let folded = rule.pattern == rule.value ? "" : " (as normalized: \(rule.pattern))"
                    throw fail(index, field("value"), "the regex is refused\(folded): \(error)")
                }
                if rule.normalize,
                    let value = RegexSubset.deadScalar(in: rule.pattern, caseInsensitive: !rule.caseSensitive)
                {
                    let name = "U+\(String(value, radix: 16, uppercase: true))"
                    throw fail(
                        index,
                        field("value"),
                        "the regex names \(name), which no normalized text holds (normalization removes the invisible characters, and NFC replaces a few scalars, as the Kelvin sign by K), so that part never matches; write the character the text holds, or \"normalize\": false to read the text as it comes"
                    )
                }
                if rule.normalize,
                    let (run, nfc) = RegexSubset.deadSequence(in: rule.pattern, caseInsensitive: !rule.caseSensitive)
                {
                    let names = run.map { value in
                        let hex = String(value, radix: 16, uppercase: true)
                        return (0x21...0x7E).contains(value)
                            ? String(UnicodeScalar(UInt8(value)))
                            : "<U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)>"
                    }.joined()
                    throw fail(
                        index,
                        field("value"),
                        "the regex names \(names), which no normalized text holds (NFC makes them \"\(nfc)\"), so that part never matches; write \"\(nfc)\", or \"normalize\": false to read the text as it comes"
                    )
                }
                if let program = try? RegexProgram(pattern: rule.pattern, caseInsensitive: !rule.caseSensitive),
                    RegexSection.canMatch(program) == false
                {
                    throw fail(
                        index,
                        field("value"),
                        "the regex is refused: no message can match it (as with \\b\\B, a^b or an empty class such as [^\\s\\S]), so it would never decide anything"
                    )
                }
            } else if rule.view.fold(rule.value).isEmpty {
                throw fail(
                    index,
                    field("value"),
                    "the value is empty once normalized (it holds only invisible characters, which normalization removes from every message); \(rule.confusables ? "leave out \"confusables\" and " : "")set \"normalize\": false to match them as they are"
                )
            }
        }
        var firstByKey: [String: Int] = [:]
        var lookAlikes: [Int: [(String, [String: Unicode.Scalar])]] = [:]
        warnings = []
        for (index, rule) in rules.enumerated() {
            if rule.name.isEmpty { throw fail(index, "name", "the name is empty") }
            if rule.name.utf8.count > CompiledRulesFormat.maximumNameBytes {
                throw fail(
                    index,
                    "name",
                    "the name has \(rule.name.utf8.count) bytes; at most \(CompiledRulesFormat.maximumNameBytes) are allowed"
                )
            }
            if rule.name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw fail(index, "name", "the name holds a control character")
            }
            if rule.match == .all {
                if rule.all.isEmpty {
                    throw fail(
                        index,
                        "all",
                        "a rule that combines conditions needs one in \"all\" at least; a rule of \"none\" alone would match nearly every message"
                    )
                }
                let conditions = rule.all.count + rule.none.count
                if conditions > CompiledRulesFormat.maximumConditions {
                    throw fail(
                        index,
                        "all",
                        "the rule has \(conditions) conditions; at most \(CompiledRulesFormat.maximumConditions) are allowed"
                    )
                }
                for (number, condition) in rule.all.enumerated() {
                    try checkMatch(condition, index, place: "all[\(number + 1)]")
                }
                for (number, condition) in rule.none.enumerated() {
                    try checkMatch(condition, index, place: "none[\(number + 1)]")
                }
                // A condition both required and excluded: the rule never matches.
                let required = rule.all.map(Self.matchKey)
                if let clash = rule.none.firstIndex(where: { required.contains(Self.matchKey($0)) }) {
                    let other = required.firstIndex(of: Self.matchKey(rule.none[clash]))!
                    warnings.append(
                        "\(source): rule \(index + 1) (\"\(rule.name)\") can never match: none[\(clash + 1)] is all[\(other + 1)] again, so the rule excludes what it requires."
                    )
                }
            } else {
                try checkMatch(rule, index, place: nil)
            }
            for (number, condition) in ([rule] + rule.all + rule.none).enumerated() {
                guard let spelling = Self.shortLookAlike(condition, tables: &lookAlikes) else { continue }
                let place = number == 0 ? "" : " (a condition)"
                warnings.append(
                    "\(source): rule \(index + 1) (\"\(rule.name)\")\(place) matches \"\(condition.value)\" through confusables, and the \(spelling.script) \"\(spelling.text)\" has its skeleton: a keyword of 3 letters or fewer read through look-alikes also matches words of Russian, Ukrainian, Bulgarian or Greek text. Make the keyword longer, or leave \"confusables\" out."
                )
            }
            let key = Self.matchKey(rule)
            if let first = firstByKey[key] {
                let other = rules[first]
                if other.action == rule.action {
                    warnings.append(
                        "\(source): rule \(index + 1) (\"\(rule.name)\") repeats rule \(first + 1) (\"\(other.name)\"); it never decides anything."
                    )
                } else {
                    let winner = other.action.rank <= rule.action.rank ? other : rule
                    let what =
                        rule.match == .all
                        ? "combine the same conditions" : "match the same \(rule.match) \"\(rule.value)\""
                    warnings.append(
                        "\(source): rule \(index + 1) (\"\(rule.name)\", \(rule.action)) and rule \(first + 1) (\"\(other.name)\", \(other.action)) \(what); \(winner.action) wins by precedence."
                    )
                }
            } else {
                firstByKey[key] = index
            }
        }
    }

    /// For a keyword of 3 letters or fewer read through confusables, a spelling of it in Cyrillic
    /// or in Greek letters alone whose skeleton is the keyword's (`cop` is `сор`, `top` ignoring
    /// case `ТОР`, `tom` `ТОМ`, since `М` and `m` both read as `rn`), which would then be matched;
    /// nil for any other rule. Any such spelling, not only a dictionary's words: with 3 letters
    /// or fewer most are words or abbreviations in one of the languages these scripts write, and
    /// the project carries no word lists. `tables` keeps each view's letters by skeleton.
    static func shortLookAlike(_ rule: MessageRule, tables: inout [Int: [(String, [String: Unicode.Scalar])]]) -> (
        script: String, text: String
    )? {
        guard rule.confusables, rule.match != .regex, rule.match != .all, (1...3).contains(rule.value.count),
            rule.value.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic })
        else { return nil }
        let skeleton = Array(String(decoding: rule.view.fold(rule.value), as: UTF8.self).unicodeScalars)
        guard !skeleton.isEmpty else { return nil }
        if tables[rule.view.index] == nil {
            // Each letter by its skeleton in this view: uppercase where one has it (capitals are
            // what a rule ignoring case meets most: `ОК`, not `оК`), else lowercase.
            tables[rule.view.index] = [("Cyrillic", 0x0400...0x04FF), ("Greek", 0x0370...0x03FF)].map { script, range in
                var letters: [String: Unicode.Scalar] = [:]
                for value in range.reversed() {
                    guard let letter = Unicode.Scalar(UInt32(value)), letter.properties.isAlphabetic else { continue }
                    let key = String(decoding: rule.view.fold(String(letter)), as: UTF8.self)
                    guard !key.isEmpty else { continue }
                    if letters[key] == nil || letter.properties.isUppercase { letters[key] = letter }
                }
                return (script, letters)
            }
        }
        for (index, (script, letters)) in tables[rule.view.index]!.enumerated() {
            // A keyword in the script itself means its words.
            let own: ClosedRange<UInt32> = index == 0 ? 0x0400...0x052F : 0x0370...0x03FF
            if rule.value.unicodeScalars.contains(where: { own.contains($0.value) }) { continue }
            // The skeleton cut into letters' skeletons of 1 to 4 scalars, left to right.
            var spelled: [[Unicode.Scalar]?] = Array(repeating: nil, count: skeleton.count + 1)
            spelled[0] = []
            for end in 1...skeleton.count {
                for length in 1...min(4, end) {
                    guard let before = spelled[end - length] else { continue }
                    let piece = String(String.UnicodeScalarView(skeleton[(end - length)..<end]))
                    if let letter = letters[piece] {
                        spelled[end] = before + [letter]
                        break
                    }
                }
            }
            if let spelling = spelled[skeleton.count] { return (script, String(String.UnicodeScalarView(spelling))) }
        }
        return nil
    }

    /// What a rule or condition matches, as one string: target, match, view and folded value;
    /// for a combined rule, its conditions' in any order.
    static func matchKey(_ rule: MessageRule) -> String {
        if rule.match == .all {
            return "all|" + rule.all.map(matchKey).sorted().joined(separator: "&") + "|none|"
                + rule.none.map(matchKey).sorted().joined(separator: "&")
        }
        let folded = rule.match == .regex ? Array(rule.pattern.utf8) : rule.view.fold(rule.value)
        return "\(rule.target)|\(rule.match)|\(rule.view.index)|" + String(decoding: folded, as: UTF8.self)
    }

    /// One sentence for a decoding error: the rule number and field, and what was wrong.
    static func sentence(for error: DecodingError, source: String, data: Data) -> String {
        /// `rule 3`, then the field as MessageRule's checks name it: `field "all[2].value"`.
        func place(_ path: [any CodingKey]) -> String {
            guard let first = path.first, let rule = first.intValue else {
                return path.isEmpty ? "" : " field \"\(path.map(\.stringValue).joined(separator: "."))\""
            }
            var field = ""
            for key in path.dropFirst() {
                if let index = key.intValue {
                    field += "[\(index + 1)]"
                } else {
                    field += (field.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return " rule \(rule + 1)" + (field.isEmpty ? "" : ", field \"\(field)\"")
        }
        /// Whether the path is inside a condition of `all` or `none`.
        func inCondition(_ path: [any CodingKey]) -> Bool {
            path.contains { $0.stringValue == "all" || $0.stringValue == "none" }
        }
        /// A JSON word for what a Swift type reads, never the type's own name.
        func json(_ type: Any.Type, _ path: [any CodingKey]) -> String {
            let conditions = path.last.map { $0.stringValue == "all" || $0.stringValue == "none" } ?? false
            if conditions { return "a JSON array of conditions ({\"target\": …, \"match\": …, \"value\": …})" }
            if type == [MessageRule].self || type == Array<Any>.self { return "a JSON array of rules" }
            if type == String.self { return "a string" }
            if type == Bool.self { return "a boolean (true or false)" }
            if type == Int.self || type == Int64.self || type == Double.self { return "a number" }
            if inCondition(path) {
                return "an object (a condition: {\"target\": …, \"match\": …, \"value\": …})"
            }
            if type == MessageRule.self || "\(type)".hasPrefix("Dictionary") {
                return "an object (a rule: {\"name\": …, \"target\": …})"
            }
            return "a value of another kind"
        }
        switch error {
        case .keyNotFound(let key, let context):
            let which = inCondition(context.codingPath) ? "every condition" : "every rule"
            return "\(source):\(place(context.codingPath)) has no field \"\(key.stringValue)\", which \(which) needs."
        case .typeMismatch(let type, let context):
            return "\(source):\(place(context.codingPath)) should be \(json(type, context.codingPath))."
        case .valueNotFound(let type, let context):
            return "\(source):\(place(context.codingPath)) is null; it should be \(json(type, context.codingPath))."
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = context.underlyingError.map { "\($0)" }
                return "\(source) is not valid JSON\(underlying.map { ": \($0)" } ?? "")."
            }
            return "\(source):\(place(context.codingPath)): \(context.debugDescription)."
        @unknown default:
            return "\(source) is not a rules file: \(error)."
        }
    }
}
