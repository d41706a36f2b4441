/// The regular expressions a rule may use: a subset of Swift's `Regex` syntax whose matching work
/// is bounded, checked before a pattern is compiled or run.
///
/// Swift's `Regex` backtracks, so a pattern such as `(a+)+$` takes time exponential in the
/// length of the text. The subset rules that out by construction:
/// - atoms: literal characters, `.`, escapes `\d \D \w \W \s \S \n \r \t`, an escaped ASCII
///   punctuation character, and bracket classes (`[a-z0-9_]`, `[^…]`) without nesting or set
///   operations;
/// - anchors `^`, `$`, `\b`, `\B`; groups `(…)` and `(?:…)` with `|` alternation;
/// - quantifiers `?`, `*`, `+`, `{m}`, `{m,}`, `{m,n}` (n ≤ 100), optionally lazy (`*?`), on a
///   single atom only: a quantified group is refused;
/// - at most one unbounded quantifier (`*`, `+`, `{m,}`), and the bounded quantifiers' choices
///   (n − m + 1 each) multiply to at most 1,024, or to at most 16 beside an unbounded one;
/// - no backreferences, lookaround, named or atomic groups, inline options or Unicode
///   properties; at most 256 characters.
///
/// A regex sees at most the first `window` bytes of its target. Matching then tries at most
/// `window` starting points, each with at most `window × 16` backtracking choices.
public enum RegexSubset {
    /// The longest pattern accepted, in characters.
    public static let maximumLength = 256
    /// How many bytes of its target a regex sees, cut back to a whole character.
    public static let window = 1024

    /// What checking a pattern found.
    public struct Analysis: Sendable, Equatable {
        /// The longest run of ASCII characters every match must contain, lowercased when the
        /// match ignores case: the filter runs the regex only on texts that contain it. Empty
        /// when no such run exists; the regex then runs on every message.
        public var requiredLiteral: [UInt8]
    }

    /// Checks `pattern` against the subset.
    ///
    /// - Parameter caseInsensitive: whether the literal is to be lowercased.
    /// - Returns: the pattern's required literal.
    /// - Throws: a sentence naming the first offending character and its position (1-based).
    public static func analyze(_ pattern: String, caseInsensitive: Bool) throws(RegexSubsetError) -> Analysis {
        let characters = Array(pattern.unicodeScalars)
        if characters.isEmpty { throw RegexSubsetError("the pattern is empty") }
        if characters.count > maximumLength {
            throw RegexSubsetError("the pattern has \(characters.count) characters; at most \(maximumLength) are allowed")
        }
        var depth = 0
        var alternationAtTop = false
        var unbounded = 0
        var boundedChoices = 1
        var lastWasAtom = false  // a quantifier may follow
        var lastWasQuantifier = false
        // The required-literal scan: runs of literal characters at depth 0.
        var run: [UInt8] = []
        var best: [UInt8] = []
        var pendingLiteral: UInt8? = nil  // the last atom, if a plain ASCII literal at depth 0
        func endRun() {
            if run.count > best.count { best = run }
            run.removeAll()
        }
        func flushPending() {
            if let byte = pendingLiteral { run.append(byte) }
            pendingLiteral = nil
        }
        var i = 0
        func position() -> String { "at character \(i + 1)" }
        func literalByte(_ scalar: Unicode.Scalar) -> UInt8? {
            guard scalar.isASCII else { return nil }
            let byte = UInt8(scalar.value)
            return caseInsensitive ? asciiLowercase(byte) : byte
        }
        while i < characters.count {
            let c = characters[i]
            switch c {
            case "\\":
                guard i + 1 < characters.count else { throw RegexSubsetError("the pattern ends in a lone backslash") }
                let e = characters[i + 1]
                flushPending()
                switch e {
                case "d", "D", "w", "W", "s", "S":
                    endRun()
                    lastWasAtom = true
                case "n", "r", "t":
                    endRun()
                    lastWasAtom = true
                case "b", "B":
                    endRun()
                    lastWasAtom = false
                default:
                    guard e.isASCII, !e.properties.isAlphabetic, !("0"..."9").contains(e), e.value > 0x20 else {
                        throw RegexSubsetError("the escape \\\(e) \(position()) is not in the allowed subset (backreferences, \\p{…} and other escapes are refused)")
                    }
                    pendingLiteral = depth == 0 ? literalByte(e) : nil
                    if depth != 0 { endRun() }
                    lastWasAtom = true
                }
                i += 2
                lastWasQuantifier = false
                continue
            case "[":
                flushPending()
                endRun()
                i = try skipClass(characters, from: i)
                lastWasAtom = true
                lastWasQuantifier = false
                continue
            case "(":
                flushPending()
                endRun()
                if i + 1 < characters.count, characters[i + 1] == "?" {
                    guard i + 2 < characters.count, characters[i + 2] == ":" else {
                        throw RegexSubsetError("the group \(position()) is not in the allowed subset: only (…) and (?:…) are, not lookaround, named, atomic groups or inline options")
                    }
                    i += 3
                } else {
                    i += 1
                }
                depth += 1
                lastWasAtom = false
                lastWasQuantifier = false
                continue
            case ")":
                guard depth > 0 else { throw RegexSubsetError("the ) \(position()) closes no group") }
                flushPending()
                endRun()
                depth -= 1
                i += 1
                if i < characters.count, ["?", "*", "+", "{"].contains(characters[i]) {
                    throw RegexSubsetError("the quantifier \(position()) applies to a group; quantified groups can backtrack exponentially and are refused")
                }
                lastWasAtom = false
                lastWasQuantifier = false
                continue
            case "|":
                if depth == 0 { alternationAtTop = true }
                flushPending()
                endRun()
                lastWasAtom = false
                lastWasQuantifier = false
                i += 1
                continue
            case "?", "*", "+", "{":
                if lastWasQuantifier, c == "?" {
                    // A lazy quantifier: same work bound.
                    i += 1
                    lastWasQuantifier = false
                    continue
                }
                guard lastWasAtom else {
                    throw RegexSubsetError("the quantifier \(c) \(position()) follows nothing it can repeat")
                }
                var minimum = 0
                var maximum: Int? = nil
                var next = i + 1
                switch c {
                case "?": maximum = 1
                case "*": break
                case "+": minimum = 1
                default:
                    (minimum, maximum, next) = try readBraces(characters, from: i)
                }
                if let maximum {
                    boundedChoices *= maximum - minimum + 1
                } else {
                    unbounded += 1
                }
                if unbounded > 1 {
                    throw RegexSubsetError("the pattern has a second unbounded quantifier \(position()); at most one of *, + and {m,} is allowed, to bound backtracking")
                }
                let limit = unbounded == 0 ? 1024 : 16
                if boundedChoices > limit {
                    throw RegexSubsetError("the quantifier \(position()) makes the bounded repetitions' choices multiply past \(limit); narrow the {m,n} ranges")
                }
                // The repeated literal is required only if it must occur at least once, and the
                // run ends there: what follows is not adjacent to a fixed character.
                if minimum >= 1, let byte = pendingLiteral { run.append(byte) }
                pendingLiteral = nil
                endRun()
                i = next
                lastWasAtom = false
                lastWasQuantifier = true
                continue
            case "}", "]":
                throw RegexSubsetError("the \(c) \(position()) must be escaped")
            case "^", "$":
                flushPending()
                endRun()
                lastWasAtom = false
            case ".":
                flushPending()
                endRun()
                lastWasAtom = true
            default:
                flushPending()
                if depth == 0, let byte = literalByte(c) {
                    pendingLiteral = byte
                } else {
                    endRun()
                }
                lastWasAtom = true
            }
            lastWasQuantifier = false
            i += 1
        }
        if depth > 0 { throw RegexSubsetError("the pattern leaves \(depth) group\(depth == 1 ? "" : "s") open") }
        flushPending()
        endRun()
        return Analysis(requiredLiteral: alternationAtTop ? [] : best)
    }

