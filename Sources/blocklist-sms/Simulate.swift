import ArgumentParser
import ArgumentTypes
import BlocklistCore
import BlocklistSystem
import CommandSupport
import DeferralProtocol
import Foundation
internal import LibC
import MessageFilterCompiler
import MessageFilterCore
import MessageFilterHosting

struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: SMSCommandText.simulate,
        discussion: """
            Messages from --contacts never reach the extension (iOS delivers them). For the others the extension, a \
            separate process with no network (blocklist-message-filter), answers offline; when it answers none and \
            asks to defer, this program posts the query to --server, as the system does, and hands the response back \
            to the extension for the final action. A server that is down, slow, answers HTTP 500 or broken JSON ends \
            in none, with the reason. Prints each message's action, rule and whether it was deferred, then counts per \
            action, messages/s, p50 and p99 latency offline and deferred, and the extension's peak memory.
            """,
        version: blocklistVersion
    )

    @Option(
        help: ArgumentHelp(
            "The extension's rules: compiled rules, a directory holding them, or a JSON rules file.",
            valueName: "path"
        )
    )
    var rules: String

    @Option(
        help: ArgumentHelp(
            "A JSON Lines file of messages ({\"sender\": …, \"body\": …} per line), or - for standard input.",
            valueName: "messages.jsonl"
        )
    )
    var file: String

    @Option(
        help: ArgumentHelp(
            "A file of contacts' senders, one per line; their messages are never filtered. Phone numbers match as numbers, other senders regardless of case.",
            valueName: "file"
        )
    )
    var contacts: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The country calling code of the contacts' and senders' national numbers, e.g. 1 or 82.",
            valueName: "code"
        )
    )
    var countryCode: WholeNumber?

    @Option(
        help: ArgumentHelp(
            "The deferral server, http://HOST:PORT/PATH (the extension's ILMessageFilterExtensionNetworkURL).",
            valueName: "url"
        )
    )
    var server: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How long to wait for the server, in milliseconds.", valueName: "ms")
    )
    var timeoutMs: WholeNumber = 2000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How many deferred queries may be in flight at once.", valueName: "N")
    )
    var concurrency: WholeNumber = 8

    @Flag(help: "Print only the summary, not a line per message.")
    var quiet = false

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(help: .hidden)
    var extensionHost: String?

    func validate() throws {
        try concurrency.check("--concurrency", 1...10_000)
        try countryCode?.check("--country-code", 1...999)
        try timeoutMs.check("--timeout-ms", 1...600_000)
        if let server, HTTPPoster(url: server, timeoutMilliseconds: Int64(timeoutMs.value)) == nil {
            throw ValidationError(
                "--server must be http://HOST:PORT/PATH, as http://127.0.0.1:8080/; \"\(server)\" is not."
            )
        }
    }

    struct Result: Codable, Sendable {
        var message: Int
        var sender: String
        var action: String
        var rule: String?
        var subAction: String?
        var deferred: Bool
        var contact: Bool
        var reason: String?
        var offlineMicroseconds: Double?
        var deferredMicroseconds: Double?
    }

    struct Summary: Codable {
        var messages: Int
        var actions: [String: Int]
        var deferred: Int
        var seconds: Double
        var messagesPerSecond: Double
        var offlineP50Microseconds: Double?
        var offlineP99Microseconds: Double?
        var deferredP50Microseconds: Double?
        var deferredP99Microseconds: Double?
        var extensionPeakKiB: Int?
    }

    struct Report: Codable {
        var results: [Result]
        var summary: Summary
    }

    func run() async throws {
        let messages = try TestMessage.load(try RulesLoader.readInput(file, limit: 256 << 20), source: file)
        var known = ContactList(defaultCountryCode: countryCode.map { Int($0.value) })
        if let contacts {
            let bytes = try RulesLoader.readInput(contacts, limit: 64 << 20)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw MessageFilterError(.io, "\(contacts) is not valid UTF-8; write the contacts file as UTF-8 text.")
            }
            known = ContactList(file: text, defaultCountryCode: known.defaultCountryCode)
        }
        // The extension loads compiled rules; a JSON rules file is compiled to a temporary
        // directory of ours, removed at the end.
        var temporary: String?
        defer { if let temporary { try? FileManager.default.removeItem(atPath: temporary) } }
        var compiledPath = CompiledRulesFile.resolve(rules)
        let head = try RulesLoader.readInput(compiledPath, limit: CompiledRulesFormat.maximumFileSize)
        let names: [String]
        if head.starts(with: CompiledRulesFormat.magic) {
            names = try CompiledRules(bytes: head, name: compiledPath).rules.map(\.name)
        } else {
            let file = try RulesFile.load(bytes: head, source: rules)
            for warning in file.warnings { Terminal.error("warning: \(warning)\n") }
            var template = Array((NSTemporaryDirectory() + "/blocklist-sms-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                throw MessageFilterError(
                    .io,
                    "Cannot create a temporary directory: \(String(cString: strerror(errno)))."
                )
            }
            temporary = String(cString: made)
            compiledPath = try CompiledRulesFile.write(RulesCompiler.compile(file.rules), toDirectory: temporary!)
            names = file.rules.map(\.name)
        }
        let host = extensionHost ?? siblingExecutable("blocklist-message-filter")
        let link = try ExtensionLink(path: host, rules: compiledPath)
        let poster = server.flatMap { HTTPPoster(url: $0, timeoutMilliseconds: Int64(timeoutMs.value)) }
        let concurrency = self.concurrency.value

        let clock = ContinuousClock()
        let started = clock.now
        var results = [Result?](repeating: nil, count: messages.count)
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var inFlight = 0
            for (index, message) in messages.enumerated() {
                var result = Result(
                    message: index + 1,
                    sender: message.sender,
                    action: "allow",
                    deferred: false,
                    contact: false
                )
                if known.contains(message.sender) {
                    result.contact = true
                    result.reason = "a contact: iOS does not ask the extension"
                    results[index] = result
                    continue
                }
                let asked = clock.now
                let answer = try await link.query(sender: Array(message.sender.utf8), body: Array(message.body.utf8))
                result.offlineMicroseconds = (clock.now - asked).microseconds
                result.action = answer.action.description
                result.subAction = answer.subAction
                result.rule = answer.rule.map { names[$0] }
                result.reason = answer.reason
                guard answer.deferToServer else {
                    results[index] = result
                    continue
                }
                result.deferred = true
                guard let poster else {
                    result.reason = "no server to defer to (give --server)"
                    results[index] = result
                    continue
                }
                if inFlight >= concurrency, let (done, finished) = try await group.next() {
                    results[done] = finished
                    inFlight -= 1
                }
                inFlight += 1
                let query = try JSONEncoder().encode(DeferralQuery(sender: message.sender, body: message.body))
                group.addTask { [result] in
                    var result = result
                    let posted = clock.now
                    let outcome = await poster.post(Array(query))
                    let answer: MessageFilterWire.Answer
                    switch outcome {
                    case .response(let status, let body):
                        answer = try await link.respond(status: Int32(status), body: body)
                    case .failed(let reason):
                        answer = try await link.respond(status: -1, body: Array(reason.utf8))
                    }
                    result.deferredMicroseconds = (clock.now - posted).microseconds
                    result.action = answer.action.description
                    result.subAction = answer.subAction
                    result.rule = nil
                    result.reason = answer.reason
                    return (index, result)
                }
            }
            for try await (done, finished) in group { results[done] = finished }
        }
        let elapsed = (clock.now - started).seconds
        let peak = await link.finish()
        let finished = results.map { $0! }

        var actions: [String: Int] = [:]
        for result in finished { actions[result.action, default: 0] += 1 }
        let offline = finished.compactMap(\.offlineMicroseconds).sorted()
        let deferred = finished.compactMap(\.deferredMicroseconds).sorted()
        let summary = Summary(
            messages: finished.count,
            actions: actions,
            deferred: finished.filter(\.deferred).count,
            seconds: elapsed,
            messagesPerSecond: elapsed > 0 ? Double(finished.count) / elapsed : 0,
            offlineP50Microseconds: percentile(offline, 0.5),
            offlineP99Microseconds: percentile(offline, 0.99),
            deferredP50Microseconds: percentile(deferred, 0.5),
            deferredP99Microseconds: percentile(deferred, 0.99),
            extensionPeakKiB: peak
        )
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(
                String(
                    decoding: try encoder.encode(Report(results: quiet ? [] : finished, summary: summary)),
                    as: UTF8.self
                )
            )
            return
        }
        if !quiet {
            for result in finished {
                var line = "#\(result.message)  \(pad(result.action, 12))"
                if result.contact {
                    print(line + "contact, not asked")
                    continue
                } else if let rule = result.rule {
                    line += "rule \"\(rule)\""
                } else if result.deferred, result.reason == nil {
                    line += "server"
                } else {
                    line += "-"
                }
                if let sub = result.subAction { line += " (\(sub))" }
                line += result.deferred ? "  deferred" : "  offline"
                if let reason = result.reason, !result.contact { line += ": \(reason)" }
                print(line)
            }
        }
        let counts = ["allow", "junk", "promotion", "transaction", "none"].map { "\($0) \(actions[$0] ?? 0)" }
        print(
            "\(Figures.counted(finished.count, "message")) in \(String(format: "%.3f", elapsed)) s (\(Figures.grouped(Int64(summary.messagesPerSecond.rounded()))) messages/s): \(counts.joined(separator: ", "))"
        )
        print(
            "offline:  \(offline.count) answered, p50 \(micro(summary.offlineP50Microseconds)), p99 \(micro(summary.offlineP99Microseconds))"
        )
        print(
            "deferred: \(summary.deferred) deferred, p50 \(micro(summary.deferredP50Microseconds)), p99 \(micro(summary.deferredP99Microseconds))"
        )
        print("extension peak RSS: \(peak.map { "\(Figures.grouped($0)) KiB" } ?? "unknown")")
    }
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    return sorted[
        min(
            sorted.count - 1,
            Int((Double(sorted.count) * fraction).rounded(.up)) - 1 < 0
                ? 0 : Int((Double(sorted.count) * fraction).rounded(.up)) - 1
        )
    ]
}

