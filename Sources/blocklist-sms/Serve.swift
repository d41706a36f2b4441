import ArgumentParser
import ArgumentTypes
import BlocklistCore
import CommandSupport
import DeferralProtocol
import Foundation
import Hummingbird
import HummingbirdCore
internal import LibC
import Logging
import MessageFilterCompiler
import MessageFilterCore
import NIOCore
import ServiceLifecycle
import Synchronization

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: SMSCommandText.serve,
        discussion: """
            POST the JSON the system sends ({"_version": 1, "app": {"version": …}, "query": {"sender": …, "message": \
            {"text": …}}}) to PATH; the answer is {"action": …, "rule": …} from the server's rules. Prints one line, \
            "listening on http://HOST:PORT/PATH", once it accepts connections. A connection is closed when a request's \
            head or body takes longer than its timeout, or when it sits idle; past --max-connections new connections \
            wait in the kernel's queue. On SIGINT or SIGTERM it stops accepting, answers the requests that have \
            arrived, drops those still being sent, prints "stopped" and exits.
            """,
        version: blocklistVersion
    )

    @Option(
        help: ArgumentHelp(
            "The server's rules: a JSON rules file, compiled rules, or a directory holding them.",
            valueName: "path"
        )
    )
    var rules: String

    @OptionGroup var server: ServerOptions

    @Option(help: "The URL path that answers queries.")
    var path = "/"

    @Option(
        help: ArgumentHelp(
            "For testing deferral failures: answer every query with HTTP 500 (status500), with broken JSON (malformed), or late by --delay-ms (slow).",
            valueName: "status500|malformed|slow"
        )
    )
    var fault: Fault?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("With --fault slow: how long to wait before answering, in milliseconds.", valueName: "ms")
    )
    var delayMs: WholeNumber = 5000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The largest request body, in bytes; a larger one is answered 413.", valueName: "bytes")
    )
    var maxBodyBytes: WholeNumber = 409_600

    @Option(
        name: .customLong("app-id"),
        help: ArgumentHelp(
            "An app whose Message Filter extension defers to this server, as TEAMID.BUNDLE-ID (repeat for more): listed under messagefilter in /.well-known/apple-app-site-association, which iOS reads before it lets the extension defer.",
            valueName: "TEAMID.bundle-id"
        )
    )
    var appIDs: [String] = []

    /// Where iOS reads a domain's associated apps.
    static let associationPath = "/.well-known/apple-app-site-association"

    enum Fault: String, ExpressibleByArgument, CaseIterable {
        case status500, malformed, slow
    }

    func validate() throws {
        guard path.hasPrefix("/") else { throw ValidationError("--path must start with /, as \"/\" or \"/filter\".") }
        // What a request line can carry as it is: no spaces, controls, query or fragment.
        guard path.utf8.allSatisfy({ (33...126).contains($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        else {
            throw ValidationError(
                "--path may hold only visible ASCII characters other than ? and #, as \"/filter\"; \(Self.quoted(path)) does not."
            )
        }
        for appID in appIDs { try Self.checkAppID(appID) }
        guard path != Self.associationPath else {
            throw ValidationError(
                "--path \(Self.associationPath) is where iOS reads the associated apps (--app-id); give the queries another path, as \"/filter\"."
            )
        }
        try delayMs.check("--delay-ms", 0...600_000)
        try maxBodyBytes.check("--max-body-bytes", 1...16 << 20)
    }

    func run() async throws {
        let loaded = try RulesLoader.load(rules)
        for warning in loaded.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        let pool = ClassifierPool(rules: loaded.rules)
        let names = loaded.rules.rules.map(\.name)
        let router = Router(context: ConnectionRequestContext.self)
        let fault = self.fault
        let delay = self.delayMs.value
        let maxBody = self.maxBodyBytes.value
        let tooLarge = Self.json(
            .contentTooLarge,
            Self.errorJSON(
                "The request body is over \(Figures.grouped(maxBody)) bytes; a deferred query is much smaller."
            )
        )
        if !appIDs.isEmpty {
            // iOS associates the domain with these apps' messagefilter service; the file is JSON,
            // served as it is, with no redirect.
            var unique: [String] = []
            for appID in appIDs where !unique.contains(appID) { unique.append(appID) }
            let text = try Self.association(unique)
            router.get(RouterPath(Self.associationPath)) { _, _ -> Response in Self.json(.ok, text) }
            // HEAD as GET would answer, without the body (a CDN's or Apple's check, `curl -I`).
            router.head(RouterPath(Self.associationPath)) { _, _ -> Response in
                var response = Self.json(.ok, text)
                response.body = ResponseBody()
                response.headers[.contentLength] = String(text.utf8.count)
                return response
            }
        }
        router.post(RouterPath(path)) { request, context -> Response in
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBody { return tooLarge }
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: maxBody)
            } catch is NIOTooManyBytesError {
                return tooLarge
            }
            if fault == .slow { try await Task.sleep(for: .milliseconds(delay)) }
            if fault == .status500 { return Self.json(.internalServerError, #"{"error":"fault injected: status500"}"#) }
            if fault == .malformed { return Self.json(.ok, #"{"action": "junk""#) }
            let query: DeferralQuery
            do {
                query = try DeferralQuery.decode(Data(buffer: body))
            } catch {
                return Self.json(.badRequest, Self.errorJSON(DeferralQuery.refusal(error)))
            }
            let message = TestMessage(sender: query.query.sender, body: query.query.message.text)
            do {
                try message.validate()
            } catch {
                return Self.json(.badRequest, Self.errorJSON("\(error)"))
            }
            let decision = pool.classify(sender: message.sender, body: message.body)
            let answer = DeferralAnswer(
                action: decision.action.description,
                subAction: decision.subAction,
                rule: decision.rule.map { names[$0] }
            )
            return Self.json(.ok, String(decoding: try Self.encoder.encode(answer), as: UTF8.self))
        }
        try await server.run(router: router, path: path, serverName: "blocklist-sms")
    }

    /// Sorted keys: JSONEncoder's order is otherwise not stable from run to run.
    static let encoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// `text` in quotes with line breaks, tabs and other controls escaped, for an error sentence.
    static func quoted(_ text: String) -> String {
        "\""
            + text.unicodeScalars.map {
                $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0)
            }.joined() + "\""
    }

    static func errorJSON(_ sentence: String) -> String {
        let encoded: Data = (try? JSONEncoder().encode(["error": sentence])) ?? Data()
        return String(decoding: encoded, as: UTF8.self)
    }

    /// An app identifier as Apple writes one: a ten-character team ID, a dot, a bundle ID.
    static func checkAppID(_ appID: String) throws {
        let parts = appID.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let team = parts.first ?? ""
        let teamIsValid =
            team.utf8.count == 10 && team.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) }
        let bundle = parts.count == 2 ? parts[1] : ""
        // Letters, digits and hyphens, in parts between single dots (Apple's bundle ID characters).
        let bundleIsValid =
            bundle.utf8.count <= 255
            && bundle.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                !part.isEmpty
                    && part.utf8.allSatisfy {
                        (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45
                    }
            }
        guard teamIsValid, bundleIsValid else {
            throw ValidationError(
                "--app-id \(quoted(appID)) is not TEAMID.BUNDLE-ID, as \"ABCDE12345.com.example.blocklist\": a ten-character team ID of capitals and digits, a dot, then the app's bundle ID."
            )
        }
    }

    /// The apple-app-site-association file for `appIDs`' messagefilter service.
    static func association(_ appIDs: [String]) throws -> String {
        struct Association: Encodable {
            struct Service: Encodable { var apps: [String] }
            var messagefilter: Service
        }
        return String(decoding: try encoder.encode(Association(messagefilter: .init(apps: appIDs))), as: UTF8.self)
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}

/// Classifiers for concurrent requests: each is used by one request at a time.
final class ClassifierPool: Sendable {
    private let rules: CompiledRules
    private let idle: Mutex<[MessageClassifierBox]>

    init(rules: CompiledRules) {
        self.rules = rules
        idle = Mutex([])
    }

    func classify(sender: String, body: String) -> MessageClassifier.Decision {
        let box = idle.withLock { $0.popLast() } ?? MessageClassifierBox(MessageClassifier(rules: rules))
        let decision = box.classifier.classify(sender: sender, body: body)
        idle.withLock { $0.append(box) }
        return decision
    }
}

/// A classifier handed between requests through the pool, one request at a time.
final class MessageClassifierBox: @unchecked Sendable {
    let classifier: MessageClassifier
    init(_ classifier: MessageClassifier) { self.classifier = classifier }
}