    private static func skipClass(_ characters: [Unicode.Scalar], from start: Int) throws(RegexSubsetError) -> Int {
        var i = start + 1
        if i < characters.count, characters[i] == "^" { i += 1 }
        var members = 0
        while i < characters.count {
            let c = characters[i]
            switch c {
            case "]":
                guard members > 0 else { throw RegexSubsetError("the class at character \(start + 1) is empty") }
                return i + 1
            case "[":
                throw RegexSubsetError("the [ at character \(i + 1) nests a class; nested classes, set operations and [:posix:] names are refused (escape it as \\[)")
            case "\\":
                guard i + 1 < characters.count else {
                    throw RegexSubsetError("the class at character \(start + 1) ends in a lone backslash")
                }
                let e = characters[i + 1]
                let allowed = "dDwWsSnrt".unicodeScalars.contains(e)
                    || (e.isASCII && !e.properties.isAlphabetic && !("0"..."9").contains(e) && e.value > 0x20)
                guard allowed else {
                    throw RegexSubsetError("the escape \\\(e) at character \(i + 1) is not in the allowed subset")
                }
                i += 2
            case "&" where i + 1 < characters.count && characters[i + 1] == "&",
                "~" where i + 1 < characters.count && characters[i + 1] == "~",
                "-" where i + 1 < characters.count && characters[i + 1] == "-":
                throw RegexSubsetError("the set operation at character \(i + 1) is refused; escape the characters")
            default:
                i += 1
            }
            members += 1
        }
        throw RegexSubsetError("the class at character \(start + 1) is never closed with ]")
    }

    private static func readBraces(_ characters: [Unicode.Scalar], from start: Int) throws(RegexSubsetError) -> (Int, Int?, Int) {
        var i = start + 1
        func number() -> Int? {
            var value: Int? = nil
            while i < characters.count, let digit = Int(String(characters[i])), ("0"..."9").contains(characters[i]) {
                value = (value ?? 0) * 10 + digit
                if value! > 100 { return 101 }
                i += 1
            }
            return value
        }
        guard let minimum = number() else {
            throw RegexSubsetError("the { at character \(start + 1) must start a quantifier {m}, {m,} or {m,n}; escape it as \\{")
        }
        var maximum: Int? = minimum
        if i < characters.count, characters[i] == "," {
            i += 1
            maximum = number()
        }
        guard i < characters.count, characters[i] == "}" else {
            throw RegexSubsetError("the quantifier at character \(start + 1) is never closed with }")
        }
        if minimum > 100 || (maximum ?? 0) > 100 {
            throw RegexSubsetError("the quantifier at character \(start + 1) repeats more than 100 times")
        }
        if let maximum, maximum < minimum {
            throw RegexSubsetError("the quantifier at character \(start + 1) has its bounds backwards")
        }
        return (minimum, maximum, i + 1)
    }
}

/// Why a pattern is outside `RegexSubset`: one sentence.
public struct RegexSubsetError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

