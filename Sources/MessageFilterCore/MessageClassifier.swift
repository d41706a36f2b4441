internal import CWindowScan

/// Classifies messages with compiled rules: what a Message Filter extension does offline for each
/// query.
///
/// Each target (sender, body) is folded once per text view its rules use and run through that
/// view's automaton once, in time linear in its length whatever the number of rules. The
/// automaton yields the best keyword rule and the regex rules whose required literal occurs;
/// only those regexes run, best first, and only while one could still win.
///
/// A classifier reuses its buffers, so it is not thread-safe: use one per thread.
///
/// - Complexity: O(length of sender + body) per message, plus the regexes that their literal
///   prefilter lets through: each O(length) as a DFA, or, shipped as a program, at most
///   250,000 steps.
public final class MessageClassifier {
    /// The answer for one message.
    public struct Decision: Sendable, Equatable {
        public var action: MessageAction
        /// The index of the rule that decided, in file order; nil when no rule matched.
        public var rule: Int?
        /// The deciding rule's sub-action of `action` (`DeferralResponse.subActions`), or nil.
        public var subAction: String?

        public init(action: MessageAction, rule: Int?, subAction: String? = nil) {
            self.action = action
            self.rule = rule
            self.subAction = subAction
        }

        public static let noMatch = Decision(action: .none, rule: nil)
    }

    /// The longest sender and body accepted, in UTF-8 bytes.
    public static let maximumSenderBytes = 256
    public static let maximumBodyBytes = 64 * 1024

    public let rules: CompiledRules
    /// The rules' bytes, which `rules` keeps: read through this, a walk retains nothing.
    private let file: UnsafeRawBufferPointer
    /// The regex rules and conditions the automata triggered for this message, each once; room
    /// for every entry, allocated once. This, `seen` and `candidateCount` are read and written
    /// through pointers, which no run-time exclusivity check guards: each message touches them
    /// hundreds of times.
    private let candidateStorage: UnsafeMutablePointer<UInt32>
    private let candidateCount: UnsafeMutablePointer<Int>
    private var candidates: UnsafeBufferPointer<UInt32> {
        UnsafeBufferPointer(start: candidateStorage, count: candidateCount.pointee)
    }
    /// Copies of the rules' automata and unfiltered regexes, read through pointers so that a
    /// message retains no array.
    private let automata: UnsafeMutableBufferPointer<CompiledRules.Automaton>
    private let unfilteredRegexes: UnsafeMutableBufferPointer<UInt32>
    /// For regexes that ship as DFAs, the bytes each one's idle state stays in
    /// (`RegexAutomaton.idleSkip`): for at most `maximumIdleSkips` of them, 384 bytes each, the
    /// unfiltered ones first (they run on every message).
    private let idleSkips: [(rule: UInt32, skip: IdleSkip)]
    /// The file's classes of scalars, held here: read through `rules` for each regex run, the
    /// copy retained and released each of its arrays.
    private let scalarClasses: ScalarClasses
    private static let maximumIdleSkips = 16
    private let hasCombined: Bool
    /// The regex rules already made candidates for this message, a bit each, to list them once;
    /// cleared through `candidates` after each message.
    private let seen: UnsafeMutablePointer<UInt64>
    /// Where the window scan found that a keyword may start (`WindowFilter.chunk` positions).
    private let windowStarts: UnsafeMutablePointer<UInt32>
    /// The combined rules already weighed for this message, a bit each and listed, to clear.
    private var evaluatedBits: [UInt64]
    private var evaluated: [UInt32] = []
    private var programs: RegexProgramCache
    /// Thread lists for every regex, sized by the largest program run so far.
    private let matcher = RegexMatcher()
    /// What a message is worked on in (the texts it is read as, the keys of the regexes to run),
    /// reached through one pointer: a stored array of the class written in place is guarded by
    /// a run-time exclusivity check at each write, which cost the bench's ASCII corpus a fifth
    /// of its rate.
    private let scratch: UnsafeMutablePointer<Scratch>
    private struct Scratch {
        /// Each view's fold of the text (`TextView.index`).
        var folded: [[UInt8]] = Array(repeating: [], count: 8)
        /// The sender's and the body's text in the normalized view, as regexes see it, made for
        /// a message when a normalized automaton or regex first reads it.
        var normalized: [[UInt8]] = [[], []]
        /// The sender's and the body's `NormalizedState`.
        var senderState = NormalizedState.unknown
        var bodyState = NormalizedState.unknown
        /// Whether the states are of an earlier message.
        var normalizedStale = true

