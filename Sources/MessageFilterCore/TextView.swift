/// Which form of a message's text a rule matches: its bytes as sent, or folded.
///
/// Folding happens once per message and view, never per rule, so that every rule of a view reads
/// the same bytes:
/// - `caseInsensitive` lowercases (Unicode's full lowercase mapping, and `ſ` to `s` as case
///   folding does).
/// - `normalized` puts the text in Unicode NFC, turns the fullwidth forms U+FF01–U+FF5E into
///   ASCII, and drops the invisible format characters that evade keyword filters: soft hyphen,
///   zero-width spaces and joiners, bidirectional marks (U+200E, U+200F, and U+061C, the Arabic
///   letter mark), embeddings, overrides and isolates (U+202E, the right-to-left override, among them), word joiners and the byte-order mark.
///
/// A rule's value is folded by the same code when rules are compiled, so a rule and the text it
/// is compared with always agree.
public struct TextView: Hashable, Sendable, CustomStringConvertible {
    public let caseInsensitive: Bool
    public let normalized: Bool

    public init(caseInsensitive: Bool, normalized: Bool) {
        self.caseInsensitive = caseInsensitive
        self.normalized = normalized
    }

    /// 0…3, the view's slot in the compiled file.
    public var index: Int { (caseInsensitive ? 1 : 0) | (normalized ? 2 : 0) }

    public init(index: Int) {
        self.init(caseInsensitive: index & 1 != 0, normalized: index & 2 != 0)
    }

    public static let all: [TextView] = (0..<4).map(TextView.init(index:))

    public var description: String {
        switch (caseInsensitive, normalized) {
        case (false, false): "exact"
        case (true, false): "case-insensitive"
        case (false, true): "normalized"
        case (true, true): "case-insensitive, normalized"
        }
    }

    /// Writes the view of `text` (valid UTF-8) to `output`, which is emptied first.
    ///
    /// - Complexity: O(n). ASCII text is folded byte by byte with no allocation; other text
    ///   allocates a few strings once per message.
    public func fold(_ text: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        var ascii = true
        for byte in text where byte >= 0x80 {
            ascii = false
            break
        }
        if ascii {
            if caseInsensitive {
                for byte in text { output.append(asciiLowercase(byte)) }
            } else {
                output.append(contentsOf: text)
            }
            return
        }
        var string = String(decoding: text, as: UTF8.self)
        if caseInsensitive {
            string = string.lowercased()
        }
        if normalized {
            // NFC first, so that composed and decomposed forms of a letter give the same bytes.
            string = String(decoding: Array(string._nfcCodeUnits), as: UTF8.self)
        }
        for scalar in string.unicodeScalars {
            var value = scalar.value
            if normalized {
                if Self.isInvisibleFormat(value) { continue }
                if (0xFF01...0xFF5E).contains(value) { value -= 0xFEE0 }
            }
            if caseInsensitive {
                if value == 0x17F { value = 0x73 }  // ſ folds to s
                if value < 0x80 { value = UInt32(asciiLowercase(UInt8(value))) }
            }
            appendUTF8(Unicode.Scalar(value)!, to: &output)
        }
    }

    /// Convenience for compiling and tests: the view of `text` as bytes.
    public func fold(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        var copy = text
        copy.withUTF8 { fold($0, into: &output) }
        return output
    }

    static func isInvisibleFormat(_ value: UInt32) -> Bool {
        switch value {
        case 0xAD, 0x61C, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }
}

@inline(__always)
package func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte &- 0x41 < 26 ? byte | 0x20 : byte
}

func appendUTF8(_ scalar: Unicode.Scalar, to output: inout [UInt8]) {
    let value = scalar.value
    switch value {
    case 0..<0x80:
        output.append(UInt8(value))
    case 0x80..<0x800:
        output.append(UInt8(0xC0 | (value >> 6)))
        output.append(UInt8(0x80 | (value & 0x3F)))
    case 0x800..<0x10000:
        output.append(UInt8(0xE0 | (value >> 12)))
        output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
        output.append(UInt8(0x80 | (value & 0x3F)))
    default:
        output.append(UInt8(0xF0 | (value >> 18)))
        output.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
        output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
        output.append(UInt8(0x80 | (value & 0x3F)))
    }
}
