/// Which form of a message's text a rule matches: its bytes as sent, or folded.
///
/// Folding happens once per message and view, never per rule, so that every rule of a view reads
/// the same bytes:
/// - `caseInsensitive` folds each scalar as a regex ignoring case compares it
///   (`RegexProgram.fold`: the simple lowercase mapping, so `İ` (U+0130) is `i`; and `ſ` is `s`),
///   after normalization and without composing again.
/// - `normalized` puts the text in Unicode NFC, turns the fullwidth forms U+FF01–U+FF5E into
///   ASCII, and drops the invisible characters that evade keyword filters: every scalar with the
///   Default_Ignorable_Code_Point property (`isInvisibleFormat`).
///
/// - `confusables` (normalized views only) reads the UTS #39 skeleton of the normalized text
///   (`Skeleton`), so that `сlaim` with a Cyrillic `с`, `𝐜𝐥𝐚𝐢𝐦` and `claim` give the same bytes;
///   ignoring case, the skeleton of the text with its ASCII capitals lowercased, folded, and its
///   skeleton taken again, so that `CLAIM`, `СLAIM` (a Cyrillic `С`) and `ВАNК` (Cyrillic `В`,
///   `А`, `К`) match `claim` and `bank` too.
///
/// A rule's value is folded by the same code when rules are compiled, so a rule and the text it
/// is compared with always agree.

