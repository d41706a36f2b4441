/// The classes of Unicode scalars that every regex of a compiled file treats alike, shared by
/// all its DFAs: a table for ASCII, and for the rest a partition of U+0080…U+10FFFF into ranges,
/// each with its class. The compiler finds the classes offline (`RegexAlphabet`), so the
/// extension looks no Unicode property up to run a DFA.
package struct ScalarClasses: Sendable, Equatable {
    /// The class of each ASCII scalar.
    package var ascii: [UInt16]
    /// Where each range of non-ASCII scalars starts, ascending, the first at 0x80; a range ends
    /// where the next starts, the last at 0x10FFFF.
    package var starts: [UInt32]
    /// The class of each range.
    package var classes: [UInt16]
    /// How many classes there are; every class number is below it.
    package var count: Int

    /// For each block of 64 scalars from U+0800 to U+FFFF (`scalar >> 6`, less 0x20), its class
    /// when one range holds the whole block, else `mixedBlock`: the class of a three-byte scalar
    /// in one lookup rather than a search of `starts` (2 KB, shared by every DFA of the file).
    package let blocks: [UInt16]
    package static let mixedBlock = UInt16.max

    package init(ascii: [UInt16], starts: [UInt32], classes: [UInt16], count: Int) {
        self.ascii = ascii
        self.starts = starts
        self.classes = classes
        self.count = count
        var blocks = [UInt16](repeating: Self.mixedBlock, count: 0x400 - 0x20)
        for range in starts.indices {
            let low = max(starts[range], 0x800)
            let high = min(range + 1 < starts.count ? starts[range + 1] : 0x11_0000, 0x1_0000)
            // The blocks wholly inside [low, high).
            let first = (low + 63) >> 6
            let end = high >> 6
            if first < end { for block in first..<end { blocks[Int(block) - 0x20] = classes[range] } }
        }
        self.blocks = blocks
    }

    /// The range holding a non-ASCII scalar, its place in `starts`: a binary search.
    @inline(__always)
    func nonASCIIRange(_ scalar: UInt32) -> Int {
        starts.withUnsafeBufferPointer { starts in
            var low = 0
            var high = starts.count
            while high - low > 1 {
                let middle = (low + high) / 2
                if starts[middle] <= scalar { low = middle } else { high = middle }
            }
            return low
        }
    }
}

/// A regex compiled offline to a complete DFA over its classes of scalars: one table lookup per
/// scalar, fixed memory, no compiler and no Unicode lookups in the extension. The compiler builds
/// it when it fits a state budget (`RegexAutomaton.maximumStates`); a regex whose DFA would be
/// larger ships as its NFA program and runs on `RegexDFA` instead.
///
/// A state is a number below `stateCount`, the start is state 0; a transition is a state,
/// `RegexDFA.matchedState` (a match ends here: the text matches) or `RegexDFA.deadState` (no match can
/// start or continue: it does not).
#if _endian(big)
    #error("compiled rules are little-endian, and DFAs are read from them in place")
#endif

