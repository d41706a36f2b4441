/// A pattern compiled to a Thompson NFA: a small array of instructions that `RegexMatcher` runs
/// over a text once, without backtracking.
///
/// Semantics, on Unicode scalars (Swift's `Regex` with `.matchingSemantics(.unicodeScalar)` and
/// `.wordBoundaryKind(.simple)` agrees on every pattern of the subset; the differential tests
/// check it):
/// - `.` is any scalar but `\n \u{B} \u{C} \r`, U+0085, U+2028 and U+2029;
/// - `\d` is a scalar with a numeric type (`²` and `¼` included), `\w` an alphabetic scalar, an
///   ASCII digit or `_`, `\s` a white-space scalar;
/// - `\b` lies between a `\w` and a non-`\w` scalar (the text's ends count as non-`\w`);
/// - `^` and `$` hold only at the start and the end of the text;
/// - ignoring case, two scalars are equal when their lowercase mappings are (a mapping to
///   several scalars leaves the scalar as it is); a class matches a scalar when it or, if the
///   class names a non-ASCII character, one of its case mappings is in it, before negation.
public struct RegexProgram: Sendable {
    enum Op: UInt8 {
        case match, scalar, foldedScalar, any, set, split, jump, start, end, wordBoundary, notWordBoundary
    }

    struct Instruction: Sendable {
        var op: Op
        /// The scalar, the set's index, or the (first) target.
        var x: Int32
        /// A split's second target.
        var y: Int32 = 0
    }

    /// A class ready to match: ASCII answered by a bitmap with case already applied.
    struct CompiledClass: Sendable {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var set: RegexClass
        var caseInsensitive: Bool
        /// Whether case mappings of a non-ASCII scalar are looked up: only when the class names a
        /// non-ASCII character, as Swift's `Regex` does it.
        var foldsNonASCII: Bool

        init(_ set: RegexClass, caseInsensitive: Bool) {
            self.set = set
            self.caseInsensitive = caseInsensitive
            foldsNonASCII = caseInsensitive && set.ranges.contains { $0.upperBound >= 0x80 }
            for value in UInt32(0)..<0x80 where memberBeforeNegation(value) != set.negated {
                if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
            }
        }

