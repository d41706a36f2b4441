import ArgumentParser
import Foundation
import Hummingbird
import Logging
import MessageFilterCompiler
import MessageFilterCore
import NIOCore
import Synchronization

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer deferred Message Filter queries over HTTP.",
        discussion: """
            POST the JSON the system sends ({"_version": 1, "query": {"sender": …, "message": {"text": …}}}) to \
            PATH; the answer is {"action": …, "rule": …} from the server's rules. Prints one line, "listening on \
            http://HOST:PORT/PATH", once it accepts connections, and stops cleanly on SIGINT or SIGTERM.
            """)

    @Option(help: ArgumentHelp("The server's rules: a JSON rules file, compiled rules, or a directory holding them.", valueName: "path"))
    var rules: String

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (the line printed says which).")
    var port = 8080

    @Option(help: "The URL path that answers queries.")
    var path = "/"

    @Option(help: ArgumentHelp("For testing deferral failures: answer every query with HTTP 500 (status500), with broken JSON (malformed), or late by --delay-ms (slow).", valueName: "fault"))
    var fault: Fault?

    @Option(help: "With --fault slow: how long to wait before answering, in milliseconds.")
    var delayMs = 5000

    enum Fault: String, ExpressibleByArgument, CaseIterable {
        case status500, malformed, slow
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, not \(port).") }
        guard path.hasPrefix("/") else { throw ValidationError("--path must start with /, as \"/\" or \"/filter\".") }
        guard delayMs >= 0, delayMs <= 600_000 else { throw ValidationError("--delay-ms must be 0…600000.") }
    }

    func run() async throws {
        let loaded = try RulesLoader.load(rules)
        for warning in loaded.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        let pool = ClassifierPool(rules: loaded.rules)
        let names = loaded.rules.rules.map(\.name)
        let router = Router()
        let fault = self.fault
        let delay = self.delayMs
        router.post(RouterPath(path)) { request, context -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 256 * 1024)
            if fault == .slow { try await Task.sleep(for: .milliseconds(delay)) }
            if fault == .status500 { return Self.json(.internalServerError, #"{"error":"fault injected: status500"}"#) }
            if fault == .malformed { return Self.json(.ok, #"{"action": "junk""#) }
            let query: DeferralQuery
            do {
                query = try JSONDecoder().decode(DeferralQuery.self, from: Data(buffer: body))
            } catch {
                return Self.json(.badRequest, #"{"error":"the body is not a deferred query: {\"_version\": 1, \"query\": {\"sender\": …, \"message\": {\"text\": …}}}"}"#)
            }
            let message = TestMessage(sender: query.query.sender, body: query.query.message.text)
            do {
                try message.validate()
            } catch {
                let text = String(decoding: try JSONEncoder().encode(["error": "\(error)"]), as: UTF8.self)
                return Self.json(.badRequest, text)
            }
            let decision = pool.classify(sender: message.sender, body: message.body)
            let answer = DeferralAnswer(action: decision.action.description, subAction: nil, rule: decision.rule.map { names[$0] })
            return Self.json(.ok, String(decoding: try JSONEncoder().encode(answer), as: UTF8.self))
        }
        var logger = Logger(label: "blocklist-sms")
        logger.logLevel = .warning
        let announced = "listening on http://\(host):%d\(path)"
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "blocklist-sms"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                // Unbuffered, so that a script reading a pipe sees it at once.
                FileHandle.standardOutput.write(Data((announced.replacingOccurrences(of: "%d", with: "\(bound)") + "\n").utf8))
            },
            logger: logger
        )
        try await app.runService()
        FileHandle.standardOutput.write(Data("stopped\n".utf8))
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
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
