package import Foundation
import MessageFilterCore

/// The JSON body the system posts to a Message Filter extension's server for a deferred query
/// (the shape Apple documents for ILMessageFilterExtension deferrals): `{"_version": 1, "app": {"version": "1"},
/// "query": {"sender": "+8615312345678", "message": {"text": "…"}}}`.
///
/// The server requires every member shown: `_version` a whole number, `app.version`,
/// `query.sender` and `query.message.text` strings. Other members are ignored. The body must be
/// RFC 8259 JSON (checked by `StrictJSON`: no duplicate member names, at most 32 levels deep),
/// then `JSONDecoder` reads it; the differences from Python's `json` that remain are listed in
/// docs/RELIABILITY.md.
package struct DeferralQuery: Codable, Sendable, Equatable {
    package struct App: Codable, Sendable, Equatable { public var version: String }
    package struct Query: Codable, Sendable, Equatable {
        package struct Message: Codable, Sendable, Equatable { public var text: String }
        package var sender: String
        package var message: Message
    }

    package var _version: Int
    package var app: App
    package var query: Query

    private enum CodingKeys: String, CodingKey { case _version, app, query }

    /// Reads `_version` so that 1.5 or 1e30 is refused by name: Foundation's decoder on Linux calls
    /// such a body "not valid JSON". A whole number that fits is an `Int`; anything else that is
    /// a number is named here, and anything that is not a number is a type mismatch as before.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let whole = try? container.decode(Int.self, forKey: ._version) {
            _version = whole
        } else {
            _ = try container.decode(Double.self, forKey: ._version)
            throw DecodingError.dataCorruptedError(
                forKey: ._version,
                in: container,
                debugDescription: "not a whole number that fits"
            )
        }
        app = try container.decode(App.self, forKey: .app)
        query = try container.decode(Query.self, forKey: .query)
    }

    package init(sender: String, body: String) {
        _version = 1
        app = App(version: "1")
        query = Query(sender: sender, message: .init(text: body))
    }

    /// The sentence a server answers a body that is not a deferred query with.
    package static let shapeSentence =
        #"The body is not a deferred query: {"_version": 1, "app": {"version": …}, "query": {"sender": …, "message": {"text": …}}}."#

    /// The sentence a server answers a refused body with: the JSON error and its byte, the
    /// member missing, or the member of the wrong type, then the shape expected.
    package static func refusal(_ error: any Error) -> String {
        let expected =
            #"expected {"_version": 1, "app": {"version": …}, "query": {"sender": …, "message": {"text": …}}}."#
        func path(_ keys: [any CodingKey]) -> String { keys.map(\.stringValue).joined(separator: ".") }
        switch error {
        case let error as MessageFilterError:
            return error.message
        case DecodingError.keyNotFound(let key, let context):
            return
                "The body is not a deferred query: it has no \"\(path(context.codingPath + [key]))\" member; \(expected)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "The body is not a deferred query: \"\(path(context.codingPath))\" has the wrong type; \(expected)"
        case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
            // A number of the right type but not a whole one that fits (1.5, 1e30).
            return
                "The body is not a deferred query: \"\(path(context.codingPath))\" is not a whole number that fits; \(expected)"
        default:
            return shapeSentence
        }
    }

    /// Reads a request body.
    ///
    /// - Throws: `MessageFilterError` when the body is not JSON, `DecodingError` when it lacks a
    ///   member or one has the wrong type.
    package static func decode(_ body: Data) throws -> DeferralQuery {
        try Array(body).withUnsafeBytes { bytes throws -> Void in
            try StrictJSON.check(bytes, subject: "The request body")
        }
        return try JSONDecoder().decode(DeferralQuery.self, from: body)
    }
}

/// What the server answers: `{"action": "junk", "rule": "Prize scam"}`; `subAction` when the rule
/// gives one. The extension reads it with `DeferralResponse`.
package struct DeferralAnswer: Codable, Sendable {
    package var action: String
    package var subAction: String?
    package var rule: String?

    package init(action: String, subAction: String?, rule: String?) {
        self.action = action
        self.subAction = subAction
        self.rule = rule
    }
}
