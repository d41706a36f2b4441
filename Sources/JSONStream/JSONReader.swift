internal import ByteCodecs

/// A strict, streaming JSON reader (RFC 8259): it hands over one token at a time from a fixed
/// buffer, so a document of any size costs the buffer, the nesting stack and the longest string.
///
/// Stricter than most readers, on purpose, because it reads files people send:
/// - a key given twice in one object is refused, naming the key (most readers keep the last);
/// - nesting deeper than `maximumDepth` is refused as too deep (not as "not valid JSON");
/// - strings must be valid UTF-8 without raw control characters; `\u` escapes must pair their
///   surrogates; numbers follow the grammar exactly (no `NaN`, `Infinity`, `+1`, `01`, `1.`);
/// - nothing but white space may follow the value. A UTF-8 byte-order mark at the start is
///   skipped.
///
/// ```swift
/// let reader = JSONReader(bytes: Array(#"{"a": [1, "x"]}"#.utf8))
/// while let token = try reader.next() { … }   // .objectStart, .key ("a"), .arrayStart, .number, …
/// ```
///
/// - Complexity: O(n) in the document's bytes; memory is the read buffer, one string buffer of at
///   most `maximumStringBytes`, and the keys of the open objects (at most `maximumKeys` each).
package final class JSONReader {
    /// One token of the document.
    package enum Token: Equatable, Sendable {
        case objectStart, objectEnd, arrayStart, arrayEnd
        /// An object's key; its bytes are `text`.
        case key
        /// A string value; its bytes (unescaped UTF-8) are `text`.
        case string
        /// A number; its bytes as written are `text`.
        case number
        case bool(Bool)
        case null
    }

    /// How deep arrays and objects may nest.
    package let maximumDepth: Int
    /// The longest string or number, in bytes after unescaping.
    package let maximumStringBytes: Int
    /// The most keys one object may have.
    package let maximumKeys: Int

    /// The bytes of the last key, string or number; valid until the next call.
    package private(set) var text: [UInt8] = []
    /// The last key, string or number as a `String`.
    package var string: String { String(decoding: text, as: UTF8.self) }
    /// The offset in the document where the last token starts.
    package private(set) var tokenOffset: Int64 = 0
    /// How deep the reader is: 0 outside any array or object.
    package var depth: Int { containers.count }

    private let refill: (UnsafeMutableRawBufferPointer) throws(JSONError) -> Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var position = 0
    private var count = 0
    private var ended = false
    /// The offset of `buffer[0]` in the document.
    private var bufferOffset: Int64 = 0
    private var line = 1
    private var lineStart: Int64 = 0

    private enum Container { case object, array }
    private var containers: [Container] = []
    /// The keys seen in each open object.
    private var keys: [[[UInt8]]] = []
    private enum Expect { case value, firstKeyOrEnd, key, colon, firstValueOrEnd, commaOrEnd, done }
    private var expect = Expect.value
    private var started = false

    /// Reads a document that `refill` hands over piece by piece: it fills the buffer it is given
    /// and returns how many bytes it wrote, 0 at the end.
    package init(
        bufferBytes: Int = 32 * 1024,
        maximumDepth: Int = 64,
        maximumStringBytes: Int = 64 * 1024,
        maximumKeys: Int = 1_024,
        refill: @escaping (UnsafeMutableRawBufferPointer) throws(JSONError) -> Int
    ) {
        self.maximumDepth = maximumDepth
        self.maximumStringBytes = maximumStringBytes
        self.maximumKeys = maximumKeys
        self.refill = refill
        buffer = .allocate(byteCount: max(bufferBytes, 16), alignment: 8)
    }

    /// Reads a document held in memory.
    package convenience init(
        bytes: [UInt8],
        maximumDepth: Int = 64,
        maximumStringBytes: Int = 64 * 1024,
        maximumKeys: Int = 1_024
    ) {
        var offset = 0
        self.init(
            bufferBytes: min(max(bytes.count, 16), 32 * 1024),
            maximumDepth: maximumDepth,
            maximumStringBytes: maximumStringBytes,
            maximumKeys: maximumKeys
        ) { (into: UnsafeMutableRawBufferPointer) throws(JSONError) -> Int in
            let n = min(into.count, bytes.count - offset)
            if n > 0 {
                bytes.withUnsafeBytes {
                    into.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)]))
                }
            }
            offset += n
            return n
        }
    }

    deinit { buffer.deallocate() }

    /// The next token; `nil` once the value has ended and only white space followed it.
    ///
    /// - Throws: `JSONError` naming the line, column and byte offset of the first problem.
    package func next() throws(JSONError) -> Token? {
        if !started {
            started = true
            try skipByteOrderMark()
        }
        while true {
            try skipWhiteSpace()
            tokenOffset = offset
            guard let byte = try peek() else {
                guard expect == .done else {
                    throw error(
                        .syntax,
                        containers.isEmpty && expect == .value
                            ? "the document is empty" : "the document ends before its \(openDescription) is closed"
                    )
                }
                return nil
            }
            switch expect {
            case .done:
                throw error(.syntax, "\(describe(byte)) follows the end of the value; a document holds one value")
            case .colon:
                guard byte == UInt8(ascii: ":") else {
                    throw error(.syntax, "expected ':' after the key, found \(describe(byte))")
                }
                position += 1
                expect = .value
                continue
            case .commaOrEnd:
                if byte == UInt8(ascii: ",") {
                    position += 1
                    expect = containers.last == .object ? .key : .value
                    continue
                }
                return try close(byte)
            case .firstKeyOrEnd, .key:
                if byte == UInt8(ascii: "}") && expect == .firstKeyOrEnd { return try close(byte) }
                guard byte == UInt8(ascii: "\"") else {
                    throw error(
                        .syntax,
                        "expected \(expect == .firstKeyOrEnd ? "a key or '}'" : "a key") in the object, found \(describe(byte))"
                    )
                }
                try readString()
                try remember()
                expect = .colon
                return .key
            case .firstValueOrEnd, .value:
                if byte == UInt8(ascii: "]") && expect == .firstValueOrEnd { return try close(byte) }
                return try value(byte)
            }
        }
    }

    /// Skips the value that starts with the next token (a whole array or object), or the token
    /// just read if it opened one: call it right after `.objectStart` or `.arrayStart` to skip the
    /// rest of that container, or instead of `next()` to skip a value.
    package func skipValue(openedBy token: Token? = nil) throws(JSONError) {
        var level = 0
        if let token {
            guard token == .objectStart || token == .arrayStart else { return }
            level = 1
        }
        repeat {
            guard let token = try next() else { return }
            switch token {
            case .objectStart, .arrayStart: level += 1
            case .objectEnd, .arrayEnd: level -= 1
            default: break
            }
        } while level > 0
    }

    /// An error at the start of the last token.
    package func error(_ kind: JSONError.Kind, _ message: String) -> JSONError {
        error(kind, message, at: tokenOffset)
    }

    // MARK: - Tokens

    private var offset: Int64 { bufferOffset + Int64(position) }

    private var openDescription: String {
        containers.last == .object ? "object" : containers.last == .array ? "array" : "value"
    }

    private func error(_ kind: JSONError.Kind, _ message: String, at offset: Int64) -> JSONError {
        // The column counts bytes from the start of the line; an error in a line already left
        // behind (a string with a raw newline is refused before that) cannot happen.
        let column = offset >= lineStart ? offset - lineStart + 1 : 1
        return JSONError(kind: kind, offset: offset, line: line, column: Int(column), message: message)
    }

    private func value(_ byte: UInt8) throws(JSONError) -> Token {
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard containers.count < maximumDepth else {
                throw error(.tooDeep, "the document nests arrays and objects more than \(maximumDepth) deep")
            }
            position += 1
            if byte == UInt8(ascii: "{") {
                containers.append(.object)
                keys.append([])
                expect = .firstKeyOrEnd
                return .objectStart
            }
            containers.append(.array)
            expect = .firstValueOrEnd
            return .arrayStart
        case UInt8(ascii: "\""):
            try readString()
            valueEnded()
            return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try readNumber()
            valueEnded()
            return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let word: [UInt8] =
                byte == UInt8(ascii: "t")
                ? Array("true".utf8) : byte == UInt8(ascii: "f") ? Array("false".utf8) : Array("null".utf8)
            for expected in word {
                guard let next = try peek(), next == expected else {
                    // Another word (`not json`, `nope`) is unquoted text, not a misspelt `null`.
                    if let next = try peek(), isIdentifierByte(next) {
                        throw error(
                            .syntax,
                            "expected a value, found a word (NaN, Infinity and unquoted text are not JSON)"
                        )
                    }
                    throw error(.syntax, "expected \(String(decoding: word, as: UTF8.self))")
                }
                position += 1
            }
            if let next = try peek(), isIdentifierByte(next) {
                throw error(.syntax, "expected \(String(decoding: word, as: UTF8.self)), found more letters after it")
            }
            valueEnded()
            return byte == UInt8(ascii: "n") ? .null : .bool(byte == UInt8(ascii: "t"))
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            throw error(.syntax, "expected a value, found \(describe(byte))")
        default:
            if isIdentifierByte(byte) {
                throw error(.syntax, "expected a value, found a word (NaN, Infinity and unquoted text are not JSON)")
            }
            throw error(.syntax, "expected a value, found \(describe(byte))")
        }
    }

    private func close(_ byte: UInt8) throws(JSONError) -> Token {
        let isObject = containers.last == .object
        guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
            throw error(
                .syntax,
                "expected ',' or '\(isObject ? "}" : "]")' in the \(isObject ? "object" : "array"), found \(describe(byte))"
            )
        }
        position += 1
        containers.removeLast()
        if isObject { keys.removeLast() }
        valueEnded()
        return isObject ? .objectEnd : .arrayEnd
    }

    private func valueEnded() {
        expect = containers.isEmpty ? .done : .commaOrEnd
    }

    /// Records the key just read in its object, refusing one given before.
    private func remember() throws(JSONError) {
        let index = keys.count - 1
        if keys[index].contains(text) {
            throw error(.duplicateKey, "the key \"\(JSONError.printable(text))\" appears twice in one object")
        }
        guard keys[index].count < maximumKeys else {
            throw error(.limit, "an object has more than \(maximumKeys) keys")
        }
        keys[index].append(text)
    }

    // MARK: - Bytes

    private func peek() throws(JSONError) -> UInt8? {
        if position == count {
            guard try fill() else { return nil }
        }
        return buffer[position]
    }

    private func fill() throws(JSONError) -> Bool {
        if ended { return false }
        bufferOffset += Int64(count)
        position = 0
        count = 0
        while count == 0 {
            let n = try refill(buffer)
            if n == 0 {
                ended = true
                return false
            }
            count = n
        }
        return true
    }

    private func skipByteOrderMark() throws(JSONError) {
        guard try peek() == 0xEF else { return }
        for expected: UInt8 in [0xEF, 0xBB, 0xBF] {
            guard try peek() == expected else {
                throw error(.syntax, "the document starts with a broken byte-order mark", at: offset)
            }
            position += 1
        }
    }

    private func skipWhiteSpace() throws(JSONError) {
        while let byte = try peek() {
            switch byte {
            case 32, 9, 13: position += 1
            case 10:
                position += 1
                line += 1
                lineStart = offset
            default: return
            }
        }
    }

    private func readString() throws(JSONError) {
        position += 1  // the opening quote
        text.removeAll(keepingCapacity: true)
        while true {
            guard let byte = try peek() else { throw error(.syntax, "the string starting here is never closed") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return
            case UInt8(ascii: "\\"):
                try readEscape()
            case 0..<0x20:
                throw error(
                    .syntax,
                    "the string holds the raw control character U+\(hex(UInt32(byte), 4)) (write it as \\u\(hex(UInt32(byte), 4)))",
                    at: offset - 1
                )
            case 0x80...:
                try readMultibyte(byte)
            default:
                try append(byte)
            }
        }
    }

    private func append(_ byte: UInt8) throws(JSONError) {
        guard text.count < maximumStringBytes else {
            throw error(.limit, "the string or number starting here is longer than \(maximumStringBytes) bytes")
        }
        text.append(byte)
    }

    /// A UTF-8 sequence whose lead byte was just read; checked as Unicode defines UTF-8.
    private func readMultibyte(_ lead: UInt8) throws(JSONError) {
        let at = offset - 1
        guard let (length, second) = UTF8Sequence.shape(lead: lead) else {
            throw error(.syntax, "the string holds byte 0x\(hex(UInt32(lead), 2)), which is not UTF-8", at: at)
        }
        try append(lead)
        for index in 1..<length {
            guard let byte = try peek(), (index == 1 ? second : 0x80...0xBF).contains(byte) else {
                throw error(.syntax, "the string holds a broken UTF-8 sequence", at: at)
            }
            position += 1
            try append(byte)
        }
    }

    private func readEscape() throws(JSONError) {
        let at = offset - 1
        guard let byte = try peek() else { throw error(.syntax, "the string starting here is never closed") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): try append(byte)
        case UInt8(ascii: "b"): try append(8)
        case UInt8(ascii: "f"): try append(12)
        case UInt8(ascii: "n"): try append(10)
        case UInt8(ascii: "r"): try append(13)
        case UInt8(ascii: "t"): try append(9)
        case UInt8(ascii: "u"):
            var scalar = try readHex4(at: at)
            if (0xD800...0xDBFF).contains(scalar) {
                guard try peek() == UInt8(ascii: "\\") else {
                    throw error(
                        .syntax,
                        "the escape \\u\(hex(scalar, 4)) starts a surrogate pair that is not completed",
                        at: at
                    )
                }
                position += 1
                guard try peek() == UInt8(ascii: "u") else {
                    throw error(
                        .syntax,
                        "the escape \\u\(hex(scalar, 4)) starts a surrogate pair that is not completed",
                        at: at
                    )
                }
                position += 1
                let low = try readHex4(at: at)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error(
                        .syntax,
                        "the escape \\u\(hex(scalar, 4)) is followed by \\u\(hex(low, 4)), not a low surrogate",
                        at: at
                    )
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error(.syntax, "the escape \\u\(hex(scalar, 4)) is a lone low surrogate", at: at)
            }
            for byte in Array(String(Character(Unicode.Scalar(scalar)!)).utf8) { try append(byte) }
        default:
            throw error(
                .syntax,
                "\\\(describe(byte, quoted: false)) is not an escape; JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
                at: at
            )
        }
    }

    private func readHex4(at: Int64) throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = try peek() else { throw error(.syntax, "the string starting here is never closed") }
            guard let digit = Hex.value(byte) else { throw error(.syntax, "\\u needs four hex digits", at: at) }
            position += 1
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A number as RFC 8259 §6 writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private func readNumber() throws(JSONError) {
        text.removeAll(keepingCapacity: true)
        func digits(_ what: String) throws(JSONError) {
            guard let first = try peek(), (48...57).contains(first) else {
                throw error(.syntax, "the number needs a digit \(what)")
            }
            while let byte = try peek(), (48...57).contains(byte) {
                try append(byte)
                position += 1
            }
        }
        if try peek() == UInt8(ascii: "-") {
            try append(UInt8(ascii: "-"))
            position += 1
        }
        if try peek() == UInt8(ascii: "0") {
            try append(UInt8(ascii: "0"))
            position += 1
            if let byte = try peek(), (48...57).contains(byte) { throw error(.syntax, "the number has a leading zero") }
        } else {
            try digits(text.isEmpty ? "" : "after '-'")
        }
        if try peek() == UInt8(ascii: ".") {
            try append(UInt8(ascii: "."))
            position += 1
            try digits("after '.'")
        }
        if let byte = try peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            try append(byte)
            position += 1
            if let sign = try peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                try append(sign)
                position += 1
            }
            try digits("in its exponent")
        }
        if let byte = try peek(), isIdentifierByte(byte) || byte == UInt8(ascii: ".") {
            throw error(.syntax, "the number is followed by \(describe(byte))")
        }
    }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == UInt8(ascii: "_")
            || byte >= 0x80
    }

    private func describe(_ byte: UInt8, quoted: Bool = true) -> String {
        if (33..<127).contains(byte) {
            return quoted ? "'\(Character(Unicode.Scalar(byte)))'" : String(Unicode.Scalar(byte))
        }
        return "byte 0x\(hex(UInt32(byte), 2))"
    }
}