        @inline(__always)
        func state(_ slot: Int) -> NormalizedState { slot == 0 ? senderState : bodyState }

        @inline(__always)
        mutating func setState(_ slot: Int, _ state: NormalizedState) {
            if slot == 0 { senderState = state } else { bodyState = state }
        }
        /// The body's case-insensitive, normalized view, and the hosts it links to
        /// (`LinkExtractor`), for the links automaton.
        var linkSource: [UInt8] = []
        var links: [UInt8] = []
        /// The candidate regexes' keys, best first (`runRegexes`).
        var keys: [UInt32] = []
    }
    /// A message's text in the normalized view: not made yet; the text itself (`plain`: and,
    /// but for ASCII capitals, its case fold too); or made in `Scratch.normalized`.
    private enum NormalizedState { case unknown, same, plain, folded }

    /// What a Message Filter extension keeps of regexes shipped as programs: four lazy DFAs of
    /// at most 96 KiB each (about 750 states), so that its dirty memory stays near its budget
    /// whatever the rules and texts; a text whose states outgrow a cache costs time, not memory.
    package static let extensionRegexCacheSize = 4
    package static let extensionLazyDFABudget = 96 * 1024

    /// Makes a classifier over `rules`; its working memory is allocated here, not per message.
    ///
    /// - Parameters:
    ///   - rules: the compiled rules, loaded once per process.
    ///   - regexCacheSize: how many regexes shipped as programs to keep; each costs its
    ///     instructions (12 bytes each, at most 10,001), its classes, and its lazy DFA's cache.
    ///   - lazyDFABudget: the most a lazy DFA's cache may take, in bytes (nil: 384 KiB,
    ///     `RegexDFA.memoryBudget`): it takes what its texts' states need up to this. An
    ///     extension keeps `extensionRegexCacheSize` of `extensionLazyDFABudget`; a server,
    ///     which classifies for many phones, the defaults.
    public init(
        rules: CompiledRules,
        regexCacheSize: Int = 64,
        lazyDFABudget: Int? = nil
    ) {
        self.rules = rules
        file = UnsafeRawBufferPointer(rules.bytes)
        scratch = .allocate(capacity: 1)
        scratch.initialize(to: Scratch())
        for index in 0..<4 { scratch.pointee.folded[index].reserveCapacity(1024) }
        for slot in 0..<2 { scratch.pointee.normalized[slot].reserveCapacity(1024) }
        automata = .allocate(capacity: rules.automata.count)
        _ = automata.initialize(from: rules.automata)
        unfilteredRegexes = .allocate(capacity: rules.unfilteredRegexes.count)
        _ = unfilteredRegexes.initialize(from: rules.unfilteredRegexes)
        scalarClasses = rules.regexes.scalarClasses
        // The unfiltered regexes first (they run on every message), then the others in order.
        let unfilteredSet = Set(rules.unfilteredRegexes)
        let order = rules.unfilteredRegexes + rules.regexes.rules.filter { !unfilteredSet.contains($0) }
        var skips: [(rule: UInt32, skip: IdleSkip)] = []
        for rule in order where skips.count < Self.maximumIdleSkips {
            guard case .automaton(let automaton) = rules.regexes.compiled(rule: Int(rule)) else { continue }
            skips.append((rule, automaton.idleSkip(scalarClasses: rules.regexes.scalarClasses)))
        }
        idleSkips = skips
        hasCombined = !rules.combined.records.isEmpty
        candidateStorage = .allocate(capacity: max(1, rules.entryCount))
        candidateCount = .allocate(capacity: 1)
        candidateCount.initialize(to: 0)
        seen = .allocate(capacity: max(1, (rules.entryCount + 63) / 64))
        seen.initialize(repeating: 0, count: max(1, (rules.entryCount + 63) / 64))
        windowStarts = .allocate(capacity: rules.filteredAutomata > 0 ? WindowFilter.chunk : 1)
        evaluatedBits = Array(repeating: 0, count: (rules.combined.records.count + 63) / 64)
        programs = RegexProgramCache(capacity: regexCacheSize, lazyDFABudget: lazyDFABudget ?? RegexDFA.memoryBudget)
    }

