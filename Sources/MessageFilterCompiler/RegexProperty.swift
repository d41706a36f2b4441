/// `\p{…}` and `\P{…}`: a general category or a script, as the ranges of scalars it holds, found
/// offline like every class (the extension sees only ranges).
///
/// Names match loosely, as UAX #44 says: case, spaces, `_` and `-` are ignored, so `\p{Lu}`,
/// `\p{uppercase letter}` and `\p{gc=Uppercase_Letter}` are one. A bare name is a general
/// category first, then `Any`, `ASCII` or `Assigned`, then a script (its long name or ISO 15924
/// code). General categories are the standard library's (Unicode 17.0 in Swift 6.3); scripts are
/// `UnicodeScripts` (Scripts.txt of the version it names).
enum RegexProperty {
    /// The two-letter general categories, with their long names, in the standard library's order.
    static let categories: [(code: String, name: String)] = [
        ("Lu", "Uppercase_Letter"), ("Ll", "Lowercase_Letter"), ("Lt", "Titlecase_Letter"), ("Lm", "Modifier_Letter"),
        ("Lo", "Other_Letter"), ("Mn", "Nonspacing_Mark"), ("Mc", "Spacing_Mark"), ("Me", "Enclosing_Mark"),
        ("Nd", "Decimal_Number"), ("Nl", "Letter_Number"), ("No", "Other_Number"), ("Pc", "Connector_Punctuation"),
        ("Pd", "Dash_Punctuation"), ("Ps", "Open_Punctuation"), ("Pe", "Close_Punctuation"),
        ("Pi", "Initial_Punctuation"), ("Pf", "Final_Punctuation"), ("Po", "Other_Punctuation"), ("Sm", "Math_Symbol"),
        ("Sc", "Currency_Symbol"), ("Sk", "Modifier_Symbol"), ("So", "Other_Symbol"), ("Zs", "Space_Separator"),
        ("Zl", "Line_Separator"), ("Zp", "Paragraph_Separator"), ("Cc", "Control"), ("Cf", "Format"),
        ("Cs", "Surrogate"), ("Co", "Private_Use"), ("Cn", "Unassigned"),
    ]
    /// The groups of categories: a one-letter code holds every category that starts with it.
    static let groups: [(code: String, name: String, alias: String?)] = [
        ("L", "Letter", nil), ("LC", "Cased_Letter", "L&"), ("M", "Mark", "Combining_Mark"), ("N", "Number", nil),
        ("P", "Punctuation", "punct"), ("S", "Symbol", nil), ("Z", "Separator", nil), ("C", "Other", nil),
    ]

    /// The ranges of each two-letter category, from one pass over every scalar (surrogates are
    /// `Cs`, though no text holds them).
    static let categoryRanges: [String: [ClosedRange<UInt32>]] = {
        var result: [String: [ClosedRange<UInt32>]] = [:]
        var current: (code: String, start: UInt32)? = nil
        func close(at end: UInt32) {
            if let current { result[current.code, default: []].append(current.start...end) }
        }
        for value in UInt32(0)..<0x11_0000 {
            let code = Unicode.Scalar(value).map { categories[index(of: $0.properties.generalCategory)].code } ?? "Cs"
            if current?.code != code {
                close(at: value &- 1)
                current = (code, value)
            }
        }
        close(at: 0x10_FFFF)
        return result
    }()

    private static func index(of category: Unicode.GeneralCategory) -> Int {
        switch category {
        case .uppercaseLetter: 0
        case .lowercaseLetter: 1
        case .titlecaseLetter: 2
        case .modifierLetter: 3
        case .otherLetter: 4
        case .nonspacingMark: 5
        case .spacingMark: 6
        case .enclosingMark: 7
        case .decimalNumber: 8
        case .letterNumber: 9
        case .otherNumber: 10
        case .connectorPunctuation: 11
        case .dashPunctuation: 12
        case .openPunctuation: 13
        case .closePunctuation: 14
        case .initialPunctuation: 15
        case .finalPunctuation: 16
        case .otherPunctuation: 17
        case .mathSymbol: 18
        case .currencySymbol: 19
        case .modifierSymbol: 20
        case .otherSymbol: 21
        case .spaceSeparator: 22
        case .lineSeparator: 23
        case .paragraphSeparator: 24
        case .control: 25
        case .format: 26
        case .surrogate: 27
        case .privateUse: 28
        case .unassigned: 29
        @unknown default: 29
        }
    }