        /// Ignoring case, a single character matches a scalar that folds as it does, and a range
        /// one whose lowercase or uppercase mapping it holds. A class of ASCII characters only
        /// looks at a non-ASCII scalar's case not at all, as Swift's `Regex` does.
        private func memberBeforeNegation(_ value: UInt32) -> Bool {
            if RegexProgram.escapesContain(set.escapes, value) { return true }
            if set.ranges.contains(where: { $0.contains(value) }) { return true }
            guard caseInsensitive, value < 0x80 || foldsNonASCII else { return false }
            let folded = RegexProgram.fold(value)
            var variants: [UInt32] = []
            if let scalar = Unicode.Scalar(value) {
                for mapping in [scalar.properties.lowercaseMapping, scalar.properties.uppercaseMapping] {
                    let scalars = mapping.unicodeScalars
                    if scalars.count == 1, let other = scalars.first { variants.append(other.value) }
                }
            }
            for range in set.ranges {
                if range.lowerBound == range.upperBound {
                    if RegexProgram.fold(range.lowerBound) == folded { return true }
                } else if variants.contains(where: { range.contains($0) }) {
                    return true
                }
            }
            return false
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
    public var count: Int { instructions.count }

    /// Compiles a parsed pattern.
    ///
    /// - Parameter caseInsensitive: whether literals and classes ignore case.
    public init(_ node: RegexNode, caseInsensitive: Bool) {
        var builder = Builder(caseInsensitive: caseInsensitive)
        builder.emit(node)
        builder.instructions.append(Instruction(op: .match, x: 0))
        instructions = builder.instructions
        classes = builder.classes
        usesFolding = builder.usesFolding
        anchoredAtStart = Self.startsWithStart(node)
    }

    /// Parses and compiles `pattern`.
    ///
    /// - Throws: `RegexSubsetError` for a pattern outside the subset.
    public init(pattern: String, caseInsensitive: Bool) throws(RegexSubsetError) {
        self.init(try RegexSubset.parse(pattern), caseInsensitive: caseInsensitive)
    }

    private static func startsWithStart(_ node: RegexNode) -> Bool {
        switch node {
        case .assertion(.start): true
        case .concatenation(let nodes): nodes.first.map(startsWithStart) ?? false
        case .alternation(let nodes): nodes.allSatisfy(startsWithStart)
        default: false
        }
    }

    private struct Builder {
        let caseInsensitive: Bool
        var instructions: [Instruction] = []
        var classes: [CompiledClass] = []
        var usesFolding = false

        mutating func emit(_ node: RegexNode) {
            switch node {
            case .empty:
                break
            case .scalar(let value):
                if caseInsensitive, RegexProgram.hasOtherCase(value) {
                    usesFolding = true
                    instructions.append(Instruction(op: .foldedScalar, x: Int32(bitPattern: RegexProgram.fold(value))))
                } else {
                    instructions.append(Instruction(op: .scalar, x: Int32(bitPattern: value)))
                }
            case .any:
                instructions.append(Instruction(op: .any, x: 0))
            case .set(let set):
                // Copies of a repeated class share one entry, so a transition tests each once.
                if let index = classes.firstIndex(where: { $0.set == set }) {
                    instructions.append(Instruction(op: .set, x: Int32(index)))
                } else {
                    instructions.append(Instruction(op: .set, x: Int32(classes.count)))
                    classes.append(CompiledClass(set, caseInsensitive: caseInsensitive))
                }
            case .assertion(let kind):
                let op: Op =
                    switch kind {
                    case .start: .start
                    case .end: .end
                    case .wordBoundary: .wordBoundary
                    case .notWordBoundary: .notWordBoundary
                    }
                instructions.append(Instruction(op: op, x: 0))
            case .concatenation(let nodes):
                for node in nodes { emit(node) }
            case .alternation(let nodes):
                var jumps: [Int] = []
                for (index, branch) in nodes.enumerated() {
                    if index == nodes.count - 1 {
                        emit(branch)
                    } else {
                        let split = instructions.count
                        instructions.append(Instruction(op: .split, x: Int32(split + 1)))
                        emit(branch)
                        jumps.append(instructions.count)
                        instructions.append(Instruction(op: .jump, x: 0))
                        instructions[split].y = Int32(instructions.count)
                    }
                }
                for jump in jumps { instructions[jump].x = Int32(instructions.count) }
            case .repetition(let body, let low, let high):
                for _ in 0..<low { emit(body) }
                if let high {
                    var splits: [Int] = []
                    for _ in low..<high {
                        splits.append(instructions.count)
                        instructions.append(Instruction(op: .split, x: Int32(instructions.count + 1)))
                        emit(body)
                    }
                    for split in splits { instructions[split].y = Int32(instructions.count) }
                } else {
                    let split = instructions.count
                    instructions.append(Instruction(op: .split, x: Int32(split + 1)))
                    emit(body)
                    instructions.append(Instruction(op: .jump, x: Int32(split)))
                    instructions[split].y = Int32(instructions.count)
                }
            }
        }
    }

    // MARK: Character predicates, as Swift's Regex defines them on scalars.

    static func escapesContain(_ escapes: UInt8, _ value: UInt32) -> Bool {
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

    @inline(__always)
    static func isWord(_ value: UInt32) -> Bool {
        if value < 0x80 {
            return value &- 0x30 < 10 || (value | 0x20) &- 0x61 < 26 || value == 0x5F
        }
        return Unicode.Scalar(value)?.properties.isAlphabetic ?? false
    }

    static func isDigit(_ value: UInt32) -> Bool {
        if value < 0x80 { return value &- 0x30 < 10 }
        return Unicode.Scalar(value)?.properties.numericType != nil
    }

    static func isSpace(_ value: UInt32) -> Bool {
        if value < 0x80 { return value == 0x20 || value &- 0x09 < 5 }
        return Unicode.Scalar(value)?.properties.isWhitespace ?? false
    }

    @inline(__always)
    static func isLineBreak(_ value: UInt32) -> Bool {
        value &- 0x0A < 4 || value == 0x85 || value == 0x2028 || value == 0x2029
    }

    /// The scalar's lowercase mapping when it is one scalar; the scalar itself otherwise.
    @inline(__always)
    static func fold(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return value &- 0x41 < 26 ? value | 0x20 : value }
        guard let scalar = Unicode.Scalar(value), scalar.properties.changesWhenLowercased else { return value }
        let mapping = scalar.properties.lowercaseMapping.unicodeScalars
        return mapping.count == 1 ? mapping.first!.value : value
    }

    /// Whether another scalar folds to the same scalar as `value` does (compile time only).
    static func hasOtherCase(_ value: UInt32) -> Bool {
        if value < 0x80 { return (value | 0x20) &- 0x61 < 26 || value == 0x6B || value == 0x73 }
        guard let scalar = Unicode.Scalar(value) else { return false }
        let properties = scalar.properties
        return properties.changesWhenCaseMapped || properties.changesWhenLowercased || properties.isCased
    }
}
