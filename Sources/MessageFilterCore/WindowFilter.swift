internal import CWindowScan

/// The window filter of a keyword automaton (`CWindowScan`): the first 3 or 4 bytes of its
/// keywords, which a walk need start only where they occur.
///
/// Every keyword of the automaton that lies inside the text (neither marker in it) starts with
/// one of the windows, so a walk from the root at each position where a window may start, as far
/// as the longest keyword that starts with that window reaches (its reach), meets every such
/// keyword; a start keyword (`⊢…`) is met by the walk from the start marker, and an end keyword
/// (`…⊣`) by a walk over the text's last `depth` bytes.
enum WindowFilter {
    /// The most windows a filter holds: past it, its 8 buckets let too many positions through to
    /// be worth their scan.
    static let maximumWindows = 1024
    /// Texts shorter than this are walked whole: the scan's setup costs what their walk does.
    static let minimumText = 32
    /// How many positions one call to the scan reports at most.
    static let chunk = 1024
    /// A text walks whole when more than one position in this many passes the filter: each costs
    /// a walk of up to its reach, and the whole walk goes about four times as fast a byte.
    static let wholeWalkShare = 16

    /// The filter of `automaton`'s windows, or nil when a keyword inside the text has fewer than
    /// 3 bytes or more than 255 (a reach is a byte), when there are more than `maximumWindows`
    /// windows, when it would not fit `budget` bytes, or when the processor has no byte shuffle. The links automaton has none: its text
    /// holds the markers between hosts (`LinkExtractor`), not only around the whole.
    static func make(_ automaton: CompiledRules.Automaton, bytes: UnsafeRawBufferPointer, budget: Int)
        -> UnsafeMutablePointer<blocklist_window_filter>?
    {
        let shuffle = blocklist_window_scan_available()
        guard shuffle != 0, automaton.target != .links, automaton.depth <= 255,
            MemoryLayout<blocklist_window_filter>.size <= budget
        else { return nil }
        let format = CompiledRulesFormat.self
        func field(_ s: Int, _ f: Int) -> UInt32 {
            bytes.loadLE(UInt32.self, at: automaton.states + s * format.stateEntrySize + f * 4)
        }
        func edgeStart(_ s: Int) -> Int { Int(field(s, 0) & 0x7FFF_FFFF) }
        // States are numbered breadth-first: each depth is a run of states, whose children are
        // the next run. A path is the state's bytes from the root, nil under a marker.
        var level = 0..<1
        var paths: [[UInt8]?] = [[]]
        var width = 4
        for depth in 1...4 {
            let next = (edgeStart(level.lowerBound) + 1)..<(edgeStart(level.upperBound) + 1)
            var nextPaths = [[UInt8]?](repeating: nil, count: next.count)
            for s in level {
                guard let path = paths[s - level.lowerBound] else { continue }
                for edge in edgeStart(s)..<edgeStart(s + 1) {
                    let label = bytes[automaton.labels + edge]
                    if label == format.startMarker || label == format.endMarker { continue }
                    let child = edge + 1
                    nextPaths[child - next.lowerBound] = path + [label | 0x20]
                    guard field(child, 0) & format.outputFlag != 0 else { continue }
                    // A keyword of `depth` bytes ends here.
                    if depth < 3 { return nil }
                    width = min(width, depth)
                }
            }
            (level, paths) = (next, nextPaths)
            if depth == width || next.isEmpty { break }
        }
        // Each window's state, and its window (distinct windows may fold to one).
        let windows = zip(level, paths).compactMap { state, path in path.map { (state: state, bytes: $0) } }
            .filter { $0.bytes.count == width }
        let distinct = Set(windows.map(\.bytes))
        guard distinct.count <= maximumWindows else { return nil }
        // How many bytes below each state its deepest keyword ends: states are numbered
        // breadth-first, so children come after their parents.
        var below = [UInt8](repeating: 0, count: automaton.stateCount)
        for s in stride(from: automaton.stateCount - 1, through: 0, by: -1) {
            for edge in edgeStart(s)..<edgeStart(s + 1) { below[s] = max(below[s], below[edge + 1] + 1) }
        }
        let filter = UnsafeMutablePointer<blocklist_window_filter>.allocate(capacity: 1)
        filter.initialize(to: blocklist_window_filter())
        filter.pointee.width = UInt32(width)
        filter.pointee.shuffle = UInt32(shuffle)
        let buckets = Self.buckets(distinct.sorted { $0.lexicographicallyPrecedes($1) })
        withUnsafeMutableBytes(of: &filter.pointee.low) { low in
            withUnsafeMutableBytes(of: &filter.pointee.high) { high in
                for (bucket, members) in buckets.enumerated() {
                    for window in members {
                        for (j, byte) in window.enumerated() {
                            // The text's bytes are looked up as they are: a byte without the
                            // 0x20 bit passes too.
                            low[j * 16 + Int(byte & 0x0F)] |= 1 << bucket
                            high[j * 16 + Int(byte >> 4)] |= 1 << bucket
                            high[j * 16 + Int((byte & ~0x20) >> 4)] |= 1 << bucket
                        }
                    }
                }
            }
        }
        withUnsafeMutableBytes(of: &filter.pointee.hashes) { hashes in
            withUnsafeMutableBytes(of: &filter.pointee.reach) { reach in
                for window in windows {
                    var value: UInt32 = 0
                    for (j, byte) in window.bytes.enumerated() { value |= UInt32(byte) << (8 * j) }
                    let hash = Int(blocklist_window_hash(value))
                    hashes[hash >> 3] |= 1 << (hash & 7)
                    reach[hash >> 3] = max(reach[hash >> 3], UInt8(width) + below[window.state])
                }
            }
        }
        return filter
    }