func micro(_ value: Double?) -> String {
    guard let value else { return "-" }
    return value >= 1000 ? String(format: "%.2f ms", value / 1000) : String(format: "%.0f µs", value)
}

extension Duration {
    var microseconds: Double { seconds * 1e6 }
}

/// The extension process, one frame exchange at a time (the pipe carries one conversation).
actor ExtensionLink {
    private let child: ChildProcess
    private let channel: FrameChannel

    init(path: String, rules: String) throws {
        child = try ChildProcess(path: path, arguments: [rules])
        channel = FrameChannel(input: child.output, output: child.inputDescriptor)
    }

    func query(sender: [UInt8], body: [UInt8]) throws -> MessageFilterWire.Answer {
        try exchange(MessageFilterWire.encodeQuery(sender: sender, body: body))
    }

    func respond(status: Int32, body: [UInt8]) throws -> MessageFilterWire.Answer {
        try exchange(MessageFilterWire.encodeNetworkResponse(status: status, body: body))
    }

    private func exchange(_ frame: [UInt8]) throws -> MessageFilterWire.Answer {
        do {
            try channel.write(frame)
            return try channel.readAnswer()
        } catch {
            try? child.wait()
            throw MessageFilterError(
                .io,
                "The message filter extension stopped answering (\(error.message)); it exited with status \(child.exitStatus)\(child.termSignal != 0 ? ", signal \(child.termSignal)" : "")."
            )
        }
    }

    /// Ends the extension and gives its peak resident memory in KiB.
    func finish() -> Int? {
        let peak = child.peakResidentKiB()
        child.release()
        try? child.wait()
        return peak
    }
}
