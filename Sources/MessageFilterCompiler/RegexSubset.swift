import BlocklistCore
internal import ByteCodecs
import MessageFilterCore

/// The regular expressions a rule may use, checked and parsed before a pattern is compiled.
///
/// Patterns run on our own matcher (`RegexProgram`), a Thompson NFA simulated without
/// backtracking, so every accepted pattern matches in time linear in the text. The syntax:
/// - atoms: literal characters, `.`, escapes `\d \D \w \W \s \S \n \r \t \f \v`, a scalar by
///   its code (`\xHH`, `\x{H…}`, `\uHHHH`, `\u{H…}`, `\UHHHHHHHH`), `\p{…}` and `\P{…}`
///   (`RegexProperty`), an escaped ASCII punctuation character, `\Q…\E` (quoted literally), and
///   bracket classes (`[a-z0-9_]`, `[^…]`, with the same escapes and the ASCII POSIX classes
///   `[:alpha:]` and the like) without nesting or set operations;
/// - anchors `^`, `$`, `\A`, `\z` (`\Z`), `\b`, `\B`; groups `(…)`, `(?:…)` and named ones (plain groups), nested,
///   with `|` alternation; inline flags `i` and `s` (`(?i)`, `(?-i:…)`);
/// - quantifiers `?`, `*`, `+`, `{m}`, `{m,}`, `{m,n}`, `{,n}` (m, n ≤ 1,000), optionally lazy (`*?`),
///   on an atom or a group;
/// - no backreferences, lookaround or atomic groups (each refused with a sentence saying they
///   need backtracking); at most 256 characters, and at most 1,000 instructions once counted
///   repetitions are expanded (a pattern that defeats the lazy DFA costs O(states) per
///   character, so the budget bounds the worst case);
/// - a pattern that matches the empty string (`.*`, `a|`, `(?:)`) is refused: it would match
///   every message.
package enum RegexSubset {
    /// The longest pattern accepted, in characters.
    package static let maximumLength = 256
    /// The largest bound of a counted repetition `{m,n}`.
    package static let maximumRepetition = 1000
    /// The most instructions a compiled pattern may have, counted repetitions expanded.
    package static let maximumStates = RegexLimits.maximumStates
    /// What checking a pattern found.
    package struct Analysis: Sendable, Equatable {
        /// ASCII literals of which every match must contain one, lowercased when the match
        /// ignores case: the filter runs the regex only on texts that contain one of them
        /// (`RegexNode.requiredLiterals`). Empty when none is known; the regex then runs on
        /// every message.
        package var requiredLiterals: [[UInt8]]
    }

    /// Checks `pattern` against the subset.
    ///
    /// - Parameter caseInsensitive: whether the pattern ignores case (and its literal is to be
    ///   lowercased).
    /// - Returns: the pattern's required literals.
    /// - Throws: a sentence naming the first offending character and its position (1-based).
    package static func analyze(_ pattern: String, caseInsensitive: Bool) throws(RegexSubsetError) -> Analysis {
        let node = try parse(pattern, caseInsensitive: caseInsensitive)
        // One that matches any single character, of every kind (`[\s\S]`, `(.|\n)`, `\w|\W`, `[^x]`),
        // matches every message but the empty one. Checked here, where rules are accepted, and
        // not in `parse`, which the classifier runs again for every regex it compiles. With the
        // rule's case, so that `[^A-F]` and `[^a-f]` ignoring case are one class.
        let program = RegexProgram(node, caseInsensitive: caseInsensitive)
        let matcher = RegexMatcher()
        let matchesAll = anyCharacter.allSatisfy { probe in
            var bytes = Array(probe.utf8)
            return bytes.withUnsafeMutableBufferPointer { matcher.firstMatch(program, in: UnsafeBufferPointer($0)) }
        }
        if matchesAll {
            throw RegexSubsetError(
                "the pattern matches any single character (a, 7, !, a space, a line break, 가 and 😀 alike), so it would match every message; require something particular"
            )
        }
        return Analysis(requiredLiterals: node.requiredLiterals(caseInsensitive: caseInsensitive))
    }

    /// The first scalar a normalized pattern names that no normalized text holds, where it would
    /// have to match: one normalization removes (`TextView.isInvisibleFormat`: `\u200B`, `\uFEFF`),
    /// or, where case counts, one NFC replaces (`\u212A`, the Kelvin sign, is `K`). A class counts
    /// when every member is such a scalar (`[\u200B\u200C\u200D\uFEFF]`). Nil when there is none.
    package static func deadScalar(in pattern: String, caseInsensitive: Bool) -> UInt32? {
        guard let node = try? parse(pattern, caseInsensitive: caseInsensitive) else { return nil }
        func dead(_ value: UInt32, _ ignoring: Bool) -> Bool {
            if TextView.isInvisibleFormat(value) { return true }
            guard !ignoring, let scalar = Unicode.Scalar(value) else { return false }
            let nfc = String(decoding: Array(String(scalar)._nfcCodeUnits), as: UTF8.self).unicodeScalars
            return nfc.count != 1 || nfc.first != scalar
        }
        func walk(_ node: RegexNode, _ ignoring: Bool) -> UInt32? {
            switch node {
            case .scalar(let value): return dead(value, ignoring) ? value : nil
            case .set(let set):
                guard !set.negated, set.escapes == 0, !set.ranges.isEmpty,
                    set.ranges.reduce(0, { $0 + $1.count }) <= 4096
                else { return nil }
                let all = set.ranges.flatMap { $0 }
                return all.allSatisfy { dead($0, ignoring) } ? all.first : nil
            case .concatenation(let nodes), .alternation(let nodes):
                return nodes.lazy.compactMap { walk($0, ignoring) }.first
            // An optional part need not match: `\u3164?대출` matches `대출`.
            case .repetition(let inner, let low, _): return low >= 1 ? walk(inner, ignoring) : nil
            case .flagged(let inner, let flag): return walk(inner, flag)
            case .empty, .any, .assertion: return nil
            }
        }
        return walk(node, caseInsensitive)
    }

    /// The first run of literal scalars in a row that a normalized pattern names and NFC would
    /// change, so that no normalized text holds it, with its NFC: `e\u0301` (NFC composes them
    /// into `é`), `\u1100\u1161` (Hangul jamo, `가`). Written as themselves these are composed
    /// with the pattern (`normalizedPattern`); escaped, they were a rule that never matched
    /// (field test of issue 45). Nil when there is none.
    package static func deadSequence(in pattern: String, caseInsensitive: Bool) -> (run: [UInt32], nfc: String)? {
        guard let node = try? parse(pattern, caseInsensitive: caseInsensitive) else { return nil }
        // Ignoring case (every scalar of the run), a run counts as NFC when it folds as its NFC
        // does (`\u212Aing` is `King`).
        func check(_ run: [(value: UInt32, ignoring: Bool)]) -> (run: [UInt32], nfc: String)? {
            let values = run.map(\.value)
            guard values.count > 1, values.contains(where: { $0 >= 0x80 }) else { return nil }
            var text = String.UnicodeScalarView()
            for value in values { text.append(Unicode.Scalar(value)!) }
            let nfc = String(decoding: Array(String(text)._nfcCodeUnits), as: UTF8.self)
            let composed = nfc.unicodeScalars.map(\.value)
            let same =
                run.allSatisfy(\.ignoring)
                ? composed.map(RegexProgram.fold) == values.map(RegexProgram.fold) : composed == values
            return same ? nil : (values, nfc)
        }
        // The items of a run, each with the case flag in force: a group and an inline flag
        // (`(?i)`, `(?-i:…)`, which wrap each literal) are no break in it.
        func items(_ node: RegexNode, _ ignoring: Bool) -> [(node: RegexNode, ignoring: Bool)] {
            switch node {
            case .concatenation(let nodes): return nodes.flatMap { items($0, ignoring) }
            case .flagged(let inner, let flag): return items(inner, flag)
            default: return [(node, ignoring)]
            }
        }
        // A literal scalar, as itself or under a flag.
        func literal(_ node: RegexNode, _ ignoring: Bool) -> (value: UInt32, ignoring: Bool)? {
            switch node {
            case .scalar(let value): return (value, ignoring)
            case .flagged(let inner, let flag): return literal(inner, flag)
            default: return nil
            }
        }
        func walk(_ node: RegexNode, _ ignoring: Bool) -> (run: [UInt32], nfc: String)? {
            switch node {
            case .concatenation, .flagged:
                var run: [(value: UInt32, ignoring: Bool)] = []
                for (item, flag) in items(node, ignoring) {
                    if let scalar = literal(item, flag) {
                        run.append(scalar)
                        continue
                    }
                    if case .repetition(let inner, let low, _) = item, low >= 1, let scalar = literal(inner, flag) {
                        // `e\u0301+`: the first copy follows the run, and what comes after
                        // follows the last copy, not the run.
                        run.append(scalar)
                        if let found = check(run) { return found }
                        run = [scalar]
                        continue
                    }
                    if let found = check(run) ?? walk(item, flag) { return found }
                    run.removeAll()
                }
                return check(run)
            case .alternation(let nodes): return nodes.lazy.compactMap { walk($0, ignoring) }.first
            // An optional part need not match.
            case .repetition(let inner, let low, _): return low >= 1 ? walk(inner, ignoring) : nil
            case .scalar, .set, .empty, .any, .assertion: return nil
            }
        }
        return walk(node, caseInsensitive)
    }

    /// `pattern` folded as a normalized rule's text is (`TextView`, normalized), keeping its
    /// syntax: the invisible characters dropped; fullwidth ASCII made ASCII, escaped where it
    /// would be syntax (`（` is the literal `\(`, `＊` is `\*`), whether written as itself or as an
    /// escape (`\uFF10` is `0`), and as itself inside `\Q…\E`; then NFC, so that `e` and U+0301
    /// are `é` and the Kelvin sign is `K`. A text never holds what this folds away, so a pattern
    /// written with it means the folded one.
    package static func normalizedPattern(_ pattern: String) -> String {
        let scalars = Array(pattern.unicodeScalars)
        var folded = String.UnicodeScalarView()
        var quoting = false
        /// A literal character: dropped, made ASCII (escaped when it would be syntax), or kept.
        func literal(_ scalar: Unicode.Scalar) {
            if TextView.isInvisibleFormat(scalar.value) { return }
            guard (0xFF01...0xFF5E).contains(scalar.value), let ascii = Unicode.Scalar(scalar.value - 0xFEE0) else {
                folded.append(scalar)
                return
            }
            if !quoting, RegexParser.isEscapablePunctuation(ascii) { folded.append("\\") }
            folded.append(ascii)
        }
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if quoting {
                if scalar == "\\", index + 1 < scalars.count, scalars[index + 1] == "E" {
                    quoting = false
                    folded.append(contentsOf: ["\\", "E"])
                    index += 2
                } else {
                    literal(scalar)
                    index += 1
                }
                continue
            }
            guard scalar == "\\", index + 1 < scalars.count else {
                literal(scalar)
                index += 1
                continue
            }
            let next = scalars[index + 1]
            if next == "Q" { quoting = true }
            if case .success(let (value, end)) = RegexParser.scalarEscape(scalars, at: index),
                (0xFF01...0xFF5E).contains(value)
            {
                // A fullwidth character named by its code: as if written.
                literal(Unicode.Scalar(value)!)
                index = end
                continue
            }
            folded.append(scalar)
            if TextView.isInvisibleFormat(next.value) {
                index += 2
                folded.removeLast()
                continue
            }
            if (0xFF01...0xFF5E).contains(next.value), let ascii = Unicode.Scalar(next.value - 0xFEE0),
                RegexParser.isEscapablePunctuation(ascii)
            {
                // `\（` is `\(`; after a backslash, a fullwidth letter or digit stays, for the
                // parser to refuse as the escape it is not (`\ｄ` is no `\d`).
                folded.append(ascii)
            } else {
                folded.append(next)
            }
            index += 2
        }
        return String(decoding: Array(String(folded)._nfcCodeUnits), as: UTF8.self)
    }

    /// Parses `pattern` into its syntax tree and checks every limit, the empty match included.
    /// `caseInsensitive` is the rule's case, which inline flags override: `\P{…}` ignoring case
    /// is the complement of the property's case closure, as RE2 reads it (Python's `regex` and PCRE2 do
    /// not close a property under case, so they also take `ſ`, `K` and `İ`: MESSAGE-FILTER.md).
    ///
    /// - Throws: a sentence naming the first offending character and its position (1-based).
    package static func parse(_ pattern: String, caseInsensitive: Bool = false) throws(RegexSubsetError) -> RegexNode {
        var parser = RegexParser(Array(pattern.unicodeScalars), caseInsensitive: caseInsensitive)
        let node = try parser.parsePattern()
        let states = node.stateCount
        if states > maximumStates {
            throw RegexSubsetError(
                "the pattern needs \(states > 1_000_000 ? "over 1,000,000" : Figures.grouped(Int64(states))) instructions once its repetitions are expanded; at most \(Figures.grouped(Int64(maximumStates))) are allowed, so narrow the {m,n} bounds"
            )
        }
        // A pattern that matches zero characters wherever the text starts (or ends), whether a word
        // character is there or not, matches every message: `.*`, `^`, `(?:\b|\B)`. One that needs
        // both ends (`^$`) or one kind of boundary (`\b`) does not, and stays.
        let everywhere = { (edge: RegexAssertion) in
            node.matchesEmpty(allowing: [edge, .wordBoundary]) && node.matchesEmpty(allowing: [edge, .notWordBoundary])
        }
        if everywhere(.start) || everywhere(.end) {
            throw RegexSubsetError(
                "the pattern matches the empty string, so it would match every message; require at least one character"
            )
        }
        return node
    }
}

