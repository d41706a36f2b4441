import Foundation
import MessageFilterCore

/// The JSON body the system posts to a Message Filter extension's server for a deferred query
/// (the shape in ../shared/seeds/002): `{"_version": 1, "app": {"version": "1"},
/// "query": {"sender": "+8615312345678", "message": {"text": "…"}}}`.
struct DeferralQuery: Codable, Sendable {
    struct App: Codable, Sendable { var version: String }
    struct Query: Codable, Sendable {
        struct Message: Codable, Sendable { var text: String }
        var sender: String
        var message: Message
    }

    var _version: Int
    var app: App
    var query: Query

    init(sender: String, body: String) {
        _version = 1
        app = App(version: "1")
        query = Query(sender: sender, message: .init(text: body))
    }
}

/// What the server answers: `{"action": "junk", "rule": "Prize scam"}`; `subAction` when the rule
/// gives one. The extension reads it with `DeferralResponse`.
struct DeferralAnswer: Codable, Sendable {
    var action: String
    var subAction: String?
    var rule: String?
}
