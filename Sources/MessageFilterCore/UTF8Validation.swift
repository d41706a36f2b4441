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

/// `isValidUTF8` for bytes in memory: ASCII is passed over 8 bytes at a time, since the classifier
/// checks every message it is handed and most are ASCII; the rest goes to the parser.
package func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var index = 0
    if let base = bytes.baseAddress {
        let raw = UnsafeRawPointer(base)
        while index + 8 <= bytes.count,
            raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        {
            index += 8
        }
    }
    // Everything before `index` is ASCII, so it starts a scalar.
    return isValidUTF8(bytes[index...])
}
