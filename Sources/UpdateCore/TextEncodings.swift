/// Base64 (RFC 4648 §4, with padding) and lowercase hex, the two ways publication metadata writes
/// bytes into JSON. Decoding is strict: no white space, no line breaks, no URL alphabet, padding
/// required, and the unused bits of the last character must be zero, so every byte string has
/// exactly one text and a signature cannot be re-encoded into a second valid file.
public enum TextEncodings {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// `bytes` as base64 with padding.
    public static func base64(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = iterator.next()
            let word = UInt32(a) << 16 | UInt32(b ?? 0) << 8 | UInt32(c ?? 0)
            out.append(alphabet[Int(word >> 18 & 63)])
            out.append(alphabet[Int(word >> 12 & 63)])
            out.append(b == nil ? UInt8(ascii: "=") : alphabet[Int(word >> 6 & 63)])
            out.append(c == nil ? UInt8(ascii: "=") : alphabet[Int(word & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes in base64, or `nil` if it is not canonical padded base64.
    public static func base64Decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let chars = Array(text)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            let last = index + 4 == chars.count
            var word: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = chars[index + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only at the end of the last group, and only in its last two places.
                    guard last, offset >= 2 else { return nil }
                    padding += 1
                    word <<= 6
                    continue
                }
                guard padding == 0 else { return nil }
                let value = values[Int(character)]
                guard value != 0xFF else { return nil }
                word = word << 6 | UInt32(value)
            }
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: word >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: word)) }
            // Canonical: the bits the padding leaves unused must be zero.
            if padding == 1 && word & 0xFF != 0 { return nil }
            if padding == 2 && word & 0xFFFF != 0 { return nil }
            index += 4
        }
        return out
    }

    /// `bytes` as lowercase hex.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of lowercase hex `text`, or `nil` if it is not lowercase hex of even length.
    public static func hexDecode(_ text: some Collection<UInt8>) -> [UInt8]? {
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
}

extension TextEncodings {
    /// Seconds since 1970 as people read them, in UTC: `2026-11-26 08:53 UTC` (days to a civil
    /// date by Howard Hinnant's algorithm: no calendar library, no time zone database).
    public static func utcTime(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)) UTC"
    }
}

/// The file `name` in the directory that holds `path` (`.` for a bare file name): where the push
/// key sits beside the trust root, the root and the generation record beside the signing key.
public func siblingFile(of path: String, named name: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return name }
    return String(path[...slash]) + name
}