package struct TextView: Hashable, Sendable, CustomStringConvertible {
    package let caseInsensitive: Bool
    package let normalized: Bool
    /// Through confusables: the skeleton of the normalized text. Only a normalized view has it.
    package let confusables: Bool

    package init(caseInsensitive: Bool, normalized: Bool, confusables: Bool = false) {
        precondition(normalized || !confusables, "only a normalized view reads confusables")
        self.caseInsensitive = caseInsensitive
        self.normalized = normalized
        self.confusables = confusables
    }

    /// 0…7, the view's slot: bit 0 ignoring case, bit 1 normalized, bit 2 confusables (a
    /// compiled rule's flags byte holds the same bits).
    package var index: Int { (caseInsensitive ? 1 : 0) | (normalized ? 2 : 0) | (confusables ? 4 : 0) }

    /// The view of a slot, or nil for a slot with no view (confusables without normalization).
    package init?(index: Int) {
        guard (0..<8).contains(index), index & 4 == 0 || index & 2 != 0 else { return nil }
        self.init(caseInsensitive: index & 1 != 0, normalized: index & 2 != 0, confusables: index & 4 != 0)
    }

    /// Every view: six.
    package static let all: [TextView] = (0..<8).compactMap(TextView.init(index:))

    package var description: String {
        let base =
            switch (caseInsensitive, normalized) {
            case (false, false): "exact"
            case (true, false): "case-insensitive"
            case (false, true): "normalized"
            case (true, true): "case-insensitive, normalized"
            }
        return confusables ? base + ", confusables" : base
    }

    /// Writes the view of `text` (valid UTF-8) to `output`, which is emptied first.
    ///
    /// - Complexity: O(n). ASCII text is folded byte by byte with no allocation; other text
    ///   allocates a few strings once per message.
    package func fold(_ text: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        if confusables {
            foldConfusables(text, into: &output)
            return
        }
        var ascii = true
        for byte in text where byte >= 0x80 {
            ascii = false
            break
        }
        if ascii || (!caseInsensitive && !normalized) {
            if caseInsensitive {
                for byte in text { output.append(asciiLowercase(byte)) }
            } else {
                output.append(contentsOf: text)
            }
            return
        }
        // First, in the normalized view, the invisible characters dropped and fullwidth ASCII
        // made ASCII, before NFC, so that neither keeps a letter from its combining mark; then
        // NFC; then, ignoring case, each scalar folded (`RegexProgram.fold`), after NFC and
        // without composing again, so that this view is the one a regex ignoring case reads:
        // `T` and U+0308 give `t` and U+0308, never `ẗ`, and `t` matches them both ways.
        guard normalized else {
            Self.appendFolded(text, to: &output)
            return
        }
        // Runs of scalars that stay as they are go over in bulk; only an invisible character
        // (dropped) or a fullwidth form (made ASCII) ends one.
        var mayChangeInNFC = false
        var index = 0
        var kept = 0
        while index < text.count {
            if text[index] < 0x80 {
                index += 1
                continue
            }
            let (value, length) = RegexMatcher.decode(text, index)
            let fullwidth = (0xFF01...0xFF5E).contains(value)
            if fullwidth || Self.isInvisibleFormat(value) {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: text[kept..<index]))
                if fullwidth { output.append(UInt8(value - 0xFEE0)) }
                index += length
                kept = index
                continue
            }
            mayChangeInNFC = mayChangeInNFC || !Self.isStableInNFC(value)
            index += length
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: text[kept..<text.count]))
        if mayChangeInNFC {
            // NFC, so that composed and decomposed forms of a letter give the same bytes. A run
            // of combining marks keeps its first 30 (Unicode's stream-safe limit, UAX #15),
            // counted on the NFC text so that equivalent texts agree; before NFC a run is cut at
            // 60, since reordering a run costs the square of its length.
            Self.capMarkRuns(&output, at: 2 * Self.maximumNonStarters)
            let string = String(decoding: output, as: UTF8.self)
            output.removeAll(keepingCapacity: true)
            output.append(contentsOf: string._nfcCodeUnits)
            Self.capMarkRuns(&output, at: Self.maximumNonStarters)
        }
        guard caseInsensitive else { return }
        let normalizedText = output
        output.removeAll(keepingCapacity: true)
        normalizedText.withUnsafeBufferPointer { Self.appendFolded($0, to: &output) }
    }

    /// The skeleton of the normalized text. Ignoring case: ASCII capitals lowercased, skeleton,
    /// fold, skeleton.
    /// - The skeleton comes before the full fold, so that capitals of other scripts become the
    ///   Latin capitals they look like (`В` is `B`), which then fold (`b`); their own lowercase
    ///   forms often look like no Latin letter (`в` is `ʙ`).
    /// - ASCII capitals are lowercased first, since the skeleton maps `I` to `l`: `CLAIM` would
    ///   be `clalm`. So ignoring case, `I` is `i` and never `l` (`cIaim` passes; a case-sensitive
    ///   rule catches it).
    /// - The last skeleton maps what the fold made (`M` folds to `m`, whose skeleton is `rn`).
    ///
    /// - Complexity: O(n) but for long runs of combining marks; allocates a few arrays once
    ///   per message. ASCII text changes too (`0` is `O`, `m` is `rn`).
    private func foldConfusables(_ text: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var work: [UInt8] = []
        TextView(caseInsensitive: false, normalized: true).fold(text, into: &work)
        var scalars: [UInt32] = []
        var mapped: [UInt32] = []
        scalars.reserveCapacity(work.count)
        mapped.reserveCapacity(work.count)
        guard caseInsensitive else {
            work.withUnsafeBufferPointer { Skeleton.append($0, to: &output, scalars: &scalars, mapped: &mapped) }
            return
        }
        for index in work.indices { work[index] = asciiLowercase(work[index]) }
        work.withUnsafeBufferPointer { Skeleton.append($0, to: &output, scalars: &scalars, mapped: &mapped) }
        work.removeAll(keepingCapacity: true)
        output.withUnsafeBufferPointer { Self.appendFolded($0, to: &work) }
        output.removeAll(keepingCapacity: true)
        work.withUnsafeBufferPointer { Skeleton.append($0, to: &output, scalars: &scalars, mapped: &mapped) }
    }

    /// What the normalized view makes of `text` (valid UTF-8) without writing it: `.changed` if
    /// it is not the text itself (a fullwidth form, an invisible character, or a scalar NFC may
    /// change); else `.plain` if every scalar but ASCII capitals folds to itself too (Hangul,
    /// Han, lowercase accented Latin), so that an automaton whose byte classes fold ASCII reads
    /// the text as it is in every view but the confusables; else `.unchanged`.
    package static func normalizedForm(of text: UnsafeBufferPointer<UInt8>) -> NormalizedForm {
        guard let base = text.baseAddress else { return .plain }
        let raw = UnsafeRawPointer(base)
        var form = NormalizedForm.plain
        var index = 0
        while index < text.count {
            let lead = text[index]
            if lead < 0x80 {
                // ASCII is its own form; a run of it is passed 8 bytes at a time.
                index += 1
                while index + 8 <= text.count,
                    raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                continue
            }
            // A Hangul syllable (U+AC00…U+D7A3: EA B0 80 to ED 9E A3) is stable and caseless;
            // known by its first two bytes, without decoding (the text is valid UTF-8).
            if lead >= 0xEA && lead <= 0xED {
                let second = text[index + 1]
                if lead == 0xEB || lead == 0xEC || (lead == 0xEA && second >= 0xB0) || (lead == 0xED && second < 0x9E) {
                    index += 3
                    continue
                }
            }
            let (value, length) = RegexMatcher.decode(text, index)
            if (0xFF01...0xFF5E).contains(value) || !isStableInNFC(value) || isInvisibleFormat(value) {
                return .changed
            }
            if form == .plain && !isCaseless(value) && RegexProgram.fold(value) != value { form = .unchanged }
            index += length
        }
        return form
    }

    /// `normalizedForm(of:)`'s answer.
    package enum NormalizedForm { case changed, unchanged, plain }

    /// Writes `normalized`, the normalized view of a text, folded as the view ignoring case
    /// folds it (each scalar, `RegexProgram.fold`): what `fold(_:into:)` of the normalized view
    /// ignoring case writes, from the normalized text the classifier made already.
    package static func fold(caseOf normalized: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        appendFolded(normalized, to: &output)
    }

    /// Appends `text` (valid UTF-8), each scalar folded (`RegexProgram.fold`), with no lookup for
    /// scalars that have no case.
    private static func appendFolded(_ text: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        // The text in bulk, each folded scalar written over its place: a fold that keeps the
        // length in UTF-8 (ASCII capitals, `É`, Cyrillic and Greek capitals) is the usual case;
        // one that does not (`İ` to `i`, the Kelvin sign to `k`) takes the scalar-by-scalar way.
        let start = output.count
        output.append(contentsOf: text)
        let inPlace = output.withUnsafeMutableBufferPointer { out in
            var index = 0
            while index < text.count {
                let byte = text[index]
                if byte < 0x80 {
                    out[start + index] = asciiLowercase(byte)
                    index += 1
                    continue
                }
                let (value, length) = RegexMatcher.decode(text, index)
                if !isCaseless(value) {
                    let folded = RegexProgram.fold(value)
                    if folded != value {
                        guard utf8Length(folded) == length else { return false }
                        writeUTF8(folded, to: out, at: start + index)
                    }
                }
                index += length
            }
            return true
        }
        guard !inPlace else { return }
        output.removeLast(output.count - start)
        var index = 0
        while index < text.count {
            let (value, length) = RegexMatcher.decode(text, index)
            index += length
            appendUTF8(isCaseless(value) ? value : RegexProgram.fold(value), to: &output)
        }
    }

    @inline(__always)
    private static func utf8Length(_ value: UInt32) -> Int {
        value < 0x80 ? 1 : value < 0x800 ? 2 : value < 0x10000 ? 3 : 4
    }

    /// Writes `value`'s UTF-8 at `at`, over bytes of the same length.
    @inline(__always)
    private static func writeUTF8(_ value: UInt32, to out: UnsafeMutableBufferPointer<UInt8>, at: Int) {
        let (bytes, count) = utf8Encoded(value)
        withUnsafeBytes(of: bytes) { for offset in 0..<count { out[at + offset] = $0[offset] } }
    }

    /// Scalars that folding leaves alone, looked up by range rather than by property: combining
    /// diacritical marks, Hangul jamo and syllables, general punctuation and currency signs,
    /// arrows and technical signs, box drawing, shapes, symbols and dingbats, CJK symbols, kana and
    /// compatibility jamo, the CJK ideographs, and the emoji (`NormalizationTests` holds each to
    /// `RegexProgram.fold`).
    @inline(__always)
    package static func isCaseless(_ value: UInt32) -> Bool {
        if value < 0x1100 { return (0x300...0x344).contains(value) || (0x346...0x36F).contains(value) }
        if value < 0xAC00 {
            return value <= 0x11FF || (0x2000...0x20FF).contains(value) || (0x2190...0x23FF).contains(value)
                || (0x2500...0x2BFF).contains(value) || (0x3000...0x33FF).contains(value)
                || (0x4E00...0x9FFF).contains(value)
        }
        return value <= 0xD7A3 || (0x1F300...0x1FAFF).contains(value)
    }

    /// Scalars that NFC leaves alone wherever they stand (quick check Yes, combining class 0, and
    /// second in no composition): a text of only these is already in NFC. Below U+0300, Greek
    /// and Cyrillic letters, general punctuation and currency signs (`€`), arrows, mathematical
    /// and technical signs, enclosed forms, box drawing, shapes, symbols and dingbats (`☎`), CJK
    /// punctuation, kana, Hangul compatibility jamo (`ㅎ`), Han, Hangul syllables, fullwidth
    /// ASCII and the emoji. `NormalizationTests.stableScalarsAreStableInNFC` holds each range to
    /// Python's `unicodedata`.
    @inline(__always)
    package static func isStableInNFC(_ value: UInt32) -> Bool {
        if value < 0x300 { return true }
        if value < 0x2000 {
            return (0x388...0x3FF).contains(value) || (0x400...0x482).contains(value) || (0x48A...0x52F).contains(value)
        }
        if value < 0xAC00 {
            return (0x2010...0x20CF).contains(value) || (0x2190...0x2328).contains(value)
                || (0x232B...0x2ADB).contains(value) || (0x3000...0x3029).contains(value)
                || (0x3030...0x3098).contains(value) || (0x309B...0x33FF).contains(value)
                || (0x4E00...0x9FFF).contains(value)
        }
        return value <= 0xD7A3 || (0xFF01...0xFF5E).contains(value) || (0x1F000...0x1FAFF).contains(value)
    }

    /// The ranges `isStableInNFC` takes, for its test.
    package static let stableInNFCRanges: [ClosedRange<UInt32>] = [
        0x0...0x2FF, 0x388...0x3FF, 0x400...0x482, 0x48A...0x52F, 0x2010...0x20CF, 0x2190...0x2328,
        0x232B...0x2ADB, 0x3000...0x3029, 0x3030...0x3098, 0x309B...0x33FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3,
        0xFF01...0xFF5E, 0x1F000...0x1FAFF,
    ]

    /// Convenience for compiling and tests: the view of `text` as bytes.
    package func fold(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        var copy = text
        copy.withUTF8 { fold($0, into: &output) }
        return output
    }

    /// The most combining marks (scalars of a nonzero combining class) in a row that the
    /// normalized view keeps (UAX #15's stream-safe limit).
    static let maximumNonStarters = 30

    /// Drops, in place, each combining mark (a scalar of nonzero combining class) that follows
    /// `limit` others in a row.
    static func capMarkRuns(_ bytes: inout [UInt8], at limit: Int) {
        let count = bytes.count
        let kept = bytes.withUnsafeMutableBufferPointer { bytes in
            var read = 0
            var write = 0
            var run = 0
            while read < count {
                let (value, length) = RegexMatcher.decode(UnsafeBufferPointer(bytes), read)
                let combines =
                    !isStableInNFC(value) && Unicode.Scalar(value)!.properties.canonicalCombiningClass.rawValue != 0
                run = combines ? run + 1 : 0
                if run <= limit {
                    for offset in 0..<length { bytes[write + offset] = bytes[read + offset] }
                    write += length
                }
                read += length
            }
            return write
        }
        bytes.removeLast(count - kept)
    }

    /// The scalars the normalized view removes: those with Unicode 17.0's
    /// Default_Ignorable_Code_Point property (RemovedScalarsTests holds the ranges to the standard
    /// library's), invisible in text and used to split keywords: soft hyphens, zero-width
    /// characters, bidirectional controls, variation selectors, Hangul fillers, tags.
    package static func isInvisibleFormat(_ value: UInt32) -> Bool {
        switch value {
        case 0xAD, 0x34F, 0x61C, 0x115F...0x1160, 0x17B4...0x17B5, 0x180B...0x180F, 0x200B...0x200F,
            0x202A...0x202E, 0x2060...0x206F, 0x3164, 0xFE00...0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0...0xFFF8,
            0x1BCA0...0x1BCA3, 0x1D173...0x1D17A, 0xE0000...0xE0FFF:
            true
        default: false
        }
    }
}

