// A libFuzzer target for the message filter's regex compiler and matchers. The input is a
// flags byte (bit 0: ignore case; bit 1: fold the pattern as a normalized rule's), a pattern, a 0
// byte and a text. Any pattern must be parsed or refused with a
// sentence; an accepted one is compiled and run on the text four ways, which must agree: the
// lazy DFA (RegexDFA), the NFA simulation (RegexMatcher), the complete DFA the compiler ships
// (RegexAlphabet, RegexAutomaton), and a naive reference written here over the syntax tree (sets
// of end positions, no automaton). Built with Scripts/fuzz.sh regex, which links it with
// MessageFilterCore and MessageFilterCompiler built under -sanitize=fuzzer,address.

import MessageFilterCompiler
import MessageFilterCore

nonisolated(unsafe) private let matcher = RegexMatcher()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRegex(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let caseInsensitive = data[0] & 1 != 0
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let split = input.firstIndex(of: 0) ?? input.count
    let written = String(decoding: UnsafeBufferPointer(rebasing: input[0..<split]), as: UTF8.self)
    let pattern = data[0] & 2 != 0 ? RegexSubset.normalizedPattern(written) : written
    // The reference is polynomial, not linear: keep its texts short.
    let textBytes = split < input.count ? Array(input[(split + 1)...]) : []
    let text = String(String(decoding: textBytes, as: UTF8.self).unicodeScalars.prefix(48))
    let node: RegexNode
    do {
        node = try RegexSubset.parse(pattern, caseInsensitive: caseInsensitive)
    } catch {
        precondition(!error.description.isEmpty && !error.description.contains("\n"))
        return 0
    }
    let program = RegexProgram(node, caseInsensitive: caseInsensitive)
    precondition(program.count == node.stateCount + 1 && program.count <= RegexSubset.maximumStates + 1)
    let dfa = RegexDFA(program)
    var utf8 = text
    let (lazy, simulated) = utf8.withUTF8 { bytes in (dfa.firstMatch(bytes), matcher.firstMatch(program, in: bytes)) }
    let reference = Reference(caseInsensitive: caseInsensitive, text: Array(text.unicodeScalars)).search(node)
    precondition(
        lazy == (simulated ? .matched : .noMatch),
        "DFA and NFA disagree on \(pattern.debugDescription) over \(text.debugDescription)"
    )
    // With a small budget the DFA stops early, never past a match it would have found, and the
    // NFA simulation decides the rest from where it stopped, as the DFA would have.
    let finished = utf8.withUTF8 { bytes in
        switch dfa.firstMatch(bytes, transitionBudget: 3) {
        case .exhausted(let scanned): dfa.finish(bytes, from: scanned, with: matcher)
        case let outcome: outcome == .matched
        }
    }
    precondition(
        finished == (lazy == .matched),
        "A budgeted DFA, finished by the NFA, disagrees on \(pattern.debugDescription) over \(text.debugDescription)"
    )
    precondition(
        simulated == reference,
        "NFA \(simulated), reference \(reference) on \(pattern.debugDescription) over \(text.debugDescription)"
    )
    // A second run reuses the DFA's cache: same answer.
    let again = utf8.withUTF8 { dfa.firstMatch($0) }
    precondition(again == lazy)
    // The complete DFA the compiler would ship, over the classes of scalars it finds.
    let alphabet = RegexAlphabet([program])
    if let local = alphabet.programs[0],
        let complete = RegexDFA(program, stateCapacity: 259).complete(representatives: local.representatives)
    {
        let automaton = RegexAutomaton(
            stateCount: complete.acceptsAtEnd.count,
            classCount: local.representatives.count,
            classMap: local.classMap,
            transitions: complete.transitions,
            acceptsAtEnd: complete.acceptsAtEnd,
            scalarClasses: alphabet.scalarClasses
        )
        let shipped = utf8.withUTF8 { automaton.matches($0, scalarClasses: alphabet.scalarClasses) }
        precondition(
            shipped == simulated,
            "complete DFA \(shipped), NFA \(simulated) on \(pattern.debugDescription) over \(text.debugDescription)"
        )
    }
    return 0
}

/// The documented semantics, written again without automata: a node maps a start position to the
/// set of positions where it can end.
private struct Reference {
    let caseInsensitive: Bool
    let text: [Unicode.Scalar]