    /// A name as UAX #44's loose matching compares it.
    static func loose(_ name: some StringProtocol) -> String {
        String(name.lowercased().filter { $0 != " " && $0 != "_" && $0 != "-" })
    }

    /// The ranges `name` (what is between the braces, or the one letter of `\pL`) names, sorted
    /// and disjoint.
    ///
    /// - Throws: a sentence naming what is not supported.
    static func ranges(_ name: String) throws(RegexSubsetError) -> [ClosedRange<UInt32>] {
        let parts = name.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            let key = loose(parts[0])
            let value = String(parts[1])
            switch key {
            case "gc", "generalcategory":
                if let ranges = category(value) { return ranges }
                throw RegexSubsetError("it names no general category (L, Lu, N, Nd, P, S, Z…)")
            case "sc", "script":
                if let ranges = script(value) { return ranges }
                throw RegexSubsetError(
                    "it names no script of Unicode \(UnicodeScripts.version) (Hangul, Han, Latin, Cyrillic…)"
                )
            case "scx", "scriptextensions":
                throw RegexSubsetError("Script_Extensions is not supported; \\p{Script=…} is")
            default:
                throw RegexSubsetError(
                    "only general categories (gc=) and scripts (sc= or Script=) are properties here"
                )
            }
        }
        if let ranges = category(name) ?? binary(name) ?? script(name) { return ranges }
        throw RegexSubsetError(
            "it names no general category or script: \\p{L}, \\p{Lu}, \\p{N}, \\p{P}, \\p{Hangul}, \\p{Han}, \\p{Latin}, \\p{Script=Cyrillic} are"
        )
    }

    static func category(_ name: String) -> [ClosedRange<UInt32>]? {
        let key = loose(name)
        if let one = categories.first(where: { loose($0.code) == key || loose($0.name) == key }) {
            return categoryRanges[one.code] ?? []
        }
        guard
            let group = groups.first(where: {
                loose($0.code) == key || loose($0.name) == key || $0.alias.map(loose) == key
            })
        else { return nil }
        let members = categories.filter {
            group.code == "LC" ? ["Lu", "Ll", "Lt"].contains($0.code) : $0.code.hasPrefix(group.code)
        }
        return merged(members.flatMap { categoryRanges[$0.code] ?? [] })
    }

    static func binary(_ name: String) -> [ClosedRange<UInt32>]? {
        switch loose(name) {
        case "any": [0...0x10_FFFF]
        case "ascii": [0...0x7F]
        case "assigned": complement(categoryRanges["Cn"] ?? [])
        default: nil
        }
    }

    static func script(_ name: String) -> [ClosedRange<UInt32>]? {
        let key = loose(name)
        guard let index = UnicodeScripts.names.firstIndex(where: { loose($0.code) == key || loose($0.name) == key })
        else { return nil }
        var result: [ClosedRange<UInt32>] = []
        for (position, script) in UnicodeScripts.scripts.enumerated() where Int(script) == index {
            let end = position + 1 < UnicodeScripts.starts.count ? UnicodeScripts.starts[position + 1] - 1 : 0x10_FFFF
            result.append(UnicodeScripts.starts[position]...end)
        }
        return merged(result)
    }

    /// Sorted, disjoint ranges covering `ranges`, adjacent ones joined.
    static func merged(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var merged: [ClosedRange<UInt32>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// The scalars outside sorted, disjoint `ranges`.
    static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for range in ranges {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            next = range.upperBound + 1
        }
        if next <= 0x10_FFFF { result.append(next...0x10_FFFF) }
        return result
    }
}
