/// Runs `RegexProgram`s over UTF-8 text: a Pike-style simulation of the NFA, without captures.
///
/// All threads advance together, one Unicode scalar at a time, and a program counter is in a
/// thread list at most once, so a search costs O(instructions × scalars) whatever the pattern,
/// with no recursion on the text. The two thread lists and the closure stack are allocated once
/// and grow only when a larger program comes; matching allocates nothing.
///
/// Not thread-safe: use one per thread.
package final class RegexMatcher {
    /// Per list: `dense[0..<count]` holds the program counters, `sparse[pc]` their slot.
    private struct ThreadList {
        var dense: UnsafeMutablePointer<Int32>
        var sparse: UnsafeMutablePointer<Int32>
        var count = 0

        @inline(__always)
        func contains(_ pc: Int32) -> Bool {
            let slot = Int(sparse[Int(pc)])
            return slot < count && dense[slot] == pc
        }

        @inline(__always)
        mutating func insert(_ pc: Int32) {
            sparse[Int(pc)] = Int32(count)
            dense[count] = pc
            count += 1
        }
    }

    private var capacity = 0
    private var storage: UnsafeMutablePointer<Int32>
    private var current: ThreadList
    private var next: ThreadList
    private var stack: UnsafeMutablePointer<Int32>

    /// - Parameter capacity: the largest program expected, in instructions; more is allocated
    ///   when a larger program runs.
    package init(capacity: Int = 64) {
        storage = .allocate(capacity: 1)
        current = ThreadList(dense: storage, sparse: storage)
        next = current
        stack = storage
        reserve(max(1, capacity))
    }

    deinit { storage.deallocate() }

    private func reserve(_ size: Int) {
        guard size > capacity else { return }
        storage.deallocate()
        capacity = size
        // Two lists of two arrays, and a stack: a split pushes two entries, so it holds 2 × size.
        storage = .allocate(capacity: size * 6)
        // Sparse entries may be read before they are written; any value is safe, but keep them defined.
        storage.initialize(repeating: 0, count: size * 6)
        current = ThreadList(dense: storage, sparse: storage + size)
        next = ThreadList(dense: storage + 2 * size, sparse: storage + 3 * size)
        stack = storage + 4 * size
    }

    /// Whether `program` matches anywhere in `text`, valid UTF-8.
    ///
    /// - Complexity: O(`program.count` × scalars of `text`) time; no allocation once the lists
    ///   are as large as the program.
    package func firstMatch(_ program: RegexProgram, in text: UnsafeBufferPointer<UInt8>) -> Bool {
        firstMatch(program, in: text, from: 0, threads: nil, previousIsWord: false)
    }

    /// Whether `program` matches in `text` (valid UTF-8) from byte `start` on, where the threads
    /// `threads` wait (program counters before their closure, as `RegexDFA` keeps a state) and the
    /// scalar before `start` was a word character or not: the search a lazy DFA hands over when
    /// its states do not stay in its cache. Without threads, the search starts afresh at `start`
    /// (the text's start, where `^` holds, when `start` is 0).
    ///
    /// - Complexity: O(`program.count` × scalars of `text` from `start`).
    package func firstMatch(
        _ program: RegexProgram,
        in text: UnsafeBufferPointer<UInt8>,
        from start: Int,
        threads: UnsafeBufferPointer<Int32>?,
        previousIsWord: Bool
    ) -> Bool {
        reserve(program.count + 1)
        return program.instructions.withUnsafeBufferPointer { code in
            program.classes.withUnsafeBufferPointer { classes in
                run(code, classes, program.anchoredAtStart, program.usesFolding, text, start, threads, previousIsWord)
            }
        }
    }

    @inline(__always)
    static func decode(_ text: UnsafeBufferPointer<UInt8>, _ index: Int) -> (UInt32, Int) {
        let b0 = UInt32(text[index])
        if b0 < 0x80 { return (b0, 1) }
        if b0 < 0xE0 { return ((b0 & 0x1F) << 6 | UInt32(text[index + 1] & 0x3F), 2) }
        if b0 < 0xF0 {
            return ((b0 & 0x0F) << 12 | UInt32(text[index + 1] & 0x3F) << 6 | UInt32(text[index + 2] & 0x3F), 3)
        }
        return (
            (b0 & 0x07) << 18 | UInt32(text[index + 1] & 0x3F) << 12 | UInt32(text[index + 2] & 0x3F) << 6
                | UInt32(text[index + 3] & 0x3F), 4
        )
    }

    /// The text's end, and its start before the first scalar: not a scalar.
    static let none = UInt32.max

    private func run(
        _ code: UnsafeBufferPointer<RegexProgram.Instruction>,
        _ classes: UnsafeBufferPointer<RegexProgram.CompiledClass>,
        _ anchored: Bool,
        _ folding: Bool,
        _ text: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ threads: UnsafeBufferPointer<Int32>?,
        _ wordBefore: Bool
    ) -> Bool {
        current.count = 0
        next.count = 0
        var index = start
        // The scalar at `index` and its length; `none` at the end.
        var (scalar, length) = index >= text.count ? (Self.none, 0) : Self.decode(text, index)
        var previousIsWord = wordBefore

        // Adds `pc` and what it reaches without consuming a scalar, between `previous` and
        // `scalar`, to `list`. Returns true when the match instruction is reached.
        @inline(__always)
        func add(_ pc: Int32, to list: inout ThreadList, atStart: Bool, nextIsWord: Bool) -> Bool {
            var top = 0
            stack[0] = pc
            top = 1
            while top > 0 {
                top -= 1
                let pc = stack[top]
                if list.contains(pc) { continue }
                list.insert(pc)
                let instruction = code[Int(pc)]
                switch instruction.op {
                case .match:
                    return true
                case .jump:
                    stack[top] = instruction.x
                    top += 1
                case .split:
                    stack[top] = instruction.y
                    stack[top + 1] = instruction.x
                    top += 2
                case .start:
                    if atStart {
                        stack[top] = pc + 1
                        top += 1
                    }
                case .end:
                    if scalar == Self.none {
                        stack[top] = pc + 1
                        top += 1
                    }
                case .wordBoundary:
                    if previousIsWord != nextIsWord {
                        stack[top] = pc + 1
                        top += 1
                    }
                case .notWordBoundary:
                    if previousIsWord == nextIsWord {
                        stack[top] = pc + 1
                        top += 1
                    }
                case .scalar, .foldedScalar, .any, .set:
                    break
                }
            }
            return false
        }

        var nextIsWord = scalar != Self.none && RegexProgram.isWord(scalar)
        if let threads {
            for pc in threads where add(pc, to: &current, atStart: start == 0, nextIsWord: nextIsWord) { return true }
            if !anchored, add(0, to: &current, atStart: start == 0, nextIsWord: nextIsWord) { return true }
        } else if add(0, to: &current, atStart: start == 0, nextIsWord: nextIsWord) {
            return true
        }
        while scalar != Self.none {
            let consumed = scalar
            let folded = folding ? RegexProgram.fold(consumed) : consumed
            // Move to the next position, so that threads are added with its context.
            previousIsWord = nextIsWord
            index += length
            if index < text.count {
                (scalar, length) = Self.decode(text, index)
                nextIsWord = RegexProgram.isWord(scalar)
            } else {
                scalar = Self.none
                nextIsWord = false
            }
            next.count = 0
            for slot in 0..<current.count {
                let pc = current.dense[slot]
                let instruction = code[Int(pc)]
                let advances: Bool
                switch instruction.op {
                case .scalar: advances = consumed == UInt32(bitPattern: instruction.x)
                case .foldedScalar: advances = folded == UInt32(bitPattern: instruction.x)
                case .any: advances = !RegexProgram.isLineBreak(consumed)
                case .set: advances = classes[Int(instruction.x)].matches(consumed)
                default: advances = false
                }
                if advances, add(pc + 1, to: &next, atStart: false, nextIsWord: nextIsWord) { return true }
            }
            // A match may start at every position, unless the pattern is anchored at the start.
            if !anchored, add(0, to: &next, atStart: false, nextIsWord: nextIsWord) { return true }
            swap(&current, &next)
            if current.count == 0 { return false }
        }
        return false
    }
}
