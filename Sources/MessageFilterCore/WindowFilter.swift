internal import CWindowScan

/// The window filter of a keyword automaton (`CWindowScan`): the first 3 or 4 bytes of its
/// keywords, which a walk need start only where they occur.
///
/// Every keyword of the automaton that lies inside the text (neither marker in it) starts with
/// one of the windows, so a walk from the root at each position where a window may start, for
/// `depth` bytes, meets every such keyword; a start keyword (`⊢…`) is met by the walk from the
/// start marker, and an end keyword (`…⊣`) by a walk over the text's last `depth` bytes.
enum WindowFilter {
    /// The most windows a filter holds: past it, its 8 buckets let too many positions through to
    /// be worth their scan.
    static let maximumWindows = 1024
    /// Texts shorter than this are walked whole: the scan's setup costs what their walk does.
    static let minimumText = 32
    /// How many positions one call to the scan reports at most.
    static let chunk = 1024

    /// The filter of `automaton`'s windows, or nil when a keyword inside the text has fewer than
    /// 3 bytes, when there are more than `maximumWindows` windows, when it would not fit `budget`
    /// bytes, or when the processor has no byte shuffle. The links automaton has none: its text
    /// holds the markers between hosts (`LinkExtractor`), not only around the whole.
    static func make(_ automaton: CompiledRules.Automaton, bytes: UnsafeRawBufferPointer, budget: Int)
        -> UnsafeMutablePointer<blocklist_window_filter>?
    {
        guard blocklist_window_scan_available() != 0, automaton.target != .links,
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
        var windows = Set(paths.compactMap { $0 }.filter { $0.count == width })
        // Keywords shorter than `width` were ruled out above, so an automaton with no window has
        // no keyword inside the text: the scan then lets no position through.
        guard windows.count <= maximumWindows else { return nil }
        let filter = UnsafeMutablePointer<blocklist_window_filter>.allocate(capacity: 1)
        filter.initialize(to: blocklist_window_filter())
        filter.pointee.width = UInt32(width)
        withUnsafeMutableBytes(of: &filter.pointee.low) { low in
            withUnsafeMutableBytes(of: &filter.pointee.high) { high in
                for window in windows {
                    let bucket: UInt8 = 1 << (window[0] & 7)
                    for (j, byte) in window.enumerated() {
                        // The text's byte is compared with its 0x20 bit set: a byte without it
                        // passes too.
                        low[j * 16 + Int(byte & 0x0F)] |= bucket
                        high[j * 16 + Int(byte >> 4)] |= bucket
                        high[j * 16 + Int((byte & ~0x20) >> 4)] |= bucket
                    }
                }
            }
        }
        withUnsafeMutableBytes(of: &filter.pointee.hashes) { hashes in
            for window in windows {
                var value: UInt32 = 0
                for (j, byte) in window.enumerated() { value |= UInt32(byte) << (8 * j) }
                let hash = Int(blocklist_window_hash(value))
                hashes[hash >> 3] |= 1 << (hash & 7)
            }
        }
        windows.removeAll()
        return filter
    }

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
