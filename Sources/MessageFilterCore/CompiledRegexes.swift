/// The regexes section of compiled rules (kind 4, docs/FORMAT.md): every regex rule compiled
/// offline, as a complete DFA over the file's classes of scalars, or, where the DFA would be too
/// large, as its NFA program. The extension runs them; it parses no pattern.
struct CompiledRegexes {
    enum Compiled {
        case automaton(RegexAutomaton)
        case program(RegexProgram)
    }

    var scalarClasses: ScalarClasses
    /// The regex rules, ascending, and each one's compiled form.
    var rules: [UInt32]
    var compiled: [Compiled]

    static let empty = CompiledRegexes(
        scalarClasses: ScalarClasses(ascii: Array(repeating: 0, count: 128), starts: [0x80], classes: [0], count: 1),
        rules: [],
        compiled: []
    )

    /// The compiled form of regex rule `rule`.
    func compiled(rule: Int) -> Compiled? {
        var low = 0
        var high = rules.count
        while low < high {
            let middle = (low + high) / 2
            if Int(rules[middle]) < rule { low = middle + 1 } else { high = middle }
        }
        return low < rules.count && Int(rules[low]) == rule ? compiled[low] : nil
    }

    /// Reads and checks the section: every regex rule once, in order, each body whole and within
    /// the limits, every transition to a state or a sentinel, every class in range.
    static func parse(
        _ bytes: UnsafeRawBufferPointer,
        _ range: Range<Int>,
        regexRules: [Int],
        owner: AnyObject,
        corrupt: (String) -> MessageFilterError
    ) throws(MessageFilterError) -> CompiledRegexes {
        let format = CompiledRulesFormat.self
        var at = range.lowerBound
        func need(_ count: Int, _ what: String) throws(MessageFilterError) {
            guard count >= 0, count <= range.upperBound - at else {
                throw corrupt("the regexes section ends inside \(what)")
            }
        }
        func u8() -> UInt8 {
            defer { at += 1 }
            return bytes[at]
        }
        func u16() -> UInt16 {
            defer { at += 2 }
            return bytes.loadLE(UInt16.self, at: at)
        }
        func u32() -> UInt32 {
            defer { at += 4 }
            return bytes.loadLE(UInt32.self, at: at)
        }
        try need(format.regexesHeaderSize, "its header")
        let classCount = Int(u32())
        let rangeCount = Int(u32())
        let regexCount = Int(u32())
        guard u32() == 0 else { throw corrupt("the regexes section's reserved field is not zero") }
        guard (1...65_535).contains(classCount), (1...0x11_0000).contains(rangeCount) else {
            throw corrupt("the regexes section has \(classCount) scalar classes in \(rangeCount) ranges")
        }
        guard regexCount == regexRules.count else {
            throw corrupt("the regexes section holds \(regexCount) regexes for \(regexRules.count) regex rules")
        }
        try need(128 * 2, "the ASCII classes")
        var ascii: [UInt16] = []
        for _ in 0..<128 {
            let id = u16()
            guard Int(id) < classCount else { throw corrupt("an ASCII scalar has class \(id) of \(classCount)") }
            ascii.append(id)
        }
        try need(rangeCount * 8, "the scalar ranges")
        var starts: [UInt32] = []
        var classes: [UInt16] = []
        for index in 0..<rangeCount {
            let start = u32()
            let id = u16()
            guard u16() == 0 else { throw corrupt("scalar range \(index + 1)'s padding is not zero") }
            guard index == 0 ? start == 0x80 : start > starts[index - 1] && start <= 0x10_FFFF else {
                throw corrupt("scalar range \(index + 1) starts at \(start), out of order")
            }
            guard Int(id) < classCount else { throw corrupt("scalar range \(index + 1) has class \(id)") }
            starts.append(start)
            classes.append(id)
        }
        let scalarClasses = ScalarClasses(ascii: ascii, starts: starts, classes: classes, count: classCount)
        try need(regexCount * format.regexEntrySize, "the regex table")
        var entries: [(rule: Int, body: Range<Int>)] = []
        var bodiesStart = at + regexCount * format.regexEntrySize
        for index in 0..<regexCount {
            let rule = Int(u32())
            let offset = Int(u32())
            let length = Int(u32())
            guard rule == regexRules[index] else {
                throw corrupt("regex \(index + 1) names rule \(rule + 1), not regex rule \(regexRules[index] + 1)")
            }
            let start = range.lowerBound + offset
            guard start == bodiesStart, length >= 8, length <= range.upperBound - start, length % 4 == 0 else {
                throw corrupt("rule \(rule + 1)'s compiled regex lies outside the section or out of order")
            }
            entries.append((rule, start..<(start + length)))
            bodiesStart = start + length
        }
        guard bodiesStart == range.upperBound else { throw corrupt("bytes follow the last compiled regex") }
        var compiled: [Compiled] = []
        compiled.reserveCapacity(regexCount)
        for (rule, body) in entries {
            at = body.lowerBound
            let name = "rule \(rule + 1)'s compiled regex"
            let kind = u8()
            let flags = u8()
            switch kind {
            case format.regexAutomatonKind:
                let states = Int(u16())
                let local = Int(u16())
                guard flags == 0, u16() == 0, (1...RegexAutomaton.maximumStates).contains(states),
                    (1...256).contains(local)
                else { throw corrupt("\(name) is a DFA of \(states) states and \(local) classes") }
                let mapLength = (classCount + 3) & ~3
                let acceptLength = ((states + 7) / 8 + 3) & ~3
                let tableLength = (states * local * 2 + 3) & ~3
                guard body.count == 8 + mapLength + acceptLength + tableLength else {
                    throw corrupt("\(name) has \(body.count) bytes, not what its DFA needs")
                }
                let classMapAt = at
                for _ in 0..<classCount {
                    let id = u8()
                    guard Int(id) < local else { throw corrupt("\(name) maps a scalar class to \(id) of \(local)") }
                }
                at = body.lowerBound + 8 + mapLength
                let acceptAt = at
                at += acceptLength
                let tableAt = at
                for _ in 0..<(states * local) {
                    let next = u16()
                    guard Int(next) < states || next >= RegexDFA.deadState else {
                        throw corrupt("\(name) has a transition to state \(next) of \(states)")
                    }
                }
                // Read in place: `owner` holds the file's bytes for as long as the DFA lives, and
                // the offsets are multiples of 4 in a buffer that malloc or mmap aligned.
                let base = bytes.baseAddress!
                compiled.append(
                    .automaton(
                        RegexAutomaton(
                            owner: owner,
                            stateCount: states,
                            classCount: local,
                            classMap: (base + classMapAt).assumingMemoryBound(to: UInt8.self),
                            classMapCount: classCount,
                            table: (base + tableAt).assumingMemoryBound(to: UInt16.self),
                            acceptBits: (base + acceptAt).assumingMemoryBound(to: UInt8.self)
                        )
                    )
                )
            case format.regexProgramKind:
                let count = Int(u16())
                let setCount = Int(u16())
                if flags & 2 != 0 {
                    // Earlier compilers left classes to follow case at run time, by a rule that
                    // matched ranges through uppercase mappings too; classes now come closed under
                    // case from the compiler, and a class has one meaning.
                    throw corrupt(
                        "\(name) is a program whose classes ignore case at run time, as blocklist-sms wrote them before November 2026; compile the rules again"
                    )
                }
                guard flags & ~1 == 0, u16() == 0, (1...RegexLimits.maximumStates + 1).contains(count) else {
                    throw corrupt("\(name) is a program of \(count) instructions")
                }
                at = body.lowerBound + 8
                guard count * 12 <= body.upperBound - at else { throw corrupt("\(name) ends inside its instructions") }
                var instructions: [(op: UInt8, x: Int32, y: Int32)] = []
                for _ in 0..<count {
                    let op = u8()
                    guard u8() == 0, u16() == 0 else { throw corrupt("\(name) has an instruction with padding set") }
                    instructions.append((op, Int32(bitPattern: u32()), Int32(bitPattern: u32())))
                }
                var sets: [RegexClass] = []
                for _ in 0..<setCount {
                    guard body.upperBound - at >= 4 else { throw corrupt("\(name) ends inside its classes") }
                    var set = RegexClass()
                    let negated = u8()
                    set.escapes = u8()
                    let ranges = Int(u16())
                    guard negated <= 1, ranges * 8 <= body.upperBound - at else {
                        throw corrupt("\(name) has a class that does not fit")
                    }
                    set.negated = negated == 1
                    for _ in 0..<ranges {
                        let low = u32()
                        let high = u32()
                        guard low <= high else { throw corrupt("\(name) has a class range that runs backwards") }
                        set.ranges.append(low...high)
                    }
                    sets.append(set)
                }
                guard body.upperBound - at < 4, (at..<body.upperBound).allSatisfy({ bytes[$0] == 0 }),
                    let program = RegexProgram(
                        instructions: instructions,
                        classes: sets,
                        anchoredAtStart: flags & 1 != 0
                    )
                else { throw corrupt("\(name) is not a valid program") }
                compiled.append(.program(program))
            default:
                throw corrupt("\(name) has the unknown kind \(kind)")
            }
        }
        return CompiledRegexes(scalarClasses: scalarClasses, rules: regexRules.map { UInt32($0) }, compiled: compiled)
    }
}
