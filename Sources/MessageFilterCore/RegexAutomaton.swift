/// The classes of Unicode scalars that every regex of a compiled file treats alike, shared by
/// all its DFAs: a table for ASCII, and for the rest a partition of U+0080…U+10FFFF into ranges,
/// each with its class. The compiler finds the classes offline (`RegexAlphabet`), so the
/// extension looks no Unicode property up to run a DFA.
public struct ScalarClasses: Sendable, Equatable {
    /// The class of each ASCII scalar.
    public var ascii: [UInt16]
    /// Where each range of non-ASCII scalars starts, ascending, the first at 0x80; a range ends
    /// where the next starts, the last at 0x10FFFF.
    public var starts: [UInt32]
    /// The class of each range.
    public var classes: [UInt16]
    /// How many classes there are; every class number is below it.
    public var count: Int

    public init(ascii: [UInt16], starts: [UInt32], classes: [UInt16], count: Int) {
        self.ascii = ascii
        self.starts = starts
        self.classes = classes
        self.count = count
    }

    /// The class of a non-ASCII scalar: a binary search of the ranges.
    @inline(__always)
    func nonASCIIClass(_ scalar: UInt32) -> Int {
        starts.withUnsafeBufferPointer { starts in
            var low = 0
            var high = starts.count
            while high - low > 1 {
                let middle = (low + high) / 2
                if starts[middle] <= scalar { low = middle } else { high = middle }
            }
            return Int(classes[low])
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
public struct RegexAutomaton: Sendable {
    /// The most states a DFA the compiler ships may have.
    public static let maximumStates = 4_096

    public let stateCount: Int
    /// How many classes of scalars this regex tells apart; `transitions` has this many per state.
    public let classCount: Int
    /// This regex's class for each of the file's scalar classes.
    public let classMap: [UInt8]
    /// Per state, `classCount` transitions.
    public let transitions: [UInt16]
    /// Per state: whether the text matches when it ends there (`$`, `\b` at the end).
    public let acceptsAtEnd: [Bool]
    /// This regex's class of each ASCII scalar, from `classMap`, so ASCII needs one lookup.
    private let asciiClasses: [UInt8]

    /// - Precondition: the parts fit together (the compiled rules reader checks them first).
    public init(
        stateCount: Int,
        classCount: Int,
        classMap: [UInt8],
        transitions: [UInt16],
        acceptsAtEnd: [Bool],
        scalarClasses: ScalarClasses
    ) {
        precondition(transitions.count == stateCount * classCount && acceptsAtEnd.count == stateCount)
        precondition(classMap.count == scalarClasses.count && classMap.allSatisfy { Int($0) < classCount })
        self.stateCount = stateCount
        self.classCount = classCount
        self.classMap = classMap
        self.transitions = transitions
        self.acceptsAtEnd = acceptsAtEnd
        asciiClasses = scalarClasses.ascii.map { classMap[Int($0)] }
    }

    /// Whether the regex matches anywhere in `text` (valid UTF-8).
    ///
    /// - Complexity: O(text), one table lookup per scalar, plus a binary search of the scalar
    ///   ranges for each non-ASCII one.
    public func matches(_ text: UnsafeBufferPointer<UInt8>, scalarClasses: ScalarClasses) -> Bool {
        let count = classCount
        return transitions.withUnsafeBufferPointer { table in
            asciiClasses.withUnsafeBufferPointer { ascii in
                classMap.withUnsafeBufferPointer { classMap in
                    var state = 0
                    var index = 0
                    while index < text.count {
                        let byte = text[index]
                        let local: Int
                        if byte < 0x80 {
                            local = Int(ascii[Int(byte)])
                            index += 1
                        } else {
                            let (scalar, length) = RegexMatcher.decode(text, index)
                            local = Int(classMap[scalarClasses.nonASCIIClass(scalar)])
                            index += length
                        }
                        let next = table[state &* count &+ local]
                        if next >= RegexDFA.deadState { return next == RegexDFA.matchedState }
                        state = Int(next)
                    }
                    return acceptsAtEnd[state]
                }
            }
        }
    }
}
