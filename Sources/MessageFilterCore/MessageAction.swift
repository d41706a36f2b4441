/// What a Message Filter extension answers for one message, as IdentityLookup's
/// `ILMessageFilterAction`: let it through, file it as junk, or file it as a promotion or a
/// transaction (iOS 14; their sub-action folders came in iOS 16, docs/PLATFORM.md). `none` means
/// "no opinion": the extension may then defer the query to its server.
public enum MessageAction: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case none = 0
    case allow = 1
    case junk = 2
    case promotion = 3
    case transaction = 4

    /// The name used in rules files, server responses and output.
    public var description: String {
        switch self {
        case .none: "none"
        case .allow: "allow"
        case .junk: "junk"
        case .promotion: "promotion"
        case .transaction: "transaction"
        }
    }

    /// Reads a name from `description`; `filter` is accepted for `junk`, as IdentityLookup calls it.
    public init?(name: some StringProtocol) {
        switch name {
        case "none": self = .none
        case "allow": self = .allow
        case "junk", "filter": self = .junk
        case "promotion": self = .promotion
        case "transaction": self = .transaction
        default: return nil
        }
    }

    /// Which action wins when rules disagree: lower wins. `allow` beats everything (a user's
    /// "never filter this" must hold), then `junk`, then `transaction` (a bank's code outranks an
    /// offer in the same text), then `promotion`. `none` never wins.
    public var rank: UInt32 {
        switch self {
        case .allow: 0
        case .junk: 1
        case .transaction: 2
        case .promotion: 3
        case .none: 0xFF
        }
    }
}

/// The part of a message a rule looks at.
public enum RuleTarget: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case sender = 0
    case body = 1
    case any = 2
    /// The hosts the body links to (`LinkExtractor`), matched with `domain`.
    case links = 3

    public var description: String {
        switch self {
        case .sender: "sender"
        case .body: "body"
        case .any: "any"
        case .links: "links"
        }
    }

    public init?(name: some StringProtocol) {
        guard let value = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = value
    }
}

/// How a rule's value is matched against its target.
public enum MatchKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case prefix = 0
    case suffix = 1
    case contains = 2
    case regex = 3
    /// A host of the `links` target: `bit.ly` that host, `*.example.com` it and every host under it.
    case domain = 4
    /// A rule that combines conditions (`all` must hold, `none` may): its conditions are
    /// entries of their own, each with its own target and match.
    case all = 5

    public var description: String {
        switch self {
        case .prefix: "prefix"
        case .suffix: "suffix"
        case .contains: "contains"
        case .regex: "regex"
        case .domain: "domain"
        case .all: "all"
        }
    }

    public init?(name: some StringProtocol) {
        guard let value = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = value
    }
}