package struct RegexAutomaton: @unchecked Sendable {
    /// The most states a DFA the compiler ships may have.
    package static let maximumStates = 4_096

    package let stateCount: Int
    /// How many classes of scalars this regex tells apart; `transitions` has this many per state.
    package let classCount: Int
    /// What keeps the tables below alive: the compiled file they lie in (read in place, so that a
    /// mapped file's DFAs cost an extension no dirty memory), or a copy of the arrays given.
    private let owner: AnyObject
    /// This regex's class for each of the file's scalar classes (`classMapCount` of them).
    private let classMapBytes: UnsafePointer<UInt8>
    private let classMapCount: Int
    /// Per state, `classCount` transitions (little-endian in the file, as on every host we build for).
    private let table: UnsafePointer<UInt16>
    /// Bit `s`: whether the text matches when it ends in state `s` (`$`, `\b` at the end).
    private let acceptBits: UnsafePointer<UInt8>

    /// This regex's class for each of the file's scalar classes.
    package var classMap: [UInt8] { Array(UnsafeBufferPointer(start: classMapBytes, count: classMapCount)) }
    /// Per state, `classCount` transitions.
    package var transitions: [UInt16] { Array(UnsafeBufferPointer(start: table, count: stateCount * classCount)) }
    /// Per state: whether the text matches when it ends there (`$`, `\b` at the end).
    package var acceptsAtEnd: [Bool] { (0..<stateCount).map { acceptBits[$0 / 8] & (1 << ($0 % 8)) != 0 } }

    /// A copy of arrays the compiler or a test built.
    ///
    /// - Precondition: the parts fit together (the compiled rules reader checks them first).
    package init(
        stateCount: Int,
        classCount: Int,
        classMap: [UInt8],
        transitions: [UInt16],
        acceptsAtEnd: [Bool],
        scalarClasses: ScalarClasses
    ) {
        precondition(transitions.count == stateCount * classCount && acceptsAtEnd.count == stateCount)
        precondition(classMap.count == scalarClasses.count && classMap.allSatisfy { Int($0) < classCount })
        var bits = [UInt8](repeating: 0, count: (stateCount + 7) / 8)
        for (state, accepts) in acceptsAtEnd.enumerated() where accepts { bits[state / 8] |= 1 << (state % 8) }
        let copy = Tables(classMap: classMap, transitions: transitions, acceptBits: bits)
        self.init(
            owner: copy,
            stateCount: stateCount,
            classCount: classCount,
            classMap: copy.classMap,
            classMapCount: classMap.count,
            table: copy.transitions,
            acceptBits: copy.acceptBits
        )
    }

    /// Tables read in place from `owner`'s memory, which the reader has checked.
    init(
        owner: AnyObject,
        stateCount: Int,
        classCount: Int,
        classMap: UnsafePointer<UInt8>,
        classMapCount: Int,
        table: UnsafePointer<UInt16>,
        acceptBits: UnsafePointer<UInt8>
    ) {
        self.owner = owner
        self.stateCount = stateCount
        self.classCount = classCount
        classMapBytes = classMap
        self.classMapCount = classMapCount
        self.table = table
        self.acceptBits = acceptBits
    }

    /// A copy of the tables in memory of its own.
    private final class Tables {
        let classMap: UnsafeMutablePointer<UInt8>
        let transitions: UnsafeMutablePointer<UInt16>
        let acceptBits: UnsafeMutablePointer<UInt8>

        init(classMap: [UInt8], transitions: [UInt16], acceptBits: [UInt8]) {
            self.classMap = .allocate(capacity: max(classMap.count, 1))
            self.classMap.initialize(from: classMap, count: classMap.count)
            self.transitions = .allocate(capacity: max(transitions.count, 1))
            self.transitions.initialize(from: transitions, count: transitions.count)
            self.acceptBits = .allocate(capacity: max(acceptBits.count, 1))
            self.acceptBits.initialize(from: acceptBits, count: acceptBits.count)
        }

        deinit {
            classMap.deallocate()
            transitions.deallocate()
            acceptBits.deallocate()
        }
    }

    /// Whether the regex matches anywhere in `text` (valid UTF-8).
    ///
    /// - Complexity: O(text), one table lookup per scalar, plus, for a scalar of three bytes,
    ///   its block's class (`ScalarClasses.blocks`), and for another non-ASCII one, or one in a
    ///   block of several classes, a binary search of the scalar ranges unless it is in the range
    ///   of the one before.
    package func matches(
        _ text: UnsafeBufferPointer<UInt8>,
        scalarClasses: ScalarClasses,
        idleSkip: IdleSkip? = nil
    ) -> Bool {
        let count = classCount
        let table = table
        let classMap = classMapBytes
        // The file's class of an ASCII scalar, then this regex's: no table of its own per regex
        // (128 bytes and an array for each of hundreds of regexes, all dirty memory).
        return withExtendedLifetime(owner) {
            scalarClasses.ascii.withUnsafeBufferPointer { ascii in
                var state = 0
                var index = 0
                // The range of the last non-ASCII scalar, [low, high), or its block of 64, and
                // its class here.
                var low: UInt32 = 0
                var high: UInt32 = 0
                var rangeClass = 0
                while index < text.count {
                    if let idleSkip, state == idleSkip.idle {
                        index = idleSkip.pass(text, from: index)
                        if index == text.count { break }
                    }
                    let byte = text[index]
                    let local: Int
                    if byte < 0x80 {
                        local = Int(classMap[Int(ascii[Int(byte)])])
                        index += 1
                    } else {
                        let (scalar, length) = RegexMatcher.decode(text, index)
                        index += length
                        if scalar &- low >= high &- low {
                            let block =
                                length == 3 ? scalarClasses.blocks[Int(scalar >> 6) &- 0x20] : ScalarClasses.mixedBlock
                            if block != ScalarClasses.mixedBlock {
                                low = scalar & ~0x3F
                                high = low + 0x40
                                rangeClass = Int(classMap[Int(block)])
                            } else {
                                let range = scalarClasses.nonASCIIRange(scalar)
                                low = scalarClasses.starts[range]
                                high =
                                    range + 1 < scalarClasses.starts.count ? scalarClasses.starts[range + 1] : 0x11_0000
                                rangeClass = Int(classMap[Int(scalarClasses.classes[range])])
                            }
                        }
                        local = rangeClass
                    }
                    let next = table[state &* count &+ local]
                    if next >= RegexDFA.deadState { return next == RegexDFA.matchedState }
                    state = Int(next)
                }
                return acceptBits[state / 8] & (1 << (state % 8)) != 0
            }
        }
    }

    /// What the DFA's idle state (where a search waits for a match to begin) stays in, by bytes: `matches` passes over them without decoding a
    /// scalar or looking its class up, as Hyperscan accelerates a state with few ways out. Made
    /// once per classifier for the regexes that run on every message; the caller deallocates it.
    package func idleSkip(scalarClasses: ScalarClasses) -> IdleSkip {
        // The state that stays itself on the most classes: where an unanchored search waits
        // (after a non-digit, for `\d{6}`; the start itself has read nothing yet).
        let loops = (0..<stateCount).map { state in
            (0..<classCount).count { table[state &* classCount &+ $0] == UInt16(state) }
        }
        let idle = loops.indices.max { loops[$0] < loops[$1] || (loops[$0] == loops[$1] && $0 > $1) } ?? 0
        let stays = (0..<classCount).map { table[idle &* classCount &+ $0] == UInt16(idle) }
        let skip = IdleSkip(idle: idle)
        let kinds = skip.base.assumingMemoryBound(to: UInt8.self)
        let blocks = (skip.base + 256).assumingMemoryBound(to: UInt64.self)
        for byte in 0..<0x80 {
            kinds[byte] = stays[Int(classMapBytes[Int(scalarClasses.ascii[byte])])] ? 1 : 0
        }
        for byte in 0x80..<0x100 { kinds[byte] = (0x80..<0xC0).contains(byte) || (0xC2..<0xF5).contains(byte) ? 1 : 0 }
        for lead in 0xE0..<0xF0 { kinds[lead] = 2 }
        for range in scalarClasses.starts.indices where !stays[Int(classMapBytes[Int(scalarClasses.classes[range])])] {
            let low = scalarClasses.starts[range]
            let high = range + 1 < scalarClasses.starts.count ? scalarClasses.starts[range + 1] : 0x11_0000
            // A scalar below U+0800 is named by its lead byte, one below U+10000 by its lead
            // byte and the next (a block of 64), any other by its lead byte.
            if low < 0x800 {
                for lead in (low >> 6)...((min(high, 0x800) - 1) >> 6) { kinds[Int(0xC0 | lead)] = 0 }
            }
            if low < 0x1_0000 && high > 0x800 {
                for block in (max(low, 0x800) >> 6)...((min(high, 0x1_0000) - 1) >> 6) {
                    blocks[Int(block >> 6)] &= ~(1 << UInt64(block & 0x3F))
                }
            }
            if high > 0x1_0000 {
                for lead in (max(low, 0x1_0000) >> 18)...((high - 1) >> 18) { kinds[Int(0xF0 | lead)] = 0 }
            }
        }
        return skip
    }
}

