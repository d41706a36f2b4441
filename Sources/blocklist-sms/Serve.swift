import ArgumentParser
import ArgumentTypes
import CommandSupport
import DeferralProtocol
import Foundation
import Hummingbird
import HummingbirdCore
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

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(parsing: .unconditional, help: "The port to listen on; 0 picks a free one (the line printed says which).")
    var port: WholeNumber = 8080

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
        help: ArgumentHelp(
            "How long a request's head may take to arrive, from the connection's accept or the request's first byte, in milliseconds.",
            valueName: "ms"
        )
    )
    var headerTimeoutMs: WholeNumber = 10_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a request's body may take to arrive after its head, in milliseconds.",
            valueName: "ms"
        )
    )
    var bodyTimeoutMs: WholeNumber = 10_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a kept-alive connection may wait for its next request, in milliseconds.",
            valueName: "ms"
        )
    )
    var idleTimeoutMs: WholeNumber = 30_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How many connections are served at once; more wait in the kernel's queue until one closes.",
            valueName: "N"
        )
    )
    var maxConnections: WholeNumber = 1024

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The largest request body, in bytes; a larger one is answered 413.", valueName: "bytes")
    )
    var maxBodyBytes: WholeNumber = 409_600

    enum Fault: String, ExpressibleByArgument, CaseIterable {
        case status500, malformed, slow
    }

    func validate() throws {
        try port.check("--port", 0...65535)
        guard path.hasPrefix("/") else { throw ValidationError("--path must start with /, as \"/\" or \"/filter\".") }
        // What a request line can carry as it is: no spaces, controls, query or fragment.
        guard path.utf8.allSatisfy({ (33...126).contains($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        else {
            throw ValidationError(
                "--path may hold only visible ASCII characters other than ? and #, as \"/filter\"; \(Self.quoted(path)) does not."
            )
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ (33...126).contains($0) }) else {
            throw ValidationError(
                "--host must be an address or a host name, as 127.0.0.1, ::1 or localhost; \(Self.quoted(host)) is not."
            )
        }
        try delayMs.check("--delay-ms", 0...600_000)
        try headerTimeoutMs.check("--header-timeout-ms", 1...3_600_000)
        try bodyTimeoutMs.check("--body-timeout-ms", 1...3_600_000)
        try idleTimeoutMs.check("--idle-timeout-ms", 1...3_600_000)
        try maxConnections.check("--max-connections", 1...100_000)
        try maxBodyBytes.check("--max-body-bytes", 1...16 << 20)
    }

    func run() async throws {
        let loaded = try RulesLoader.load(rules)
        for warning in loaded.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        try Self.reserveDescriptors(for: maxConnections.value)
        let pool = ClassifierPool(rules: loaded.rules)
        let names = loaded.rules.rules.map(\.name)
        let router = Router()
        let fault = self.fault
        let delay = self.delayMs.value
        let maxBody = self.maxBodyBytes.value
        let tooLarge = Self.json(
            .contentTooLarge,
            Self.errorJSON("The request body is over \(maxBody) bytes; a deferred query is much smaller.")
        )
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
                subAction: nil,
                rule: decision.rule.map { names[$0] }
            )
            return Self.json(.ok, String(decoding: try Self.encoder.encode(answer), as: UTF8.self))
        }
        var logger = Logger(label: "blocklist-sms")
        logger.logLevel = .warning
        // An IPv6 address goes in brackets in a URL (RFC 3986), so the line can be pasted as one.
        let announced = "listening on http://\(host.contains(":") ? "[\(host)]" : host):%d\(path)"
        let timeouts = ConnectionTimeouts(
            header: .milliseconds(Int64(headerTimeoutMs.value)),
            body: .milliseconds(Int64(bodyTimeoutMs.value)),
            idle: .milliseconds(Int64(idleTimeoutMs.value))
        )
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(inner: HTTP1Channel(responder: responder), timeouts: timeouts)
            },
            configuration: .init(
                address: .hostname(host, port: port.value),
                serverName: "blocklist-sms",
                availableConnectionsDelegate: MaximumAvailableConnections(maxConnections.value)
            ),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                // Unbuffered, so that a script reading a pipe sees it at once.
                FileHandle.standardOutput.write(
                    Data((announced.replacingOccurrences(of: "%d", with: "\(bound)") + "\n").utf8)
                )
            },
            logger: logger
        )
        var configuration = ServiceGroupConfiguration(
            services: [app],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // Graceful shutdown answers what has arrived; whatever still runs after 4 s is cancelled,
        // so that the process is gone within 5 s of the signal.
        configuration.maximumGracefulShutdownDuration = .seconds(4)
        configuration.maximumCancellationDuration = .milliseconds(500)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError {
            let what =
                error.description.hasPrefix("bind")
                ? "Listening on \(host) port \(port.value) failed" : "The server failed"
            throw MessageFilterError(
                .io,
                "\(what): \(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))."
            )
        } catch is SocketAddressError.UnknownHost {
            throw MessageFilterError(
                .io,
                "Listening on \(Self.quoted(host)) failed: it is neither an IP address nor a host name this machine can resolve."
            )
        }
        FileHandle.standardOutput.write(Data("stopped\n".utf8))
    }

    /// Raises the soft limit on open descriptors to what `connections` need (with room for the
    /// process's own), up to the hard limit.
    ///
    /// - Throws: `MessageFilterError` naming the limit when the hard limit is too low.
    static func reserveDescriptors(for connections: Int) throws {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let needed = rlim_t(connections + 64)
        guard limit.rlim_cur < needed else { return }
        guard limit.rlim_max >= needed else {
            throw MessageFilterError(
                .io,
                "--max-connections \(connections) needs \(needed) open files, but this process may open at most \(limit.rlim_max) (ulimit -Hn)."
            )
        }
        limit.rlim_cur = needed
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
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