    deinit {
        automata.deinitialize().deallocate()
        unfilteredRegexes.deallocate()
        candidateStorage.deallocate()
        candidateCount.deallocate()
        seen.deallocate()
        windowStarts.deallocate()
        for entry in idleSkips { entry.skip.deallocate() }
        scratch.deinitialize(count: 1).deallocate()
    }

    /// Checks a message against the filter's limits.
    ///
    /// - Throws: `invalidMessage` for an empty or too long sender, a too long body, or invalid
    ///   UTF-8, naming the field.
    public static func validate(sender: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>)
        throws(MessageFilterError)
    {
        if sender.isEmpty { throw MessageFilterError(.invalidMessage, "The sender is empty; every message has one.") }
        if sender.count > maximumSenderBytes {
            throw MessageFilterError(
                .invalidMessage,
                "The sender has \(sender.count) bytes; at most \(maximumSenderBytes) are accepted."
            )
        }
        if body.count > maximumBodyBytes {
            throw MessageFilterError(
                .invalidMessage,
                "The body has \(body.count) bytes; at most \(maximumBodyBytes) (64 KiB) are accepted."
            )
        }
        if !isValidUTF8(sender) {
            throw MessageFilterError(.invalidMessage, "The sender is not valid UTF-8.")
        }
        if !isValidUTF8(body) {
            throw MessageFilterError(.invalidMessage, "The body is not valid UTF-8.")
        }
    }

    /// Classifies one message. A body longer than `maximumBodyBytes` is not read: the decision
    /// is `noMatch` (none), which leaves the message to the system or the server.
    public func classify(sender: String, body: String) -> Decision {
        // Strings are UTF-8 already; only the limits are checked.
        guard sender.utf8.count <= Self.maximumSenderBytes, body.utf8.count <= Self.maximumBodyBytes else {
            return .noMatch
        }
        // Native strings lend their UTF-8 in place; others are copied to native form first.
        let borrowed = sender.utf8.withContiguousStorageIfAvailable { senderBytes in
            body.utf8.withContiguousStorageIfAvailable { bodyBytes in
                classify(validatedSender: senderBytes, body: bodyBytes)
            }
        }
        if let borrowed, let decision = borrowed { return decision }
        var sender = sender
        var body = body
        return sender.withUTF8 { senderBytes in
            body.withUTF8 { bodyBytes in classify(validatedSender: senderBytes, body: bodyBytes) }
        }
    }

    /// Classifies one message given as UTF-8 bytes. Bytes that are not UTF-8, a sender longer
    /// than `maximumSenderBytes` or a body longer than `maximumBodyBytes` are not read: the
    /// decision is `noMatch` (none). `validate` says which of these a message breaks.
    public func classify(sender: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>) -> Decision {
        guard sender.count <= Self.maximumSenderBytes, body.count <= Self.maximumBodyBytes,
            isValidUTF8(sender), isValidUTF8(body)
        else { return .noMatch }
        return classify(validatedSender: sender, body: body)
    }

