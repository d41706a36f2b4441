/// Hexadecimal, the one codec of the package: bytes as lowercase hex (digests, key ids) and back,
/// strictly; and numbers as fixed-width hex for names and sentences.
package enum Hex {
    private static let lower = Array("0123456789abcdef".utf8)
    private static let upper = Array("0123456789ABCDEF".utf8)

    /// The digit for `value` (0…15).
    @inline(__always)
    package static func digit(_ value: UInt8, uppercase: Bool = false) -> UInt8 {
        uppercase ? upper[Int(value & 15)] : lower[Int(value & 15)]
    }

    /// `bytes` as lowercase hex, two digits a byte.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(lower[Int(byte >> 4)])
            out.append(lower[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of lowercase hex `text`, or `nil` if it is not lowercase hex of even length.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return out
    }

    /// `value` in hex, zero-padded to at least `width` digits: `padded(0x1F, width: 4)` is `001f`.
    package static func padded(_ value: UInt64, width: Int, uppercase: Bool = false) -> String {
        let digits = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Whether `byte` is a hex digit, in either case (RFC 3986's HEXDIG).
    @inline(__always)
    package static func isDigit(_ byte: UInt8) -> Bool { value(byte) != nil }

    /// The value of the hex digit `byte`, in either case, or `nil`.
    @inline(__always)
    package static func value(_ byte: UInt8) -> UInt8? {
        if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { return byte - UInt8(ascii: "0") }
        let lower = byte | 0x20
        return lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "f") ? lower - UInt8(ascii: "a") + 10 : nil
    }
}
