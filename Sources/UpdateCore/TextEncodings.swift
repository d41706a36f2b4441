internal import ByteCodecs

/// Base64 (RFC 4648 §4, with padding) and lowercase hex, the two ways publication metadata writes
/// bytes into JSON: ByteCodecs' `Base64` and `Hex`, the package's one codec of each, under the
/// names an app calls. Decoding is strict: no white space, no line breaks, no URL alphabet, padding
/// required, and the unused bits of the last character must be zero, so every byte string has
/// exactly one text and a signature cannot be re-encoded into a second valid file.
package enum TextEncodings {
    /// `bytes` as base64 with padding.
    package static func base64(_ bytes: some Collection<UInt8>) -> String { Base64.encode(bytes) }

    /// The bytes `text` encodes in base64, or `nil` if it is not canonical padded base64.
    package static func base64Decode(_ text: some Collection<UInt8>) -> [UInt8]? { Base64.decode(text) }

    /// `bytes` as lowercase hex.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(bytes) }

    /// The bytes of lowercase hex `text`, or `nil` if it is not lowercase hex of even length.
    package static func hexDecode(_ text: some Collection<UInt8>) -> [UInt8]? { Hex.decode(text) }
}

extension TextEncodings {
    /// Seconds since 1970 as people read them, in UTC: `2026-11-26 08:53 UTC` (days to a civil
    /// date by Howard Hinnant's algorithm: no calendar library, no time zone database). Any value
    /// is written, however far from now: a signed file's expiry of -2⁶³ once trapped here.
    package static func utcTime(_ seconds: Int64) -> String {
        // Floor division and its remainder, neither of which can overflow.
        let remainder = seconds % 86_400
        let days = seconds / 86_400 - (remainder < 0 ? 1 : 0)
        let secondOfDay = remainder < 0 ? remainder + 86_400 : remainder
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
package func siblingFile(of path: String, named name: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return name }
    return String(path[...slash]) + name
}
