internal import ByteCodecs
internal import CWindowScan
internal import LibC

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
        /// The rule's sub-action of `action` (`DeferralResponse.subActions`), or nil.
        public let subAction: String?
        public let target: RuleTarget
        public let match: MatchKind
        package let view: TextView
        public let name: String
        public let value: String
    }

    /// The offsets of an automaton's output entries (`count` of them, then a closing one) and of
    /// its triggers in the file's bytes.
    struct OutputTable {
        let outputs: Int
        let count: Int
        let triggers: Int
    }

    /// One automaton: the keyword rules of a target in one text view.
    struct Automaton {
        let target: RuleTarget
        let view: TextView
        let stateCount: Int
        /// The automaton's section inside `bytes`, and the offsets of its arrays.
        var section: Range<Int>
        var states: Int
        /// Edge labels; edge `e` leads to state `e + 1` (states are numbered breadth-first, in
        /// edge order, so the file needs no targets).
        var labels: Int
        /// The states that name a rule or trigger regexes: (state, best key, first trigger),
        /// ascending by state, then a closing entry.
        var outputs: Int
        let outputCount: Int
        var triggers: Int

        /// Where the automaton's outputs and triggers lie in the file: plain offsets, so that a
        /// walk can hold them without copying (and retaining) the automaton's arrays.
        var outputTable: OutputTable { OutputTable(outputs: outputs, count: outputCount, triggers: triggers) }

        /// The root's transitions, dense: the state for each first byte, 0 for none.
        var root: [UInt32]
        /// The byte classes of the dense table: bytes no edge is labelled with share class 0,
        /// and in a case-insensitive view an ASCII capital shares its small letter's class, so
        /// that ASCII text runs without folding.
        ///
        /// This and `dense` are allocated by `withDenseTable` and freed by the `CompiledRules`
        /// that holds the automaton, so that a walk borrows them without retaining anything.
        var classes = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
        var classCount = 0
        /// When it fits the budget: the complete transition function, `classCount` entries per
        /// state, failure links already followed. An entry is the offset of the next state's row,
        /// so that a step is one load and one add. The states with outputs (a rule or a trigger)
        /// have their rows from `outputRows` on, a power of two above every other row, so that a
        /// walk tells them by or-ing the entries it takes; `outputStates` gives each one's number
        /// in the file.
        var dense = UnsafeMutableBufferPointer<UInt32>(start: nil, count: 0)
        var outputRows: UInt32 = 0
        var outputStates = UnsafeMutableBufferPointer<UInt32>(start: nil, count: 0)
        /// The longest keyword, in bytes with its markers: a walk started at the root this many
        /// bytes before a position is in the state the whole text's walk is in there.
        var depth = 0
        /// The window filter (`WindowFilter`), when the processor has a byte shuffle and the
        /// keywords suit one: a walk then starts only where a keyword may.
        var windowFilter: UnsafeMutablePointer<blocklist_window_filter>?
        /// Whether a keyword ends with the end marker (a suffix rule's).
        var endKeywords = false
    }

    let bytes: UnsafeMutableRawBufferPointer
    /// Each rule's action, target, match and flags, packed a byte each; names and values stay in
    /// the file's bytes until asked for, so that 10,000 rules cost 40 KB here, not 10,000 strings.
    private let info: [UInt32]
    private let ruleTable: Int
    private let stringTable: Int
    let automata: [Automaton]
    /// Regex rules that every message must be checked against.
    let unfilteredRegexes: [UInt32]
    /// Every regex rule, compiled.
    let regexes: CompiledRegexes
    /// The rules that combine conditions, and which rule each condition belongs to.
    let combined: Combined

    /// The rules that combine conditions (match `all`). Their conditions are entries after the
    /// rules, with the action none: keywords and regexes as any rule's, which the automata
    /// trigger instead of naming.
    struct Combined {
        struct Record {
            let rule: UInt32
            let first: UInt32
            let all: UInt16
            let none: UInt16
        }
        /// The rules proper; entries from here on are conditions.
        let ruleCount: Int
        let records: [Record]
        /// For each condition (entry − `ruleCount`), its record.
        let parents: [UInt32]
    }
    /// Where the file came from, for messages.
    public let source: String

    /// Reads and checks the compiled rules at `path`.
    ///
    /// - Throws: `MessageFilterError` naming the file and what failed.
    /// - Parameters:
    ///   - path: the compiled rules file (`rules.blsms`, from `blocklist sms compile`).
    ///   - denseTableBudget: the bytes each automaton may spend on a complete transition table,
    ///     built at load, which makes matching about twice as fast; an automaton whose table would
    ///     be larger runs from the file's compact form. Default 4 MiB.
    ///
    /// The file is mapped read-only, not read into the heap: its pages are clean, so rule names
    /// and values stay available at no cost to an extension's footprint.
    public convenience init(contentsOf path: String, denseTableBudget: Int = 4 << 20)
        throws(MessageFilterError)
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            throw MessageFilterError(
                .io,
                "Cannot open the compiled rules \(path): \(String(cString: strerror(errno)))."
            )
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG {
            throw MessageFilterError(.notCompiledRules, "\(path) is not a regular file, so it is not compiled rules.")
        }
        let size = Int(info.st_size)
        if size > CompiledRulesFormat.maximumFileSize {
            throw MessageFilterError(
                .notCompiledRules,
                "\(path) has \(size) bytes; compiled rules have at most \(CompiledRulesFormat.maximumFileSize)."
            )
        }
        // Mapped, not read: the file's pages are clean and shared with the page cache, so they
        // are not the extension's footprint, which iOS counts as dirty memory (about 1.4 MB of
        // heap for 10,000 rules when the file was read). The app replaces the file by rename,
        // never in place, so the mapping keeps the file it checked.
        guard size > 0 else {
            throw MessageFilterError(.notCompiledRules, "\(path) is empty, so it is not compiled rules.")
        }
        guard let start = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), start != MAP_FAILED else {
            throw MessageFilterError(.io, "Cannot map the compiled rules \(path): \(String(cString: strerror(errno))).")
        }
        let mapping = UnsafeMutableRawBufferPointer(start: start, count: size)
        try self.init(
            adopting: mapping,
            allocation: mapping,
            mapped: true,
            source: path,
            denseTableBudget: denseTableBudget
        )
    }

    /// Checks compiled rules held in memory (copied).
    public convenience init(bytes source: [UInt8], name: String, denseTableBudget: Int = 4 << 20)
        throws(MessageFilterError)
    {
        try self.init(bytes: source, name: name, denseTableBudget: denseTableBudget, windowScan: true)
    }

    /// Compiled rules held in memory, with or without window filters (`windowScan`), so that
    /// tests and benches can hold the filtered walk to the whole one.
    package convenience init(bytes source: [UInt8], name: String, denseTableBudget: Int, windowScan: Bool)
        throws(MessageFilterError)
    {
        let buffer = UnsafeMutableRawBufferPointer(start: malloc(max(source.count, 1))!, count: max(source.count, 1))
        source.withUnsafeBytes { buffer.copyMemory(from: $0) }
        try self.init(
            adopting: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<source.count]),
            allocation: buffer,
            mapped: false,
            source: name,
            denseTableBudget: denseTableBudget,
            windowScan: windowScan
        )
    }

    /// The memory `bytes` lies in, freed (or unmapped) when the last user lets it go: these rules,
    /// or a DFA read in place from them.
    final class FileMemory {
        let allocation: UnsafeMutableRawBufferPointer
        /// Whether `allocation` is a read-only mapping of the file, not malloc's.
        let mapped: Bool

        init(_ allocation: UnsafeMutableRawBufferPointer, mapped: Bool) {
            self.allocation = allocation
            self.mapped = mapped
        }

        deinit {
            if mapped { munmap(allocation.baseAddress, allocation.count) } else { free(allocation.baseAddress) }
        }
    }

    private let memory: FileMemory

    private init(
        adopting bytes: UnsafeMutableRawBufferPointer,
        allocation: UnsafeMutableRawBufferPointer,
        mapped: Bool,
        source: String,
        denseTableBudget: Int,
        windowScan: Bool = true
    ) throws(MessageFilterError) {
        self.bytes = bytes
        // Owned from here on: a refusal below frees it with this object.
        let memory = FileMemory(allocation, mapped: mapped)
        self.memory = memory
        self.source = source
        let parsed = try Self.parse(UnsafeRawBufferPointer(bytes), source: source, owner: memory)
        info = parsed.info
        ruleTable = parsed.ruleTable
        stringTable = parsed.stringTable
        automata = parsed.automata.map {
            Self.withDenseTable(
                $0,
                bytes: UnsafeRawBufferPointer(bytes),
                budget: denseTableBudget,
                windowScan: windowScan
            )
        }
        unfilteredRegexes = parsed.unfiltered
        regexes = parsed.regexes
        combined = parsed.combined
    }

    deinit {
        for automaton in automata {
            automaton.dense.deallocate()
            automaton.outputStates.deallocate()
            automaton.classes.deallocate()
            automaton.windowFilter?.deallocate()
        }
    }

    /// How many rules the file holds; the conditions of combined rules are not counted.
    public var ruleCount: Int { combined.ruleCount }

    /// How many entries the rules table holds: the rules, then every condition.
    var entryCount: Int { info.count }

    /// Rule `index` (0-based, in file order), its name and value read from the file.
    public func rule(_ index: Int) -> Rule {
        let packed = info[index]
        let target = RuleTarget(rawValue: UInt8(truncatingIfNeeded: packed >> 8))!
        let match = MatchKind(rawValue: UInt8(truncatingIfNeeded: packed >> 16))!
        let raw = UnsafeRawBufferPointer(bytes)
        let at = ruleTable + index * CompiledRulesFormat.ruleEntrySize
        func string(_ offsetAt: Int, _ lengthAt: Int) -> String {
            let offset = stringTable + Int(raw.loadLE(UInt32.self, at: offsetAt))
            let length = Int(raw.loadLE(UInt16.self, at: lengthAt))
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)]), as: UTF8.self)
        }
        return Rule(
            action: action(of: index),
            subAction: subAction(of: index),
            target: target,
            match: match,
            view: view(of: index),
            name: string(at + 4, at + 12),
            value: string(at + 8, at + 14)
        )
    }

    /// All rules, read from the file now.
    public var rules: [Rule] { (0..<ruleCount).map(rule) }

    /// The conditions of rule `index`, which combines them: those that must hold, and those that
    /// must not. Empty for any other rule.
    public func conditions(of index: Int) -> (all: [Rule], none: [Rule]) {
        guard let record = combined.records.first(where: { $0.rule == index }) else { return ([], []) }
        let first = Int(record.first)
        let middle = first + Int(record.all)
        return (
            (first..<middle).map(rule),
            (middle..<(middle + Int(record.none))).map(rule)
        )
    }

    @inline(__always)
    func action(of index: Int) -> MessageAction {
        MessageAction(rawValue: UInt8(truncatingIfNeeded: info[index]) & 0x0F)!
    }

    /// Rule `index`'s sub-action, from the high four bits of its action byte.
    func subAction(of index: Int) -> String? {
        let sub = Int(UInt8(truncatingIfNeeded: info[index]) >> 4)
        return sub == 0 ? nil : DeferralResponse.subActions[action(of: index)]?[sub - 1]
    }

    @inline(__always)
    func target(of index: Int) -> RuleTarget {
        RuleTarget(rawValue: UInt8(truncatingIfNeeded: info[index] >> 8))!
    }

    @inline(__always)
    func view(of index: Int) -> TextView {
        // The reader checked the flags.
        TextView(index: Int(info[index] >> 24))!
    }

    /// The bytes held in memory: the file's size, or less once names were dropped.
    public var byteCount: Int { bytes.count }

    /// How many states all automata hold together.
    public var stateCount: Int { automata.reduce(0) { $0 + $1.stateCount } }

    /// How many automata the file has: one per target and text view that some rule uses.
    public var automatonCount: Int { automata.count }

    /// How many regex rules ship as a DFA, and how many as their NFA program (their DFA passed
    /// the compiler's budget).
    public var regexForms: (automata: Int, programs: Int) {
        let automata = regexes.compiled.count {
            if case .automaton = $0 { true } else { false }
        }
        return (automata, regexes.compiled.count - automata)
    }

    /// The regexes shipped as programs (their DFA passed the compiler's budget): the rule each
    /// belongs to (a condition's combined rule), and its instructions, the steps a scalar may
    /// cost it where a text keeps its lazy DFA building states.
    public var programRegexes: [(rule: Int, instructions: Int)] {
        zip(regexes.rules, regexes.compiled).compactMap { entry, compiled in
            guard case .program(let program) = compiled else { return nil }
            let index = Int(entry)
            let rule =
                index < combined.ruleCount
                ? index : Int(combined.records[Int(combined.parents[index - combined.ruleCount])].rule)
            return (rule, program.count)
        }
    }

    /// How many automata run from a dense table.
    public var denseAutomata: Int { automata.count(where: { !$0.dense.isEmpty }) }

    /// How many automata have a window filter.
    package var filteredAutomata: Int { automata.count(where: { $0.windowFilter != nil }) }

    /// Runs every window scan with at most byte shuffle `shuffle` (1: 16 bytes a turn), so that
    /// tests hold the SSSE3 scan to the whole walk on a processor that has AVX2.
    package func limitWindowScans(to shuffle: UInt32) {
        for automaton in automata {
            if let filter = automaton.windowFilter { filter.pointee.shuffle = min(filter.pointee.shuffle, shuffle) }
        }
    }

    /// Builds the automaton's complete transition table if it fits `budget` bytes.
    private static func withDenseTable(
        _ automaton: Automaton,
        bytes: UnsafeRawBufferPointer,
        budget: Int,
        windowScan: Bool
    ) -> Automaton {
        var automaton = automaton
        let format = CompiledRulesFormat.self
        func field(_ s: Int, _ f: Int) -> Int {
            Int(bytes.loadLE(UInt32.self, at: automaton.states + s * format.stateEntrySize + f * 4))
        }
        func edgeStart(_ s: Int) -> Int { field(s, 0) & 0x7FFF_FFFF }
        let edgeCount = edgeStart(automaton.stateCount)
        var classes = [UInt8](repeating: 0, count: 256)
        var used = [Bool](repeating: false, count: 256)
        for edge in 0..<edgeCount { used[Int(bytes[automaton.labels + edge])] = true }
        var count = 1
        for byte in 0..<256 where used[byte] {
            classes[byte] = UInt8(count)
            count += 1
        }
        // 256 labels would need a class 256; such an automaton keeps the compact form.
        // The table takes at least a row per state: an automaton that cannot fit allocates nothing
        // here (its arrays would stay as dirty memory in the extension's heap).
        guard count <= 256, automaton.stateCount * count * 4 <= budget else { return automaton }
        var flagged = [Bool](repeating: false, count: automaton.stateCount)
        for s in 0..<automaton.stateCount {
            flagged[s] = UInt32(truncatingIfNeeded: field(s, 0)) & format.outputFlag != 0
        }
        // Rows: the states without outputs first, in the file's order, then, from the next power
        // of two, those with outputs.
        let plain = flagged.count(where: { !$0 })
        var outputRows = 1
        while outputRows < plain * count { outputRows <<= 1 }
        let entries = outputRows + (automaton.stateCount - plain) * count
        guard entries <= Int(UInt32.max), entries * 4 <= budget else { return automaton }
        var row = [Int](repeating: 0, count: automaton.stateCount)
        var outputStates: [UInt32] = []
        var nextPlain = 0
        // Rows in depth-first order, so that a keyword's states lie one after another: a walk along
        // one reads neighbouring rows, not rows spread over the table (the root stays row 0).
        var order: [Int] = []
        order.reserveCapacity(automaton.stateCount)
        var stack = [0]
        while let s = stack.popLast() {
            order.append(s)
            for edge in (edgeStart(s)..<edgeStart(s + 1)).reversed() { stack.append(edge + 1) }
        }
        for s in order {
            if flagged[s] {
                row[s] = outputRows + outputStates.count * count
                outputStates.append(UInt32(s))
            } else {
                row[s] = nextPlain * count
                nextPlain += 1
            }
        }
        // A skeleton ignoring case may hold capitals (prototypes such as `ʜ`'s `H`): its view folds
        // every text, and its table compares bytes as they are.
        if automaton.view.caseInsensitive && !automaton.view.confusables {
            for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { classes[Int(byte)] = classes[Int(byte | 0x20)] }
        }
        // The gap between the two runs of rows is never read, nor written.
        let dense = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: entries)
        // States are numbered breadth-first, so each depth is a run of states, and the children of
        // one run are the next: count the runs.
        var depth = 0
        var level = 0..<1
        while true {
            let next = (edgeStart(level.lowerBound) + 1)..<(edgeStart(level.upperBound) + 1)
            if next.isEmpty { break }
            depth += 1
            level = next
        }
        // Breadth-first order: a state's failure link is computed before it.
        for s in 0..<automaton.stateCount {
            let fail = field(s, 1)
            let base = row[s]
            for c in 0..<count { (dense.baseAddress! + base + c).initialize(to: s == 0 ? 0 : dense[row[fail] + c]) }
            for edge in edgeStart(s)..<edgeStart(s + 1) {
                dense[base + Int(classes[Int(bytes[automaton.labels + edge])])] = UInt32(row[edge + 1])
            }
        }
        automaton.outputRows = UInt32(outputRows)
        automaton.outputStates = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: outputStates.count)
        _ = automaton.outputStates.initialize(from: outputStates)
        automaton.depth = depth
        automaton.classes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 256)
        _ = automaton.classes.initialize(from: classes)
        automaton.classCount = count
        automaton.dense = dense
        automaton.endKeywords = used[Int(format.endMarker)]
        if windowScan {
            automaton.windowFilter = WindowFilter.make(automaton, bytes: bytes, budget: budget - entries * 4)
        }
        return automaton
    }

    // MARK: - Parsing

    /// What checking a rule needs: its kind, not its strings.
    struct RuleKind {
        let action: MessageAction
        let target: RuleTarget
        let match: MatchKind
        let view: TextView
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer, source: String, owner: FileMemory)
        throws(MessageFilterError) -> (
            info: [UInt32], ruleTable: Int, stringTable: Int, automata: [Automaton], unfiltered: [UInt32],
            regexes: CompiledRegexes, combined: Combined
        )
    {
        func corrupt(_ what: String) -> MessageFilterError {
            MessageFilterError(.corruptRules, "The compiled rules \(source) are damaged: \(what).")
        }
        let format = CompiledRulesFormat.self
        if bytes.count >= format.magic.count, bytes.count < format.headerSize, format.magic.elementsEqual(bytes[0..<8])
        {
            throw corrupt("it has \(bytes.count) bytes, fewer than its \(format.headerSize)-byte header")
        }
        guard bytes.count >= format.headerSize, format.magic.elementsEqual(bytes[0..<8]) else {
            throw MessageFilterError(
                .notCompiledRules,
                "\(source) is not a compiled rules file (it does not start with the magic BLSMSRUL)."
            )
        }
        let version = bytes.loadLE(UInt16.self, at: 8)
        guard version == format.version else {
            throw MessageFilterError(
                .unsupportedVersion,
                "The compiled rules \(source) have format version \(version); this reader knows version \(format.version)."
            )
        }
        let ruleCount = Int(bytes.loadLE(UInt32.self, at: 12))
        let sectionCount = Int(bytes.loadLE(UInt32.self, at: 16))
        let fileLength = Int(bytes.loadLE(UInt32.self, at: 20))
        guard fileLength == bytes.count else {
            throw corrupt("the header gives a length of \(fileLength) bytes but the file has \(bytes.count)")
        }
        guard sectionCount <= format.maximumSections,
            format.headerSize + sectionCount * format.sectionEntrySize <= bytes.count
        else {
            throw corrupt("the header lists \(sectionCount) sections, more than the file holds")
        }
        guard ruleCount <= format.maximumRules else { throw corrupt("the header lists \(ruleCount) rules") }
        let tableEnd = format.headerSize + sectionCount * format.sectionEntrySize
        var crc = crc32Update(0, UnsafeRawBufferPointer(rebasing: bytes[0..<24]))
        crc = crc32Update(crc, UnsafeRawBufferPointer(rebasing: bytes[format.headerSize..<tableEnd]))
        guard crc == bytes.loadLE(UInt32.self, at: 24) else { throw corrupt("the header checksum does not match") }
        guard bytes.loadLE(UInt16.self, at: 10) == 0, bytes.loadLE(UInt32.self, at: 28) == 0 else {
            throw corrupt("the header's reserved fields are not zero")
        }

        var sections: [UInt32: Range<Int>] = [:]
        var covered = tableEnd
        for index in 0..<sectionCount {
            let entry = format.headerSize + index * format.sectionEntrySize
            let kind = bytes.loadLE(UInt32.self, at: entry)
            let offset = Int(bytes.loadLE(UInt32.self, at: entry + 4))
            let length = Int(bytes.loadLE(UInt32.self, at: entry + 8))
            guard offset == covered, offset % 4 == 0, length <= bytes.count - offset else {
                throw corrupt("section \(index) (kind \(kind)) lies outside the file or out of order")
            }
            guard sections[kind] == nil else { throw corrupt("section kind \(kind) appears twice") }
            let range = offset..<(offset + length)
            guard
                crc32Update(0, UnsafeRawBufferPointer(rebasing: bytes[range]))
                    == bytes.loadLE(UInt32.self, at: entry + 12)
            else {
                throw corrupt("the checksum of section \(index) (kind \(kind)) does not match")
            }
            sections[kind] = range
            covered = (offset + length + 3) & ~3
            // Padding is outside every checksum, so it must be zero.
            for at in (offset + length)..<min(covered, bytes.count) where bytes[at] != 0 {
                throw corrupt("the padding after section \(index) is not zero")
            }
        }
        guard covered >= bytes.count, covered - bytes.count < 4 else { throw corrupt("bytes follow the last section") }
        guard let ruleRange = sections[format.Section.rules], let stringRange = sections[format.Section.strings],
            let unfilteredRange = sections[format.Section.unfilteredRegexes],
            let regexesRange = sections[format.Section.regexes]
        else { throw corrupt("a required section (rules, strings, unfiltered regexes or regexes) is missing") }
        guard ruleRange.count == ruleCount * format.ruleEntrySize else {
            throw corrupt("the rules section has \(ruleRange.count) bytes for \(ruleCount) rules")
        }

        var rules: [RuleKind] = []
        rules.reserveCapacity(ruleCount)
        var info: [UInt32] = []
        info.reserveCapacity(ruleCount)
        // Entries whose action is none are the conditions of combined rules, after every rule.
        var firstCondition: Int?
        for index in 0..<ruleCount {
            let at = ruleRange.lowerBound + index * format.ruleEntrySize
            guard let action = MessageAction(rawValue: bytes[at] & 0x0F),
                Int(bytes[at] >> 4) <= DeferralResponse.subActions[action]?.count ?? 0,
                let target = RuleTarget(rawValue: bytes[at + 1]), let match = MatchKind(rawValue: bytes[at + 2]),
                let view = TextView(index: Int(bytes[at + 3]))
            else { throw corrupt("rule \(index + 1) has an unknown action, sub-action, target, match or flag") }
            // A links rule matches a domain, ignoring case on the normalized text, and only it does.
            guard (target == .links) == (match == .domain), target != .links || bytes[at + 3] == 3 else {
                throw corrupt("rule \(index + 1) pairs its target and match kind wrongly")
            }
            // Confusables are for keywords (prefix, suffix, contains) of the sender or the body.
            guard !view.confusables || match.rawValue <= MatchKind.contains.rawValue else {
                throw corrupt("rule \(index + 1) reads confusables but is a \(match) rule")
            }
            if action == .none {
                guard match != .all else { throw corrupt("entry \(index + 1) is a condition that combines others") }
                firstCondition = firstCondition ?? index
            } else if firstCondition != nil {
                throw corrupt("rule \(index + 1) follows a condition; conditions come after every rule")
            }
            guard match != .all || (target == .any && bytes[at + 3] == 0) else {
                throw corrupt("rule \(index + 1) combines conditions but has a target or flags of its own")
            }
            func string(_ offsetAt: Int, _ lengthAt: Int, _ what: String) throws(MessageFilterError)
                -> UnsafeRawBufferPointer
            {
                let offset = Int(bytes.loadLE(UInt32.self, at: offsetAt))
                let length = Int(bytes.loadLE(UInt16.self, at: lengthAt))
                guard offset <= stringRange.count, length <= stringRange.count - offset else {
                    throw corrupt("rule \(index + 1)'s \(what) lies outside the strings section")
                }
                let slice = UnsafeRawBufferPointer(
                    rebasing: bytes[(stringRange.lowerBound + offset)..<(stringRange.lowerBound + offset + length)]
                )
                guard !slice.isEmpty, isValidUTF8(slice) else {
                    throw corrupt("rule \(index + 1)'s \(what) is empty or not UTF-8")
                }
                return slice
            }
            _ = try string(at + 4, at + 12, "name")
            _ = try string(at + 8, at + 14, "value")
            rules.append(RuleKind(action: action, target: target, match: match, view: view))
            info.append(
                UInt32(bytes[at]) | UInt32(target.rawValue) << 8 | UInt32(match.rawValue) << 16 | UInt32(
                    bytes[at + 3]
                ) << 24
            )
        }

        guard unfilteredRange.count % 4 == 0 else {
            throw corrupt("the unfiltered regexes section is not a list of rule numbers")
        }
        var unfiltered: [UInt32] = []
        for at in stride(from: unfilteredRange.lowerBound, to: unfilteredRange.upperBound, by: 4) {
            let rule = bytes.loadLE(UInt32.self, at: at)
            guard Int(rule) < ruleCount, rules[Int(rule)].match == .regex else {
                throw corrupt("the unfiltered regexes name rule \(Int(rule) + 1), which is not a regex rule")
            }
            unfiltered.append(rule)
        }

        var automata: [Automaton] = []
        for target in [RuleTarget.sender, .body, .links] {
            for view in TextView.all {
                guard let range = sections[format.Section.automaton(target: target, view: view)] else { continue }
                automata.append(
                    try parseAutomaton(bytes, range, target: target, view: view, rules: rules, corrupt: corrupt)
                )
            }
        }
        for kind in sections.keys where kind > 5 && !(16..<24).contains(kind) && kind != 31 && !(32..<36).contains(kind)
        {
            throw corrupt("section kind \(kind) is unknown")
        }
        let combined = try parseCombined(
            bytes,
            sections[format.Section.combined],
            rules: rules,
            ruleCount: firstCondition ?? ruleCount,
            corrupt: corrupt
        )
        let regexes = try CompiledRegexes.parse(
            bytes,
            regexesRange,
            regexRules: rules.indices.filter { rules[$0].match == .regex },
            owner: owner,
            corrupt: corrupt
        )
        return (info, ruleRange.lowerBound, stringRange.lowerBound, automata, unfiltered, regexes, combined)
    }

    /// The combined rules section: one record per rule whose match is `all`, in rule order, each
    /// naming the next run of conditions, which together are every condition in order.
    private static func parseCombined(
        _ bytes: UnsafeRawBufferPointer,
        _ range: Range<Int>?,
        rules: [RuleKind],
        ruleCount: Int,
        corrupt: (String) -> MessageFilterError
    ) throws(MessageFilterError) -> Combined {
        let format = CompiledRulesFormat.self
        let combinedRules = (0..<ruleCount).filter { rules[$0].match == .all }
        guard let range else {
            guard combinedRules.isEmpty, ruleCount == rules.count else {
                throw corrupt("rules combine conditions but the combined rules section is missing")
            }
            return Combined(ruleCount: ruleCount, records: [], parents: [])
        }
        guard range.count == combinedRules.count * format.combinedEntrySize else {
            throw corrupt(
                "the combined rules section has \(range.count) bytes for \(combinedRules.count) rules that combine conditions"
            )
        }
        var records: [Combined.Record] = []
        var parents: [UInt32] = []
        var next = ruleCount
        for (number, rule) in combinedRules.enumerated() {
            let at = range.lowerBound + number * format.combinedEntrySize
            let record = Combined.Record(
                rule: bytes.loadLE(UInt32.self, at: at),
                first: bytes.loadLE(UInt32.self, at: at + 4),
                all: bytes.loadLE(UInt16.self, at: at + 8),
                none: bytes.loadLE(UInt16.self, at: at + 10)
            )
            let count = Int(record.all) + Int(record.none)
            guard Int(record.rule) == rule, Int(record.first) == next, record.all > 0,
                count <= format.maximumConditions, count <= rules.count - next
            else {
                throw corrupt("combined rule \(number + 1) (rule \(rule + 1)) names its conditions wrongly")
            }
            records.append(record)
            parents += Array(repeating: UInt32(number), count: count)
            next += count
        }
        guard next == rules.count else { throw corrupt("conditions \(next + 1) and on belong to no rule") }
        return Combined(ruleCount: ruleCount, records: records, parents: parents)
    }

    private static func parseAutomaton(
        _ bytes: UnsafeRawBufferPointer,
        _ range: Range<Int>,
        target: RuleTarget,
        view: TextView,
        rules: [RuleKind],
        corrupt: (String) -> MessageFilterError
    ) throws(MessageFilterError) -> Automaton {
        let format = CompiledRulesFormat.self
        let name = "the \(target) automaton (\(view))"
        guard range.count >= format.automatonHeaderSize else { throw corrupt("\(name) is too short") }
        let base = range.lowerBound
        let stateCount = Int(bytes.loadLE(UInt32.self, at: base))
        let edgeCount = Int(bytes.loadLE(UInt32.self, at: base + 4))
        let triggerCount = Int(bytes.loadLE(UInt32.self, at: base + 8))
        let outputCount = Int(bytes.loadLE(UInt32.self, at: base + 12))
        let states = base + format.automatonHeaderSize
        let labels = states + (stateCount + 1) * format.stateEntrySize
        let outputs = labels + (edgeCount + 3) & ~3
        let triggers = outputs + (outputCount + 1) * format.outputEntrySize
        guard stateCount >= 1, stateCount < 1 << 26, edgeCount == stateCount - 1, triggerCount < 1 << 26,
            outputCount < stateCount, triggers + triggerCount * 4 == range.upperBound
        else { throw corrupt("\(name) has sizes that do not add up to its section") }
        func state(_ s: Int, _ field: Int) -> Int {
            Int(bytes.loadLE(UInt32.self, at: states + s * format.stateEntrySize + field * 4))
        }
        func output(_ i: Int, _ field: Int) -> Int {
            Int(bytes.loadLE(UInt32.self, at: outputs + i * format.outputEntrySize + field * 4))
        }
        guard state(stateCount, 0) == edgeCount, state(stateCount, 1) == 0, state(0, 1) == 0, state(0, 0) == 0,
            output(outputCount, 0) == stateCount, output(outputCount, 1) == Int(format.noRule),
            output(outputCount, 2) == triggerCount,
            output(0, 2) == 0
        else {
            throw corrupt("\(name)'s first or closing record is wrong")
        }
        var root = [UInt32](repeating: 0, count: 256)
        var nextOutput = 0  // the output entry the next flagged state must match
        for s in 0..<stateCount {
            let first = UInt32(truncatingIfNeeded: state(s, 0))
            let edgeStart = Int(first & ~format.outputFlag)
            let edgeEnd = state(s + 1, 0) & 0x7FFF_FFFF
            guard edgeStart <= edgeEnd, edgeEnd <= edgeCount else {
                throw corrupt("\(name) state \(s) has edges out of order")
            }
            guard s == 0 || state(s, 1) < s else {
                throw corrupt("\(name) state \(s) fails over to a state that is not shallower")
            }
            var previous = -1
            for edge in edgeStart..<edgeEnd {
                let label = Int(bytes[labels + edge])
                let next = edge + 1
                guard label > previous, next > s, next < stateCount else {
                    throw corrupt("\(name) state \(s) has an edge out of order or to a state that is not deeper")
                }
                previous = label
                if s == 0 { root[label] = UInt32(next) }
            }
            guard first & format.outputFlag != 0 else { continue }
            // A flagged state has the next output entry: a rule, triggers, or both.
            guard nextOutput < outputCount, output(nextOutput, 0) == s else {
                throw corrupt("\(name) state \(s) is marked as having outputs but the output table does not list it")
            }
            let best = UInt32(truncatingIfNeeded: output(nextOutput, 1))
            let triggerStart = output(nextOutput, 2)
            let triggerEnd = output(nextOutput + 1, 2)
            guard triggerStart <= triggerEnd, triggerEnd <= triggerCount,
                best != format.noRule || triggerStart < triggerEnd
            else {
                throw corrupt("\(name) state \(s) has its outputs out of order")
            }
            if best != format.noRule {
                let rule = Int(best & 0xFF_FFFF)
                guard rule < rules.count, rules[rule].match != .regex, rules[rule].match != .all,
                    rules[rule].action != .none, rules[rule].view == view,
                    rules[rule].target == target || rules[rule].target == .any,
                    best >> 24 == rules[rule].action.rank
                else { throw corrupt("\(name) state \(s) names rule \(rule + 1), which does not fit it") }
            }
            for trigger in triggerStart..<triggerEnd {
                let rule = Int(bytes.loadLE(UInt32.self, at: triggers + trigger * 4))
                // A regex rule or condition (its literal occurs), or a keyword condition.
                guard rule < rules.count, rules[rule].match == .regex || rules[rule].action == .none,
                    rules[rule].view == view, rules[rule].target == target || rules[rule].target == .any
                else {
                    throw corrupt(
                        "\(name) state \(s) triggers rule \(rule + 1), which is not a regex rule or condition of its kind"
                    )
                }
            }
            nextOutput += 1
        }
        guard nextOutput == outputCount else {
            throw corrupt("\(name)'s output table lists states that are not marked as having outputs")
        }
        return Automaton(
            target: target,
            view: view,
            stateCount: stateCount,
            section: range,
            states: states,
            labels: labels,
            outputs: outputs,
            outputCount: outputCount,
            triggers: triggers,
            root: root
        )
    }

    /// The output entry of `state`, which carries the output flag, in `raw`, a compiled file's
    /// bytes: its best key and its triggers, by binary search in the output table.
    static func outputs(in raw: UnsafeRawBufferPointer, _ table: OutputTable, state: Int) -> (
        key: UInt32, triggers: Range<Int>
    ) {
        let size = CompiledRulesFormat.outputEntrySize
        var low = 0
        var high = table.count
        while low < high {
            let middle = (low + high) / 2
            if Int(raw.loadLE(UInt32.self, at: table.outputs + middle * size)) < state {
                low = middle + 1
            } else {
                high = middle
            }
        }
        let entry = table.outputs + low * size
        let start = Int(raw.loadLE(UInt32.self, at: entry + 8))
        let end = Int(raw.loadLE(UInt32.self, at: entry + size + 8))
        return (raw.loadLE(UInt32.self, at: entry + 4), start..<end)
    }
}

// MARK: - Little-endian loads and CRC-32

extension UnsafeRawBufferPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