@inline(__always)
package func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte &- 0x41 < 26 ? byte | 0x20 : byte
}

func appendUTF8(_ value: UInt32, to output: inout [UInt8]) {
    let (bytes, count) = utf8Encoded(value)
    withUnsafeBytes(of: bytes) { output.append(contentsOf: $0.prefix(count)) }
}

/// A scalar's UTF-8, the one encoder of the message filter: its bytes first in a tuple of four,
/// and how many there are.
@inline(__always)
package func utf8Encoded(_ value: UInt32) -> (bytes: (UInt8, UInt8, UInt8, UInt8), count: Int) {
    switch value {
    case 0..<0x80:
        return ((UInt8(value), 0, 0, 0), 1)
    case 0x80..<0x800:
        return ((UInt8(0xC0 | (value >> 6)), UInt8(0x80 | (value & 0x3F)), 0, 0), 2)
    case 0x800..<0x10000:
        return (
            (UInt8(0xE0 | (value >> 12)), UInt8(0x80 | ((value >> 6) & 0x3F)), UInt8(0x80 | (value & 0x3F)), 0), 3
        )
    default:
        return (
            (
                UInt8(0xF0 | (value >> 18)), UInt8(0x80 | ((value >> 12) & 0x3F)), UInt8(0x80 | ((value >> 6) & 0x3F)),
                UInt8(0x80 | (value & 0x3F))
            ), 4
        )
    }
}
