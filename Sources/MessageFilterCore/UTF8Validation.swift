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
