#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib

/// A compiled rules file, checked and held in memory: what a Message Filter extension loads once
/// and classifies every message with.
///
/// Loading checks everything a classifier later trusts: the magic, the version, every CRC, every
/// offset and length, that each automaton's failure links point to shallower states and its edges
/// to deeper ones (so matching always ends), and that every rule a state names exists and fits
/// it. A file that passes cannot make the classifier crash, loop or read out of bounds.
///
/// - Complexity: memory is the file's size plus 1 KiB per automaton.
public final class CompiledRules: @unchecked Sendable {
    /// One rule as the compiled file holds it.
    public struct Rule: Sendable {
        public let action: MessageAction
        public let target: RuleTarget
        public let match: MatchKind
        public let view: TextView
        public let name: String
        public let value: String
    }

    /// One automaton: the keyword rules of a target in one text view.
    struct Automaton {
        let target: RuleTarget
        let view: TextView
        let stateCount: Int
        /// Offsets of the arrays inside `bytes`.
        let states: Int
        let labels: Int
        let targets: Int
        let triggers: Int
        /// The root's transitions, dense: the state for each first byte, 0 for none.
        var root: [UInt32]
        /// The byte classes of the dense table: bytes no edge is labelled with share class 0,
        /// and in a case-insensitive view an ASCII capital shares its small letter's class, so
        /// that ASCII text runs without folding.
        var classes: [UInt8] = []
        var classCount = 0
        /// When it fits the budget: the complete transition function, `classCount` entries per
        /// state, failure links already followed. Bit 31 marks a state with a rule or a trigger.
        var dense: [UInt32] = []
    }

    /// Bit 31 of a dense transition: the state names a rule or triggers regexes.
    static let denseOutputFlag: UInt32 = 1 << 31

    let bytes: UnsafeMutableRawBufferPointer
    /// The rules, in file order.
    public let rules: [Rule]
    let automata: [Automaton]
    /// Regex rules that every message must be checked against.
    let unfilteredRegexes: [UInt32]
    /// Where the file came from, for messages.
    public let source: String

