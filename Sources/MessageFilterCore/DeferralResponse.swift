/// What a deferral server answers, as the extension reads it from the response body the system
/// hands back: a JSON object such as `{"action": "junk"}` or
/// `{"action": "transaction", "subAction": "transactionalFinance"}`.
///
/// - `action` is required: `allow`, `junk` (or `filter`), `promotion`, `transaction` or `none`.
/// - `subAction` is optional: one of IdentityLookup's sub-actions of that action
///   (`promotionalOffers`, `transactionalFinance`, …).
/// - Other members are ignored; anything else is refused with a reason, and the message then
///   gets `none`.
///
/// The reader is a strict JSON parser of its own, not Foundation's, because the extension
/// process has a few MiB of memory and Foundation alone costs most of it (docs/MESSAGE-FILTER.md,
/// memory). It accepts RFC 8259 JSON of at most 64 KiB and 32 levels of nesting.

public struct DeferralResponse: Sendable, Equatable {
    public var action: MessageAction
    public var subAction: String?

    public init(action: MessageAction, subAction: String? = nil) {
        self.action = action
        self.subAction = subAction
    }

    public static let subActions: [MessageAction: [String]] = [
        .transaction: [
            "transactionalOthers", "transactionalFinance", "transactionalOrders", "transactionalReminders",
            "transactionalHealth", "transactionalWeather", "transactionalCarrier", "transactionalRewards",
            "transactionalPublicServices",
        ],
        .promotion: ["promotionalOthers", "promotionalOffers", "promotionalCoupons"],
    ]

    public static let maximumBytes = 64 * 1024

    /// Reads a response body.
    ///
    /// - Throws: `invalidResponse` with a sentence saying what is wrong and at which byte.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(MessageFilterError) -> DeferralResponse {
        if bytes.count > maximumBytes {
            throw MessageFilterError(
                .invalidResponse,
                "The server's response has \(bytes.count) bytes; at most \(maximumBytes) are read."
            )
        }
        var parser = JSONScanner(bytes)
        var action: String?
        var subAction: String?
        try parser.skipSpace()
        try parser.expect(UInt8(ascii: "{"), "the response is not a JSON object")
        try parser.skipSpace()
        if parser.peek() == UInt8(ascii: "}") {
            parser.index += 1
        } else {
            while true {
                try parser.skipSpace()
                let key = try parser.string()
                try parser.skipSpace()
                try parser.expect(UInt8(ascii: ":"), "a member name is not followed by ':'")
                try parser.skipSpace()
                switch key {
                case "action": action = try parser.string()
                case "subAction": subAction = try parser.string()
                default: try parser.skipValue(depth: 1)
                }
                try parser.skipSpace()
                if parser.peek() == UInt8(ascii: ",") {
                    parser.index += 1
                    continue
                }
                try parser.expect(UInt8(ascii: "}"), "members are not separated by ',' or closed by '}'")
                break
            }
        }
        try parser.skipSpace()
        guard parser.index == bytes.count else { throw parser.error("bytes follow the JSON object") }
        guard let action else {
            throw MessageFilterError(.invalidResponse, "The server's response has no \"action\" member.")
        }
        guard let value = MessageAction(name: action) else {
            throw MessageFilterError(
                .invalidResponse,
                "The server's response has the action \"\(action)\"; expected allow, junk, promotion, transaction or none."
            )
        }
        if let subAction {
            guard let allowed = subActions[value], allowed.contains(subAction) else {
                throw MessageFilterError(
                    .invalidResponse,
                    "The server's response has the subAction \"\(subAction)\", which is not a sub-action of \(value)."
                )
            }
        }
        return DeferralResponse(action: value, subAction: subAction)
    }
}

