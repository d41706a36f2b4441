/// A number pattern in E.164 form with `#` for any digit, such as `+8270########`.
///
/// The digits are those of a `CXCallDirectoryPhoneNumber`: country code first, no `+`. A pattern's
/// candidates are the numbers its `#` positions can spell; ordered numerically, the candidate with
/// wildcard digits `w` has rank `w` read as a decimal number.

package struct BlockPattern: Hashable, Sendable, CustomStringConvertible {
    /// The most digits a pattern may have: E.164 allows 15, and 15 always fit in an `Int64`.
    package static let maximumDigits = 15

    /// Each position's digit in four bits (0–9, or 15 for `#`), the first in the lowest four, and
    /// the length in the top four: a pattern is one word inline, so twenty thousand patterns cost
    /// 160 KB and no allocation each.
    private let packed: UInt64

    /// How many digits the pattern's numbers have.
    package var length: Int { Int(packed >> 60) }

    /// Each position's fixed digit 0–9, or -1 for `#`.
    package var digits: [Int8] { (0..<length).map(digit(at:)) }

    /// Position `index`'s fixed digit 0–9, or -1 for `#`.
    package func digit(at index: Int) -> Int8 {
        let nibble = Int8(truncatingIfNeeded: (packed >> (UInt64(index) * 4)) & 0xF)
        return nibble == 15 ? -1 : nibble
    }

    /// Parses `text`: an optional `+`, then 1–15 characters that are digits or `#`, the first a
    /// digit 1–9 (a country code never starts with 0, and a leading 0 would vanish from the number).
    ///
    /// - Throws: `BlocklistError` with code `.invalidSpec` naming the offending character.
    package init(parsing text: String) throws(BlocklistError) {
        var body = Substring(text)
        if body.first == "+" { body = body.dropFirst() }
        guard !body.isEmpty else {
            throw BlocklistError(
                .invalidSpec,
                "Pattern \"\(text)\" is empty; write it as + then digits, with # for any digit, e.g. +8270########."
            )
        }
        var digits: [Int8] = []
        for (offset, character) in body.enumerated() {
            if character == "#" {
                digits.append(-1)
            } else if let ascii = character.asciiValue, ascii >= 48, ascii <= 57 {
                digits.append(Int8(ascii - 48))
            } else {
                throw BlocklistError(
                    .invalidSpec,
                    "Pattern \"\(text)\" has \"\(character)\" at character \(offset + 1 + text.count - body.count); only digits 0-9 and # (any digit) are allowed after the +."
                )
            }
        }
        guard digits.count <= Self.maximumDigits else {
            throw BlocklistError(
                .limitExceeded,
                "Pattern \"\(text)\" has \(digits.count) digits; E.164 numbers have at most \(Self.maximumDigits), and longer ones would not fit a CXCallDirectoryPhoneNumber (Int64)."
            )
        }
        guard digits[0] > 0 else {
            let what = digits[0] == 0 ? "0" : "#"
            throw BlocklistError(
                .invalidSpec,
                "Pattern \"\(text)\" starts with \(what); it must start with the country code, whose first digit is 1-9."
            )
        }
        var packed = UInt64(digits.count) << 60
        for (index, digit) in digits.enumerated() { packed |= UInt64(digit < 0 ? 15 : digit) << (UInt64(index) * 4) }
        self.packed = packed
    }

    /// The pattern as `+` then digits and `#`.
    package var description: String {
        String(unsafeUninitializedCapacity: length + 1) { text in
            text[0] = UInt8(ascii: "+")
            for index in 0..<length {
                let digit = digit(at: index)
                text[index + 1] = digit < 0 ? UInt8(ascii: "#") : UInt8(48 + digit)
            }
            return length + 1
        }
    }

    /// How many positions are `#`.
    package var wildcardCount: Int { (0..<length).reduce(0) { $0 + (digit(at: $1) < 0 ? 1 : 0) } }

    /// How many numbers the pattern spells before exclusions: 10 to the number of `#`.
    package var candidateCount: Int64 { _power10(wildcardCount) }

    /// The smallest number the pattern spells (every `#` as 0).
    package var lowest: Int64 { (0..<length).reduce(0) { $0 * 10 + Int64(max(digit(at: $1), 0)) } }

    /// The largest number the pattern spells (every `#` as 9).
    package var highest: Int64 { (0..<length).reduce(0) { $0 * 10 + Int64(digit(at: $1) < 0 ? 9 : digit(at: $1)) } }
}

/// A pattern is written in JSON (a manifest's spec) as its text, `+` then digits and `#`, and
/// read back through `init(parsing:)`.
extension BlockPattern: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// 10 to the power `exponent`, for 0 ≤ exponent ≤ 18.
@inlinable
package func _power10(_ exponent: Int) -> Int64 {
    precondition(exponent >= 0 && exponent <= 18, "10^\(exponent) does not fit an Int64")
    var result: Int64 = 1
    for _ in 0..<exponent { result &*= 10 }
    return result
}
