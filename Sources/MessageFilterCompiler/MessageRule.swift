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
/// A rule may instead combine conditions, each a target, match and value with their options:
///
/// ```json
/// {"name": "Loan from a mobile", "action": "junk",
///  "all": [{"target": "sender", "match": "prefix", "value": "+8210"},
///          {"target": "body", "match": "contains", "value": "대출"}],
///  "none": [{"target": "body", "match": "contains", "value": "수신거부"}]}
/// ```
///
/// It matches when every condition of `all` holds and none of `none` does (`match` is then
/// `.all`, `target` `.any` and `value` empty).
///
/// `caseSensitive` defaults to false, `normalize` to true and `confusables` to false (see
/// `TextView`). Every other field
/// is required, and a field the filter does not know is refused, so a misspelt option never goes
/// unnoticed.
package struct MessageRule: Sendable, Equatable {
    package var name: String
    package var target: RuleTarget
    package var match: MatchKind
    package var value: String
    package var action: MessageAction
    package var caseSensitive: Bool
    package var normalize: Bool
    /// Whether a keyword rule (prefix, suffix, contains) of a normalized view matches through
    /// confusables: the UTS #39 skeleton of the text against the skeleton of the value, so that
    /// `сlaim`, `𝐜𝐥𝐚𝐢𝐦` and `ｃｌａｉｍ` match `claim`.
    package var confusables: Bool
    /// One of IdentityLookup's sub-actions of `action` (`transactionalFinance`,
    /// `promotionalCoupons`, `DeferralResponse.subActions`): the folder iOS 16 files the message
    /// under. Nil for none, and always for `allow` and `junk`.
    package var subAction: String?
    /// A combined rule's conditions (each a rule with no name, action or sub-action): all of
    /// `all` must hold, and none of `none`. Empty for other rules.
    package var all: [MessageRule]
    package var none: [MessageRule]

    package init(
        name: String,
        target: RuleTarget,
        match: MatchKind,
        value: String,
        action: MessageAction,
        caseSensitive: Bool = false,
        normalize: Bool = true,
        confusables: Bool = false,
        subAction: String? = nil,
        all: [MessageRule] = [],
        none: [MessageRule] = []
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
        self.all = all
        self.none = none
    }

    /// A rule that combines conditions: it matches when all of `all` hold and none of `none`.
    package static func combining(
        name: String,
        action: MessageAction,
        subAction: String? = nil,
        all: [MessageRule],
        none: [MessageRule] = []
    ) -> MessageRule {
        MessageRule(
            name: name,
            target: .any,
            match: .all,
            value: "",
            action: action,
            subAction: subAction,
            all: all,
            none: none
        )
    }

    /// A condition of a combined rule: a target, match and value, with their options.
    package static func condition(
        _ target: RuleTarget,
        _ match: MatchKind,
        _ value: String,
        caseSensitive: Bool = false,
        normalize: Bool = true,
        confusables: Bool = false
    ) -> MessageRule {
        MessageRule(
            name: "",
            target: target,
            match: match,
            value: value,
            action: .none,
            caseSensitive: caseSensitive,
            normalize: normalize,
            confusables: confusables
        )
    }

    /// The text view the rule reads; a links rule's is always case-insensitive and normalized.
    package var view: TextView {
        target == .links
            ? TextView(caseInsensitive: true, normalized: true)
            : TextView(caseInsensitive: !caseSensitive, normalized: normalize, confusables: normalize && confusables)
    }

    /// The pattern a regex rule compiles: its value, or, in a normalized rule, the value folded as
    /// messages are (`RegexSubset.normalizedPattern`), so that `[０-９]{4,}\s*원` and `[:：]`
    /// mean what their author meant in the text the rule reads.
    package var pattern: String { normalize ? RegexSubset.normalizedPattern(value) : value }
}

