/// A pattern compiled to a Thompson NFA: a small array of instructions that `RegexMatcher` runs
/// over a text once, without backtracking.
///
/// Semantics, on Unicode scalars (docs/MESSAGE-FILTER.md; `RegexEngineTests` holds them to Python's
/// `re` where the two define alike):
/// - `.` is any scalar but `\n` (a carriage return and U+2028 too, as Python and RE2 read it);
/// - `\d` is a decimal digit (Nd: `٣` and `３`, not `²`, `¼` or `三`), `\w` an alphabetic scalar,
///   a decimal digit or `_`, `\s` a white-space scalar;
/// - `\b` lies between a `\w` and a non-`\w` scalar (the text's ends count as non-`\w`);
/// - `^` and `$` hold only at the start and the end of the text;
/// - ignoring case, two scalars are equal when they fold alike (`fold`: the simple lowercase
///   mapping, and `ſ` to `s`); a class matches a scalar that folds as one of its members does,
///   before negation (the compiler closes its ranges under case).
package struct RegexProgram: Sendable {
    package enum Op: UInt8 {
        case match, scalar, foldedScalar, any, set, split, jump, start, end, wordBoundary, notWordBoundary
    }

    struct Instruction: Sendable {
        var op: Op
        /// The scalar, the set's index, or the (first) target.
        var x: Int32
        /// A split's second target.
        var y: Int32 = 0
    }

    /// A class ready to match: ASCII answered by a bitmap. Ignoring case, the compiler has already
    /// closed the class's ranges under case (every scalar that folds as a member does is a member),
    /// so matching never looks at case.
    struct CompiledClass: Sendable {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var set: RegexClass

        init(_ set: RegexClass) {
            self.set = set
            for value in UInt32(0)..<0x80 where memberBeforeNegation(value) != set.negated {
                if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
            }
        }

        private func memberBeforeNegation(_ value: UInt32) -> Bool {
            RegexProgram.escapesContain(set.escapes, value) || set.ranges.contains { $0.contains(value) }
        }

        @inline(__always)
        func matches(_ value: UInt32) -> Bool {
            if value < 64 { return low & (1 << UInt64(value)) != 0 }
            if value < 0x80 { return high & (1 << UInt64(value - 64)) != 0 }
            return memberBeforeNegation(value) != set.negated
        }
    }

    let instructions: [Instruction]
    let classes: [CompiledClass]
    /// Whether every match starts at the text's start, so that threads start only there.
    let anchoredAtStart: Bool
    /// Whether any instruction needs the text's scalars lowercased.
    let usesFolding: Bool

    /// The number of instructions, `RegexMatcher`'s thread lists' size.
    package var count: Int { instructions.count }

    /// A program read back from compiled rules (docs/FORMAT.md, regexes); nil when the parts do
    /// not make one: an unknown operation, a target or class out of range, a scalar or range
    /// past U+10FFFF, an unknown escape, or no `match` at the end.
    package init?(
        instructions parts: [(op: UInt8, x: Int32, y: Int32)],
        classes sets: [RegexClass],
        anchoredAtStart: Bool
    ) {
        guard let last = parts.last, last.op == Op.match.rawValue, parts.count <= Int(Int32.max) else { return nil }
        var instructions: [Instruction] = []
        instructions.reserveCapacity(parts.count)
        for part in parts {
            guard let op = Op(rawValue: part.op) else { return nil }
            switch op {
            case .scalar, .foldedScalar:
                guard part.x >= 0, part.x <= 0x10_FFFF, part.y == 0 else { return nil }
            case .set:
                guard part.x >= 0, Int(part.x) < sets.count, part.y == 0 else { return nil }
            case .jump:
                guard part.x >= 0, Int(part.x) < parts.count, part.y == 0 else { return nil }
            case .split:
                guard part.x >= 0, Int(part.x) < parts.count, part.y >= 0, Int(part.y) < parts.count else { return nil }
            case .match, .any, .start, .end, .wordBoundary, .notWordBoundary:
                guard part.x == 0, part.y == 0 else { return nil }
            }
            instructions.append(Instruction(op: op, x: part.x, y: part.y))
        }
        for set in sets {
            guard set.escapes & ~0x3F == 0,
                set.ranges.allSatisfy({ $0.upperBound <= 0x10_FFFF })
            else { return nil }
        }
        self.instructions = instructions
        classes = sets.map(CompiledClass.init)
        usesFolding = instructions.contains { $0.op == .foldedScalar }
        self.anchoredAtStart = anchoredAtStart
    }

    /// The parts `init(instructions:classes:anchoredAtStart:)` takes, for the compiler to write.
    package var parts: (instructions: [(op: UInt8, x: Int32, y: Int32)], classes: [RegexClass], anchoredAtStart: Bool) {
        (instructions.map { ($0.op.rawValue, $0.x, $0.y) }, classes.map(\.set), anchoredAtStart)
    }

    // MARK: What the program tells apart, for the compiler's DFAs.

    /// What the program asks of a scalar: whether each consuming instruction accepts it and,
    /// when the program has `\b` or `\B`, whether it is a word character. Two scalars with the
    /// same answers are one class for its DFA.
    package func verdicts(_ scalar: UInt32, into bits: inout [Bool]) {
        bits.removeAll(keepingCapacity: true)
        let folded = usesFolding ? Self.fold(scalar) : scalar
        for instruction in instructions {
            switch instruction.op {
            case .scalar: bits.append(scalar == UInt32(bitPattern: instruction.x))
            case .foldedScalar: bits.append(folded == UInt32(bitPattern: instruction.x))
            case .any: bits.append(!Self.isLineBreak(scalar))
            case .set: bits.append(classes[Int(instruction.x)].matches(scalar))
            default: break
            }
        }
        if usesWordBoundary { bits.append(Self.isWord(scalar)) }
    }

    /// Whether the program has `\b` or `\B`.
    package var usesWordBoundary: Bool {
        instructions.contains { $0.op == .wordBoundary || $0.op == .notWordBoundary }
    }

    /// What the answers of `verdicts` can depend on, beyond the scalars named here: the escapes'
    /// properties (bits as `RegexClass.escapes`; `\b` counts as `\w`) and the scalars that fold
    /// to a case-folded literal. (`.` differs only at `\n`, which, as every ASCII scalar, is a
    /// class of its own.)
    package struct Dependencies {
        /// Scalars where an answer may change: the first scalar of each range and literal, and the
        /// one after its last.
        package var points: [UInt32] = []
        package var escapes: UInt8 = 0
        /// The scalars that fold to one of these count too.
        package var foldTargets: [UInt32] = []
    }

    package var dependencies: Dependencies {
        var result = Dependencies()
        if usesWordBoundary { result.escapes |= RegexClass.word }
        for instruction in instructions {
            switch instruction.op {
            case .scalar:
                let value = UInt32(bitPattern: instruction.x)
                result.points += [value, value + 1]
            case .foldedScalar:
                let value = UInt32(bitPattern: instruction.x)
                result.points += [value, value + 1]
                result.foldTargets.append(value)
            case .any:
                break
            case .set:
                let compiled = classes[Int(instruction.x)]
                result.escapes |= compiled.set.escapes
                for range in compiled.set.ranges { result.points += [range.lowerBound, range.upperBound + 1] }
            default: break
            }
        }
        return result
    }

    // MARK: Character predicates, as Swift's Regex defines them on scalars.

    package static func escapesContain(_ escapes: UInt8, _ value: UInt32) -> Bool {
        if escapes == 0 { return false }
        if escapes & (RegexClass.digit | RegexClass.notDigit) != 0 {
            let digit = isDigit(value)
            if escapes & RegexClass.digit != 0, digit { return true }
            if escapes & RegexClass.notDigit != 0, !digit { return true }
        }
        if escapes & (RegexClass.word | RegexClass.notWord) != 0 {
            let word = isWord(value)
            if escapes & RegexClass.word != 0, word { return true }
            if escapes & RegexClass.notWord != 0, !word { return true }
        }
        if escapes & (RegexClass.space | RegexClass.notSpace) != 0 {
            let space = isSpace(value)
            if escapes & RegexClass.space != 0, space { return true }
            if escapes & RegexClass.notSpace != 0, !space { return true }
        }
        return false
    }

    /// `\w`: an alphabetic scalar, a decimal digit (`\d`) or `_`.
    @inline(__always)
    package static func isWord(_ value: UInt32) -> Bool {
        if value < 0x80 {
            return value &- 0x30 < 10 || (value | 0x20) &- 0x61 < 26 || value == 0x5F
        }
        guard let properties = Unicode.Scalar(value)?.properties else { return false }
        return properties.isAlphabetic || properties.generalCategory == .decimalNumber
    }

    /// `\d`: a decimal digit (general category Nd), as Python's `re` reads it: `٣` and `３` are
    /// digits; `三`, `①`, `½` and `Ⅵ`, which have numeric values, are not.
    package static func isDigit(_ value: UInt32) -> Bool {
        if value < 0x80 { return value &- 0x30 < 10 }
        return Unicode.Scalar(value)?.properties.generalCategory == .decimalNumber
    }

    package static func isSpace(_ value: UInt32) -> Bool {
        if value < 0x80 { return value == 0x20 || value &- 0x09 < 5 }
        return Unicode.Scalar(value)?.properties.isWhitespace ?? false
    }

    /// What `.` does not match without `(?s)`: `\n` alone, as Python's `re` and `regex`, RE2 and
    /// PCRE read it. A carriage return, a form feed, U+0085, U+2028 or U+2029 between two words
    /// of a spam does not break a `.{0,N}` rule.
    @inline(__always)
    package static func isLineBreak(_ value: UInt32) -> Bool { value == 0x0A }

    /// What ignoring case compares: the scalar's simple lowercase mapping, and `s` for `ſ` (U+017F),
    /// as case folding has it. The one definition: the case-insensitive views (`TextView`) are
    /// this, scalar by scalar, of the text.
    @inline(__always)
    package static func fold(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return value &- 0x41 < 26 ? value | 0x20 : value }
        // Latin letters with marks, the usual non-ASCII letters of French, German, Spanish or
        // Vietnamese text, from a table rather than a Unicode property lookup each.
        if value < 0x250 { return UInt32(latinFolds[Int(value) &- 0x80]) }
        return foldLookingUp(value)
    }

    /// The fold of U+0080…U+024F (928 bytes, made at first use).
    private static let latinFolds: [UInt16] = (UInt32(0x80)..<0x250).map { UInt16(foldLookingUp($0)) }

    /// `fold` by the standard library's Unicode properties.
    private static func foldLookingUp(_ value: UInt32) -> UInt32 {
        if value == 0x17F { return 0x73 }
        guard let scalar = Unicode.Scalar(value), scalar.properties.changesWhenLowercased else { return value }
        // Swift gives the full mapping; the simple one is its only scalar, except for U+0130 (İ),
        // the one scalar whose full lowercase is two scalars (i and U+0307) and whose simple one is i.
        if value == 0x130 { return 0x69 }
        let mapping = scalar.properties.lowercaseMapping.unicodeScalars
        return mapping.count == 1 ? mapping.first!.value : value
    }

    /// Whether another scalar folds to the same scalar as `value` does (compile time only).
    package static func hasOtherCase(_ value: UInt32) -> Bool {
        if value < 0x80 { return (value | 0x20) &- 0x61 < 26 || value == 0x6B || value == 0x73 }
        guard let scalar = Unicode.Scalar(value) else { return false }
        let properties = scalar.properties
        return properties.changesWhenCaseMapped || properties.changesWhenLowercased || properties.isCased
    }
}
