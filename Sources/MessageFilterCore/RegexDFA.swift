/// A lazily built DFA over a `RegexProgram`, with fixed memory: the subset construction done one
/// transition at a time as texts need it, the way RE2 and regex-automata run their "lazy DFA".
///
/// A state is the set of instructions the NFA's threads wait on after a scalar (their program
/// counters before the closure), whether that scalar was a word character (for `\b`), and
/// whether no scalar was read yet (for `^`). A transition computes the closure with the next
/// scalar as context, steps over it, and is remembered: in a table for ASCII scalars, and in a
/// small direct-mapped memo for the others. When the states fill the fixed capacity the cache is
/// emptied and building starts again; a text that empties it too often is matched by the NFA
/// simulation instead, so the work stays O(instructions × scalars) in the worst case and one
/// table lookup per ASCII scalar in the usual one.
///
/// Everything is allocated at `init`; matching allocates nothing. Not thread-safe.
package final class RegexDFA {
    /// Transition sentinels; real states start at `firstState`.
    static let unknown: UInt16 = 0, matched: UInt16 = 1, dead: UInt16 = 2, firstState: UInt16 = 3

    /// The most states kept at once, by default.
    package static let defaultStateCapacity = 128
    /// The most states kept at once, and the program counters they may hold together.
    let stateCapacity: Int
    let poolCapacity: Int
    static let memoCapacity = 1024
    /// How many times one search may empty the cache before it hands over to the NFA: no limit,
    /// since computing a transition costs what an NFA step does, and one is computed per scalar
    /// at most.
    static let resetLimit = Int.max

    let program: RegexProgram
    /// Per state: where its program counters start in `pool`, how many, and its flags.
    private var starts: UnsafeMutablePointer<Int32>
    private var counts: UnsafeMutablePointer<Int32>
    private var flags: UnsafeMutablePointer<UInt8>
    private var pool: UnsafeMutablePointer<Int32>
    private var poolUsed = 0
    private var stateCount = Int(firstState)
    /// `stateCapacity × 128` transitions on ASCII scalars.
    private var table: UnsafeMutablePointer<UInt16>
    /// Open-addressed hash of the states by their contents, 2 × capacity slots.
    private var hash: UnsafeMutablePointer<UInt16>
    private var memoKeys: UnsafeMutablePointer<UInt64>
    private var memoValues: UnsafeMutablePointer<UInt16>
    /// Scratch for one transition: the closure's set and stack, and the next state's counters.
    private var set: UnsafeMutablePointer<Int32>
    private var sparse: UnsafeMutablePointer<Int32>
    private var stack: UnsafeMutablePointer<Int32>
    private var kernel: UnsafeMutablePointer<Int32>
    /// Per class, for one transition: 1 unknown, 2 matches, 0 does not (a non-ASCII scalar's
    /// class test looks Unicode properties up, once per transition rather than once per thread).
    private var verdicts: UnsafeMutablePointer<UInt8>

    static let flagWord: UInt8 = 1, flagStart: UInt8 = 2

    /// - Parameters:
    ///   - program: the regex's NFA program, as the compiler shipped it.
    ///   - stateCapacity: the most states kept at once (at most 65,000, three of them
    ///     sentinels); the compiler asks for more when it builds a complete DFA
    ///     (`complete(representatives:)`).
    package init(_ program: RegexProgram, stateCapacity: Int = RegexDFA.defaultStateCapacity) {
        self.program = program
        let stateCapacity = min(stateCapacity, 65_000)
        self.stateCapacity = stateCapacity
        poolCapacity = stateCapacity == Self.defaultStateCapacity ? 8 * 1024 : stateCapacity * (program.count + 1)
        let n = program.count + 1
        starts = .allocate(capacity: stateCapacity)
        counts = .allocate(capacity: stateCapacity)
        flags = .allocate(capacity: stateCapacity)
        pool = .allocate(capacity: poolCapacity)
        table = .allocate(capacity: stateCapacity * 128)
        hash = .allocate(capacity: stateCapacity * 2)
        memoKeys = .allocate(capacity: Self.memoCapacity)
        memoValues = .allocate(capacity: Self.memoCapacity)
        set = .allocate(capacity: n)
        sparse = .allocate(capacity: n)
        sparse.initialize(repeating: 0, count: n)
        stack = .allocate(capacity: 3 * n + 2)
        kernel = .allocate(capacity: n)
        verdicts = .allocate(capacity: max(1, program.classes.count))
        reset()
    }

    deinit {
        for pointer in [
            UnsafeMutableRawPointer(starts), .init(counts), .init(flags), .init(pool), .init(table), .init(hash),
            .init(memoKeys),
            .init(memoValues), .init(set), .init(sparse), .init(stack), .init(kernel), .init(verdicts),
        ] {
            pointer.deallocate()
        }
    }

    private func reset() {
        stateCount = Int(Self.firstState)
        poolUsed = 0
        table.update(repeating: Self.unknown, count: stateCapacity * 128)
        hash.update(repeating: 0, count: stateCapacity * 2)
        memoKeys.update(repeating: UInt64.max, count: Self.memoCapacity)
    }

    /// The state holding `kernel[0..<count]` (sorted) with `flags`, added if new; nil when the
    /// cache is full.
    private func state(count: Int, flags stateFlags: UInt8) -> UInt16? {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(stateFlags)
        for index in 0..<count { h = (h ^ UInt64(UInt32(bitPattern: kernel[index]))) &* 0x100_0000_01B3 }
        let slots = stateCapacity * 2
        var slot = Int(h % UInt64(slots))
        while hash[slot] != 0 {
            let candidate = Int(hash[slot])
            if flags[candidate] == stateFlags, Int(counts[candidate]) == count {
                let start = Int(starts[candidate])
                var same = true
                for index in 0..<count where pool[start + index] != kernel[index] {
                    same = false
                    break
                }
                if same { return UInt16(candidate) }
            }
            slot = (slot + 1) % slots
        }
        guard stateCount < stateCapacity, poolUsed + count <= poolCapacity else { return nil }
        let id = stateCount
        stateCount += 1
        starts[id] = Int32(poolUsed)
        counts[id] = Int32(count)
        flags[id] = stateFlags
        (pool + poolUsed).update(from: kernel, count: count)
        poolUsed += count
        hash[slot] = UInt16(id)
        return UInt16(id)
    }

    /// The transition from `from` over `scalar` (`RegexMatcher.none` for the text's end):
    /// `matched`, `dead`, or a state; nil when the cache is full.
    private func transition(
        _ from: Int,
        _ scalar: UInt32,
        _ code: UnsafeBufferPointer<RegexProgram.Instruction>,
        _ classes: UnsafeBufferPointer<RegexProgram.CompiledClass>
    ) -> UInt16? {
        let atEnd = scalar == RegexMatcher.none
        let stateFlags = flags[from]
        let atStart = stateFlags & Self.flagStart != 0
        let previousIsWord = stateFlags & Self.flagWord != 0
        let nextIsWord = !atEnd && RegexProgram.isWord(scalar)
        var count = 0
        var top = 0
        let start = Int(starts[from])
        // Roots: the state's counters, and the start of a new match.
        for index in (0..<Int(counts[from])).reversed() {
            stack[top] = pool[start + index]
            top += 1
        }
        if !program.anchoredAtStart {
            stack[top] = 0
            top += 1
        }
        while top > 0 {
            top -= 1
            let pc = stack[top]
            let slot = Int(sparse[Int(pc)])
            if slot < count, set[slot] == pc { continue }
            sparse[Int(pc)] = Int32(count)
            set[count] = pc
            count += 1
            let instruction = code[Int(pc)]
            var follow = false
            switch instruction.op {
            case .match: return Self.matched
            case .jump:
                stack[top] = instruction.x
                top += 1
            case .split:
                stack[top] = instruction.y
                stack[top + 1] = instruction.x
                top += 2
            case .start: follow = atStart
            case .end: follow = atEnd
            case .wordBoundary: follow = previousIsWord != nextIsWord
            case .notWordBoundary: follow = previousIsWord == nextIsWord
            case .scalar, .foldedScalar, .any, .set: break
            }
            if follow {
                stack[top] = pc + 1
                top += 1
            }
        }
        if atEnd { return Self.dead }
        let folded = program.usesFolding ? RegexProgram.fold(scalar) : scalar
        if scalar >= 0x80 { verdicts.update(repeating: 1, count: classes.count) }
        var next = 0
        for slot in 0..<count {
            let pc = set[slot]
            let instruction = code[Int(pc)]
            let advances: Bool
            switch instruction.op {
            case .scalar: advances = scalar == UInt32(bitPattern: instruction.x)
            case .foldedScalar: advances = folded == UInt32(bitPattern: instruction.x)
            case .any: advances = !RegexProgram.isLineBreak(scalar)
            case .set:
                if scalar < 0x80 {
                    advances = classes[Int(instruction.x)].matches(scalar)
                } else {
                    let index = Int(instruction.x)
                    if verdicts[index] == 1 { verdicts[index] = classes[index].matches(scalar) ? 2 : 0 }
                    advances = verdicts[index] == 2
                }
            default: advances = false
            }
            if advances {
                kernel[next] = pc + 1
                next += 1
            }
        }
        if next == 0, program.anchoredAtStart { return Self.dead }
        var sorted = UnsafeMutableBufferPointer(start: kernel, count: next)
        sorted.sort()
        return state(count: next, flags: nextIsWord ? Self.flagWord : 0)
    }

    /// What a search found: a match, none in the whole text, or neither, because it computed
    /// `transitionBudget` transitions before the end (a text whose states do not stay in the
    /// cache); it had then read the first `scanned` bytes, none of which ends a match.
    enum Outcome: Equatable {
        case matched, noMatch
        case exhausted(scanned: Int)
    }

    /// Whether the program matches anywhere in `text`, computing at most `transitionBudget`
    /// transitions (each costs up to one step per instruction); `Int.max` for no limit.
    func firstMatch(_ text: UnsafeBufferPointer<UInt8>, transitionBudget: Int = .max) -> Outcome {
        program.instructions.withUnsafeBufferPointer { code in
            program.classes.withUnsafeBufferPointer { classes in
                search(text, code, classes, budget: transitionBudget)
            }
        }
    }

    private func initial() -> UInt16? {
        var count = 0
        if program.anchoredAtStart {
            kernel[0] = 0
            count = 1
        }
        return state(count: count, flags: Self.flagStart)
    }

    private func search(
        _ text: UnsafeBufferPointer<UInt8>,
        _ code: UnsafeBufferPointer<RegexProgram.Instruction>,
        _ classes: UnsafeBufferPointer<RegexProgram.CompiledClass>,
        budget: Int
    ) -> Outcome {
        var resets = 0
        guard
            var current = initial()
                ?? {
                    reset()
                    return initial()
                }()
        else { return .exhausted(scanned: 0) }
        var index = 0
        let count = text.count
        var computed = 0
        while index < count {
            if computed >= budget { return .exhausted(scanned: index) }
            let byte = text[index]
            var next: UInt16
            var scalar: UInt32
            if byte < 0x80 {
                scalar = UInt32(byte)
                index += 1
                next = table[Int(current) &* 128 &+ Int(byte)]
                if next == Self.unknown {
                    // Computed, remembered, or the cache is emptied and this state rebuilt.
                    computed += 1
                    if let made = transition(Int(current), scalar, code, classes) {
                        table[Int(current) * 128 + Int(byte)] = made
                        next = made
                    } else {
                        guard let rebuilt = rebuild(current, &resets) else { return .exhausted(scanned: 0) }
                        current = rebuilt
                        index -= 1
                        continue
                    }
                }
            } else {
                let (value, length) = RegexMatcher.decode(text, index)
                scalar = value
                let key = UInt64(current) << 32 | UInt64(value)
                let slot = Int((key &* 0x9E37_79B9_7F4A_7C15) >> 54) % Self.memoCapacity
                if memoKeys[slot] == key {
                    next = memoValues[slot]
                } else {
                    computed += 1
                    guard let made = transition(Int(current), value, code, classes) else {
                        guard let rebuilt = rebuild(current, &resets) else { return .exhausted(scanned: 0) }
                        current = rebuilt
                        continue
                    }
                    memoKeys[slot] = key
                    memoValues[slot] = made
                    next = made
                }
                index += length
            }
            if next == Self.matched { return .matched }
            if next == Self.dead { return .noMatch }
            current = next
        }
        guard let last = transition(Int(current), RegexMatcher.none, code, classes) else {
            return .exhausted(scanned: 0)
        }
        return last == Self.matched ? .matched : .noMatch
    }

    /// Empties the cache and adds `state`'s contents back; nil past the reset limit.
    private func rebuild(_ state: UInt16, _ resets: inout Int) -> UInt16? {
        resets += 1
        guard resets <= Self.resetLimit else { return nil }
        let count = Int(counts[Int(state)])
        let stateFlags = flags[Int(state)]
        (kernel).update(from: pool + Int(starts[Int(state)]), count: count)
        reset()
        return self.state(count: count, flags: stateFlags)
    }

    /// The complete DFA: every state reachable from the start, and its transition on each
    /// representative scalar (one per class of scalars that every instruction and `\b` treat
    /// alike); nil when the states outgrow the capacity. Used by the compiler, offline.
    ///
    /// - Returns: per state (the start first), its transitions, one per representative (a state
    ///   number, `matchedState` or `deadState`), and whether it matches at the text's end.
    package func complete(representatives: [UInt32]) -> (transitions: [UInt16], acceptsAtEnd: [Bool])? {
        reset()
        guard let start = initial() else { return nil }
        precondition(start == Self.firstState)
        var transitions: [UInt16] = []
        var acceptsAtEnd: [Bool] = []
        let first = Int(Self.firstState)
        let result: Bool = program.instructions.withUnsafeBufferPointer { code in
            program.classes.withUnsafeBufferPointer { classes in
                var state = first
                while state < stateCount {
                    for scalar in representatives {
                        guard let next = transition(state, scalar, code, classes) else { return false }
                        transitions.append(
                            next == Self.matched
                                ? Self.matchedState : next == Self.dead ? Self.deadState : next - Self.firstState
                        )
                    }
                    guard let last = transition(state, RegexMatcher.none, code, classes) else { return false }
                    acceptsAtEnd.append(last == Self.matched)
                    state += 1
                }
                return true
            }
        }
        return result ? (transitions, acceptsAtEnd) : nil
    }

    /// A complete DFA's sentinels: the text matches, or cannot match any more.
    package static let matchedState: UInt16 = 0xFFFF, deadState: UInt16 = 0xFFFE
}