/// The bytes a DFA's idle state stays in (`RegexAutomaton.idleSkip`), 384 bytes allocated
/// once: by each byte, 0 if it may leave, 1 if it stays (an ASCII scalar, a continuation byte,
/// the lead byte of scalars that all stay), 2 for a lead byte of three whose block of 64
/// scalars, named by the next byte, is then looked up: for each lead byte E0…EF, a 64-bit word
/// of a bit per block (the next byte's low six bits), set if every scalar of the block stays.
package struct IdleSkip: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    /// The state the bytes are of.
    let idle: Int

    init(idle: Int) {
        self.idle = idle
        base = .allocate(byteCount: 256 + 16 * 8, alignment: 8)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: 256)
        (base + 256).initializeMemory(as: UInt64.self, repeating: ~0, count: 16)
    }

    package func deallocate() { base.deallocate() }

    /// Where, from `start` (a scalar's first byte), the first byte that may leave the start
    /// state is, or the text's end.
    @inline(__always)
    func pass(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let kinds = UnsafePointer(base.assumingMemoryBound(to: UInt8.self))
        let blocks = UnsafePointer((base + 256).assumingMemoryBound(to: UInt64.self))
        guard let bytes = text.baseAddress else { return start }
        let count = text.count
        var index = start
        while index < count {
            let kind = kinds[Int(bytes[index])]
            if kind == 1 {
                index &+= 1
            } else if kind == 2, index &+ 1 < count,
                blocks[Int(bytes[index] & 0xF)] & (1 << UInt64(bytes[index &+ 1] & 0x3F)) != 0
            {
                index &+= 1
            } else {
                break
            }
        }
        return index
    }
}