private func hex(_ value: UInt32, _ width: Int) -> String { Hex.padded(UInt64(value), width: width, uppercase: true) }

/// Why a document was refused, and where.
package struct JSONError: Error, Sendable, Equatable {
    /// What kind of problem it is.
    package enum Kind: Sendable, Equatable {
        /// Not JSON.
        case syntax
        /// Nested deeper than the reader allows.
        case tooDeep
        /// A key given twice in one object.
        case duplicateKey
        /// A string, an object or the document is larger than allowed.
        case limit
        /// Reading the bytes failed.
        case io
    }

    package var kind: Kind
    /// Where the problem is, in bytes from the start of the document.
    package var offset: Int64
    /// The line (from 1) and column (in bytes, from 1) of `offset`.
    package var line: Int
    package var column: Int
    /// What is wrong, as a clause without the file's name.
    package var message: String

    package init(kind: Kind, offset: Int64, line: Int, column: Int, message: String) {
        self.kind = kind
        self.offset = offset
        self.line = line
        self.column = column
        self.message = message
    }

    /// Where and what, as "line 3, column 7: …".
    package var description: String { "line \(line), column \(column): \(message)" }

    /// `bytes` with non-printable bytes as `?`, at most 40 characters.
    package static func printable(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(120), as: UTF8.self)
        var result = ""
        for scalar in text.unicodeScalars.prefix(40) {
            result.unicodeScalars.append(scalar.value < 0x20 || scalar == "\"" ? "?" : scalar)
        }
        return text.unicodeScalars.count > 40 ? result + "…" : result
    }
}