    func search(_ node: RegexNode) -> Bool {
        (0...text.count).contains { !ends(node, from: [$0]).isEmpty }
    }

    func ends(_ node: RegexNode, from starts: Set<Int>) -> Set<Int> {
        switch node {
        case .empty:
            return starts
        case .scalar(let value):
            return Set(starts.filter { $0 < text.count && same(text[$0], value) }.map { $0 + 1 })
        case .any:
            // Any scalar but `\n`, as Python's `re` and RE2 read `.`.
            return Set(starts.filter { $0 < text.count && text[$0].value != 0x0A }.map { $0 + 1 })
        case .set(let set):
            return Set(starts.filter { $0 < text.count && member(set, text[$0]) }.map { $0 + 1 })
        case .flagged(let node, let ignoresCase):
            return Reference(caseInsensitive: ignoresCase, text: text).ends(node, from: starts)
        case .assertion(let kind):
            return starts.filter { holds(kind, at: $0) }
        case .concatenation(let nodes):
            return nodes.reduce(starts) { ends($1, from: $0) }
        case .alternation(let nodes):
            return nodes.reduce(into: Set<Int>()) { $0.formUnion(ends($1, from: starts)) }
        case .repetition(let body, let low, let high):
            var current = starts
            for _ in 0..<low { current = ends(body, from: current) }
            var all = current
            var frontier = current
            var copies = low
            while !frontier.isEmpty, high.map({ copies < $0 }) ?? true {
                let next = ends(body, from: frontier)
                copies += 1
                if high == nil {
                    // Unbounded: only new positions can lead anywhere new.
                    frontier = next.subtracting(all)
                } else {
                    frontier = next
                }
                all.formUnion(next)
            }
            return all
        }
    }

    func isWord(_ index: Int) -> Bool {
        guard index >= 0, index < text.count else { return false }
        let scalar = text[index]
        return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
    }

    func holds(_ kind: RegexAssertion, at index: Int) -> Bool {
        switch kind {
        case .start: index == 0
        case .end: index == text.count
        case .wordBoundary: isWord(index - 1) != isWord(index)
        case .notWordBoundary: isWord(index - 1) == isWord(index)
        }
    }

    /// What ignoring case compares, from the documented rule: the simple lowercase mapping (the
    /// full one where it is one scalar; `İ` to `i`), and `ſ` to `s`.
    static func folded(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar == "ſ" { return "s" }
        if scalar == "İ" { return "i" }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : scalar
    }

    /// Every scalar with case, where a member of a range may fold as another scalar does.
    static let cased: [Unicode.Scalar] = (UInt32(0)..<0x11_0000).compactMap { value in
        guard let scalar = Unicode.Scalar(value) else { return nil }
        let properties = scalar.properties
        return properties.isCased || properties.changesWhenCaseMapped || folded(scalar) != scalar ? scalar : nil
    }

    func same(_ scalar: Unicode.Scalar, _ value: UInt32) -> Bool {
        guard let other = Unicode.Scalar(value) else { return false }
        if scalar == other { return true }
        return caseInsensitive && Self.folded(scalar) == Self.folded(other)
    }

    /// A class matches a scalar when it holds one that folds alike (ignoring case), before negation.
    func member(_ set: RegexClass, _ scalar: Unicode.Scalar) -> Bool {
        var inside = false
        let properties = scalar.properties
        let escapes: [(UInt8, Bool)] = [
            (1, properties.numericType != nil), (2, properties.numericType == nil),
            (4, isWordScalar(scalar)), (8, !isWordScalar(scalar)),
            (16, properties.isWhitespace), (32, !properties.isWhitespace),
        ]
        for (bit, value) in escapes where set.escapes & bit != 0 && value { inside = true }
        if set.ranges.contains(where: { $0.contains(scalar.value) }) { inside = true }
        if !inside, caseInsensitive {
            let target = Self.folded(scalar)
            inside = set.ranges.contains { range in
                range.count <= 64
                    ? range.contains { same(scalar, $0) }
                    : Self.cased.contains { range.contains($0.value) && Self.folded($0) == target }
            }
        }
        return inside != set.negated
    }

    func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
    }
}
