internal import ByteCodecs

/// Writing JSON text: the one string escaper (RFC 8259 §7) of every JSON writer here (the
/// manifest, canonical metadata, `--json` output). A quotation mark, a backslash and each control
/// character below U+0020 are escaped (`\"`, `\\`, `\u00XX`); everything else is written as its
/// UTF-8, so the output is valid JSON and reads back byte for byte.
package enum JSONText {
    /// Appends `text` as a JSON string literal, quotes included.
    package static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(Hex.digit(byte >> 4))
                out.append(Hex.digit(byte))
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `text` as a JSON string literal, quotes included.
    package static func string(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