/// One character of every kind the subset tells apart: letters in both cases, a digit, `_`,
/// punctuation, white space and a line feed, non-ASCII letters, a symbol and an emoji. (Other line
/// breaks are left out: a message of only `\r` is no message, and `(.|\n)` should not pass for it.)
private let anyCharacter = [
    "a", "Z", "7", "_", "!", "~", " ", "\t", "\n", "\u{3000}", "é", "ж", "가", "中", "€", "😀", "\u{0}",
]

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Why a pattern is outside `RegexSubset`: one sentence.
package struct RegexSubsetError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// A pattern's syntax tree.
package indirect enum RegexNode: Sendable, Equatable {
    /// Matches the empty string: an empty group or alternative.
    case empty
    case scalar(UInt32)
    /// `.`: any scalar but a line break.
    case any
    case set(RegexClass)
    case assertion(RegexAssertion)
    case concatenation([RegexNode])
    case alternation([RegexNode])
    /// `min` copies, then up to `max − min` optional ones; `max` nil is unbounded.
    case repetition(RegexNode, min: Int, max: Int?)
    /// A literal or class under an inline flag (`(?i)`, `(?-i:…)`): it ignores case, or not,
    /// whatever the rule says.
    case flagged(RegexNode, caseInsensitive: Bool)

    /// The instructions `RegexProgram` needs for this node, saturating at 10,000,000.
    package var stateCount: Int {
        let cap = 10_000_000
        switch self {
        case .empty, .assertion: return self == .empty ? 0 : 1
        case .scalar, .any, .set: return 1
        case .flagged(let node, _): return node.stateCount
        case .concatenation(let nodes): return min(cap, nodes.reduce(0) { min(cap, $0 + $1.stateCount) })
        case .alternation(let nodes): return min(cap, nodes.reduce(-2) { min(cap, $0 + $1.stateCount + 2) })
        case .repetition(let node, let low, let high):
            // As `RegexProgram` emits them: `low` copies, then a loop (split, copy, jump) or
            // `high − low` optional copies (split, copy).
            let one = node.stateCount
            let total = high.map { low * one + ($0 - low) * (one + 1) } ?? (low * one + one + 2)
            return min(cap, total)
        }
    }

    /// Whether the node can match the empty string where only the assertions `allowed` hold.
    func matchesEmpty(allowing allowed: [RegexAssertion]) -> Bool {
        switch self {
        case .empty: return true
        case .scalar, .any, .set: return false
        case .flagged(let node, _): return node.matchesEmpty(allowing: allowed)
        case .assertion(let kind): return allowed.contains(kind)
        case .concatenation(let nodes): return nodes.allSatisfy { $0.matchesEmpty(allowing: allowed) }
        case .alternation(let nodes): return nodes.contains { $0.matchesEmpty(allowing: allowed) }
        case .repetition(let node, let low, _): return low == 0 || node.matchesEmpty(allowing: allowed)
        }
    }

    /// The most literals a required set may hold.
    static let maximumRequiredLiterals = 64

    /// Literals (UTF-8) of which every match contains at least one, as the rule's view holds
    /// them: each scalar folded (`RegexProgram.fold`) when the match ignores case; empty when
    /// none is known. The best of the candidates by its shortest literal in bytes: a run of
    /// literals in a row (`(?:ab)c` needs `abc`, `발신]` is 7 bytes), or an alternation whose
    /// every branch has a set (`(usps|ups|fedex)` needs one of the three), or a repetition of at
    /// least one such body, at any depth. A scalar other than ASCII is a literal too: the regex
    /// and the keyword automata read the same normalized text (a regex never reads skeletons),
    /// so a scalar the regex matches is in that text, and its fold in the text folded.
    func requiredLiterals(caseInsensitive: Bool) -> [[UInt8]] {
        func bytes(_ node: RegexNode) -> [UInt8]? {
            switch node {
            case .scalar(let value):
                let (encoded, count) = utf8Encoded(caseInsensitive ? RegexProgram.fold(value) : value)
                return withUnsafeBytes(of: encoded) { Array($0.prefix(count)) }
            case .flagged(let inner, let ignoresCase) where caseInsensitive || !ignoresCase:
                // Under `(?-i)` in a rule ignoring case, the folded view holds its fold; under
                // `(?i)` in a case-sensitive rule the exact view may hold any case: no literal.
                return bytes(inner)
            default:
                return nil
            }
        }
        // A group's concatenation is part of the run around it: `(?:ab)c` needs `abc`.
        func flattened(_ node: RegexNode) -> [RegexNode] {
            switch node {
            case .concatenation(let items): items.flatMap(flattened)
            default: [node]
            }
        }
        // Better: a longer shortest literal, then fewer literals.
        func better(_ candidate: [[UInt8]], than best: [[UInt8]]) -> Bool {
            guard !candidate.isEmpty, candidate.count <= Self.maximumRequiredLiterals,
                !candidate.contains(where: \.isEmpty)
            else { return false }
            guard !best.isEmpty else { return true }
            let (shortest, bestShortest) = (candidate.map(\.count).min()!, best.map(\.count).min()!)
            return shortest > bestShortest || (shortest == bestShortest && candidate.count < best.count)
        }
        func required(_ node: RegexNode) -> [[UInt8]] {
            switch node {
            case .alternation(let branches):
                var union: [[UInt8]] = []
                for branch in branches {
                    let set = required(branch)
                    if set.isEmpty { return [] }
                    for literal in set where !union.contains(literal) { union.append(literal) }
                }
                return union.count <= Self.maximumRequiredLiterals ? union : []
            case .flagged(let inner, let ignoresCase):
                return caseInsensitive || !ignoresCase ? required(inner) : []
            case .repetition(let inner, let low, _):
                return low >= 1 ? required(inner) : []
            case .concatenation:
                var best: [[UInt8]] = []
                var run: [UInt8] = []
                func endRun() {
                    if better([run], than: best) { best = [run] }
                    run.removeAll()
                }
                for item in flattened(node) {
                    if let literal = bytes(item) {
                        run.append(contentsOf: literal)
                    } else if case .repetition(let inner, let low, _) = item, let literal = bytes(inner), low >= 1 {
                        // The repeated literal occurs, but what follows is not adjacent to a fixed one.
                        run.append(contentsOf: literal)
                        endRun()
                    } else {
                        endRun()
                        let set = required(item)
                        if better(set, than: best) { best = set }
                    }
                }
                endRun()
                return best
            default:
                return bytes(node).map { [$0] } ?? []
            }
        }
        return required(self)
    }
}