    /// The windows in 8 buckets, each put where it lets the fewest more positions of ordinary
    /// text through: a bucket lets a position through when each of its bytes' low and high
    /// nibbles is one of the bucket's at that place, and `textWeights` says how often each byte
    /// occurs. (A bucket of windows with like bytes lets little more through; Hyperscan's Teddy
    /// groups its literals so too.)
    static func buckets(_ windows: [[UInt8]]) -> [[[UInt8]]] {
        var buckets = [[[UInt8]]](repeating: [], count: 8)
        // For each bucket and place: the low and high nibbles allowed, as bits.
        var low = [[UInt16]](repeating: [0, 0, 0, 0], count: 8)
        var high = [[UInt16]](repeating: [0, 0, 0, 0], count: 8)
        /// How often a byte of text has one of `lows` and one of `highs`.
        func share(_ lows: UInt16, _ highs: UInt16) -> Double {
            var total = 0.0
            var h = highs
            while h != 0 {
                let hi = h.trailingZeroBitCount
                h &= h - 1
                var l = lows
                while l != 0 {
                    total += textWeights[hi << 4 | l.trailingZeroBitCount]
                    l &= l - 1
                }
            }
            return total
        }
        for window in windows {
            var best = (cost: Double.infinity, bucket: 0)
            for bucket in 0..<8 {
                var before = buckets[bucket].isEmpty ? 0.0 : 1.0
                var after = 1.0
                for (j, byte) in window.enumerated() {
                    let (l, h) = (low[bucket][j], high[bucket][j])
                    let highs: UInt16 = 1 << (byte >> 4) | 1 << ((byte & ~0x20) >> 4)
                    before *= buckets[bucket].isEmpty ? 1 : share(l, h)
                    after *= share(l | 1 << (byte & 0x0F), h | highs)
                }
                if after - before < best.cost { best = (after - before, bucket) }
            }
            buckets[best.bucket].append(window)
            for (j, byte) in window.enumerated() {
                low[best.bucket][j] |= 1 << (byte & 0x0F)
                high[best.bucket][j] |= 1 << (byte >> 4) | 1 << ((byte & ~0x20) >> 4)
            }
        }
        return buckets
    }

    /// How often each byte occurs in ordinary text, roughly, out of about 1: English letters by
    /// their frequency (capitals a tenth as often), spaces, digits and punctuation, and the bytes
    /// of other scripts' UTF-8 alike. Only the buckets' layout depends on it, never a decision.
    static let textWeights: [Double] = {
        var weights = [Double](repeating: 0, count: 256)
        let letters: [Double] = [
            8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4, 6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1,
            2.8, 1.0, 2.4, 0.15, 2.0, 0.07,
        ]
        for (index, frequency) in letters.enumerated() {
            weights[0x61 + index] = frequency
            weights[0x41 + index] = frequency / 10
        }
        weights[0x20] = 18
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { weights[Int(byte)] = 0.5 }
        for byte in ".,!?:;/-'\"()@#%&*+=".utf8 { weights[Int(byte)] = 0.2 }
        for byte in 0x80..<0x100 { weights[byte] = 0.05 }
        let total = weights.reduce(0, +)
        return weights.map { $0 / total }
    }()

    /// The positions of `text` from `from` on where a window may start, at most `chunk` of them
    /// and before `limit`, into `starts`: how many.
    @inline(__always)
    static func scan(
        _ filter: UnsafePointer<blocklist_window_filter>,
        _ text: UnsafeBufferPointer<UInt8>,
        from: Int,
        limit: Int,
        into starts: UnsafeMutablePointer<UInt32>
    ) -> Int {
        blocklist_window_scan(filter, text.baseAddress! + from, text.count - from, limit - from, starts)
    }
}