    /// Classifies a message that is UTF-8 within the limits: what `validate` passed (the
    /// extension host checks each message once, and answers a refusal with its sentence).
    package func classify(validatedSender sender: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>)
        -> Decision
    {
        // Only a body over 4 KiB can grow a buffer past the limit (a scalar's skeleton is at
        // most 18 scalars of 4 bytes, 36 bytes per byte of text); looking after every message
        // cost the bench a third of its rate.
        defer { if body.count > 4 * 1024 { releaseLargeBuffers() } }
        for rule in candidates { seen[Int(rule) >> 6] = 0 }
        candidateCount.pointee = 0
        // One store a message: the normalized texts are forgotten when first asked for
        // (`normalize`); resetting both here cost the bench's ASCII corpus a sixth of its rate.
        scratch.pointee.normalizedStale = true
        var best = CompiledRulesFormat.noRule
        // Each automaton is lent in place through a pointer: a copy (which a subscript makes)
        // retains every array it holds, for each automaton of each message.
        for index in automata.indices {
            let automaton = UnsafePointer(automata.baseAddress! + index)
            if automaton.pointee.target == .links {
                automaton.pointee.view.fold(body, into: &scratch.pointee.linkSource)
                scratch.pointee.linkSource.withUnsafeBufferPointer {
                    LinkExtractor.hosts($0, into: &scratch.pointee.links)
                }
                best = scratch.pointee.links.withUnsafeBufferPointer { min(best, run(automaton, over: $0)) }
                continue
            }
            let text = automaton.pointee.target == .sender ? sender : body
            let view = automaton.pointee.view
            let slot = automaton.pointee.target == .sender ? 0 : 1
            if view.index == 0
                || (!view.confusables && !automaton.pointee.dense.isEmpty
                    && (Self.isASCII(text) || isPlain(text, slot: slot)))
            {
                // The dense table's byte classes fold ASCII capitals; a plain text (ASCII, or
                // Hangul, Han and lowercase letters in NFC) is its own normalized form and its
                // own fold but for them (skeletons are not: `m` is `rn`).
                best = min(best, run(automaton, over: text))
            } else if view.normalized && !view.confusables {
                // The normalized text is made once per message and target, for the automata and
                // the regexes alike; ignoring case, its fold (the view's own order: NFC, then
                // each scalar folded).
                normalize(text, slot: slot)
                let source = scratch.pointee.state(slot) == .folded ? slot : nil
                if view.caseInsensitive {
                    if let source {
                        scratch.pointee.normalized[source].withUnsafeBufferPointer {
                            TextView.fold(caseOf: $0, into: &scratch.pointee.folded[view.index])
                        }
                    } else {
                        TextView.fold(caseOf: text, into: &scratch.pointee.folded[view.index])
                    }
                    best = scratch.pointee.folded[view.index].withUnsafeBufferPointer {
                        min(best, run(automaton, over: $0))
                    }
                } else if let source {
                    best = scratch.pointee.normalized[source].withUnsafeBufferPointer {
                        min(best, run(automaton, over: $0))
                    }
                } else {
                    best = min(best, run(automaton, over: text))
                }
            } else {
                view.fold(text, into: &scratch.pointee.folded[view.index])
                best = scratch.pointee.folded[view.index].withUnsafeBufferPointer {
                    min(best, run(automaton, over: $0))
                }
            }
        }
        for rule in unfilteredRegexes { addCandidate(rule) }
        if candidateCount.pointee != 0 {
            if hasCombined { best = weighCombined(best: best, sender: sender, body: body) }
            best = runRegexes(best: best, sender: sender, body: body)
        }
        guard best != CompiledRulesFormat.noRule else { return .noMatch }
        let rule = Int(best & 0xFF_FFFF)
        return Decision(action: rules.action(of: rule), rule: rule, subAction: rules.subAction(of: rule))
    }

