import BlocklistCore
import CWindowScan
import MessageFilterCompiler
import MessageFilterCore
import TestSupport
import Testing

/// The window scan (`CWindowScan`) and the walk it drives: a keyword automaton walked only where
/// one of its keywords' first bytes may start must decide every message as the whole walk does.
@Suite struct WindowFilterTests {
    /// The scan, 16 bytes at a time with a byte shuffle, against the same filter applied one
    /// position at a time: random windows, texts of every length around the block size, every
    /// limit. Block edges, the last partial block and the limit are where a shuffle scan slips.
    @Test func theScanReportsExactlyThePositionsItsFilterAllows() throws {
        let shuffles = Int(blocklist_window_scan_available())
        try #require(shuffles != 0, "this processor has no byte shuffle")
        var random = SplitMix64(state: 29)
        let alphabet = Array("abcdeABCDE xyz09-é".utf8)
        for round in 0..<SeededRuns.count(400, short: 80) {
            let width = round % 2 == 0 ? 4 : 3
            var filter = blocklist_window_filter()
            filter.width = UInt32(width)
            // Every scan this processor has (SSSE3 and AVX2 on x86-64) in turn.
            filter.shuffle = UInt32(1 + round % shuffles)
            withUnsafeMutableBytes(of: &filter.reach) { reach in
                for index in reach.indices { reach[index] = UInt8.random(in: 0...255, using: &random) }
            }
            var windows: [[UInt8]] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let window = (0..<width).map { _ in alphabet.randomElement(using: &random)! | 0x20 }
                windows.append(window)
                let bucket: UInt8 = 1 << UInt8.random(in: 0..<8, using: &random)
                withUnsafeMutableBytes(of: &filter.low) { low in
                    withUnsafeMutableBytes(of: &filter.high) { high in
                        for (j, byte) in window.enumerated() {
                            low[j * 16 + Int(byte & 0x0F)] |= bucket
                            high[j * 16 + Int(byte >> 4)] |= bucket
                        }
                    }
                }
                // Some windows' hashes are left out, so that the hash check is exercised too.
                if Int.random(in: 0..<4, using: &random) != 0 {
                    var value: UInt32 = 0
                    for (j, byte) in window.enumerated() { value |= UInt32(byte) << (8 * j) }
                    let hash = Int(blocklist_window_hash(value))
                    withUnsafeMutableBytes(of: &filter.hashes) { $0[hash >> 3] |= 1 << (hash & 7) }
                }
            }
            let length = Int.random(in: 0...(round % 5 == 0 ? 200 : 40), using: &random)
            var text = (0..<length).map { _ in alphabet.randomElement(using: &random)! }
            // Plant windows, in either case, so that positions pass.
            for _ in 0..<(length / 6) where length >= width {
                let at = Int.random(in: 0...(length - width), using: &random)
                let window = windows.randomElement(using: &random)!
                for j in 0..<width { text[at + j] = Bool.random(using: &random) ? window[j] : window[j] & ~0x20 }
            }
            let limit = Int.random(in: 0...(length + 2), using: &random)
            let expected = Self.reference(filter, text, limit: min(limit, 1024))
            // `limit` entries, and a canary after them.
            var starts = [UInt32](repeating: 0, count: min(limit, 1024) + 1)
            starts[starts.count - 1] = 0xDEAD_BEEF
            let count = text.withUnsafeBufferPointer { bytes in
                withUnsafePointer(to: filter) {
                    blocklist_window_scan($0, bytes.baseAddress, bytes.count, limit, &starts)
                }
            }
            #expect(
                Array(starts[0..<count].map(Int.init)) == expected,
                "round \(round): width \(width), shuffle \(filter.shuffle), text \(text), limit \(limit)"
            )
            #expect(starts.last == 0xDEAD_BEEF, "round \(round): the scan wrote past `limit` entries")
            if Array(starts[0..<count].map(Int.init)) != expected { return }
        }
    }

    /// The filter one position at a time: the buckets the window's bytes allow as they are, then
    /// the hash of its bytes with their 0x20 bit set; each position with its window's reach.
    static func reference(_ filter: blocklist_window_filter, _ text: [UInt8], limit: Int) -> [Int] {
        let width = Int(filter.width)
        var filter = filter
        var positions: [Int] = []
        for start in 0..<max(0, limit) where start + width <= text.count {
            var buckets: UInt8 = 0xFF
            var value: UInt32 = 0
            withUnsafeBytes(of: &filter.low) { low in
                withUnsafeBytes(of: &filter.high) { high in
                    for j in 0..<width {
                        let byte = text[start + j]
                        buckets &= low[j * 16 + Int(byte & 0x0F)] & high[j * 16 + Int(byte >> 4)]
                        value |= UInt32(byte | 0x20) << (8 * j)
                    }
                }
            }
            let hash = Int(blocklist_window_hash(value))
            let hashed = withUnsafeBytes(of: &filter.hashes) { $0[hash >> 3] & (1 << (hash & 7)) != 0 }
            let reach = withUnsafeBytes(of: &filter.reach) { Int($0[hash >> 3]) }
            if buckets != 0 && hashed { positions.append(start | reach << 16) }
        }
        return positions
    }

    /// Random keyword rules of 3 to 12 bytes (contains, prefix, suffix; ignoring case or not;
    /// some through normalization, with non-ASCII letters), and bodies long enough for the scan
    /// that plant them in either case, at block edges and at both ends: the classifier with
    /// window filters, the one without, and the linear scan all decide alike. The rounds must
    /// build filters, or the test would hold nothing.
    @Test func theFilteredWalkDecidesAsTheWholeWalkAndTheLinearScan() throws {
        var random = SplitMix64(state: 31)
        let alphabet = Array("abcdeABCDE xyz.é1")
        func word(_ length: Int) -> String {
            String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
        }
        var filtered = 0
        var decided = 0
        for round in 0..<SeededRuns.count(60, short: 15) {
            var rules: [MessageRule] = []
            var keywords: [String] = []
            for index in 0..<Int.random(in: 1...30, using: &random) {
                let match = [MatchKind.contains, .contains, .contains, .prefix, .suffix].randomElement(using: &random)!
                let value = word(Int.random(in: 3...12, using: &random))
                keywords.append(value)
                var rule = MessageRule.condition(
                    .body,
                    match,
                    value,
                    caseSensitive: Bool.random(using: &random),
                    normalize: Int.random(in: 0..<4, using: &random) == 0,
                    confusables: false
                )
                rule.name = "rule \(index)"
                rule.action = [MessageAction.allow, .junk, .promotion, .transaction].randomElement(using: &random)!
                rules.append(rule)
            }
            var file = RulesFile(rules: rules)
            guard (try? file.check(source: "test")) != nil else { continue }
            let bytes = RulesCompiler.compile(file.rules)
            let withFilters = try CompiledRules(bytes: bytes, name: "test", denseTableBudget: 4 << 20, windowScan: true)
            let withoutFilters = try CompiledRules(
                bytes: bytes,
                name: "test",
                denseTableBudget: 4 << 20,
                windowScan: false
            )
            #expect(withoutFilters.filteredAutomata == 0)
            filtered += withFilters.filteredAutomata
            // Every other round with the 16-byte scan (SSSE3 on a processor that has AVX2 too).
            if round % 2 == 1 { withFilters.limitWindowScans(to: 1) }
            let (fast, whole) = (MessageClassifier(rules: withFilters), MessageClassifier(rules: withoutFilters))
            for _ in 0..<SeededRuns.count(150, short: 60) {
                var body = word(Int.random(in: 0...200, using: &random))
                // A body made of a keyword's first bytes, which walks whole.
                if Int.random(in: 0..<8, using: &random) == 0 {
                    let keyword = keywords.randomElement(using: &random)!
                    body = String(repeating: String(keyword.prefix(4)), count: Int.random(in: 8...300, using: &random))
                }
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    var keyword = keywords.randomElement(using: &random)!
                    if Bool.random(using: &random) { keyword = keyword.uppercased() }
                    let at = [0, 15, 16, 17, 31, 32, body.count].filter { $0 <= body.count }
                        .randomElement(using: &random)!
                    body.insert(contentsOf: keyword, at: body.index(body.startIndex, offsetBy: at))
                }
                let expected = referenceDecision(rules, sender: "+1", body: body)
                let (withScan, withoutScan) = (
                    fast.classify(sender: "+1", body: body), whole.classify(sender: "+1", body: body)
                )
                #expect(withScan == expected, "round \(round): body \(body.debugDescription)")
                #expect(withoutScan == expected, "round \(round): body \(body.debugDescription)")
                if withScan != expected { return }
                if expected != .noMatch { decided += 1 }
            }
        }
        #expect(filtered >= SeededRuns.count(30, short: 8), "only \(filtered) automata had a window filter")
        #expect(decided > 100)
    }

    /// A keyword of one or two bytes inside the text, or more windows than a filter holds, and
    /// the automaton walks every byte; a start or end keyword of two bytes does not stop it.
    @Test func anAutomatonGetsAFilterOnlyWhenItsKeywordsSuitOne() throws {
        func filters(_ rules: [MessageRule]) throws -> Int {
            try CompiledRules(bytes: RulesCompiler.compile(rules), name: "test", denseTableBudget: 4 << 20)
                .filteredAutomata
        }
        func rule(_ match: MatchKind, _ value: String) -> MessageRule {
            MessageRule(name: value, target: .body, match: match, value: value, action: .junk)
        }
        let available = blocklist_window_scan_available() != 0
        #expect(try filters([rule(.contains, "win"), rule(.contains, "prize")]) == (available ? 1 : 0))
        #expect(try filters([rule(.contains, "ab"), rule(.contains, "prize")]) == 0)
        // The links' text holds markers between hosts.
        let link = MessageRule(name: "link", target: .links, match: .domain, value: "*.example.com", action: .junk)
        #expect(try filters([link]) == 0)
        #expect(
            try filters([rule(.prefix, "ab"), rule(.suffix, "yz"), rule(.contains, "prize")]) == (available ? 1 : 0)
        )
        var many: [MessageRule] = []
        for a in "abcdefghijk" {
            for b in "abcdefghijk" {
                for c in "abcdefghij" { many.append(rule(.contains, "\(a)\(b)\(c)q")) }
            }
        }
        #expect(many.count > 1024)
        #expect(try filters(many) == 0)
    }
}
