/// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or truncated sequences),
/// without making a string. The standard library's forward parser checks it, which every OS an
/// extension runs on has; `String(validating:as:)` would say the same, but it needs iOS 18.
package func isValidUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    while true {
        switch parser.parseScalar(from: &iterator) {
        case .valid: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}

/// `isValidUTF8` for bytes in memory, as the classifier checks every message it is handed: ASCII
/// is passed over 8 bytes at a time, and each other scalar is checked by its lead byte's ranges
/// (RFC 3629's table: no overlong form, no surrogate, nothing past U+10FFFF) rather than through
/// the standard library's parser, which took a sixth of the classifier's time on Korean text.
/// `UTF8ValidationTests` holds it to `String(validating:as:)`.
package func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let raw = UnsafeRawPointer(base)
    let count = bytes.count
    var index = 0
    while index < count {
        while index + 8 <= count, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        {
            index += 8
        }
        guard index < count else { return true }
        let lead = base[index]
        if lead < 0x80 {
            index += 1
        } else if lead < 0xC2 {
            return false
        } else if lead < 0xE0 {
            guard index + 1 < count, base[index + 1] & 0xC0 == 0x80 else { return false }
            index += 2
        } else if lead < 0xF5 {
            // Three bytes or four. The second byte's range: E0 needs A0…BF and F0 90…BF (no
            // overlong form), ED 80…9F (no surrogate), F4 80…8F (nothing past U+10FFFF).
            let length = lead < 0xF0 ? 3 : 4
            guard index + length <= count else { return false }
            let second = base[index + 1]
            let (low, high): (UInt8, UInt8) =
                switch lead {
                case 0xE0: (0xA0, 0xBF)
                case 0xED: (0x80, 0x9F)
                case 0xF0: (0x90, 0xBF)
                case 0xF4: (0x80, 0x8F)
                default: (0x80, 0xBF)
                }
            guard second >= low, second <= high, base[index + 2] & 0xC0 == 0x80,
                length == 3 || base[index + 3] & 0xC0 == 0x80
            else { return false }
            index += length
        } else {
            return false
        }
    }
    return true
}
