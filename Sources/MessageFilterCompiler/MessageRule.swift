import MessageFilterCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One rule of a rules file, as a user writes it:
///
/// ```json
/// {"name": "Prize scam", "target": "body", "match": "contains", "value": "you have won",
///  "action": "junk", "caseSensitive": false, "normalize": true}
/// ```
///
/// `caseSensitive` defaults to false, `normalize` to true and `confusables` to false (see
/// `TextView`). Every other field
/// is required, and a field the filter does not know is refused, so a misspelt option never goes
/// unnoticed.
public struct MessageRule: Sendable, Equatable {
    public var name: String
    public var target: RuleTarget
    public var match: MatchKind
    public var value: String
    public var action: MessageAction
    public var caseSensitive: Bool
    public var normalize: Bool
    /// Whether a keyword rule (prefix, suffix, contains) of a normalized view matches through
    /// confusables: the UTS #39 skeleton of the text against the skeleton of the value, so that
    /// `сlaim`, `𝐜𝐥𝐚𝐢𝐦` and `ｃｌａｉｍ` match `claim`.
    public var confusables: Bool
    /// One of IdentityLookup's sub-actions of `action` (`transactionalFinance`,
    /// `promotionalCoupons`, `DeferralResponse.subActions`): the folder iOS 16 files the message
    /// under. Nil for none, and always for `allow` and `junk`.
    public var subAction: String?

    public init(
        name: String,
        target: RuleTarget,
        match: MatchKind,
        value: String,
        action: MessageAction,
        caseSensitive: Bool = false,
        normalize: Bool = true,
        confusables: Bool = false,
        subAction: String? = nil
    ) {
        self.name = name
        self.target = target
        self.match = match
        self.value = value
        self.action = action
        self.caseSensitive = caseSensitive
        self.normalize = normalize
        self.confusables = confusables
        self.subAction = subAction
    }

    /// The text view the rule reads; a links rule's is always case-insensitive and normalized.
    public var view: TextView {
        target == .links
            ? TextView(caseInsensitive: true, normalized: true)
            : TextView(caseInsensitive: !caseSensitive, normalized: normalize, confusables: normalize && confusables)
    }

    /// The pattern a regex rule compiles: its value, or, in a normalized rule, the value folded as
    /// messages are (`RegexSubset.normalizedPattern`), so that `[０-９]{4,}\s*원` and `[:：]`
    /// mean what their author meant in the text the rule reads.
    public var pattern: String { normalize ? RegexSubset.normalizedPattern(value) : value }
}

extension MessageRule: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, target, match, value, action, subAction, caseSensitive, normalize, confusables
    }

    /// Decodes any key so that unknown ones can be named.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [unknown],
                    debugDescription:
                        "unknown field; the fields are \(CodingKeys.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            )
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func named<T>(_ key: CodingKeys, _ parse: (String) -> T?, _ choices: String) throws -> T {
            let text = try container.decode(String.self, forKey: key)
            guard let value = parse(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key,
                    in: container,
                    debugDescription: "\"\(text)\" is not one of \(choices)"
                )
            }
            return value
        }
        name = try container.decode(String.self, forKey: .name)
        target = try named(.target, { RuleTarget(name: $0) }, "sender, body, any, links")
        match = try named(.match, { MatchKind(name: $0) }, "prefix, suffix, contains, regex, domain")
        value = try container.decode(String.self, forKey: .value)
        action = try named(
            .action,
            { MessageAction(name: $0).flatMap { $0 == .none ? nil : $0 } },
            "allow, junk, promotion, transaction"
        )
        // An option may be left out, but not given as null: null is not true or false.
        func flag(_ key: CodingKeys, default value: Bool) throws -> Bool {
            guard container.contains(key) else { return value }
            if try container.decodeNil(forKey: key) {
                throw DecodingError.typeMismatch(
                    Bool.self,
                    .init(codingPath: container.codingPath + [key], debugDescription: "null is not true or false")
                )
            }
            return try container.decode(Bool.self, forKey: key)
        }
        caseSensitive = try flag(.caseSensitive, default: false)
        normalize = try flag(.normalize, default: true)
        confusables = try flag(.confusables, default: false)
        if container.contains(.subAction) {
            let choices = DeferralResponse.subActions[action] ?? []
            subAction = try named(
                .subAction,
                { choices.contains($0) ? $0 : nil },
                choices.isEmpty
                    ? "a sub-action of promotion or transaction; \(action) has none"
                    : choices.joined(separator: ", ") + " (the sub-actions of \(action))"
            )
        } else {
            subAction = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(target.description, forKey: .target)
        try container.encode(match.description, forKey: .match)
        try container.encode(value, forKey: .value)
        try container.encode(action.description, forKey: .action)
        try container.encodeIfPresent(subAction, forKey: .subAction)
        try container.encode(caseSensitive, forKey: .caseSensitive)
        try container.encode(normalize, forKey: .normalize)
        if confusables { try container.encode(confusables, forKey: .confusables) }
    }
}
