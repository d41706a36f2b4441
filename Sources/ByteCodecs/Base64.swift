/// Base64 (RFC 4648 §4, with padding), the one codec of the package. Decoding is strict: no white
/// space, no line breaks, no URL alphabet, padding required, and the unused bits of the last
/// character must be zero, so every byte string has exactly one text and a signature cannot be
/// re-encoded into a second valid file.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// `bytes` as base64 with padding.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
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

    /// The bytes `text` encodes, or `nil` if it is not canonical padded base64.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
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
}