/// A zero-width assertion.
package enum RegexAssertion: UInt8, Sendable {
    case start, end, wordBoundary, notWordBoundary
}

/// A recursive-descent parser over the pattern's scalars; depth is bounded by the pattern's 256
/// characters.
struct RegexParser {
    let characters: [Unicode.Scalar]
    var i = 0
    var depth = 0
    /// The inline flags in force: `i` (nil: as the rule says) and `s`. A group restores them at
    /// its end, so `(?i)` holds to the end of its group, as in RE2, PCRE and Go.
    var ignoresCase: Bool? = nil
    /// What the rule says of case, for `\P{…}`.
    let ruleIgnoresCase: Bool
    var dotMatchesLineBreaks = false
    /// Inside `\Q…\E`: every character is itself.
    var quoting = false

    /// A literal or class as the flags in force make it.
    func leaf(_ node: RegexNode) -> RegexNode {
        ignoresCase.map { .flagged(node, caseInsensitive: $0) } ?? node
    }

    init(_ characters: [Unicode.Scalar], caseInsensitive: Bool = false) {
        self.characters = characters
        ruleIgnoresCase = caseInsensitive
    }

    func position(_ index: Int) -> String { "at character \(index + 1)" }

    mutating func parsePattern() throws(RegexSubsetError) -> RegexNode {
        if characters.isEmpty { throw RegexSubsetError("the pattern is empty") }
        if characters.count > RegexSubset.maximumLength {
            throw RegexSubsetError(
                "the pattern has \(characters.count) characters; at most \(RegexSubset.maximumLength) are allowed"
            )
        }
        let node = try parseAlternation()
        if i < characters.count {
            // Only a ) stops an alternation at depth 0.
            throw RegexSubsetError("the ) \(position(i)) closes no group")
        }
        return node
    }

