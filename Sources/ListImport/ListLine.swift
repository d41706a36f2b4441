import BlocklistCore
import JSONStream

/// How a list line is read: the number in its first CSV field, written in any common form, and
/// (for a labels file) the label in its second.
///
/// Numbers:
/// - `+33 1 62 12 34 56`, `+1 (800) 555-0100`: `+` then the country code;
/// - `0033162123456`: the international prefix `00` then the country code;
/// - `33162123456`: digits only, read as country code first;
/// - `01 62 12 34 56`: a national number (one leading 0), refused unless a default country is
///   given, whose code then replaces the 0;
/// - `(212) 555-0101`: a national number too (its area code in parentheses, as the US and Canada
///   write it; international forms never begin so), refused unless a default country is given,
///   whose code then comes first. Before issue 46 it was read as +212 (Morocco) without a word.
///
/// Spaces, `-`, `.`, `/` and parentheses between digits are ignored. The result has 7 to 15 digits
/// (E.164 allows 15) and does not start with 0.
package struct ListLine: Sendable {
    /// The shortest number accepted, in digits with its country code.
    package static let minimumDigits = 7
    /// The longest label accepted, in UTF-8 bytes.
    package static let maximumLabelBytes = 128

    /// The country code that national numbers get, such as 33; `nil` refuses them.
    package var defaultCountry: Int64?

    package init(defaultCountry: Int64? = nil) { self.defaultCountry = defaultCountry }

    /// What a line holds.
    package enum Content: Equatable, Sendable {
        /// A blank line or a `#` comment.
        case nothing
        /// A number, and the line's fields as a CSV record.
        case number(Int64, fields: Fields)
    }

    /// A line's fields as RFC 4180 reads a record: the first two fields' bytes (inside their quotes,
    /// if quoted) and how many fields there are.
    ///
    /// The separator is `,`, `;` or a tab: whichever comes first after the first field, and then
    /// only that one. A quoted field may hold separators and `""` for a quote; a line break inside
    /// quotes is refused (`ListLineError.openQuotedField`; the reader then takes the lines up to
    /// the closing quote as that one refused record: a label holds no control characters). Spaces
    /// around a field are not part of it. A quote inside an unquoted field is kept as it is, as
    /// Python's `csv` and spreadsheets read it.
    package struct Fields: Equatable, Sendable {
        /// The first field's bytes in the line.
        package var first: Range<Int>
        /// Whether the first field was quoted (its `""` stand for `"`).
        package var firstQuoted: Bool
        /// The second field's bytes in the line, if the record has one.
        package var second: Range<Int>?
        /// Whether the second field was quoted.
        package var secondQuoted: Bool
        /// How many fields the record has.
        package var count: Int
        /// The separator, if the record has more than one field.
        package var separator: UInt8?
    }

    /// Reads `line`; throws a sentence without the file and line, which the caller adds.
    package func parse(_ line: UnsafeRawBufferPointer) throws(ListLineError) -> Content {
        var start = 0
        while start < line.count, line[start] == 32 || line[start] == 9 { start += 1 }
        if start == line.count || line[start] == UInt8(ascii: "#") { return .nothing }
        let fields = try Self.fields(line)
        let first = UnsafeRawBufferPointer(rebasing: line[fields.first])
        guard !fields.firstQuoted || !first.contains(UInt8(ascii: "\"")) else {
            throw ListLineError("\"\(Self.text(first))\" is not a phone number: '\"' inside the quoted first field")
        }
        return .number(try number(first), fields: fields)
    }

    /// Splits `line` into CSV fields (see `Fields`).
    ///
    /// - Throws: a sentence for a quoted field with no closing quote, or one followed by anything
    ///   but a separator.
    package static func fields(_ line: UnsafeRawBufferPointer) throws(ListLineError) -> Fields {
        var separator: UInt8?
        var result = Fields(
            first: 0..<0,
            firstQuoted: false,
            second: nil,
            secondQuoted: false,
            count: 0,
            separator: nil
        )
        var i = 0
        let end = line.count
        func isSeparator(_ byte: UInt8) -> Bool {
            if let separator { return byte == separator }
            return byte == UInt8(ascii: ",") || byte == UInt8(ascii: ";") || byte == 9
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 32 || (byte == 9 && separator != 9) }
        while true {
            result.count += 1
            let number = result.count
            while i < end, line[i] == 32 { i += 1 }
            let range: Range<Int>
            let quoted = i < end && line[i] == UInt8(ascii: "\"")
            if quoted {
                let open = i
                i += 1
                while true {
                    guard let close = line[i..<end].firstIndex(of: UInt8(ascii: "\"")) else {
                        let field = "the quoted field \(number) (from column \(open + 1))"
                        var error = ListLineError(field + " has no closing quote")
                        error.openQuotedField = field
                        throw error
                    }
                    if close + 1 < end, line[close + 1] == UInt8(ascii: "\"") {
                        i = close + 2
                        continue
                    }
                    range = (open + 1)..<close
                    i = close + 1
                    break
                }
                while i < end, line[i] == 32 || (line[i] == 9 && separator != nil && separator != 9) { i += 1 }
                if i < end && !isSeparator(line[i]) {
                    throw ListLineError(
                        "the quoted field \(number) is followed by \(describe(line[i])) at column \(i + 1), not a separator"
                    )
                }
            } else {
                let fieldStart = i
                while i < end, !isSeparator(line[i]) { i += 1 }
                var fieldEnd = i
                while fieldEnd > fieldStart, isSpace(line[fieldEnd - 1]) { fieldEnd -= 1 }
                range = fieldStart..<fieldEnd
            }
            if number == 1 {
                result.first = range
                result.firstQuoted = quoted
            } else if number == 2 {
                result.second = range
                result.secondQuoted = quoted
            }
            guard i < end else { break }
            // At a separator.
            separator = line[i]
            result.separator = separator
            i += 1
        }
        return result
    }

    /// The number a field spells.
    package func number(_ field: UnsafeRawBufferPointer) throws(ListLineError) -> Int64 {
        var value: Int64 = 0
        var digits = 0
        var plus = false
        var leadingZeros = 0
        var seenDigit = false
        var skipTrunkZero = -1
        // A field whose first mark, spaces aside, is `(` writes its area code nationally.
        let areaCodeFirst = field.first(where: { $0 != 32 && $0 != 9 }) == UInt8(ascii: "(")
        for (offset, byte) in field.enumerated() {
            if offset == skipTrunkZero { continue }
            switch byte {
            case 48...57:
                if !seenDigit && !plus && byte == 48 && leadingZeros < 2 && digits == 0 {
                    leadingZeros += 1
                    continue
                }
                if !seenDigit && byte == 48 {
                    throw ListLineError(
                        "\"\(Self.text(field))\" starts its country code with 0; country codes start with 1-9"
                    )
                }
                seenDigit = true
                digits += 1
                guard digits <= BlockPattern.maximumDigits else {
                    throw ListLineError(
                        "\"\(Self.text(field))\" has more than \(BlockPattern.maximumDigits) digits; E.164 numbers have at most 15"
                    )
                }
                value = value * 10 + Int64(byte - 48)
            case UInt8(ascii: "(")
            where (plus || leadingZeros == 2) && seenDigit && offset + 2 < field.count && field[offset + 1] == 48
                && field[offset + 2] == UInt8(ascii: ")"):
                // "+33 (0) 1 62 12 34 56": the national trunk 0 that international form leaves
                // out, written in parentheses as Europe does; it is not part of the number.
                skipTrunkZero = offset + 1
                continue
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
                throw ListLineError(
                    "\"\(Self.text(field))\" is not a phone number: \(Self.describe(field, at: offset)) at column \(offset + 1)"
                )
            }
        }
        guard digits + leadingZeros > 0 else { throw ListLineError("the first field is empty") }
        // A national number: its trunk 0 stands for the country ("01 62 12 34 56"), or it has
        // none and the country comes before its area code ("(212) 555-0101").
        let areaCodeNationally = areaCodeFirst && leadingZeros == 0 && !plus
        if (leadingZeros == 1 && !plus) || areaCodeNationally {
            guard let country = defaultCountry else {
                throw ListLineError(
                    areaCodeNationally
                        ? "\"\(Self.text(field))\" is written nationally (its area code in parentheses) and has no country code; write it as +CC…, or give --default-country (1 for the US and Canada)"
                        : "\"\(Self.text(field))\" has no country code; write it as +CC…, or give --default-country"
                )
            }
            var scale: Int64 = 1
            for _ in 0..<digits { scale *= 10 }
            let countryDigits = String(country).count
            guard digits + countryDigits <= BlockPattern.maximumDigits else {
                throw ListLineError(
                    "\"\(Self.text(field))\" with country code \(country) has more than \(BlockPattern.maximumDigits) digits"
                )
            }
            value += country * scale
            digits += countryDigits
        } else if leadingZeros == 1 && plus {
            throw ListLineError("\"\(Self.text(field))\" has a 0 right after +; the country code comes first")
        }
        guard digits >= Self.minimumDigits else {
            throw ListLineError(
                "\"\(Self.text(field))\" has \(digits) digits; a number with its country code has at least \(Self.minimumDigits)"
            )
        }
        return value
    }

    /// Reads the label in `field` of `line` into `label` (replacing what it held, keeping its
    /// capacity, so that a file of labels allocates nothing per line): `""` read as `"` in a quoted
    /// field, whose spaces are kept, then checked as `validLabel` checks it.
    package static func label(
        _ line: UnsafeRawBufferPointer,
        _ field: Range<Int>,
        quoted: Bool,
        into label: inout [UInt8]
    ) throws(ListLineError) {
        label.removeAll(keepingCapacity: true)
        var i = field.lowerBound
        while i < field.upperBound {
            let byte = line[i]
            label.append(byte)
            i += quoted && byte == UInt8(ascii: "\"") ? 2 : 1
        }
        // A quoted field is taken as it is (RFC 4180); spaces around an unquoted one were dropped
        // when the record was split.
        try checkLabel(label)
    }

    /// Checks label bytes: UTF-8, not empty or blank, at most `maximumLabelBytes`, no control
    /// characters.
    package static func validLabel(_ bytes: [UInt8]) throws(ListLineError) -> [UInt8] {
        try checkLabel(bytes)
        return bytes
    }

    /// Checks label bytes: UTF-8, not empty, at most `maximumLabelBytes`, no control characters,
    /// and not blank: a label of spaces alone (a quoted `"   "`) would show a phone an empty
    /// caller name.
    static func checkLabel(_ bytes: [UInt8]) throws(ListLineError) {
        guard !bytes.isEmpty else { throw ListLineError("the label is empty") }
        guard bytes.count <= maximumLabelBytes else {
            throw ListLineError(
                "the label is \(bytes.count) bytes; labels are at most \(maximumLabelBytes) bytes of UTF-8"
            )
        }
        // UTF-8 as Unicode defines it (no overlong forms, surrogates or values past U+10FFFF),
        // checked on the bytes so that a label costs no String.
        var i = 0
        var visible = false
        while i < bytes.count {
            let lead = bytes[i]
            if lead < 0x80 {
                guard lead >= 0x20, lead != 0x7F else { throw controlCharacter(UInt32(lead)) }
                if lead != 0x20 { visible = true }
                i += 1
                continue
            }
            guard let (scalar, length) = UTF8Sequence.decode(bytes, at: i) else {
                throw ListLineError("the label is not valid UTF-8")
            }
            if (0x80...0x9F).contains(scalar) { throw controlCharacter(scalar) }
            if Self.isInvisible(scalar) {
                throw ListLineError(
                    "the label holds U+\(String(scalar, radix: 16, uppercase: true)), an invisible format or separator character that could disguise it"
                )
            }
            if !isSpace(scalar) { visible = true }
            i += length
        }
        guard visible else {
            throw ListLineError("the label is blank (only spaces); a caller name needs something to show")
        }
    }

    /// Unicode's space separators (Zs) past ASCII: no-break, ogham, en to hair, narrow no-break,
    /// medium mathematical and ideographic spaces.
    static func isSpace(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0xA0, 0x1680, 0x2000...0x200A, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// Format and separator characters (Unicode Cf, Zl, Zp, and the invisible fillers): bidi
    /// overrides and isolates, zero-width characters, line and paragraph separators. A caller-ID
    /// label holding one could show something else than it says.
    static func isInvisible(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0xAD, 0x61C, 0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x206F, 0xFEFF, 0xFFF9...0xFFFB, 0x115F,
            0x1160, 0x3164, 0xFFA0,
            0x1D173...0x1D17A, 0xE0000...0xE007F:
            return true
        default:
            return false
        }
    }

    private static func controlCharacter(_ value: UInt32) -> ListLineError {
        ListLineError("the label holds the control character U+\(String(value, radix: 16, uppercase: true))")
    }

    static func describe(_ byte: UInt8) -> String {
        (32..<127).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// The character that starts at `offset` of `bytes`, quoted, with its code point if it is not
    /// ASCII (`'１' (U+FF11)`), or the byte if no UTF-8 character starts there.
    static func describe(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> String {
        let byte = bytes[offset]
        guard byte >= 0x80 else { return describe(byte) }
        guard let scalar = UTF8Sequence.decode(bytes, at: offset).flatMap({ Unicode.Scalar($0.scalar) }) else {
            return describe(byte)
        }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return isShown(scalar) ? "'\(Character(scalar))' (\(code))" : code
    }

    /// The first 40 characters of `bytes` as they would show in a terminal: a character that
    /// would not show (controls, invisible formatting) as `\u{…}`, a byte that is not UTF-8 as
    /// `\x…`, and `"` escaped.
    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        var result = ""
        var offset = 0
        var characters = 0
        while offset < bytes.count, characters < 40 {
            characters += 1
            guard let (value, length) = UTF8Sequence.decode(bytes, at: offset), let scalar = Unicode.Scalar(value)
            else {
                result += "\\x" + String(bytes[offset], radix: 16, uppercase: true)
                offset += 1
                continue
            }
            offset += length
            if scalar == "\"" {
                result += "\\\""
            } else if isShown(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return offset < bytes.count ? result + "…" : result
    }

    private static func isShown(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: false
        default: true
        }
    }
}

/// Why a line was refused; the caller adds the file and line.
package struct ListLineError: Error, Sendable, Equatable {
    package var reason: String
    /// The line ends inside this quoted field ("the quoted field 2 (from column 14)"): as RFC
    /// 4180 reads it, the record goes on over the next lines (a field that holds a line break),
    /// which are then no records of their own.
    package var openQuotedField: String?
    package init(_ reason: String) { self.reason = reason }
}
