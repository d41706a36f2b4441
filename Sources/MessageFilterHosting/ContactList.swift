/// The senders a user's contacts name, matched the way Messages matches them before it asks a
/// filter extension: a message from a contact never reaches the extension.
///
/// - A phone number is compared as a number, not as text. Spaces, `-`, `.`, `/` and parentheses
///   are dropped; `+` or a leading `00` starts an international number (`+1 555 0101`,
///   `0015550101`); a national number with 7 digits or more gets the default country code, after
///   its trunk prefix is dropped (`0` for most countries, `1` for the North American plan, `8`
///   for Russia, `80` for Belarus, `06` for Hungary, none for Italy, 39, where the 0 belongs to the number); a
///   national number that starts with the country's international prefix (`011` in the North
///   American plan) is international; a `(0)` after the country code is not dialled. So
///   `+15550101`, `+1 (555) 010-1` and, with
///   default country 1, `(555) 0101` are one contact; with default country 82, `010-1234-5678`
///   is `+821012345678`.
/// - A short code (no `+`, fewer than 7 digits, as `12345`) is compared by its digits alone.
/// - Any other sender (a name such as `MyBank`, an e-mail address) is compared without regard to
///   case (Unicode lowercase mapping), after surrounding white space is removed.

package struct ContactList: Sendable {
    /// A sender's key: `+` and digits for a phone number, the digits of a short code, or the
    /// lowercased text of an alphanumeric sender, each tagged so that kinds never collide.
    package enum Key: Hashable, Sendable, CustomStringConvertible {
        case international(String)
        case national(String)
        case shortCode(String)
        case alphanumeric(String)

        package var description: String {
            switch self {
            case .international(let digits): "+" + digits
            case .national(let digits): digits + " (no country)"
            case .shortCode(let digits): digits + " (short code)"
            case .alphanumeric(let text): text
            }
        }
    }

    /// The country calling code national numbers get, e.g. 1 or 82; nil to compare national
    /// numbers by their digits.
    package let defaultCountryCode: Int?
    private var keys: Set<Key> = []

    /// The most digits an E.164 number has.
    package static let maximumDigits = 15
    /// The fewest digits a national number has; fewer make a short code.
    package static let minimumNationalDigits = 7

    /// - Parameter defaultCountryCode: 1–999, or nil.
    package init(defaultCountryCode: Int? = nil) {
        precondition(defaultCountryCode.map { (1...999).contains($0) } ?? true, "a country code is 1–999")
        self.defaultCountryCode = defaultCountryCode
    }

    /// The contacts of a file: one sender per line; blank lines and lines starting with `#` are
    /// skipped.
    package init(file text: String, defaultCountryCode: Int? = nil) {
        self.init(defaultCountryCode: defaultCountryCode)
        // A byte-order mark is not part of the first contact.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let entry = Self.trimmed(Substring(line))
            if !entry.isEmpty, !entry.hasPrefix("#") { insert(String(entry)) }
        }
    }

    package var count: Int { keys.count }

    package mutating func insert(_ sender: String) { keys.insert(key(sender)) }

    /// Whether a message from `sender` comes from a contact.
    package func contains(_ sender: String) -> Bool { keys.contains(key(sender)) }

    /// What `sender` is compared by.
    package func key(_ sender: String) -> Key {
        let text = Self.trimmed(Substring(sender))
        guard let (international, digits) = Self.phoneDigits(text) else {
            return .alphanumeric(text.lowercased())
        }
        if international { return .international(digits) }
        // The country's own international prefix first (`0011` in Australia), then `00`.
        for exit in [defaultCountryCode.flatMap(Self.internationalPrefix), "00"].compactMap(\.self)
        where digits.hasPrefix(exit) && digits.count > exit.count {
            let number = digits.dropFirst(exit.count)
            return number.count <= Self.maximumDigits ? .international(String(number)) : .alphanumeric(String(text))
        }
        guard digits.count <= Self.maximumDigits + 1 else { return .alphanumeric(text.lowercased()) }
        if digits.count < Self.minimumNationalDigits { return .shortCode(digits) }
        guard let country = defaultCountryCode else { return .national(digits) }
        var national = Substring(digits)
        // The North American plan's trunk 1 comes only before its 10 digits.
        if let trunk = Self.trunkPrefix(country), national.hasPrefix(trunk), country != 1 || national.count == 11 {
            national = national.dropFirst(trunk.count)
        }
        return .international(String(country) + national)
    }

    /// The trunk prefix a national number is dialled with in `country`: `0` in most countries,
    /// `1` in the North American plan, `8` in Russia and Kazakhstan (7), `80` in Belarus (375),
    /// `06` in Hungary (36); nil in Italy (39) and San Marino (378), where the 0 belongs to the
    /// number.
    static func trunkPrefix(_ country: Int) -> String? {
        switch country {
        case 1: "1"
        case 7: "8"
        case 375: "80"
        case 36: "06"
        case 39, 378: nil
        default: "0"
        }
    }

    /// The prefix a number is dialled with from `country` to another country, beside `00`,
    /// which `key` takes everywhere: `011` in the North American plan, `810` in Russia,
    /// Kazakhstan and Belarus, `0011` in Australia (61), `010` in Japan (81).
    static func internationalPrefix(_ country: Int) -> String? {
        switch country {
        case 1: "011"
        case 7, 375: "810"
        case 61: "0011"
        case 81: "010"
        default: nil
        }
    }

    /// The digits of a phone number, and whether it is written internationally; nil when the
    /// text is not a phone number (a letter, a misplaced `+`, no digit, or more than 15 digits).
    static func phoneDigits(_ text: Substring) -> (international: Bool, digits: String)? {
        var digits = ""
        var international = false
        // `+44 (0)20 …`: the trunk 0 some write after the country code (1 to 3 digits) is not
        // dialled, except where the 0 belongs to the number (Italy, San Marino).
        var text = text
        if text.hasPrefix("+") || text.hasPrefix("00"),
            let start = text.indices.first(where: { text[$0...].hasPrefix("(0)") }),
            case let country = String(
                text[text.startIndex..<start].unicodeScalars.filter { ("0"..."9").contains($0) }
            ).dropFirst(text.hasPrefix("00") ? 2 : 0),
            (1...3).contains(country.count), trunkPrefix(Int(country)!) != nil
        {
            text = text[..<start] + text[text.index(start, offsetBy: 3)...]
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "0"..."9": digits.unicodeScalars.append(scalar)
            case "+":
                guard digits.isEmpty, !international else { return nil }
                international = true
            case " ", "-", ".", "/", "(", ")", "\u{A0}": continue
            default: return nil
            }
        }
        // A national number may carry a trunk prefix, or an international prefix of up to four
        // digits (`0011`) that `key` takes off.
        guard !digits.isEmpty, digits.count <= maximumDigits + (international ? 0 : 4) else { return nil }
        return (international, digits)
    }

    static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return text[first...last]
    }
}
