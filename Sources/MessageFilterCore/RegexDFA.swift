/// A lazily built DFA over a `RegexProgram`, with fixed memory: the subset construction done one
/// transition at a time as texts need it, the way RE2 and regex-automata run their "lazy DFA".
///
/// A state is the set of instructions the NFA's threads wait on after a scalar (their program
/// counters before the closure), whether that scalar was a word character (for `\b`), and
/// whether no scalar was read yet (for `^`). A transition computes the closure with the next
/// scalar as context, steps over it, and is remembered: in a table for ASCII scalars, and for
/// the others in a table by the scalar's signature, what the program can tell of it (whether it
/// is a word character, which literal it is or folds to, which classes hold it). Distinct
/// scalars that the program treats alike share their transitions, so text in any script costs
/// transitions by the states it reaches, not by the scalars it uses (issue 45: 1–3 KB of varied
/// Korean once filled a memo keyed by scalar). When the states fill the fixed capacity the cache
/// is emptied and building starts again; a search that computes more transitions than its budget
/// hands its state over to the NFA simulation, which reads the rest of the text
/// (`finish(_:from:with:)`), so the work stays O(instructions × scalars) in the worst case and
/// one table lookup per scalar in the usual one.
///
/// Everything is allocated at `init`; matching allocates nothing. Not thread-safe.
package final class RegexDFA {
    /// Transition sentinels; real states start at `firstState`.
    static let unknown: UInt16 = 0, matched: UInt16 = 1, dead: UInt16 = 2, firstState: UInt16 = 3

    /// What a lazy DFA's tables may take, by default: its states, its transitions and the
    /// counters its states hold (`init(_:stateCapacity:memoryBudget:)`). An extension keeps less
    /// (`MessageClassifier.extensionLazyDFABudget`).
    package static let memoryBudget = 384 * 1024
    /// The most states kept at once, and the program counters they may hold together.
    let stateCapacity: Int
    let poolCapacity: Int
    /// Signatures of non-ASCII scalars kept at once, and scalars whose signature is remembered.
    static let signatureCapacity = 16
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
    /// Per state: whether a text ending there matches (`endMatched`, `endNoMatch`), or not
    /// worked out yet (`endUnknown`): each search ends with it.
    private var ends: UnsafeMutablePointer<UInt8>
    private static let endUnknown: UInt8 = 0
    private static let endMatched: UInt8 = 1
    private static let endNoMatch: UInt8 = 2
    private var pool: UnsafeMutablePointer<Int32>
    private var poolUsed = 0
    private var stateCount = Int(firstState)
    /// `stateCapacity × asciiClasses` transitions on ASCII scalars, by their class: ASCII
    /// scalars that every instruction and `\b` treat alike share one (as RE2's byte classes).
    private var table: UnsafeMutablePointer<UInt16>
    /// Each ASCII scalar's class, and how many classes there are.
    private var byteClasses: UnsafeMutablePointer<UInt8>
    private let asciiClasses: Int
    /// Open-addressed hash of the states by their contents, 2 × capacity slots.
    private var hash: UnsafeMutablePointer<UInt16>
    /// `stateCapacity × signatureCapacity` transitions on non-ASCII scalars, by signature.
    private var signatureTable: UnsafeMutablePointer<UInt16>
    /// The signatures: `signatureWords` words each (`signature(of:)`).
    private var signatures: UnsafeMutablePointer<UInt64>
    private var signatureCount = 0
    private let signatureWords: Int
    /// A direct-mapped memo of scalars' signatures.
    private var memoKeys: UnsafeMutablePointer<UInt32>
    private var memoValues: UnsafeMutablePointer<UInt8>
    /// What a signature tells apart: the non-ASCII scalars of `scalar` instructions and the
    /// scalars of `foldedScalar` ones, sorted.
    private let literals: [UInt32]
    private let foldedLiterals: [UInt32]
    /// The state a search stopped in when it passed its budget; -1 before its first state.
    private var stopped = -1
    /// Scratch for one transition: the closure's set and stack, and the next state's counters.
    private var set: UnsafeMutablePointer<Int32>
    private var sparse: UnsafeMutablePointer<Int32>
    private var stack: UnsafeMutablePointer<Int32>
    private var kernel: UnsafeMutablePointer<Int32>
    /// Per class, for one transition: 1 unknown, 2 matches, 0 does not (a non-ASCII scalar's
    /// class test looks Unicode properties up, once per transition rather than once per thread).
    private var verdicts: UnsafeMutablePointer<UInt8>
    /// For pruning a kernel (`prune(_:_:)`): per instruction, the stamp of the last search that
    /// reached it, and whether it is one of the kernel's counters (the stamp) or one pruned
    /// (the stamp + 1).
    private var reached: UnsafeMutablePointer<UInt32>
    private var entries: UnsafeMutablePointer<UInt32>
    private var stamp: UInt32 = 0

    static let flagWord: UInt8 = 1, flagStart: UInt8 = 2

    /// - Parameters:
    ///   - program: the regex's NFA program, as the compiler shipped it.
    ///   - stateCapacity: the most states kept at once (at most 65,000, three of them
    ///     sentinels); the compiler asks for enough to build a complete DFA
    ///     (`complete(representatives:)`). By default, as many as `memoryBudget` bytes hold with
    ///     eight counters a state: about 2,000–4,000, by how many classes the program's ASCII
    ///     scalars fall into. Each state's row of transitions is written when the state is made,
    ///     so a regex whose texts reach few states dirties only their pages: the budget is what
    ///     a text that keeps the cache full costs.
    package init(_ program: RegexProgram, stateCapacity asked: Int? = nil, memoryBudget: Int = RegexDFA.memoryBudget) {
        self.program = program
        let n = program.count + 1
        byteClasses = .allocate(capacity: 128)
        asciiClasses = Self.classify(program, into: byteClasses)
        let stateCapacity: Int
        if let asked {
            stateCapacity = min(asked, 65_000)
            poolCapacity = stateCapacity * n
        } else {
            let perState = 2 * (asciiClasses + Self.signatureCapacity) + 2 * 2 + 4 + 4 + 1 + 1 + 8 * 4
            stateCapacity = min(8_192, max(128, memoryBudget / perState))
            poolCapacity = 8 * stateCapacity
        }
        self.stateCapacity = stateCapacity
        starts = .allocate(capacity: stateCapacity)
        counts = .allocate(capacity: stateCapacity)
        flags = .allocate(capacity: stateCapacity)
        ends = .allocate(capacity: stateCapacity)
        pool = .allocate(capacity: poolCapacity)
        table = .allocate(capacity: stateCapacity * asciiClasses)
        hash = .allocate(capacity: stateCapacity * 2)
        signatureTable = .allocate(capacity: stateCapacity * Self.signatureCapacity)
        signatureWords = 1 + (program.classes.count + 63) / 64
        signatures = .allocate(capacity: (Self.signatureCapacity + 1) * signatureWords)
        memoKeys = .allocate(capacity: Self.memoCapacity)
        memoValues = .allocate(capacity: Self.memoCapacity)
        var literals = Set<UInt32>()
        var foldedLiterals = Set<UInt32>()
        for instruction in program.instructions {
            let value = UInt32(bitPattern: instruction.x)
            if instruction.op == .scalar, value >= 0x80 { literals.insert(value) }
            if instruction.op == .foldedScalar { foldedLiterals.insert(value) }
        }
        self.literals = literals.sorted()
        self.foldedLiterals = foldedLiterals.sorted()
        set = .allocate(capacity: n)
        sparse = .allocate(capacity: n)
        sparse.initialize(repeating: 0, count: n)
        stack = .allocate(capacity: 3 * n + 2)
        kernel = .allocate(capacity: n)
        verdicts = .allocate(capacity: max(1, program.classes.count))
        reached = .allocate(capacity: n)
        reached.initialize(repeating: 0, count: n)
        entries = .allocate(capacity: n)
        entries.initialize(repeating: 0, count: n)
        reset()
        resetSignatures()
    }

    deinit {
        for pointer in [
            UnsafeMutableRawPointer(starts), .init(counts), .init(flags), .init(ends), .init(pool), .init(table),
            .init(byteClasses), .init(hash),
            .init(signatureTable), .init(signatures), .init(memoKeys), .init(memoValues), .init(set), .init(sparse),
            .init(stack), .init(kernel), .init(verdicts), .init(reached), .init(entries),
        ] {
            pointer.deallocate()
        }
    }

    private func reset() {
        stateCount = Int(Self.firstState)
        poolUsed = 0
        hash.update(repeating: 0, count: stateCapacity * 2)
    }

    /// Sorts the ASCII scalars into classes that every instruction of `program` and `\b` treat
    /// alike (the scalar or folded scalar an instruction names, each set, `.` and word
    /// characters), writing each scalar's class into `classes`; returns how many there are.
    private static func classify(_ program: RegexProgram, into classes: UnsafeMutablePointer<UInt8>) -> Int {
        var named = Set<UInt32>()
        var foldedNamed = Set<UInt32>()
        for instruction in program.instructions {
            let value = UInt32(bitPattern: instruction.x)
            if instruction.op == .scalar { named.insert(value) }
            if instruction.op == .foldedScalar { foldedNamed.insert(value) }
        }
        // Each scalar's key, `words` words in one flat array: word-ness and line break, the
        // scalar or folded scalar an instruction names, then a bit per class. A class is the
        // first scalar with its key (a linear search of at most 128), so that making a lazy DFA
        // allocates no array per scalar.
        let words = 3 + (program.classes.count + 63) / 64
        var keys = [UInt64](repeating: 0, count: 128 * words)
        var firsts: [Int] = []
        for value in UInt32(0)..<0x80 {
            let base = Int(value) * words
            keys[base] = (RegexProgram.isWord(value) ? 1 : 0) | (RegexProgram.isLineBreak(value) ? 2 : 0)
            keys[base + 1] = named.contains(value) ? UInt64(value) : 0xFFFF
            let folded = RegexProgram.fold(value)
            keys[base + 2] = foldedNamed.contains(folded) ? UInt64(folded) : 0xFFFF
            for (index, set) in program.classes.enumerated() where set.matches(value) {
                keys[base + 3 + index / 64] |= 1 << UInt64(index % 64)
            }
            let same = firsts.firstIndex { first in
                (0..<words).allSatisfy { keys[first * words + $0] == keys[base + $0] }
            }
            if let same {
                classes[Int(value)] = UInt8(same)
            } else {
                classes[Int(value)] = UInt8(firsts.count)
                firsts.append(Int(value))
            }
        }
        return firsts.count
    }

    /// Forgets every signature, and the transitions by them.
    private func resetSignatures() {
        signatureCount = 0
        memoKeys.update(repeating: UInt32.max, count: Self.memoCapacity)
        // Rows past the states made are written when their state is.
        signatureTable.update(repeating: Self.unknown, count: stateCount * Self.signatureCapacity)
    }

    /// The number of the signature of `scalar`, a non-ASCII scalar: what every instruction and
    /// `\b` can tell of it. Two scalars with one signature take every state to the same state.
    @inline(__always)
    private func signature(of scalar: UInt32, _ classes: UnsafeBufferPointer<RegexProgram.CompiledClass>) -> Int {
        let slot = Int((UInt64(scalar) &* 0x9E37_79B9_7F4A_7C15) >> 54) % Self.memoCapacity
        if memoKeys[slot] == scalar { return Int(memoValues[slot]) }
        // Word 0: whether it is a word character, and which literal it is and folds to (their
        // place + 1, 0 for none); then one bit per class.
        let words = signatureWords
        let made = signatures + signatureCount * words
        made.update(repeating: 0, count: words)
        var head: UInt64 = RegexProgram.isWord(scalar) ? 1 : 0
        if let place = Self.place(of: scalar, in: literals) { head |= UInt64(place + 1) << 1 }
        if !foldedLiterals.isEmpty, let place = Self.place(of: RegexProgram.fold(scalar), in: foldedLiterals) {
            head |= UInt64(place + 1) << 32
        }
        made[0] = head
        for index in 0..<classes.count where classes[index].matches(scalar) {
            made[1 + index / 64] |= 1 << UInt64(index % 64)
        }
        var found = -1
        for candidate in 0..<signatureCount
        where (0..<words).allSatisfy({ signatures[candidate * words + $0] == made[$0] }) {
            found = candidate
            break
        }
        if found < 0 {
            if signatureCount == Self.signatureCapacity {
                // Full: start again, this signature first.
                (signatures).update(from: made, count: words)
                resetSignatures()
            }
            found = signatureCount
            signatureCount += 1
        }
        memoKeys[slot] = scalar
        memoValues[slot] = UInt8(found)
        return found
    }

    private static func place(of value: UInt32, in sorted: [UInt32]) -> Int? {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == value ? low : nil
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
        ends[id] = Self.endUnknown
        (table + id * asciiClasses).update(repeating: Self.unknown, count: asciiClasses)
        (signatureTable + id * Self.signatureCapacity).update(repeating: Self.unknown, count: Self.signatureCapacity)
        (pool + poolUsed).update(from: kernel, count: count)
        poolUsed += count
        hash[slot] = UInt16(id)
        return UInt16(id)
    }

    /// The transition from `from` over `scalar` (`RegexMatcher.none` for the text's end):
    /// `matched`, `dead`, or a state; nil when the cache is full.
    ///
    /// `known`, when given, is what `Representative` worked out of the scalar beforehand: the
    /// compiler asks for the same scalars' transitions from every state.
    private func transition(
        _ from: Int,
        _ scalar: UInt32,
        _ code: UnsafeBufferPointer<RegexProgram.Instruction>,
        _ classes: UnsafeBufferPointer<RegexProgram.CompiledClass>,
        known: Representative? = nil
    ) -> UInt16? {
        let atEnd = scalar == RegexMatcher.none
        let stateFlags = flags[from]
        let atStart = stateFlags & Self.flagStart != 0
        let previousIsWord = stateFlags & Self.flagWord != 0
        let nextIsWord = !atEnd && (known?.isWord ?? RegexProgram.isWord(scalar))
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
        let folded = known?.folded ?? (program.usesFolding ? RegexProgram.fold(scalar) : scalar)
        if let known {
            verdicts.update(from: known.verdicts, count: classes.count)
        } else if scalar >= 0x80 {
            verdicts.update(repeating: 1, count: classes.count)
        }
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
        next = prune(next, code)
        var sorted = UnsafeMutableBufferPointer(start: kernel, count: next)
        sorted.sort()
        return state(count: next, flags: nextIsWord ? Self.flagWord : 0)
    }

    /// Drops from `kernel[0..<count]` each counter that another reaches through splits and jumps
    /// alone, and returns how many stay. Every text the dropped counter's thread accepts, the
    /// other's accepts too (its thread can take the same path, with the same flags), so whether
    /// the state matches is unchanged. This is what keeps `.{0,N}` small: its optional copies
    /// are emitted as `x?x?…` in a row, so the thread that has read fewer copies reaches every
    /// other one, and a state holds one counter per window instead of every subset of them
    /// (issue 45: with `.{0,30}` and `.{0,40}`, text that names the literals again and again
    /// kept the lazy DFA making states).
    ///
    /// Each counter not yet dropped walks what it reaches, never past what an earlier walk
    /// reached; a counter it meets is dropped. Whatever is dropped is reached by a counter that
    /// stays (the last walk's counter stays, and a dropped walker was reached by a later one).
    private func prune(_ count: Int, _ code: UnsafeBufferPointer<RegexProgram.Instruction>) -> Int {
        guard count > 1 else { return count }
        if stamp >= UInt32.max - 2 {
            stamp = 0
            reached.update(repeating: 0, count: program.count + 1)
            entries.update(repeating: 0, count: program.count + 1)
        }
        stamp += 2
        let live = stamp
        for index in 0..<count { entries[Int(kernel[index])] = live }
        var dropped = 0
        for index in 0..<count {
            let origin = kernel[index]
            guard entries[Int(origin)] == live else { continue }
            var top = 0
            func push(from pc: Int32) {
                let instruction = code[Int(pc)]
                switch instruction.op {
                case .split:
                    stack[top] = instruction.y
                    stack[top + 1] = instruction.x
                    top += 2
                case .jump:
                    stack[top] = instruction.x
                    top += 1
                default: break
                }
            }
            push(from: origin)
            while top > 0 {
                top -= 1
                let pc = stack[top]
                guard reached[Int(pc)] != live else { continue }
                reached[Int(pc)] = live
                if pc != origin, entries[Int(pc)] == live {
                    entries[Int(pc)] = live + 1
                    dropped += 1
                }
                push(from: pc)
            }
        }
        guard dropped > 0 else { return count }
        var kept = 0
        for index in 0..<count where entries[Int(kernel[index])] == live {
            kernel[kept] = kernel[index]
            kept += 1
        }
        return kept
    }

    /// What a search found: a match, none in the whole text, or neither, because it computed
    /// `transitionBudget` transitions before the end (a text whose states do not stay in the
    /// cache); it had then read the first `scanned` bytes, none of which ends a match, and
    /// `finish(_:from:with:)` decides the rest.
    package enum Outcome: Equatable {
        case matched, noMatch
        case exhausted(scanned: Int)
    }

    /// Decides a search that stopped at `scanned` (`exhausted`), before any other search: the
    /// NFA simulation goes on from the state the DFA stopped in to the text's end, so the whole
    /// text is read either way.
    ///
    /// - Complexity: O(instructions × scalars after `scanned`).
    package func finish(_ text: UnsafeBufferPointer<UInt8>, from scanned: Int, with matcher: RegexMatcher) -> Bool {
        guard stopped >= 0 else { return matcher.firstMatch(program, in: text) }
        return matcher.firstMatch(
            program,
            in: text,
            from: scanned,
            threads: UnsafeBufferPointer(start: pool + Int(starts[stopped]), count: Int(counts[stopped])),
            previousIsWord: flags[stopped] & Self.flagWord != 0
        )
    }

    /// Whether the program matches anywhere in `text`, computing at most `transitionBudget`
    /// transitions (each costs up to one step per instruction); `Int.max` for no limit.
    package func firstMatch(_ text: UnsafeBufferPointer<UInt8>, transitionBudget: Int = .max) -> Outcome {
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
        var index = 0
        let count = text.count
        var computed = 0
        // Where the budget runs out, the NFA simulation takes over from this state and place.
        func stop(_ state: Int) -> Outcome {
            stopped = state
            return .exhausted(scanned: state < 0 ? 0 : index)
        }
        guard
            var current = initial()
                ?? {
                    reset()
                    return initial()
                }()
        else { return stop(-1) }
        while index < count {
            if computed >= budget { return stop(Int(current)) }
            let byte = text[index]
            var next: UInt16
            var scalar: UInt32
            if byte < 0x80 {
                scalar = UInt32(byte)
                index += 1
                let entry = Int(current) &* asciiClasses &+ Int(byteClasses[Int(byte)])
                next = table[entry]
                if next == Self.unknown {
                    // Computed, remembered, or the cache is emptied and this state rebuilt.
                    computed += 1
                    if let made = transition(Int(current), scalar, code, classes) {
                        table[entry] = made
                        next = made
                    } else {
                        guard let rebuilt = rebuild(current, &resets) else { return stop(-1) }
                        current = rebuilt
                        index -= 1
                        continue
                    }
                }
            } else {
                let (value, length) = RegexMatcher.decode(text, index)
                scalar = value
                let entry = Int(current) &* Self.signatureCapacity &+ signature(of: value, classes)
                next = signatureTable[entry]
                if next == Self.unknown {
                    computed += 1
                    guard let made = transition(Int(current), value, code, classes) else {
                        guard let rebuilt = rebuild(current, &resets) else { return stop(-1) }
                        current = rebuilt
                        continue
                    }
                    signatureTable[entry] = made
                    next = made
                }
                index += length
            }
            if next == Self.matched { return .matched }
            if next == Self.dead { return .noMatch }
            current = next
        }
        // The text's end, remembered per state like any transition.
        if ends[Int(current)] == Self.endUnknown {
            guard let last = transition(Int(current), RegexMatcher.none, code, classes) else {
                return stop(Int(current))
            }
            ends[Int(current)] = last == Self.matched ? Self.endMatched : Self.endNoMatch
        }
        return ends[Int(current)] == Self.endMatched ? .matched : .noMatch
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
        let result: Bool = withRepresentatives(representatives) { code, classes, known in
            var state = first
            while state < stateCount {
                for scalar in known {
                    guard let next = transition(state, scalar.scalar, code, classes, known: scalar) else {
                        return false
                    }
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
        return result ? (transitions, acceptsAtEnd) : nil
    }

    /// Whether some text matches: true as soon as a state reachable from the start has a
    /// transition on one of `representatives` to a match or matches at the text's end, false
    /// when every reachable state was made and none does (`\b\B`, `a^b`), nil when the states
    /// outgrow the capacity first. The states are explored depth first, so a regex that can
    /// match is usually told after a few states, where `complete(representatives:)` would
    /// make them all. Used by the compiler, offline.
    package func canMatch(representatives: [UInt32]) -> Bool? {
        reset()
        guard let start = initial() else { return nil }
        return withRepresentatives(representatives) { code, classes, known -> Bool? in
            // Each state made is explored once: its end, then its transitions one by one.
            var explored = [Bool](repeating: false, count: stateCapacity)
            var path: [(state: Int, next: Int)] = [(Int(start), 0)]
            explored[Int(start)] = true
            while let top = path.last {
                let (state, next) = (top.state, top.next)
                if next == 0 {
                    guard let last = transition(state, RegexMatcher.none, code, classes) else { return nil }
                    if last == Self.matched { return true }
                }
                guard next < known.count else {
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next = next + 1
                guard let to = transition(state, known[next].scalar, code, classes, known: known[next]) else {
                    return nil
                }
                if to == Self.matched { return true }
                if to != Self.dead, !explored[Int(to)] {
                    explored[Int(to)] = true
                    path.append((Int(to), 0))
                }
            }
            return false
        }
    }

    /// What a transition needs of a representative scalar, worked out once for every state:
    /// whether it is a word character, its fold, and whether each class holds it (2) or not (0).
    private struct Representative {
        let scalar: UInt32
        let isWord: Bool
        let folded: UInt32
        let verdicts: UnsafePointer<UInt8>
    }

    private func withRepresentatives<Result>(
        _ scalars: [UInt32],
        _ body: (
            UnsafeBufferPointer<RegexProgram.Instruction>, UnsafeBufferPointer<RegexProgram.CompiledClass>,
            [Representative]
        ) -> Result
    ) -> Result {
        program.instructions.withUnsafeBufferPointer { code in
            program.classes.withUnsafeBufferPointer { classes in
                let width = max(1, classes.count)
                let table = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, scalars.count) * width)
                defer { table.deallocate() }
                let known = scalars.enumerated().map { index, scalar in
                    let row = table + index * width
                    for (place, set) in classes.enumerated() { row[place] = set.matches(scalar) ? 2 : 0 }
                    return Representative(
                        scalar: scalar,
                        isWord: RegexProgram.isWord(scalar),
                        folded: program.usesFolding ? RegexProgram.fold(scalar) : scalar,
                        verdicts: UnsafePointer(row)
                    )
                }
                return body(code, classes, known)
            }
        }
    }

    /// A complete DFA's sentinels: the text matches, or cannot match any more.
    package static let matchedState: UInt16 = 0xFFFF, deadState: UInt16 = 0xFFFE
}
