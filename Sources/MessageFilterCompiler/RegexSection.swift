import MessageFilterCore

/// Writes the regexes section (kind 4, docs/FORMAT.md): the file's classes of scalars, then each
/// regex rule compiled to a complete DFA over them, or, where the DFA would pass the budget, to
/// its NFA program.
package enum RegexSection {
    /// The bytes all DFAs of one file may take together, transitions and class maps: what the
    /// extension holds for them. Regexes past it ship as programs.
    package static let transitionBudget = 1 << 20

    /// What the section holds, for reports and tests.
    package struct Summary: Equatable {
        package var automata = 0
        package var programs = 0
        package var states = 0
    }

    /// The most points (where some regex's answers about a scalar change) the regexes shipped as
    /// DFAs may bring to the file's classes together, so that the classes, at most one per point
    /// plus the 128 ASCII scalars, stay within the format's 65,535.
    package static let pointBudget = 60_000

    /// The section for the regex rules `programs` (rule number, compiled program), in rule order.
    ///
    /// Regexes ship as DFAs in rule order while they fit: each DFA's bytes (its transitions and
    /// its map of the file's classes, one byte per class) count against `transitionBudget`, and
    /// their points against `pointBudget`. The rest ship as programs, which need no classes.
    package static func serialized(_ programs: [(rule: Int, program: RegexProgram)]) -> (
        bytes: [UInt8], summary: Summary
    ) {
        let format = CompiledRulesFormat.self
        // First the candidates: every regex while their points fit, and their classes.
        let tables = UnicodeTables.shared
        // The file's classes lie between the points of all its regexes together, so the budget
        // counts each point once: regexes that share `\w`'s 1,400-odd points share their cost.
        var candidates: [Int] = []
        var points = Set<UInt32>()
        for (index, entry) in programs.enumerated() {
            let together = points.union(tables.points(for: entry.program.dependencies))
            if together.count <= pointBudget {
                candidates.append(index)
                points = together
            }
        }
        let candidateAlphabet = RegexAlphabet(candidates.map { programs[$0].program })
        // Then the DFAs that fit the byte budget, with a map as large as the candidates' classes
        // (the final classes, of the chosen regexes alone, are no more).
        let mapBytes = candidateAlphabet.scalarClasses.count
        var budget = transitionBudget
        var dfas: [Int: (transitions: [UInt16], acceptsAtEnd: [Bool])] = [:]
        for (position, index) in candidates.enumerated() {
            guard let local = candidateAlphabet.programs[position],
                let dfa = RegexDFA(programs[index].program, stateCapacity: RegexAutomaton.maximumStates + 3).complete(
                    representatives: local.representatives
                ),
                dfa.transitions.count * 2 + mapBytes <= budget
            else { continue }
            budget -= dfa.transitions.count * 2 + mapBytes
            dfas[index] = dfa
        }
        let chosen = programs.indices.filter { dfas[$0] != nil }
        // Usually every candidate fits, and its classes are the file's already.
        let alphabet = chosen == candidates ? candidateAlphabet : RegexAlphabet(chosen.map { programs[$0].program })
        let positions = Dictionary(uniqueKeysWithValues: chosen.enumerated().map { ($1, $0) })
        let classes = alphabet.scalarClasses
        var bytes: [UInt8] = []
        bytes.appendLE(UInt32(classes.count))
        bytes.appendLE(UInt32(classes.starts.count))
        bytes.appendLE(UInt32(programs.count))
        bytes.appendLE(UInt32(0))
        for id in classes.ascii { bytes.appendLE(id) }
        for (start, id) in zip(classes.starts, classes.classes) {
            bytes.appendLE(start)
            bytes.appendLE(id)
            bytes.appendLE(UInt16(0))
        }
        var bodies: [[UInt8]] = []
        var summary = Summary()
        for (index, entry) in programs.enumerated() {
            if let dfa = dfas[index], let position = positions[index],
                let local = alphabet.programs[position]
            {
                bodies.append(automatonBody(dfa, classMap: local.classMap, classCount: local.representatives.count))
                summary.automata += 1
                summary.states += dfa.acceptsAtEnd.count
            } else {
                bodies.append(programBody(entry.program))
                summary.programs += 1
            }
        }
        var offset = bytes.count + programs.count * format.regexEntrySize
        for (entry, body) in zip(programs, bodies) {
            bytes.appendLE(UInt32(entry.rule))
            bytes.appendLE(UInt32(offset))
            bytes.appendLE(UInt32(body.count))
            offset += body.count
        }
        for body in bodies { bytes += body }
        return (bytes, summary)
    }

    /// Whether some text matches `program`, explored on its DFA (`RegexDFA.canMatch(representatives:)`):
    /// false when no state reachable from the start has a transition to a match or accepts at the
    /// text's end (`\b\Bx`, `a^b`); nil when the DFA is too large to tell.
    package static func canMatch(_ program: RegexProgram) -> Bool? {
        guard let local = RegexAlphabet([program]).programs[0] else { return nil }
        return RegexDFA(program, stateCapacity: RegexAutomaton.maximumStates + 3).canMatch(
            representatives: local.representatives
        )
    }

    private static func padded(_ bytes: inout [UInt8]) {
        while bytes.count % 4 != 0 { bytes.append(0) }
    }

    private static func automatonBody(
        _ dfa: (transitions: [UInt16], acceptsAtEnd: [Bool]),
        classMap: [UInt8],
        classCount: Int
    ) -> [UInt8] {
        var body: [UInt8] = [CompiledRulesFormat.regexAutomatonKind, 0]
        body.appendLE(UInt16(dfa.acceptsAtEnd.count))
        body.appendLE(UInt16(classCount))
        body.appendLE(UInt16(0))
        body += classMap
        padded(&body)
        var bits = [UInt8](repeating: 0, count: (dfa.acceptsAtEnd.count + 7) / 8)
        for (state, accepts) in dfa.acceptsAtEnd.enumerated() where accepts { bits[state / 8] |= 1 << (state % 8) }
        body += bits
        padded(&body)
        for next in dfa.transitions { body.appendLE(next) }
        padded(&body)
        return body
    }

    private static func programBody(_ program: RegexProgram) -> [UInt8] {
        let parts = program.parts
        var body: [UInt8] = [
            CompiledRulesFormat.regexProgramKind,
            parts.anchoredAtStart ? 1 : 0,
        ]
        body.appendLE(UInt16(parts.instructions.count))
        body.appendLE(UInt16(parts.classes.count))
        body.appendLE(UInt16(0))
        for instruction in parts.instructions {
            body += [instruction.op, 0, 0, 0]
            body.appendLE(UInt32(bitPattern: instruction.x))
            body.appendLE(UInt32(bitPattern: instruction.y))
        }
        for set in parts.classes {
            body += [set.negated ? 1 : 0, set.escapes]
            body.appendLE(UInt16(set.ranges.count))
            for range in set.ranges {
                body.appendLE(range.lowerBound)
                body.appendLE(range.upperBound)
            }
        }
        padded(&body)
        return body
    }
}