    mutating func parseAlternation() throws(RegexSubsetError) -> RegexNode {
        var branches = [try parseConcatenation()]
        while i < characters.count, characters[i] == "|" {
            i += 1
            branches.append(try parseConcatenation())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func parseConcatenation() throws(RegexSubsetError) -> RegexNode {
        var items: [RegexNode] = []
        while i < characters.count, quoting || (characters[i] != "|" && characters[i] != ")") {
            let start = i
            let atom = try parseAtom()
            let assertion: Bool
            if case .assertion = atom { assertion = true } else { assertion = false }
            if !quoting, i < characters.count, ["?", "*", "+", "{"].contains(characters[i]) {
                // A bare assertion repeats nothing (`\b?`, as Python's re says); in a group it
                // may be quantified, as in Python and RE2: zero times matches anywhere, once or
                // more is the assertion itself.
                guard !assertion || characters[start] == "(" else {
                    throw RegexSubsetError(
                        "the quantifier \(characters[i]) \(position(i)) follows nothing it can repeat"
                    )
                }
                let quantified = try parseQuantifier(atom)
                if assertion, case .repetition(_, let low, _) = quantified {
                    items.append(low == 0 ? .empty : atom)
                } else {
                    items.append(quantified)
                }
            } else {
                items.append(atom)
            }
        }
        switch items.count {
        case 0: return .empty
        case 1: return items[0]
        default: return .concatenation(items)
        }
    }

    mutating func parseQuantifier(_ atom: RegexNode) throws(RegexSubsetError) -> RegexNode {
        let c = characters[i]
        var low = 0
        var high: Int? = nil
        switch c {
        case "?":
            high = 1
            i += 1
        case "*": i += 1
        case "+":
            low = 1
            i += 1
        default: (low, high) = try readBraces()
        }
        // A lazy quantifier finds the same matches; a match is all the filter asks for.
        if i < characters.count, characters[i] == "?" { i += 1 }
        if i < characters.count, characters[i] == "+" {
            throw RegexSubsetError(
                "the possessive quantifier \(c)+ \(position(i - 1)) cannot be used: it forbids giving characters back, which only a backtracking engine does (a++a never matches); write \(c) alone"
            )
        }
        if i < characters.count, ["?", "*", "+", "{"].contains(characters[i]) {
            throw RegexSubsetError("the quantifier \(characters[i]) \(position(i)) follows nothing it can repeat")
        }
        return .repetition(atom, min: low, max: high)
    }

    mutating func parseAtom() throws(RegexSubsetError) -> RegexNode {
        let c = characters[i]
        if quoting {
            // `\Q…\E`: the character itself; a `\E` right after it ends the quote, so that a
            // quantifier after `\E` repeats this character, as in PCRE.
            i += 1
            if i + 1 < characters.count, characters[i] == "\\", characters[i + 1] == "E" {
                i += 2
                quoting = false
            }
            return leaf(.scalar(c.value))
        }
        switch c {
        case "\\":
            guard i + 1 < characters.count else { throw RegexSubsetError("the pattern ends in a lone backslash") }
            let e = characters[i + 1]
            i += 2
            if let bit = RegexClass.escape(e) { return leaf(.set(RegexClass(escapes: bit))) }
            if let value = try scalarEscape(e, at: i - 2) { return leaf(.scalar(value)) }
            switch e {
            case "b": return .assertion(.wordBoundary)
            case "B": return .assertion(.notWordBoundary)
            case "A": return .assertion(.start)
            case "z", "Z": return .assertion(.end)
            case "Q":
                quoting = true
                if i + 1 < characters.count, characters[i] == "\\", characters[i + 1] == "E" {
                    i += 2
                    quoting = false
                }
                return .empty
            case "E":
                // A \E outside a quote ends nothing, as in PCRE.
                return .empty
            case "p", "P":
                return leaf(.set(RegexClass(ranges: try parseProperty(negated: e == "P", at: i - 2))))
            case "1"..."9", "k":
                throw RegexSubsetError(
                    "the backreference \\\(e) \(position(i - 2)) cannot be used: matching what a group captured needs a backtracking engine, and the filter, like RE2 and Hyperscan, runs automata that read each character once; repeat the group's pattern instead"
                )
            default:
                guard Self.isEscapablePunctuation(e) else {
                    throw RegexSubsetError(
                        "the escape \\\(Self.shown(e)) \(position(i - 2)) is not in the allowed subset (\(Self.allowedEscapes) are)"
                    )
                }
                return leaf(.scalar(e.value))
            }
        case "[":
            return leaf(.set(try parseClass()))
        case "(":
            let open = i
            let saved = (ignoresCase, dotMatchesLineBreaks)
            if i + 1 < characters.count, characters[i + 1] == "?" {
                i += 2
                if let flagsOnly = try parseGroupOpening(at: open), flagsOnly {
                    // `(?i)`: the flags hold to the end of the enclosing group.
                    return .empty
                }
            } else {
                i += 1
            }
            depth += 1
            let inner = try parseAlternation()
            guard i < characters.count, characters[i] == ")" else {
                throw RegexSubsetError("the group \(position(open)) is never closed with )")
            }
            i += 1
            depth -= 1
            (ignoresCase, dotMatchesLineBreaks) = saved
            return inner
        case "?", "*", "+", "{":
            throw RegexSubsetError("the quantifier \(c) \(position(i)) follows nothing it can repeat")
        case "}", "]":
            throw RegexSubsetError("the \(c) \(position(i)) must be escaped")
        case "^":
            i += 1
            return .assertion(.start)
        case "$":
            i += 1
            return .assertion(.end)
        case ".":
            i += 1
            // Under `(?s)`, any scalar at all.
            return dotMatchesLineBreaks ? .set(RegexClass(escapes: RegexClass.space | RegexClass.notSpace)) : .any
        default:
            i += 1
            return leaf(.scalar(c.value))
        }
    }

    /// Reads what follows `(?` (with `i` past it): `:` for a plain group, a name for a named one
    /// (read as a plain group), or inline flags; refuses the rest with a sentence. Returns true
    /// for flags alone (`(?i)`, now read past its `)`), false for a group whose body follows
    /// (its flags, if any, already in force), nil for a plain or named group.
    mutating func parseGroupOpening(at open: Int) throws(RegexSubsetError) -> Bool? {
        func refuse(_ what: String, _ why: String) -> RegexSubsetError {
            RegexSubsetError("the \(what) \(position(open)) cannot be used: \(why)")
        }
        let backtracking =
            "it needs a backtracking engine, and the filter, like RE2 and Hyperscan, runs automata that read each character once"
        guard i < characters.count else { throw RegexSubsetError("the group \(position(open)) is never closed with )") }
        let c = characters[i]
        let next = i + 1 < characters.count ? characters[i + 1] : " "
        switch c {
        case ":":
            i += 1
            return nil
        case "=", "!":
            throw refuse(
                "lookahead (?\(c)",
                "\(backtracking); match what follows as part of the pattern, or write a second rule"
            )
        case "<" where next == "=" || next == "!":
            throw refuse("lookbehind (?<\(next)", "\(backtracking); match what precedes as part of the pattern")
        case ">":
            throw refuse("atomic group (?>", backtracking)
        case "P" where next == "=":
            throw refuse("backreference (?P=", "\(backtracking); repeat the group's pattern instead")
        case "<", "P", "'":
            // A named group, `(?<name>…)`, `(?P<name>…)` or `(?'name'…)`: a plain group here.
            i += c == "P" ? 2 : 1
            guard c != "P" || next == "<" else {
                throw refuse("group (?P\(Self.shown(next))", "only (?P<name>…) is a group")
            }
            let close: Unicode.Scalar = c == "'" ? "'" : ">"
            let nameStart = i
            while i < characters.count, characters[i] != close {
                let n = characters[i]
                guard n == "_" || n.properties.isAlphabetic || (i > nameStart && ("0"..."9").contains(n)) else {
                    throw RegexSubsetError(
                        "the group name \(position(open)) holds \(Self.shown(n)); a name is letters, digits and _, not starting with a digit"
                    )
                }
                i += 1
            }
            guard i < characters.count, i > nameStart else {
                throw RegexSubsetError("the group name \(position(open)) is never closed with \(close)")
            }
            i += 1
            return nil
        default:
            break
        }
        // Inline flags: letters, optionally `-` and letters, then `)` or `:`.
        var on = true
        var sawMinus = false
        while i < characters.count, characters[i] != ")", characters[i] != ":" {
            let flag = characters[i]
            switch flag {
            case "-" where !sawMinus:
                on = false
                sawMinus = true
            case "i":
                ignoresCase = on
            case "s":
                dotMatchesLineBreaks = on
            case "m":
                throw refuse(
                    "inline flag m",
                    "^ and $ hold only at the ends of the text, where a message starts and ends; only i and s are flags here"
                )
            case "x":
                throw refuse(
                    "inline flag x",
                    "write the pattern without spaces and comments; only i and s are flags here"
                )
            case "u", "a", "L", "U":
                throw refuse(
                    "inline flag \(flag)",
                    "the filter is always on Unicode scalars and has no lazy default; only i and s are flags here"
                )
            default:
                throw RegexSubsetError(
                    "the group \(position(open)) starts with (?\(Self.shown(flag)), which is no group or flag here: (?:…), (?<name>…), and the flags i and s as (?i), (?-i), (?i:…) are"
                )
            }
            i += 1
        }
        guard i < characters.count else { throw RegexSubsetError("the group \(position(open)) is never closed with )") }
        let flagsOnly = characters[i] == ")"
        i += 1
        return flagsOnly
    }

    /// A character as a message shows it: itself when visible, its code point otherwise, so
    /// that a sentence stays on one line.
    static func shown(_ c: Unicode.Scalar) -> String {
        c.properties.generalCategory == .control || c.properties.isWhitespace || c.properties.generalCategory == .format
            ? "U+" + String(c.value, radix: 16, uppercase: true).leftPadded(to: 4) : String(c)
    }

    static func isEscapablePunctuation(_ e: Unicode.Scalar) -> Bool {
        e.isASCII && !e.properties.isAlphabetic && !("0"..."9").contains(e) && e.value > 0x20 && e.value < 0x7F
    }

    mutating func parseClass() throws(RegexSubsetError) -> RegexClass {
        let start = i
        var set = RegexClass()
        i += 1
        if i < characters.count, characters[i] == "^" {
            set.negated = true
            i += 1
        }
        var members = 0
        // One member: a scalar, or an escape's class bit.
        func member() throws(RegexSubsetError) -> (scalar: UInt32?, escape: UInt8) {
            let c = characters[i]
            if c == "\\" {
                guard i + 1 < characters.count else {
                    throw RegexSubsetError("the class at character \(start + 1) ends in a lone backslash")
                }
                let e = characters[i + 1]
                i += 2
                if let bit = RegexClass.escape(e) { return (nil, bit) }
                if let value = try scalarEscape(e, at: i - 2) { return (value, 0) }
                switch e {
                case "p", "P":
                    set.ranges += try parseProperty(negated: e == "P", at: i - 2)
                    return (nil, 0)
                default:
                    guard Self.isEscapablePunctuation(e) else {
                        throw RegexSubsetError(
                            "the escape \\\(Self.shown(e)) at character \(i - 1) is not in the allowed subset (\(Self.allowedEscapes) are); a character may also be written as itself"
                        )
                    }
                    return (e.value, 0)
                }
            }
            if c == "[", i + 1 < characters.count, characters[i + 1] == ":" {
                set.ranges += try posixClass()
                return (nil, 0)
            }
            if c == "[" {
                throw RegexSubsetError(
                    "the [ at character \(i + 1) nests a class; nested classes and set operations cannot be used (escape it as \\[)"
                )
            }
            if c == "&" || c == "~" || c == "-", i + 1 < characters.count, characters[i + 1] == c {
                throw RegexSubsetError("the set operation at character \(i + 1) cannot be used; escape the characters")
            }
            i += 1
            return (c.value, 0)
        }
        while i < characters.count {
            if characters[i] == "]" {
                guard members > 0 else { throw RegexSubsetError("the class at character \(start + 1) is empty") }
                i += 1
                return set
            }
            let first = i
            let low = try member()
            members += 1
            // A range: a member, -, and a member that is not the closing ].
            if i + 1 < characters.count, characters[i] == "-", characters[i + 1] != "]" {
                i += 1
                let high = try member()
                guard let lowScalar = low.scalar, let highScalar = high.scalar else {
                    throw RegexSubsetError(
                        "the range at character \(first + 1) has a class escape for an end; ranges run between two characters"
                    )
                }
                guard lowScalar <= highScalar else {
                    throw RegexSubsetError(
                        "the range at character \(first + 1) runs backwards; write the smaller character first"
                    )
                }
                set.ranges.append(lowScalar...highScalar)
                continue
            }
            if let scalar = low.scalar {
                set.ranges.append(scalar...scalar)
            } else {
                set.escapes |= low.escape
            }
        }
        throw RegexSubsetError("the class at character \(start + 1) is never closed with ]")
    }

    /// Reads the name after `\p` or `\P` (`i` past the letter): `{Name}`, `{Key=Value}` or one
    /// letter, and returns the ranges it names, or their complement for `\P`.
    mutating func parseProperty(negated: Bool, at start: Int) throws(RegexSubsetError) -> [ClosedRange<UInt32>] {
        let name: String
        if i < characters.count, characters[i] == "{" {
            guard let close = characters[i...].firstIndex(of: "}") else {
                throw RegexSubsetError("the \\\(negated ? "P" : "p"){ \(position(start)) is never closed with }")
            }
            name = String(String.UnicodeScalarView(characters[(i + 1)..<close]))
            i = close + 1
        } else if i < characters.count, characters[i].properties.isAlphabetic {
            name = String(characters[i])
            i += 1
        } else {
            throw RegexSubsetError(
                "the \\\(negated ? "P" : "p") \(position(start)) needs a property: \\p{L}, \\pN, \\p{Hangul}, \\p{Script=Latin}"
            )
        }
        do {
            let ranges = try RegexProperty.ranges(name)
            guard negated else { return ranges }
            // Ignoring case, the complement of the closure: `(?i)\P{ASCII}` takes no scalar that
            // folds to ASCII (the Kelvin sign, `ſ`, `İ`), so it takes no ASCII letter either. The
            // complement of a closed set is closed, so the class's own closure adds nothing.
            let ignoring = ignoresCase ?? ruleIgnoresCase
            return RegexProperty.complement(ignoring ? UnicodeTables.shared.caseClosure(of: ranges) : ranges)
        } catch {
            // Shown as a sentence shows a character, so that the sentence stays on one line.
            let written = characters[start..<i].map(Self.shown).joined()
            throw RegexSubsetError("the \(written) \(position(start)) cannot be used: \(error.description)")
        }
    }

    /// The escapes the subset reads, for refusals.
    static let allowedEscapes =
        "\\d \\w \\s, their capitals, \\b \\B \\A \\z, \\n \\r \\t \\f \\v, \\xHH, \\x{H…}, \\uHHHH, \\UHHHHHHHH, \\p{…}, \\Q…\\E and escaped punctuation"

    /// The scalar an escape names (`\n`, `\xHH`, `\x{H…}`, `\uHHHH`, `\u{H…}`, `\UHHHHHHHH`), reading
    /// its digits (with `i` past the escape letter); nil for an escape that names no scalar.
    mutating func scalarEscape(_ e: Unicode.Scalar, at start: Int) throws(RegexSubsetError) -> UInt32? {
        switch Self.scalarEscape(characters, at: start) {
        case nil: return nil
        case .success(let (value, end)):
            i = end
            return value
        case .failure(let error): throw error
        }
    }

    /// The scalar the escape at `start` (its backslash) names, and where the escape ends; nil
    /// for an escape that names none. The one reading of these escapes: the parser's, and
    /// `RegexSubset.normalizedPattern`'s, which folds what they name.
    static func scalarEscape(_ characters: [Unicode.Scalar], at start: Int)
        -> Result<(UInt32, Int), RegexSubsetError>?
    {
        guard start + 1 < characters.count, characters[start] == "\\" else { return nil }
        let e = characters[start + 1]
        switch e {
        case "n": return .success((0x0A, start + 2))
        case "r": return .success((0x0D, start + 2))
        case "t": return .success((0x09, start + 2))
        case "f": return .success((0x0C, start + 2))
        case "v": return .success((0x0B, start + 2))
        case "x", "u", "U":
            var i = start + 2
            var digits = 0
            var braced = false
            if i < characters.count, characters[i] == "{", e != "U" {
                braced = true
                i += 1
            }
            var value: UInt32 = 0
            let fixed = e == "x" ? 2 : e == "u" ? 4 : 8
            while i < characters.count, braced || digits < fixed, characters[i].isASCII,
                let digit = Hex.value(UInt8(characters[i].value))
            {
                value = min(0x11_0000, value << 4 | UInt32(digit))
                digits += 1
                i += 1
            }
            let position = "at character \(start + 1)"
            if braced {
                guard i < characters.count, characters[i] == "}", (1...8).contains(digits) else {
                    return .failure(
                        RegexSubsetError(
                            "the escape \\\(e){ \(position) needs hex digits and a closing }, as \\\(e){D55C}"
                        )
                    )
                }
                i += 1
            } else if digits != fixed {
                return .failure(
                    RegexSubsetError(
                        "the escape \\\(e) \(position) needs \(fixed) hex digits, as \\\(e)\(String(repeating: "0", count: fixed - 2))41 for A"
                    )
                )
            }
            guard value < 0x11_0000, !(0xD800...0xDFFF).contains(value) else {
                return .failure(
                    RegexSubsetError("the escape \(position) names no Unicode scalar (a surrogate, or past U+10FFFF)")
                )
            }
            return .success((value, i))
        default: return nil
        }
    }

    /// A POSIX class inside brackets (`[[:alpha:]]`, with `i` at its `[`): ASCII, as in RE2 and PCRE.
    mutating func posixClass() throws(RegexSubsetError) -> [ClosedRange<UInt32>] {
        let start = i
        var end = i + 2
        while end + 1 < characters.count, !(characters[end] == ":" && characters[end + 1] == "]") { end += 1 }
        guard end + 1 < characters.count else {
            throw RegexSubsetError("the [: at character \(start + 1) is never closed with :]")
        }
        let name = String(String.UnicodeScalarView(characters[(start + 2)..<end]))
        let ascii: [String: [ClosedRange<UInt32>]] = [
            "alpha": [0x41...0x5A, 0x61...0x7A], "digit": [0x30...0x39],
            "alnum": [0x30...0x39, 0x41...0x5A, 0x61...0x7A],
            "upper": [0x41...0x5A], "lower": [0x61...0x7A], "space": [0x09...0x0D, 0x20...0x20],
            "blank": [0x09...0x09, 0x20...0x20], "punct": [0x21...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E],
            "xdigit": [0x30...0x39, 0x41...0x46, 0x61...0x66],
            "word": [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A],
            "cntrl": [0x00...0x1F, 0x7F...0x7F], "print": [0x20...0x7E], "graph": [0x21...0x7E],
        ]
        guard let ranges = ascii[name] else {
            // Shown as a sentence shows a character, so that the sentence stays on one line.
            let written = name.unicodeScalars.map(Self.shown).joined()
            throw RegexSubsetError(
                "the class [:\(written):] at character \(start + 1) is not one of alpha, digit, alnum, upper, lower, space, blank, punct, xdigit, word, cntrl, print and graph"
            )
        }
        i = end + 2
        return ranges
    }

    mutating func readBraces() throws(RegexSubsetError) -> (Int, Int?) {
        let start = i
        i += 1
        var tooLarge = false
        func number() -> Int? {
            var value: Int? = nil
            while i < characters.count, ("0"..."9").contains(characters[i]) {
                value = min(1_000_000, (value ?? 0) * 10 + Int(characters[i].value - 0x30))
                if value! > RegexSubset.maximumRepetition { tooLarge = true }
                i += 1
            }
            return value
        }
        // `{,n}` is `{0,n}`, as in Python.
        let omitted = i < characters.count && characters[i] == ","
        guard let low = omitted ? 0 : number() else {
            throw RegexSubsetError(
                "the { at character \(start + 1) must start a quantifier {m}, {m,}, {m,n} or {,n}; escape it as \\{ for a literal {"
            )
        }
        var high: Int? = low
        if i < characters.count, characters[i] == "," {
            i += 1
            high = number()
            if omitted, high == nil {
                throw RegexSubsetError(
                    "the quantifier at character \(start + 1) gives no bound: write {0,} or *, or {,n} with a number"
                )
            }
        }
        guard i < characters.count, characters[i] == "}" else {
            throw RegexSubsetError("the quantifier at character \(start + 1) is never closed with }")
        }
        i += 1
        if tooLarge {
            throw RegexSubsetError(
                "the quantifier at character \(start + 1) repeats more than \(RegexSubset.maximumRepetition) times, the largest bound allowed"
            )
        }
        if let high, high < low {
            throw RegexSubsetError(
                "the quantifier at character \(start + 1) has its bounds backwards: {\(low),\(high)} asks for at least \(low) but at most \(high)"
            )
        }
        return (low, high)
    }
}