    /// Reads and checks the compiled rules at `path`.
    ///
    /// - Throws: `MessageFilterError` naming the file and what failed.
    /// - Parameter denseTableBudget: the bytes each automaton may spend on a complete transition
    ///   table, built at load, which makes matching about twice as fast; an automaton whose
    ///   table would be larger runs from the file's compact form. Default 4 MiB.
    public convenience init(contentsOf path: String, denseTableBudget: Int = 4 << 20) throws(MessageFilterError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            throw MessageFilterError(.io, "Cannot open the compiled rules \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG {
            throw MessageFilterError(.notCompiledRules, "\(path) is not a regular file, so it is not compiled rules.")
        }
        let size = Int(info.st_size)
        if size > CompiledRulesFormat.maximumFileSize {
            throw MessageFilterError(.notCompiledRules, "\(path) has \(size) bytes; compiled rules have at most \(CompiledRulesFormat.maximumFileSize).")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 16)
        var done = 0
        while done < size {
            let n = read(fd, buffer.baseAddress! + done, size - done)
            if n < 0, errno == EINTR { continue }
            if n <= 0 {
                let reason = n == 0 ? "the file ended early" : String(cString: strerror(errno))
                buffer.deallocate()
                throw MessageFilterError(.io, "Cannot read the compiled rules \(path) at byte \(done): \(reason).")
            }
            done += n
        }
        try self.init(adopting: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size]), allocation: buffer, source: path, denseTableBudget: denseTableBudget)
    }

    /// Checks compiled rules held in memory (copied).
    public convenience init(bytes source: [UInt8], name: String, denseTableBudget: Int = 4 << 20) throws(MessageFilterError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 16)
        source.withUnsafeBytes { buffer.copyMemory(from: $0) }
        try self.init(
            adopting: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<source.count]), allocation: buffer, source: name,
            denseTableBudget: denseTableBudget)
    }

    private let allocation: UnsafeMutableRawBufferPointer

    private init(
        adopting bytes: UnsafeMutableRawBufferPointer, allocation: UnsafeMutableRawBufferPointer, source: String, denseTableBudget: Int
    ) throws(MessageFilterError) {
        self.bytes = bytes
        self.allocation = allocation
        self.source = source
        do {
            let parsed = try Self.parse(UnsafeRawBufferPointer(bytes), source: source)
            rules = parsed.rules
            automata = parsed.automata.map { Self.withDenseTable($0, bytes: UnsafeRawBufferPointer(bytes), budget: denseTableBudget) }
            unfilteredRegexes = parsed.unfiltered
        } catch {
            allocation.deallocate()
            throw error
        }
    }

    deinit { allocation.deallocate() }

    /// The file's size in bytes.
    public var byteCount: Int { bytes.count }

    /// How many states all automata hold together.
    public var stateCount: Int { automata.reduce(0) { $0 + $1.stateCount } }

    /// How many automata the file has: one per target and text view that some rule uses.
    public var automatonCount: Int { automata.count }

    /// How many automata run from a dense table.
    public var denseAutomata: Int { automata.count(where: { !$0.dense.isEmpty }) }

    /// Builds the automaton's complete transition table if it fits `budget` bytes.
    private static func withDenseTable(_ automaton: Automaton, bytes: UnsafeRawBufferPointer, budget: Int) -> Automaton {
        var automaton = automaton
        let F = CompiledRulesFormat.self
        func field(_ s: Int, _ f: Int) -> Int { Int(bytes.loadLE(UInt32.self, at: automaton.states + s * F.stateEntrySize + f * 4)) }
        let edgeCount = field(automaton.stateCount, 0)
        var classes = [UInt8](repeating: 0, count: 256)
        var used = [Bool](repeating: false, count: 256)
        for edge in 0..<edgeCount { used[Int(bytes[automaton.labels + edge])] = true }
        var count = 1
        for byte in 0..<256 where used[byte] {
            classes[byte] = UInt8(count)
            count += 1
        }
        // 256 labels would need a class 256; such an automaton keeps the compact form.
        guard count <= 256, automaton.stateCount * count * 4 <= budget else { return automaton }
        if automaton.view.caseInsensitive {
            for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { classes[Int(byte)] = classes[Int(byte | 0x20)] }
        }
        var dense = [UInt32](repeating: 0, count: automaton.stateCount * count)
        var flagged = [Bool](repeating: false, count: automaton.stateCount)
        for s in 0..<automaton.stateCount {
            flagged[s] = UInt32(truncatingIfNeeded: field(s, 2)) != F.noRule || field(s, 3) != field(s + 1, 3)
        }
        // Breadth-first order: a state's failure link is computed before it.
        for s in 0..<automaton.stateCount {
            let fail = field(s, 1)
            for c in 0..<count { dense[s * count + c] = s == 0 ? 0 : dense[fail * count + c] }
            for edge in field(s, 0)..<field(s + 1, 0) {
                let label = Int(bytes[automaton.labels + edge])
                let next = Int(bytes.loadLE(UInt32.self, at: automaton.targets + edge * 4))
                dense[s * count + Int(classes[label])] = UInt32(next) | (flagged[next] ? denseOutputFlag : 0)
            }
        }
        automaton.classes = classes
        automaton.classCount = count
        automaton.dense = dense
        return automaton
    }

    // MARK: - Parsing

    private static func parse(_ bytes: UnsafeRawBufferPointer, source: String) throws(MessageFilterError) -> (rules: [Rule], automata: [Automaton], unfiltered: [UInt32]) {
        func corrupt(_ what: String) -> MessageFilterError {
            MessageFilterError(.corruptRules, "The compiled rules \(source) are damaged: \(what).")
        }
        let F = CompiledRulesFormat.self
        guard bytes.count >= F.headerSize, F.magic.elementsEqual(bytes[0..<8]) else {
            throw MessageFilterError(.notCompiledRules, "\(source) is not a compiled rules file (it does not start with the magic BLSMSRUL).")
        }
        let version = bytes.loadLE(UInt16.self, at: 8)
        guard version == F.version else {
            throw MessageFilterError(.unsupportedVersion, "The compiled rules \(source) have format version \(version); this reader knows version \(F.version).")
        }
        let ruleCount = Int(bytes.loadLE(UInt32.self, at: 12))
        let sectionCount = Int(bytes.loadLE(UInt32.self, at: 16))
        let fileLength = Int(bytes.loadLE(UInt32.self, at: 20))
        guard fileLength == bytes.count else {
            throw corrupt("the header gives a length of \(fileLength) bytes but the file has \(bytes.count)")
        }
        guard sectionCount <= 16, F.headerSize + sectionCount * F.sectionEntrySize <= bytes.count else {
            throw corrupt("the header lists \(sectionCount) sections, more than the file holds")
        }
        guard ruleCount <= F.maximumRules else { throw corrupt("the header lists \(ruleCount) rules") }
        let tableEnd = F.headerSize + sectionCount * F.sectionEntrySize
        var crc = crc32Of(UnsafeRawBufferPointer(rebasing: bytes[0..<24]))
        crc = crc32Continue(crc, UnsafeRawBufferPointer(rebasing: bytes[F.headerSize..<tableEnd]))
        guard crc == bytes.loadLE(UInt32.self, at: 24) else { throw corrupt("the header checksum does not match") }

        var sections: [UInt32: Range<Int>] = [:]
        var covered = tableEnd
        for index in 0..<sectionCount {
            let entry = F.headerSize + index * F.sectionEntrySize
            let kind = bytes.loadLE(UInt32.self, at: entry)
            let offset = Int(bytes.loadLE(UInt32.self, at: entry + 4))
            let length = Int(bytes.loadLE(UInt32.self, at: entry + 8))
            guard offset == covered, offset % 4 == 0, length <= bytes.count - offset else {
                throw corrupt("section \(index) (kind \(kind)) lies outside the file or out of order")
            }
            guard sections[kind] == nil else { throw corrupt("section kind \(kind) appears twice") }
            let range = offset..<(offset + length)
            guard crc32Of(UnsafeRawBufferPointer(rebasing: bytes[range])) == bytes.loadLE(UInt32.self, at: entry + 12) else {
                throw corrupt("the checksum of section \(index) (kind \(kind)) does not match")
            }
            sections[kind] = range
            covered = (offset + length + 3) & ~3
        }
        guard covered >= bytes.count, covered - bytes.count < 4 else { throw corrupt("bytes follow the last section") }
        guard let ruleRange = sections[F.Section.rules], let stringRange = sections[F.Section.strings],
            let unfilteredRange = sections[F.Section.unfilteredRegexes]
        else { throw corrupt("a required section (rules, strings or unfiltered regexes) is missing") }
        guard ruleRange.count == ruleCount * F.ruleEntrySize else {
            throw corrupt("the rules section has \(ruleRange.count) bytes for \(ruleCount) rules")
        }

        var rules: [Rule] = []
        rules.reserveCapacity(ruleCount)
        for index in 0..<ruleCount {
            let at = ruleRange.lowerBound + index * F.ruleEntrySize
            guard let action = MessageAction(rawValue: bytes[at]), action != .none,
                let target = RuleTarget(rawValue: bytes[at + 1]), let match = MatchKind(rawValue: bytes[at + 2]),
                bytes[at + 3] & ~3 == 0
            else { throw corrupt("rule \(index + 1) has an unknown action, target, match or flag") }
            let view = TextView(caseInsensitive: bytes[at + 3] & F.caseInsensitiveFlag != 0, normalized: bytes[at + 3] & F.normalizedFlag != 0)
            func string(_ offsetAt: Int, _ lengthAt: Int, _ what: String) throws(MessageFilterError) -> String {
                let offset = Int(bytes.loadLE(UInt32.self, at: offsetAt))
                let length = Int(bytes.loadLE(UInt16.self, at: lengthAt))
                guard offset <= stringRange.count, length <= stringRange.count - offset else {
                    throw corrupt("rule \(index + 1)'s \(what) lies outside the strings section")
                }
                let slice = UnsafeRawBufferPointer(rebasing: bytes[(stringRange.lowerBound + offset)..<(stringRange.lowerBound + offset + length)])
                guard let text = String(validating: slice, as: UTF8.self), !text.isEmpty else {
                    throw corrupt("rule \(index + 1)'s \(what) is empty or not UTF-8")
                }
                return text
            }
            let name = try string(at + 4, at + 12, "name")
            let value = try string(at + 8, at + 14, "value")
            if match == .regex {
                do {
                    _ = try RegexSubset.analyze(value, caseInsensitive: view.caseInsensitive)
                } catch {
                    throw corrupt("rule \(index + 1)'s regex is outside the allowed subset: \(error)")
                }
                // Compiled once here and dropped, so that classifying never meets a bad pattern.
                do {
                    _ = try Regex(value)
                } catch {
                    throw corrupt("rule \(index + 1)'s regex does not compile: \(error)")
                }
            }
            rules.append(Rule(action: action, target: target, match: match, view: view, name: name, value: value))
        }

        guard unfilteredRange.count % 4 == 0 else { throw corrupt("the unfiltered regexes section is not a list of rule numbers") }
        var unfiltered: [UInt32] = []
        for at in stride(from: unfilteredRange.lowerBound, to: unfilteredRange.upperBound, by: 4) {
            let rule = bytes.loadLE(UInt32.self, at: at)
            guard Int(rule) < ruleCount, rules[Int(rule)].match == .regex else {
                throw corrupt("the unfiltered regexes name rule \(rule + 1), which is not a regex rule")
            }
            unfiltered.append(rule)
        }

        var automata: [Automaton] = []
        for target in [RuleTarget.sender, .body] {
            for view in TextView.all {
                guard let range = sections[F.Section.automaton(target: target, view: view)] else { continue }
                automata.append(try parseAutomaton(bytes, range, target: target, view: view, rules: rules, corrupt: corrupt))
            }
        }
        for kind in sections.keys where kind > 3 && !(16..<24).contains(kind) {
            throw corrupt("section kind \(kind) is unknown")
        }
        return (rules, automata, unfiltered)
    }

    private static func parseAutomaton(
        _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, target: RuleTarget, view: TextView, rules: [Rule],
        corrupt: (String) -> MessageFilterError
    ) throws(MessageFilterError) -> Automaton {
        let F = CompiledRulesFormat.self
        let name = "the \(target) automaton (\(view))"
        guard range.count >= F.automatonHeaderSize else { throw corrupt("\(name) is too short") }
        let base = range.lowerBound
        let stateCount = Int(bytes.loadLE(UInt32.self, at: base))
        let edgeCount = Int(bytes.loadLE(UInt32.self, at: base + 4))
        let triggerCount = Int(bytes.loadLE(UInt32.self, at: base + 8))
        let states = base + F.automatonHeaderSize
        let labels = states + (stateCount + 1) * F.stateEntrySize
        let targets = labels + (edgeCount + 3) & ~3
        let triggers = targets + edgeCount * 4
        guard stateCount >= 1, stateCount < 1 << 26, edgeCount < 1 << 26, triggerCount < 1 << 26,
            triggers + triggerCount * 4 == range.upperBound
        else { throw corrupt("\(name) has sizes that do not add up to its section") }
        func state(_ s: Int, _ field: Int) -> Int { Int(bytes.loadLE(UInt32.self, at: states + s * F.stateEntrySize + field * 4)) }
        guard state(stateCount, 0) == edgeCount, state(stateCount, 3) == triggerCount, state(0, 1) == 0, state(0, 0) == 0, state(0, 3) == 0 else {
            throw corrupt("\(name)'s first or closing state record is wrong")
        }
        var root = [UInt32](repeating: 0, count: 256)
        for s in 0..<stateCount {
            let edgeStart = state(s, 0), edgeEnd = state(s + 1, 0)
            let triggerStart = state(s, 3), triggerEnd = state(s + 1, 3)
            guard edgeStart <= edgeEnd, edgeEnd <= edgeCount, triggerStart <= triggerEnd, triggerEnd <= triggerCount else {
                throw corrupt("\(name) state \(s) has edges or triggers out of order")
            }
            guard s == 0 || state(s, 1) < s else {
                throw corrupt("\(name) state \(s) fails over to a state that is not shallower")
            }
            var previous = -1
            for edge in edgeStart..<edgeEnd {
                let label = Int(bytes[labels + edge])
                let next = Int(bytes.loadLE(UInt32.self, at: targets + edge * 4))
                guard label > previous, next > s, next < stateCount else {
                    throw corrupt("\(name) state \(s) has an edge out of order or to a state that is not deeper")
                }
                previous = label
                if s == 0 { root[label] = UInt32(next) }
            }
            let best = UInt32(truncatingIfNeeded: state(s, 2))
            if best != F.noRule {
                let rule = Int(best & 0xFF_FFFF)
                guard rule < rules.count, rules[rule].match != .regex, rules[rule].view == view,
                    rules[rule].target == target || rules[rule].target == .any,
                    best >> 24 == rules[rule].action.rank
                else { throw corrupt("\(name) state \(s) names rule \(rule + 1), which does not fit it") }
            }
            for trigger in triggerStart..<triggerEnd {
                let rule = Int(bytes.loadLE(UInt32.self, at: triggers + trigger * 4))
                guard rule < rules.count, rules[rule].match == .regex, rules[rule].view == view,
                    rules[rule].target == target || rules[rule].target == .any
                else { throw corrupt("\(name) state \(s) triggers rule \(rule + 1), which is not a regex rule of its kind") }
            }
        }
        return Automaton(
            target: target, view: view, stateCount: stateCount, states: states, labels: labels, targets: targets,
            triggers: triggers, root: root)
    }
}

// MARK: - Little-endian loads and CRC-32

extension UnsafeRawBufferPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// zlib's CRC-32 of `bytes`.
package func crc32Of(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    crc32Continue(0, bytes)
}

package func crc32Continue(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
    var value = UInt(crc)
    var offset = 0
    while offset < bytes.count {
        let chunk = Swift.min(bytes.count - offset, Int(UInt32.max))
        value = crc32(value, base.assumingMemoryBound(to: Bytef.self) + offset, uInt(chunk))
        offset += chunk
    }
    return UInt32(truncatingIfNeeded: value)
}