/// UTF-8 as Unicode defines it: no overlong forms, no surrogates, nothing past U+10FFFF.
package enum UTF8Sequence {
    /// For a lead byte, the sequence's length and the range its second byte must fall in (the
    /// bytes after it are 0x80–0xBF); `nil` for a byte that cannot start a multi-byte sequence.
    @inlinable
    package static func shape(lead: UInt8) -> (length: Int, second: ClosedRange<UInt8>)? {
        switch lead {
        case 0xC2...0xDF: return (2, 0x80...0xBF)
        case 0xE0: return (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: return (3, 0x80...0xBF)
        case 0xED: return (3, 0x80...0x9F)
        case 0xF0: return (4, 0x90...0xBF)
        case 0xF1...0xF3: return (4, 0x80...0xBF)
        case 0xF4: return (4, 0x80...0x8F)
        default: return nil
        }
    }

    /// The well-formed sequence starting at `offset` of `bytes`: its scalar and length, or `nil`
    /// if none starts there (a stray continuation byte, an overlong form, a cut sequence).
    @inlinable
    package static func decode<Bytes: RandomAccessCollection>(_ bytes: Bytes, at offset: Int) -> (
        scalar: UInt32, length: Int
    )?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        let lead = bytes[offset]
        if lead < 0x80 { return (UInt32(lead), 1) }
        guard let (length, second) = shape(lead: lead), offset + length <= bytes.endIndex,
            second.contains(bytes[offset + 1])
        else { return nil }
        var scalar = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for index in 1..<length {
            let byte = bytes[offset + index]
            guard byte & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(byte & 0x3F)
        }
        return (scalar, length)
    }
}
