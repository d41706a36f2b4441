import BlocklistCore

/// How a list line is read: the number in its first CSV field, written in any common form, and
/// (for a labels file) the label in its second.
///
/// Numbers:
/// - `+33 1 62 12 34 56`, `+1 (800) 555-0100`: `+` then the country code;
/// - `0033162123456`: the international prefix `00` then the country code;
/// - `33162123456`: digits only, read as country code first;
/// - `01 62 12 34 56`: a national number (one leading 0), refused unless a default country is
///   given, whose code then replaces the 0.
///
/// Spaces, `-`, `.`, `/` and parentheses between digits are ignored. The result has 7 to 15 digits
/// (E.164 allows 15) and does not start with 0.
public struct ListLine: Sendable {
    /// The shortest number accepted, in digits with its country code.
    public static let minimumDigits = 7
    /// The longest label accepted, in UTF-8 bytes.
    public static let maximumLabelBytes = 128

    /// The country code that national numbers get, such as 33; `nil` refuses them.
    public var defaultCountry: Int64?

    public init(defaultCountry: Int64? = nil) { self.defaultCountry = defaultCountry }

    /// What a line holds.
    public enum Content: Equatable, Sendable {
        /// A blank line or a `#` comment.
        case nothing
        /// A number and, if the line has a second field, its bytes' range in the line.
        case number(Int64, second: Range<Int>?)
    }

    /// Reads `line`; throws a sentence without the file and line, which the caller adds.
    public func parse(_ line: UnsafeRawBufferPointer) throws(ListLineError) -> Content {
        var start = 0
        var end = line.count
        while start < end, line[start] == 32 || line[start] == 9 { start += 1 }
        while end > start, line[end - 1] == 32 || line[end - 1] == 9 { end -= 1 }
        if start == end || line[start] == UInt8(ascii: "#") { return .nothing }
        // The first field: up to a comma, semicolon or tab outside quotes.
        var fieldStart = start
        var fieldEnd = start
        var second: Range<Int>?
        if line[start] == UInt8(ascii: "\"") {
            fieldStart = start + 1
            guard let close = line[fieldStart..<end].firstIndex(of: UInt8(ascii: "\"")) else {
                throw ListLineError("the quoted first field has no closing quote")
            }
            fieldEnd = close
            var after = close + 1
            while after < end, line[after] == 32 { after += 1 }
            if after < end {
                guard line[after] == UInt8(ascii: ",") || line[after] == UInt8(ascii: ";") || line[after] == 9 else {
                    throw ListLineError("the quoted first field is followed by \(Self.describe(line[after])), not a separator")
                }
                second = (after + 1)..<end
            }
        } else {
            while fieldEnd < end, line[fieldEnd] != UInt8(ascii: ","), line[fieldEnd] != UInt8(ascii: ";"), line[fieldEnd] != 9 { fieldEnd += 1 }
            if fieldEnd < end { second = (fieldEnd + 1)..<end }
        }
        return .number(try number(UnsafeRawBufferPointer(rebasing: line[fieldStart..<fieldEnd])), second: second)
    }

    /// The number a field spells.
    public func number(_ field: UnsafeRawBufferPointer) throws(ListLineError) -> Int64 {
        var value: Int64 = 0
        var digits = 0
        var plus = false
        var leadingZeros = 0
        var seenDigit = false
        for (offset, byte) in field.enumerated() {
            switch byte {
            case 48...57:
                if !seenDigit && !plus && byte == 48 && leadingZeros < 2 && digits == 0 {
                    leadingZeros += 1
                    continue
                }
                if !seenDigit && byte == 48 {
                    throw ListLineError("\"\(Self.text(field))\" starts its country code with 0; country codes start with 1-9")
                }
                seenDigit = true
                digits += 1
                guard digits <= BlockPattern.maximumDigits else {
                    throw ListLineError("\"\(Self.text(field))\" has more than \(BlockPattern.maximumDigits) digits; E.164 numbers have at most 15")
                }
                value = value * 10 + Int64(byte - 48)
            case UInt8(ascii: "+"):
                guard !plus, !seenDigit, leadingZeros == 0 else {
                    throw ListLineError("\"\(Self.text(field))\" has a + after its first digit")
                }
                plus = true
            case 32, 9, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "("), UInt8(ascii: ")"):
                continue
            case 0:
                throw ListLineError("it holds a NUL byte at column \(offset + 1)")
            default:
                throw ListLineError("\"\(Self.text(field))\" is not a phone number: \(Self.describe(byte)) at column \(offset + 1)")
            }
        }
        guard digits + leadingZeros > 0 else { throw ListLineError("the first field is empty") }
        if leadingZeros == 1 && !plus {
            // A national number: its trunk 0 stands for the country.
            guard let country = defaultCountry else {
                throw ListLineError("\"\(Self.text(field))\" has no country code; write it as +CC…, or give --default-country")
            }
            var scale: Int64 = 1
            for _ in 0..<digits { scale *= 10 }
            let countryDigits = String(country).count
            guard digits + countryDigits <= BlockPattern.maximumDigits else {
                throw ListLineError("\"\(Self.text(field))\" with country code \(country) has more than \(BlockPattern.maximumDigits) digits")
            }
            value += country * scale
            digits += countryDigits
        } else if leadingZeros == 1 && plus {
            throw ListLineError("\"\(Self.text(field))\" has a 0 right after +; the country code comes first")
        }
        guard digits >= Self.minimumDigits else {
            throw ListLineError("\"\(Self.text(field))\" has \(digits) digits; a number with its country code has at least \(Self.minimumDigits)")
        }
        return value
    }

    /// Checks a label field: trimmed, unquoted, UTF-8, not empty, at most `maximumLabelBytes`, no
    /// control characters.
    ///
    /// - Returns: the label's bytes.
    public static func label(_ field: UnsafeRawBufferPointer) throws(ListLineError) -> [UInt8] {
        var start = 0
        var end = field.count
        while start < end, field[start] == 32 || field[start] == 9 { start += 1 }
        while end > start, field[end - 1] == 32 || field[end - 1] == 9 { end -= 1 }
        if end - start >= 2, field[start] == UInt8(ascii: "\""), field[end - 1] == UInt8(ascii: "\"") {
            start += 1
            end -= 1
        }
        let bytes = Array(field[start..<end])
        return try validLabel(bytes)
    }

    /// Checks label bytes: UTF-8, not empty, at most `maximumLabelBytes`, no control characters.
    public static func validLabel(_ bytes: [UInt8]) throws(ListLineError) -> [UInt8] {
        guard !bytes.isEmpty else { throw ListLineError("the label is empty") }
        guard bytes.count <= maximumLabelBytes else {
            throw ListLineError("the label is \(bytes.count) bytes; labels are at most \(maximumLabelBytes) bytes of UTF-8")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.elementsEqual(bytes) else { throw ListLineError("the label is not valid UTF-8") }
        for scalar in text.unicodeScalars where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            throw ListLineError("the label holds the control character U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
        return bytes
    }

    static func describe(_ byte: UInt8) -> String {
        (32..<127).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        var result = ""
        for byte in bytes.prefix(40) { result += (32..<127).contains(byte) && byte != 34 ? String(Unicode.Scalar(byte)) : "?" }
        return bytes.count > 40 ? result + "…" : result
    }
}

/// Why a line was refused; the caller adds the file and line.
public struct ListLineError: Error, Sendable, Equatable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}