/// RFC 8259 JSON, checked strictly before a reader that is lenient about the parts it skips
/// (Foundation's `JSONDecoder` takes trailing commas, invalid escapes and control characters in
/// members it does not decode, and the first of duplicate members).
public enum StrictJSON {
    /// Checks that `bytes` are one JSON value, nested at most `maximumDepth` levels below the top,
    /// whose objects have no duplicate member names, whose strings are valid UTF-8 with no lone
    /// surrogate.
    ///
    /// - Parameters:
    ///   - bytes: the JSON text, UTF-8.
    ///   - subject: what the bytes are, to start the error's sentence ("The request body").
    ///   - maximumDepth: the most levels of nesting below the top value.
    /// - Throws: `invalidResponse` with a sentence saying what is wrong and at which byte.
    public static func check(_ bytes: UnsafeRawBufferPointer, subject: String, maximumDepth: Int = 32)
        throws(MessageFilterError)
    {
        var scanner = JSONScanner(bytes, subject: subject, maximumDepth: maximumDepth, uniqueNames: true)
        try scanner.skipSpace()
        try scanner.skipValue(depth: 0)
        try scanner.skipSpace()
        guard scanner.index == bytes.count else { throw scanner.error("bytes follow the JSON value") }
    }
}

/// A cursor over JSON text for `DeferralResponse` and `StrictJSON`.
struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    var index = 0
    let subject: String
    let maximumDepth: Int
    /// Whether an object's repeated member name is refused.
    let uniqueNames: Bool

    init(
        _ bytes: UnsafeRawBufferPointer,
        subject: String = "The server's response",
        maximumDepth: Int = 32,
        uniqueNames: Bool = false
    ) {
        self.bytes = bytes
        self.subject = subject
        self.maximumDepth = maximumDepth
        self.uniqueNames = uniqueNames
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    func error(_ what: String) -> MessageFilterError {
        MessageFilterError(.invalidResponse, "\(subject) is not valid JSON: \(what) (byte \(index + 1)).")
    }

    mutating func skipSpace() throws(MessageFilterError) {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(MessageFilterError) {
        guard peek() == byte else { throw error(what) }
        index += 1
    }

    mutating func string() throws(MessageFilterError) -> String {
        try expect(UInt8(ascii: "\""), "a string was expected")
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ end: Int) throws(MessageFilterError) {
            let run = bytes[run..<end]
            guard isValidUTF8(run) else { throw error("a string is not valid UTF-8") }
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
        }
        while true {
            guard let byte = peek() else { throw error("a string is never closed") }
            switch byte {
            case UInt8(ascii: "\""):
                try flush(index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush(index)
                index += 1
                guard let escape = peek() else { throw error("a string ends in a backslash") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var value = try hex4()
                    if (0xD800..<0xDC00).contains(value) {
                        guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count,
                            bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            throw error("a high surrogate is not followed by a low one")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error("a high surrogate is not followed by a low one")
                        }
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw error("a \\u escape is a lone surrogate") }
                    scalars.append(scalar)
                default:
                    throw error("a string has an unknown escape")
                }
                run = index
            case 0..<0x20:
                throw error("a string holds a control character")
            default:
                index += 1
            }
        }
    }

    private mutating func hex4() throws(MessageFilterError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("a \\u escape is cut short") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape has a character that is not hexadecimal")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func skipValue(depth: Int) throws(MessageFilterError) {
        guard depth <= maximumDepth else { throw error("values nest more than \(maximumDepth) levels") }
        guard let byte = peek() else { throw error("a value was expected") }
        switch byte {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            try skipSpace()
            if peek() == close {
                index += 1
                return
            }
            // Scalars, not String: Swift's == takes canonically equivalent names as equal.
            var names: Set<[Unicode.Scalar]> = []
            while true {
                try skipSpace()
                if close == UInt8(ascii: "}") {
                    let start = index
                    let name = try string()
                    if uniqueNames, !names.insert(Array(name.unicodeScalars)).inserted {
                        index = start
                        throw error("the member \"\(name)\" appears twice in one object")
                    }
                    try skipSpace()
                    try expect(UInt8(ascii: ":"), "a member name is not followed by ':'")
                    try skipSpace()
                }
                try skipValue(depth: depth + 1)
                try skipSpace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(close, "a container is not closed")
                return
            }
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number()
        }
    }

    private mutating func literal(_ word: StaticString) throws(MessageFilterError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            UnsafeRawBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[index..<(index + count)])
        else { throw error("a value is not valid") }
        index += count
    }

    private mutating func number() throws(MessageFilterError) {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index - from
        }
        let integer = digits()
        guard integer > 0, !(integer > 1 && bytes[index - integer] == UInt8(ascii: "0")) else {
            index = start
            throw error("a value is not valid")
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("a number has no digits after its point") }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw error("a number has no digits in its exponent") }
        }
    }
}
