import BlocklistCore
import MessageFilterHosting
import Testing

/// Contacts are matched as Messages matches them: phone numbers as numbers, other senders
/// regardless of case.
struct ContactListTests {
    @Test(arguments: [
        ("+1 555 0101", "+15550101", 1),
        ("+15550101", "(555) 0101", 1),
        ("+1 (555) 010-1", "555.0101", 1),
        ("0015550101", "+15550101", 1),
        ("+821012345678", "010-1234-5678", 82),
        ("+82 10 1234 5678", "01012345678", 82),
        ("+441632960961", "01632 960961", 44),
        ("+390612345678", "06 1234 5678", 39),
        ("+12025550123", "1 202 555 0123", 1),
        ("MyBank", "mybank", 1),
        ("  KAKAO ", "kakao", 82),
        ("Ünïcode", "üNÏCODE", 82),
        ("alice@example.com", "Alice@Example.COM", 82),
        ("12345", "12345", 82),
        // Trunk prefixes other than 0, international prefixes other than 00, and a (0) after
        // the country code (found by the attack on this work).
        ("+7 912 345 6789", "8 (912) 345-67-89", 7),
        ("+36 20 123 4567", "06201234567", 36),
        ("+1 555 0101", "011 1 555 0101", 1),
        ("+61 2 9876 5432", "0011 61 2 9876 5432", 61),
        ("+44 (0)20 7946 0018", "+442079460018", 44),
        ("+44 (0)20 7946 0018", "020 7946 0018", 44),
        // The North American trunk 1 comes only before ten digits.
        ("1234567", "+11234567", 1),
        // Russia's international prefix 8 10, Belarus's trunk 8 0 (the second attack).
        ("+1 555 0101", "8 10 1 555 0101", 7),
        ("+375 29 123 45 67", "8 029 123-45-67", 375),
    ])
    func theSameContactWrittenTwoWays(contact: String, sender: String, country: Int) {
        var contacts = ContactList(defaultCountryCode: country)
        contacts.insert(contact)
        #expect(contacts.contains(sender), "\(contact) and \(sender) are one contact with country \(country)")
    }

    @Test(arguments: [
        ("+15550101", "+15550102", 1),
        ("+15550101", "+25550101", 1),
        ("+821012345678", "010-1234-5678", 1),
        ("12345", "+8212345", 82),
        ("12345", "012345", 82),
        ("MyBank", "MyBank2", 82),
        ("Bank", "+Bank", 82),
        // A short code is not a national number: no country code is added to it.
        ("+8212345", "12345", 82),
        // Italy keeps its leading 0; elsewhere the trunk prefix goes.
        ("+39612345678", "06 1234 5678", 39),
        // 011 is international only in the North American plan.
        ("+15550101", "011 1 555 0101", 82),
        // In Italy and San Marino a (0) is part of the number: never dropped, so a landline
        // written so never becomes a mobile number (the second attack found the collision).
        ("+39 (0)331 1234567", "+393311234567", 39),
        ("+378 (0)549 123456", "+378549123456", 378),
    ])
    func differentSendersStayDifferent(contact: String, sender: String, country: Int) {
        var contacts = ContactList(defaultCountryCode: country)
        contacts.insert(contact)
        #expect(!contacts.contains(sender), "\(contact) and \(sender) are different senders with country \(country)")
    }

    @Test func withoutACountryNationalNumbersMatchByTheirDigits() {
        var contacts = ContactList()
        contacts.insert("(555) 010-1234")
        #expect(contacts.contains("555 010 1234"))
        #expect(!contacts.contains("+1 555 010 1234"))
        #expect(contacts.key("555-010-1234").description == "5550101234 (no country)")
    }

    /// A byte-order mark at the start of a contacts file is not part of its first contact.
    @Test func aByteOrderMarkIsNotPartOfTheFirstContact() {
        let contacts = ContactList(file: "\u{FEFF}+1 555 0101\nMyBank\n", defaultCountryCode: 1)
        #expect(contacts.contains("+15550101"))
    }

    @Test func readsAFileSkippingCommentsAndBlankLines() {
        let contacts = ContactList(
            file: "# family\n+1 555 0101\r\n\n   \nMyBank\n#+1 555 0199\n",
            defaultCountryCode: 1
        )
        #expect(contacts.count == 2)
        #expect(contacts.contains("5550101"))
        #expect(contacts.contains("MYBANK"))
        #expect(!contacts.contains("+15550199"))
        #expect(!contacts.contains("# family"))
    }

    @Test(arguments: ["1+2", "++15550101", "+", "---", "1234567890123456789", "555-CALL-NOW"])
    func textThatIsNotANumberIsComparedAsText(sender: String) {
        guard case .alphanumeric = ContactList(defaultCountryCode: 1).key(sender) else {
            Issue.record("\(sender) was taken for a phone number")
            return
        }
    }

    /// A seeded property check: every way of writing one number (separators anywhere, `+` or
    /// `00`, national with its trunk prefix) gives the one key, and different numbers different keys.
    @Test func randomFormattingsOfOneNumberAreOneContact() {
        var random = SplitMix64(state: 20)
        let countries = [1, 33, 44, 49, 61, 81, 82, 86]
        for _ in 0..<2_000 {
            let country = countries[Int(random.next() % UInt64(countries.count))]
            // North American numbers have ten digits; elsewhere 8 to 11 here.
            let length = country == 1 ? 10 : 8 + Int(random.next() % 4)
            var subscriber = String(1 + random.next() % 9)
            // No plan numbers a subscriber so that a national number starts with its
            // international prefix (010 in Japan); redraw those.
            if country == 81, subscriber == "1" { subscriber = "9" }
            for _ in 1..<length { subscriber += String(random.next() % 10) }
            let contacts = ContactList(defaultCountryCode: country)
            let canonical = contacts.key("+\(country)\(subscriber)")
            let trunk = country == 1 ? "1" : "0"
            for written in [
                "+" + String(country) + subscriber, "00" + String(country) + subscriber, trunk + subscriber,
                "+\(country) " + subscriber,
            ] {
                let formatted = Self.sprinkle(written, &random)
                #expect(contacts.key(formatted) == canonical, "\(formatted) is not +\(country)\(subscriber)")
            }
            var other = Array(subscriber)
            let position = Int(random.next() % UInt64(other.count))
            other[position] = other[position] == "9" ? "0" : Character(String(other[position].wholeNumberValue! + 1))
            #expect(contacts.key("+\(country)" + String(other)) != canonical)
        }
    }

    /// Separators inserted at random places after the first character.
    static func sprinkle(_ text: String, _ random: inout SplitMix64) -> String {
        let separators: [String] = [" ", "-", ".", "(", ")", "/"]
        var result = ""
        for (index, character) in text.enumerated() {
            result.append(character)
            if index > 0, random.next() % 4 == 0 {
                let separator = separators[Int(random.next() % 6)]
                // `(0)` after a country code means a trunk 0 that is not dialled: never written here.
                if separator == ")", result.hasSuffix("(0") { continue }
                result += separator
            }
        }
        return result
    }
}