    static func isASCII(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = text.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = text.count
        var index = 0
        var bits: UInt64 = 0
        // 32 bytes a turn, in four independent loads.
        while index &+ 32 <= count {
            bits |=
                raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: index &+ 16, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: index &+ 24, as: UInt64.self)
            index &+= 32
        }
        while index &+ 8 <= count {
            bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        while index < count {
            bits |= UInt64(base[index])
            index &+= 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// Runs one automaton over `text` framed by the start and end markers; returns the best key
    /// and adds the regex rules it triggers to `candidates`.
    private func run(_ automaton: UnsafePointer<CompiledRules.Automaton>, over text: UnsafeBufferPointer<UInt8>)
        -> UInt32
    {
        if let filter = automaton.pointee.windowFilter, text.count >= WindowFilter.minimumText {
            return runFiltered(automaton, filter, over: text)
        }
        if !automaton.pointee.dense.isEmpty { return runDense(automaton, over: text) }
        let bytes = file
        let stride = CompiledRulesFormat.stateEntrySize
        let (table, states, labels) = (
            automaton.pointee.outputTable, automaton.pointee.states, automaton.pointee.labels
        )
        let root = automaton.pointee.root
        var best = CompiledRulesFormat.noRule
        var state = 0
        @inline(__always) func field(_ s: Int, _ f: Int) -> Int {
            Int(bytes.loadLE(UInt32.self, at: states + s * stride + f * 4))
        }
        @inline(__always) func step(_ byte: UInt8) {
            while true {
                if state == 0 {
                    state = Int(root[Int(byte)])
                    break
                }
                let start = field(state, 0) & 0x7FFF_FFFF
                let end = field(state + 1, 0) & 0x7FFF_FFFF
                var found = -1
                var edge = start
                while edge < end {
                    let label = bytes[labels + edge]
                    if label == byte {
                        found = edge + 1
                        break
                    }
                    if label > byte { break }
                    edge += 1
                }
                if found >= 0 {
                    state = found
                    break
                }
                state = field(state, 1)
            }
            if state != 0, field(state, 0) & Int(CompiledRulesFormat.outputFlag) != 0 {
                visit(table, state, best: &best)
            }
        }
        step(CompiledRulesFormat.startMarker)
        for byte in text { step(byte) }
        step(CompiledRulesFormat.endMarker)
        return best
    }

    /// Walks the dense table. A text long enough is walked as two or four interleaved parts, so
    /// that the processor overlaps their table loads (one walk waits on each load in turn): each
    /// part after the first starts at the root `depth` bytes before its own start, where it has
    /// caught up with the state the whole text's walk would be in, and every keyword it sees on
    /// the way really occurs (one reported twice changes nothing).
    ///
    /// The parts go in stretches of `stretch` steps whose loop makes no call, so that their rows
    /// stay in registers: it only ors together the transitions it takes, and a stretch that met a
    /// state with outputs is walked again from the same rows, visiting them.
    private func runDense(_ automaton: UnsafePointer<CompiledRules.Automaton>, over text: UnsafeBufferPointer<UInt8>)
        -> UInt32
    {
        let count = automaton.pointee.classCount
        let depth = automaton.pointee.depth
        let table = automaton.pointee.outputTable
        let stretch = 16
        var best = CompiledRulesFormat.noRule
        let outputRows = automaton.pointee.outputRows
        // Buffers the rules own: reading them retains nothing.
        let (dense, classes, outputStates) = (
            UnsafeBufferPointer(automaton.pointee.dense), UnsafeBufferPointer(automaton.pointee.classes),
            UnsafeBufferPointer(automaton.pointee.outputStates)
        )
        /// A step that ors the row it enters into `met`: rows from `outputRows` on, a power of
        /// two above the others, have outputs.
        @inline(__always) func step(_ byte: UInt8, _ row: inout Int, _ met: inout UInt32) {
            let next = dense[row &+ Int(classes[Int(byte)])]
            met |= next
            row = Int(next)
        }
        /// A step that visits the state it enters when it has outputs.
        @inline(__always) func visiting(_ byte: UInt8, _ row: inout Int) {
            let next = dense[row &+ Int(classes[Int(byte)])]
            row = Int(next)
            if next >= outputRows { visit(table, Int(outputStates[Int(next - outputRows) / count]), best: &best) }
        }
        var row = 0
        visiting(CompiledRulesFormat.startMarker, &row)
        var index = 0
        let minimumPart = depth + 16
        if text.count >= 4 * minimumPart {
            // Parts start at 0, q − depth, 2q − depth and 3q − depth; after q steps of all
            // four, parts two to four take `depth` more to reach q, 2q and 3q.
            let q = text.count / 4
            var (a, b, c) = (0, 0, 0)
            let (startA, startB, startC) = (q - depth, 2 * q - depth, 3 * q - depth)
            while index < q {
                let (first, end, rows) = (index, min(q, index + stretch), (row, a, b, c))
                var met: UInt32 = 0
                while index < end {
                    step(text[index], &row, &met)
                    step(text[startA &+ index], &a, &met)
                    step(text[startB &+ index], &b, &met)
                    step(text[startC &+ index], &c, &met)
                    index += 1
                }
                guard met >= outputRows else { continue }
                (index, row, a, b, c) = (first, rows.0, rows.1, rows.2, rows.3)
                while index < end {
                    visiting(text[index], &row)
                    visiting(text[startA &+ index], &a)
                    visiting(text[startB &+ index], &b)
                    visiting(text[startC &+ index], &c)
                    index += 1
                }
            }
            while index < q + depth {
                let (first, end, rows) = (index, min(q + depth, index + stretch), (a, b, c))
                var met: UInt32 = 0
                while index < end {
                    step(text[startA &+ index], &a, &met)
                    step(text[startB &+ index], &b, &met)
                    step(text[startC &+ index], &c, &met)
                    index += 1
                }
                guard met >= outputRows else { continue }
                (index, a, b, c) = (first, rows.0, rows.1, rows.2)
                while index < end {
                    visiting(text[startA &+ index], &a)
                    visiting(text[startB &+ index], &b)
                    visiting(text[startC &+ index], &c)
                    index += 1
                }
            }
            row = c
            index = startC + index
        } else if text.count >= 2 * minimumPart {
            let middle = text.count / 2
            var second = 0
            let start = middle - depth
            while index < middle {
                let (first, end, rows) = (index, min(middle, index + stretch), (row, second))
                var met: UInt32 = 0
                while index < end {
                    step(text[index], &row, &met)
                    step(text[start &+ index], &second, &met)
                    index += 1
                }
                guard met >= outputRows else { continue }
                (index, row, second) = (first, rows.0, rows.1)
                while index < end {
                    visiting(text[index], &row)
                    visiting(text[start &+ index], &second)
                    index += 1
                }
            }
            row = second
            index = start + middle
        }
        while index < text.count {
            visiting(text[index], &row)
            index += 1
        }
        visiting(CompiledRulesFormat.endMarker, &row)
        return best
    }

    /// Walks the dense table only where a keyword may lie: from the root at each position the
    /// window scan lets through, as far as the longest keyword that starts with its window reaches
    /// (or on from the walk before, when the position lies inside it), from the start marker over the first `depth` bytes when a keyword starts
    /// with it, and over the last `depth` bytes to the end marker when a keyword ends with it.
    /// Each walk from the root meets every keyword that starts where it starts, and reports
    /// only keywords that occur (`WindowFilter`).
    private func runFiltered(
        _ automaton: UnsafePointer<CompiledRules.Automaton>,
        _ filter: UnsafePointer<blocklist_window_filter>,
        over text: UnsafeBufferPointer<UInt8>
    ) -> UInt32 {
        let count = automaton.pointee.classCount
        let depth = automaton.pointee.depth
        let table = automaton.pointee.outputTable
        let outputRows = automaton.pointee.outputRows
        let (dense, classes, outputStates) = (
            UnsafeBufferPointer(automaton.pointee.dense), UnsafeBufferPointer(automaton.pointee.classes),
            UnsafeBufferPointer(automaton.pointee.outputStates)
        )
        var best = CompiledRulesFormat.noRule
        var row = 0
        @inline(__always) func visiting(_ byte: UInt8) {
            let next = dense[row &+ Int(classes[Int(byte)])]
            row = Int(next)
            if next >= outputRows { visit(table, Int(outputStates[Int(next - outputRows) / count]), best: &best) }
        }
        // Walks on to `end` from `start`, from the root when the walk so far ended before it.
        var index = 0
        @inline(__always) func walk(from start: Int, to end: Int) {
            if start > index {
                row = 0
                index = start
            }
            while index < end {
                visiting(text[index])
                index += 1
            }
        }
        visiting(CompiledRulesFormat.startMarker)
        if row != 0 { walk(from: 0, to: min(text.count, depth)) }
        let tail = automaton.pointee.endKeywords ? max(0, text.count - depth) : text.count
        let starts = windowStarts
        var chunk = 0
        while chunk < tail {
            let limit = min(tail, chunk + WindowFilter.chunk)
            let found = WindowFilter.scan(filter, text, from: chunk, limit: limit, into: starts)
            // A text where windows pass this often (one made of a keyword's first bytes, say)
            // walks faster whole, as interleaved parts; what was walked already is met again,
            // which changes nothing.
            if found * WindowFilter.wholeWalkShare > limit - chunk {
                return min(best, runDense(automaton, over: text))
            }
            for position in 0..<found {
                // The position, and how far the longest keyword that starts with its window reaches.
                let (start, reach) = (chunk + Int(starts[position] & 0xFFFF), Int(starts[position] >> 16))
                walk(from: start, to: min(text.count, max(index, start + reach)))
            }
            chunk = limit
        }
        if automaton.pointee.endKeywords {
            walk(from: tail, to: text.count)
            visiting(CompiledRulesFormat.endMarker)
        }
        return best
    }

    /// A state with outputs: keeps the better key, lists the triggered regexes.
    @inline(__always)
    private func visit(_ table: CompiledRules.OutputTable, _ state: Int, best: inout UInt32) {
        let (key, triggers) = CompiledRules.outputs(in: file, table, state: state)
        if key < best { best = key }
        if !triggers.isEmpty { trigger(table, triggers) }
    }

    private func trigger(_ table: CompiledRules.OutputTable, _ range: Range<Int>) {
        let bytes = file
        for index in range { addCandidate(bytes.loadLE(UInt32.self, at: table.triggers + index * 4)) }
    }

    /// Lists a regex rule or a condition once per message, and marks it seen.
    @inline(__always)
    private func addCandidate(_ rule: UInt32) {
        let bit: UInt64 = 1 << (UInt64(rule) & 63)
        if seen[Int(rule) >> 6] & bit == 0 {
            seen[Int(rule) >> 6] |= bit
            candidateStorage[candidateCount.pointee] = rule
            candidateCount.pointee += 1
        }
    }

    /// Weighs each combined rule one of whose conditions was triggered and which could beat
    /// `best`: it matches when each of its `all` conditions holds and none of its `none`. A
    /// keyword condition holds when the automaton triggered it; a regex condition, when its
    /// literal was found (or it has none) and the regex then matches.
    private func weighCombined(best: UInt32, sender: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>)
        -> UInt32
    {
        var best = best
        let combined = rules.combined
        for candidate in candidates where Int(candidate) >= combined.ruleCount {
            let number = Int(combined.parents[Int(candidate) - combined.ruleCount])
            let bit: UInt64 = 1 << UInt64(number & 63)
            guard evaluatedBits[number >> 6] & bit == 0 else { continue }
            evaluatedBits[number >> 6] |= bit
            evaluated.append(UInt32(number))
            let record = combined.records[number]
            let key = CompiledRulesFormat.key(action: rules.action(of: Int(record.rule)), rule: Int(record.rule))
            guard key < best else { continue }
            let first = Int(record.first)
            let middle = first + Int(record.all)
            if (first..<middle).allSatisfy({ holds($0, sender, body) })
                && !(middle..<(middle + Int(record.none))).contains(where: { holds($0, sender, body) })
            {
                best = key
            }
        }
        for number in evaluated { evaluatedBits[Int(number) >> 6] = 0 }
        evaluated.removeAll(keepingCapacity: true)
        return best
    }

    /// Whether condition `entry` holds for this message (see `weighCombined`).
    private func holds(_ entry: Int, _ sender: UnsafeBufferPointer<UInt8>, _ body: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        guard seen[entry >> 6] & (1 << UInt64(entry & 63)) != 0 else { return false }
        // CompiledRules checked that every regex entry has its compiled form.
        guard let compiled = rules.regexes.compiled(rule: entry) else { return true }
        let target = rules.target(of: entry)
        let normalized = rules.view(of: entry).normalized
        return (target != .body && matches(compiled, entry, sender, slot: 0, normalized: normalized))
            || (target != .sender && matches(compiled, entry, body, slot: 1, normalized: normalized))
    }

    /// Runs the candidate regexes that could beat `best`, best first; the first that matches wins.
    private func runRegexes(best: UInt32, sender: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>)
        -> UInt32
    {
        scratch.pointee.keys.removeAll(keepingCapacity: true)
        for rule in candidates where Int(rule) < rules.ruleCount {
            let key = CompiledRulesFormat.key(action: rules.action(of: Int(rule)), rule: Int(rule))
            if key < best { scratch.pointee.keys.append(key) }
        }
        if scratch.pointee.keys.count > 1 { scratch.pointee.keys.sort() }
        for key in scratch.pointee.keys {
            let index = Int(key & 0xFF_FFFF)
            // CompiledRules checked that every regex rule has its compiled form. The rule's
            // target and view come from its packed entry: `rules.rule(_:)` would make its name
            // and value strings for each regex run.
            guard let compiled = rules.regexes.compiled(rule: index) else { continue }
            let target = rules.target(of: index)
            let normalized = rules.view(of: index).normalized
            if target != .body, matches(compiled, index, sender, slot: 0, normalized: normalized) { return key }
            if target != .sender, matches(compiled, index, body, slot: 1, normalized: normalized) { return key }
        }
        return best
    }

    /// Whether regex `rule` matches `text`, the sender (`slot` 0) or the body (1). A DFA sees the
    /// whole text, and so does a program's lazy DFA unless the text keeps it computing states;
    /// the NFA simulation then sees the program's window, cut back to a whole scalar. Both see the rule's view without case folding (the regex itself ignores
    /// case when the rule does): for a normalized rule, the text in NFC without the dropped
    /// format characters, made once per message and target.
    private func matches(
        _ compiled: CompiledRegexes.Compiled,
        _ rule: Int,
        _ text: UnsafeBufferPointer<UInt8>,
        slot: Int,
        normalized: Bool
    ) -> Bool {
        if normalized {
            normalize(text, slot: slot)
            if scratch.pointee.state(slot) == .folded {
                return scratch.pointee.normalized[slot].withUnsafeBufferPointer { search(compiled, rule, $0) }
            }
        }
        return search(compiled, rule, text)
    }

    /// Whether `text`, the sender (`slot` 0) or the body (1), is its own normalized form and, but
    /// for ASCII capitals, its own fold (`NormalizedState.plain`), worked out once per message.
    @inline(__always)
    private func isPlain(_ text: UnsafeBufferPointer<UInt8>, slot: Int) -> Bool {
        if !scratch.pointee.normalizedStale, scratch.pointee.state(slot) != .unknown {
            return scratch.pointee.state(slot) == .plain
        }
        normalize(text, slot: slot)
        return scratch.pointee.state(slot) == .plain
    }

    /// Makes the normalized view of `text`, the sender (`slot` 0) or the body (1), unless this
    /// message's is made already; a text that is its own normalized form (ASCII, or what
    /// `TextView.normalizedForm(of:)` finds unchanged) is not copied.
    private func normalize(_ text: UnsafeBufferPointer<UInt8>, slot: Int) {
        if scratch.pointee.normalizedStale {
            scratch.pointee.setState(0, .unknown)
            scratch.pointee.setState(1, .unknown)
            scratch.pointee.normalizedStale = false
        }
        guard scratch.pointee.state(slot) == .unknown else { return }
        if Self.isASCII(text) {
            scratch.pointee.setState(slot, .plain)
            return
        }
        switch TextView.normalizedForm(of: text) {
        case .plain: scratch.pointee.setState(slot, .plain)
        case .unchanged: scratch.pointee.setState(slot, .same)
        case .changed:
            TextView(caseInsensitive: false, normalized: true).fold(text, into: &scratch.pointee.normalized[slot])
            scratch.pointee.setState(slot, .folded)
        }
    }

    /// Frees a folded text's buffer that a long message grew past 256 KiB (a skeleton of 64 KiB
    /// may take 400 KB), so that one such message does not stay in the extension's dirty memory.
    private func releaseLargeBuffers() {
        let limit = 256 * 1024
        for index in scratch.pointee.folded.indices where scratch.pointee.folded[index].capacity > limit {
            scratch.pointee.folded[index] = []
        }
        for slot in 0..<2 where scratch.pointee.normalized[slot].capacity > limit {
            scratch.pointee.normalized[slot] = []
        }
    }

    /// The DFA; for a program, its lazy DFA, handing over to the NFA simulation where the lazy
    /// DFA's cache would not hold the text's states. Either reads the whole text.
    private func search(_ compiled: CompiledRegexes.Compiled, _ rule: Int, _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        switch compiled {
        case .automaton(let automaton):
            let skip = idleSkips.first { $0.rule == UInt32(rule) }?.skip
            return automaton.matches(text, scalarClasses: scalarClasses, idleSkip: skip)
        case .program(let program):
            // The lazy DFA reads the text while its states stay in its cache; a text that makes
            // it compute more transitions than its budget (each costs up to one step per
            // instruction) is read on by the NFA simulation from where the DFA stopped.
            let dfa = programs.dfa(for: rule, program: program)
            switch dfa.firstMatch(text, transitionBudget: RegexLimits.transitionBudget(instructions: program.count)) {
            case .matched: return true
            case .noMatch: return false
            case .exhausted(let scanned): return dfa.finish(text, from: scanned, with: matcher)
            }
        }
    }
}

/// The lazy DFAs of regexes shipped as programs (each within `lazyDFABudget` bytes), at most
/// `capacity` at once, so that memory stays bounded whatever the number of such rules: a rule's
/// lazy DFA is made when one of its literals first occurs, and the least recently used one makes
/// room.
struct RegexProgramCache {
    private var entries: [(rule: Int, dfa: RegexDFA, used: UInt64)] = []
    private let capacity: Int
    private let lazyDFABudget: Int
    private var clock: UInt64 = 0

    init(capacity: Int, lazyDFABudget: Int) {
        self.capacity = max(1, capacity)
        self.lazyDFABudget = lazyDFABudget
    }

    mutating func dfa(for rule: Int, program: RegexProgram) -> RegexDFA {
        clock += 1
        if let slot = entries.firstIndex(where: { $0.rule == rule }) {
            entries[slot].used = clock
            return entries[slot].dfa
        }
        let dfa = RegexDFA(program, memoryBudget: lazyDFABudget)
        if entries.count < capacity {
            entries.append((rule, dfa, clock))
        } else {
            let oldest = entries.indices.min { entries[$0].used < entries[$1].used }!
            entries[oldest] = (rule, dfa, clock)
        }
        return dfa
    }
}