extension MessageRule: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, target, match, value, action, subAction, caseSensitive, normalize, confusables, all, none
    }

    /// The fields of a condition of `all` or `none`.
    static let conditionKeys: [CodingKeys] = [.target, .match, .value, .caseSensitive, .normalize, .confusables]

    /// Decodes any key so that unknown ones can be named.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// One condition of a combined rule, as written.
    struct Condition: Codable {
        var rule: MessageRule

        init(_ rule: MessageRule) { self.rule = rule }

        init(from decoder: any Decoder) throws {
            try MessageRule.refuseUnknownKeys(
                decoder,
                known: MessageRule.conditionKeys,
                hint: "; a condition has no name, action or sub-action of its own"
            )
            let container = try decoder.container(keyedBy: CodingKeys.self)
            rule = .condition(.any, .contains, "")
            try rule.decodeMatch(container)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try rule.encodeMatch(&container)
        }
    }

    static func refuseUnknownKeys(_ decoder: any Decoder, known: [CodingKeys], hint: String = "") throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let names = Set(known.map(\.rawValue))
        if let unknown = all.allKeys.first(where: { !names.contains($0.stringValue) }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [unknown],
                    debugDescription:
                        "unknown field; the fields are \(known.map(\.rawValue).joined(separator: ", "))\(hint)"
                )
            )
        }
    }

    static func named<T>(
        _ container: KeyedDecodingContainer<CodingKeys>,
        _ key: CodingKeys,
        _ parse: (String) -> T?,
        _ choices: String
    ) throws -> T {
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

    /// Reads target, match, value and the options: a plain rule's or a condition's.
    mutating func decodeMatch(_ container: KeyedDecodingContainer<CodingKeys>) throws {
        target = try Self.named(container, .target, { RuleTarget(name: $0) }, "sender, body, any, links")
        match = try Self.named(
            container,
            .match,
            { MatchKind(name: $0).flatMap { $0 == .all ? nil : $0 } },
            "prefix, suffix, contains, regex, domain"
        )
        value = try container.decode(String.self, forKey: .value)
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
    }

    func encodeMatch(_ container: inout KeyedEncodingContainer<CodingKeys>) throws {
        try container.encode(target.description, forKey: .target)
        try container.encode(match.description, forKey: .match)
        try container.encode(value, forKey: .value)
        try container.encode(caseSensitive, forKey: .caseSensitive)
        try container.encode(normalize, forKey: .normalize)
        if confusables { try container.encode(confusables, forKey: .confusables) }
    }

    package init(from decoder: any Decoder) throws {
        try Self.refuseUnknownKeys(decoder, known: CodingKeys.allCases)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .name)
        let action = try Self.named(
            container,
            .action,
            { MessageAction(name: $0).flatMap { $0 == .none ? nil : $0 } },
            "allow, junk, promotion, transaction"
        )
        self.init(name: name, target: .any, match: .contains, value: "", action: action)
        if container.contains(.all) || container.contains(.none) {
            guard container.contains(.all) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .none,
                    in: container,
                    debugDescription:
                        "\"none\" needs \"all\": a rule matches when all of its conditions hold and none of those in \"none\" does"
                )
            }
            if let key = Self.conditionKeys.first(where: { container.contains($0) }) {
                throw DecodingError.dataCorruptedError(
                    forKey: key,
                    in: container,
                    debugDescription:
                        "a rule with \"all\" matches through its conditions and has no \(key.rawValue) of its own; move it into a condition"
                )
            }
            match = .all
            all = try container.decode([Condition].self, forKey: .all).map(\.rule)
            none = try container.decodeIfPresent([Condition].self, forKey: .none)?.map(\.rule) ?? []
        } else {
            try decodeMatch(container)
        }
        if container.contains(.subAction) {
            let choices = DeferralResponse.subActions[action] ?? []
            if choices.isEmpty {
                throw DecodingError.dataCorruptedError(
                    forKey: .subAction,
                    in: container,
                    debugDescription:
                        "\(action) has no sub-actions; only promotion and transaction rules name one, so leave it out"
                )
            }
            subAction = try Self.named(
                container,
                .subAction,
                { choices.contains($0) ? $0 : nil },
                choices.joined(separator: ", ") + " (the sub-actions of \(action))"
            )
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(action.description, forKey: .action)
        try container.encodeIfPresent(subAction, forKey: .subAction)
        if match == .all {
            try container.encode(all.map(Condition.init), forKey: .all)
            if !none.isEmpty { try container.encode(none.map(Condition.init), forKey: .none) }
        } else {
            try encodeMatch(&container)
        }
    }
}
