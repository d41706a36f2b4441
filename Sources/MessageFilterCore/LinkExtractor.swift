internal import ByteCodecs

/// The hosts a message's body links to, for rules whose target is `links`
/// (docs/MESSAGE-FILTER.md, links). It reads the body's case-insensitive, normalized view, so
/// hosts arrive lowercased, in NFC, with full-width dots and letters made ASCII.
///
/// - A URL is a scheme (an ASCII letter, then letters, digits, `+`, `-` or `.`, not preceded by
///   one of those) followed by `://`. It runs to the first white space, `<`, `>`, `"`, `'` or
///   the end; its host is its authority (up to `/`, `?`, `#` or `\`) after the last `@`, up to
///   the first `:`, or inside `[…]` for an IPv6 address. In a host, `%` and two hex digits that
///   give ASCII stand for that character (`%62it.ly` is `bit.ly`), and `。` (U+3002) and `｡`
///   (U+FF61) are dots, as browsers read them; the host ends at the first other character that is
///   neither a label character nor a dot (`http://bit.ly,` and `(http://bit.ly)` link to `bit.ly`).
/// - Outside URLs, a bare domain is a run of labels joined by dots, where a label is ASCII
///   letters, digits and `-`, or other letters and digits, 1 to 63 of them, not starting or
///   ending with `-`; at least two labels, and the last (the top-level domain) has only letters,
///   at least two. The run (label characters and dots) starts after a scalar that is none of
///   those, nor `@`, `/` or `_`, and must not be followed by `@` (`a.b@example.com` names an
///   address, not a link); dots at its end are dropped (`see example.com.`), and a `/` after it
///   starts a path, skipped to the next white space, `<`, `>`, `"` or `'`.
/// - One dot at the end of a host is dropped (`bit.ly.` is `bit.ly`); an empty host is none.
///
/// Hosts are written to a buffer as `host₁ 0xFF 0xFE host₂ …`, so that an automaton run over it
/// framed by 0xFE and 0xFF sees each host framed: `bit.ly` as a keyword between the markers
/// matches that host exactly, and `.example.com` before 0xFF any host under it.
package enum LinkExtractor {
    /// Writes the hosts of `text` (a body's case-insensitive, normalized view) to `output`,
    /// which is emptied first.
    ///
    /// - Complexity: O(n), with no allocation beyond `output`'s growth.
    package static func hosts(_ text: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        func add(_ range: Range<Int>) {
            var end = range.upperBound
            if end > range.lowerBound, text[end - 1] == UInt8(ascii: ".") { end -= 1 }
            guard end > range.lowerBound else { return }
            if !output.isEmpty { output += [CompiledRulesFormat.endMarker, CompiledRulesFormat.startMarker] }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[range.lowerBound..<end]))
        }
        var index = 0
        var previous: UInt32 = 0x20
        while index < text.count {
            let (value, length) = RegexMatcher.decode(text, index)
            if isSchemeStart(value), !isSchemeCharacter(previous), let authority = url(text, at: index) {
                let range = host(text, authority)
                if range.lowerBound > authority.lowerBound, text[range.lowerBound - 1] == UInt8(ascii: "[") {
                    add(range)
                } else {
                    addURLHost(text, range, to: &output)
                }
                index = endOfLink(text, from: authority.upperBound)
                previous = 0x20
                continue
            }
            if isLabelCharacter(value), !isLabelCharacter(previous),
                !(previous == 0x2E || previous == 0x40 || previous == 0x2F || previous == 0x5F)
            {
                let (run, next) = domainRun(text, from: index)
                var after = next
                if after < text.count, text[after] == UInt8(ascii: "/") { after = endOfLink(text, from: after) }
                let followedByAt = next < text.count && text[next] == UInt8(ascii: "@")
                if !followedByAt, isDomain(text, run) { add(run) }
                // The run holds at least this scalar, so `after` is past it.
                previous = lastScalar(text, before: after).0
                index = after
                continue
            }
            previous = value
            index += length
        }
    }

    /// Convenience for tools and tests: the hosts of a body, each as a string.
    package static func hosts(ofBody body: String) -> [String] {
        let folded = TextView(caseInsensitive: true, normalized: true).fold(body)
        var output: [UInt8] = []
        folded.withUnsafeBufferPointer { hosts($0, into: &output) }
        guard !output.isEmpty else { return [] }
        return output.split(separator: CompiledRulesFormat.startMarker).map {
            String(decoding: $0.filter { $0 != CompiledRulesFormat.endMarker }, as: UTF8.self)
        }
    }

    // MARK: - Pieces

    /// Appends a URL's host as browsers read it: `%XX` that gives ASCII decoded, `。` and `｡` as
    /// dots, up to the first character that is neither a label character nor a dot, without one
    /// dot at its end; nothing when that leaves it empty.
    static func addURLHost(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, to output: inout [UInt8]) {
        let mark = output.count
        if !output.isEmpty { output += [CompiledRulesFormat.endMarker, CompiledRulesFormat.startMarker] }
        let start = output.count
        var index = range.lowerBound
        while index < range.upperBound {
            var (value, length) = RegexMatcher.decode(text, index)
            if value == 0x25, index + 2 < range.upperBound, let high = Hex.value(text[index + 1]),
                let low = Hex.value(text[index + 2]), high < 8
            {
                value = UInt32(high << 4 | low)
                if value &- 0x41 < 26 { value |= 0x20 }
                length = 3
            } else if value == 0x3002 || value == 0xFF61 {
                value = 0x2E
            }
            guard value == 0x2E || isLabelCharacter(value) else { break }
            appendUTF8(value, to: &output)
            index += length
        }
        if output.count > start, output[output.count - 1] == UInt8(ascii: ".") { output.removeLast() }
        if output.count == start { output.removeLast(output.count - mark) }
    }

    static func isSchemeStart(_ value: UInt32) -> Bool { (value | 0x20) &- 0x61 < 26 }

    static func isSchemeCharacter(_ value: UInt32) -> Bool {
        isSchemeStart(value) || value &- 0x30 < 10 || value == 0x2B || value == 0x2D || value == 0x2E
    }

    /// Where a link's text ends: white space, `<`, `>`, `"`, `'` or the end.
    static func isLinkEnd(_ value: UInt32) -> Bool {
        value == 0x3C || value == 0x3E || value == 0x22 || value == 0x27 || RegexProgram.isSpace(value)
    }

    /// A letter or digit of a label: ASCII letters, digits and `-`, or another letter or digit.
    static func isLabelCharacter(_ value: UInt32) -> Bool {
        if value < 0x80 { return isSchemeStart(value) || value &- 0x30 < 10 || value == 0x2D }
        return RegexProgram.isWord(value) || RegexProgram.isDigit(value)
    }

    static func isLetter(_ value: UInt32) -> Bool {
        value < 0x80 ? isSchemeStart(value) : RegexProgram.isWord(value) && !RegexProgram.isDigit(value)
    }

    /// The authority of a URL whose scheme starts at `start`, or nil when no `://` follows the scheme.
    static func url(_ text: UnsafeBufferPointer<UInt8>, at start: Int) -> Range<Int>? {
        var index = start
        while index < text.count, text[index] < 0x80, isSchemeCharacter(UInt32(text[index])) { index += 1 }
        guard index + 3 <= text.count, text[index] == UInt8(ascii: ":"), text[index + 1] == UInt8(ascii: "/"),
            text[index + 2] == UInt8(ascii: "/")
        else { return nil }
        let authorityStart = index + 3
        var end = authorityStart
        while end < text.count {
            let (value, length) = RegexMatcher.decode(text, end)
            if value == 0x2F || value == 0x3F || value == 0x23 || value == 0x5C || isLinkEnd(value) { break }
            end += length
        }
        return authorityStart..<end
    }

    /// The host of an authority: after its last `@`, up to its first `:`, or inside `[…]`.
    static func host(_ text: UnsafeBufferPointer<UInt8>, _ authority: Range<Int>) -> Range<Int> {
        var start = authority.lowerBound
        for index in authority where text[index] == UInt8(ascii: "@") { start = index + 1 }
        if start < authority.upperBound, text[start] == UInt8(ascii: "[") {
            let close = (start..<authority.upperBound).first { text[$0] == UInt8(ascii: "]") }
            return (start + 1)..<(close ?? authority.upperBound)
        }
        let colon = (start..<authority.upperBound).first { text[$0] == UInt8(ascii: ":") }
        return start..<(colon ?? authority.upperBound)
    }

    /// The index after a link's last byte.
    static func endOfLink(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < text.count {
            let (value, length) = RegexMatcher.decode(text, index)
            if isLinkEnd(value) { break }
            index += length
        }
        return index
    }

    /// The run of label characters and dots from `start`, without dots at its ends, and where
    /// the whole run (dots included) ends.
    static func domainRun(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> (Range<Int>, Int) {
        var index = start
        while index < text.count {
            let (value, length) = RegexMatcher.decode(text, index)
            guard isLabelCharacter(value) || value == 0x2E else { break }
            index += length
        }
        var end = index
        while end > start, text[end - 1] == UInt8(ascii: ".") { end -= 1 }
        return (start..<end, index)
    }

    /// Whether a run is a domain: two labels or more, each of 1–63 label characters, not
    /// starting or ending with `-`, the last of at least two letters.
    static func isDomain(_ text: UnsafeBufferPointer<UInt8>, _ run: Range<Int>) -> Bool {
        var labels = 0
        var length = 0
        var letters = true
        var first: UInt32 = 0
        var last: UInt32 = 0
        var index = run.lowerBound
        func endLabel() -> Bool {
            defer {
                labels += 1
                length = 0
                letters = true
            }
            return length >= 1 && length <= 63 && first != 0x2D && last != 0x2D
        }
        while index < run.upperBound {
            let (value, size) = RegexMatcher.decode(text, index)
            index += size
            if value == 0x2E {
                guard endLabel() else { return false }
                continue
            }
            if length == 0 { first = value }
            last = value
            length += 1
            letters = letters && isLetter(value)
        }
        let topLevelIsLetters = letters && length >= 2
        return endLabel() && labels >= 2 && topLevelIsLetters
    }

    static func lastScalar(_ text: UnsafeBufferPointer<UInt8>, before end: Int) -> (UInt32, Int) {
        var start = end - 1
        while start > 0, text[start] & 0xC0 == 0x80 { start -= 1 }
        return RegexMatcher.decode(text, start)
    }
}
