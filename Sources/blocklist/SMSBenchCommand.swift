import ArgumentParser
import ArgumentTypes
import BenchWorkloads
import BlocklistCore
import BlocklistSystem
import CommandSupport
import MessageFilterCompiler
import MessageFilterCore

/// `blocklist sms bench`: a user's own rules on a user's own messages, classified in this process
/// as a server classifies them, or with `--as-extension` within an extension's memory (issue 45,
/// item 8).
struct SMSBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure classification of your own messages by your own rules, in this process.",
        discussion: """
            Loads the rules (a JSON rules file is compiled in memory first, and the time it takes is shown) and \
            the messages (JSON Lines, as sms check reads them), then classifies every message in turn, --rounds \
            times, each round at least --per-round messages (the file again as often as needed), and prints the best \
            round's messages and megabytes a second, one core, with what the messages were decided as. It keeps \
            what a server keeps (each regex shipped as a program a lazy DFA of up to 384 KiB); with --as-extension, \
            what an extension keeps (four, of up to 96 KiB). With \
            --corpus DIR it also writes DIR/sms-corpus, the same rules and messages for \
            Benchmarks/Hyperscan/hs-bench.c (Scripts/hyperscan-bench.sh --rules FILE --messages FILE runs both).
            """
    )

    @Option(
        help: ArgumentHelp("Rules: a JSON rules file, compiled rules, or a directory holding them.", valueName: "path"),
        completion: .file()
    )
    var rules: String

    @Option(
        help: ArgumentHelp("A JSON Lines file of messages, or - for standard input.", valueName: "messages.jsonl"),
        completion: .file()
    )
    var messages: String

    @Option(parsing: .unconditional, help: "How many rounds to time; the best is shown.")
    var rounds: WholeNumber = 3

    @Option(
        parsing: .unconditional,
        help: "The fewest messages a round classifies (the file again as often as needed)."
    )
    var perRound: WholeNumber = 200_000

    @Option(
        help: ArgumentHelp(
            "Write the rules and messages for Hyperscan's harness into this directory.",
            valueName: "dir"
        ),
        completion: .directory
    )
    var corpus: String?

    @Flag(help: "Keep the lazy DFAs an extension keeps (four, of up to 96 KiB each), not a server's.")
    var asExtension = false

    @Flag(help: "Print the results as JSON.")
    var json = false

    func validate() throws {
        try rounds.check("--rounds", 1...100)
        try perRound.check("--per-round", 1...100_000_000)
        if rules == "-" && messages == "-" {
            throw ValidationError("--rules and --messages cannot both read standard input; give one of them a file.")
        }
        if corpus?.isEmpty == true { throw ValidationError("--corpus needs a directory, not an empty name.") }
    }

    struct Result: Encodable {
        var rules: Int
        var messages: Int
        var bytes: Int
        var compileSeconds: Double?
        var classified: Int
        var seconds: Double
        var messagesPerSecond: Double
        var megabytesPerSecond: Double
        var decided: [String: Int]
        var regexAutomata: Int
        var regexPrograms: Int
        /// Whether the lazy DFAs were an extension's (`--as-extension`).
        var asExtension: Bool
        var corpus: String?
    }

    func run() throws {
        let clock = ContinuousClock()
        let input = try RulesLoader.readInput(messages, limit: 256 << 20)
        let loadedMessages = try TestMessage.load(input, source: messages)
        guard !loadedMessages.isEmpty else {
            throw MessageFilterError(.invalidMessage, "\(messages) holds no message; give one JSON object per line.")
        }
        let started = clock.now
        let loaded = try RulesLoader.load(rules)
        let loadSeconds = (clock.now - started).seconds
        printWarnings(loaded.warnings)
        guard loaded.rules.ruleCount > 0 else {
            throw MessageFilterError(
                .invalidRules,
                "\(rules == "-" ? "Standard input" : rules) holds no rules, so every message would be none; there is nothing to bench."
            )
        }
        var corpusPath: String?
        if let corpus {
            guard let source = loaded.source else {
                throw MessageFilterError(
                    .invalidRules,
                    "--corpus needs the JSON rules file: \(rules) is compiled, and Hyperscan reads patterns."
                )
            }
            for (index, rule) in source.rules.enumerated() {
                if let why = SMSBench.hyperscanRefusal(rule) {
                    throw MessageFilterError(
                        .invalidRules,
                        "--corpus cannot write rule \(index + 1) (\"\(rule.name)\") for Hyperscan: \(why)."
                    )
                }
            }
            _ = try FileSystem.makeDirectory(corpus)
            corpusPath = try SMSBench.hyperscanCorpus(
                rules: source.rules,
                messages: loadedMessages.map { ($0.sender, $0.body) },
                in: corpus
            )
        }
        // The messages as the extension gets them: UTF-8 bytes, checked once (TestMessage.load
        // refused bytes that are not UTF-8 and a sender or body past the limits), then classified
        // as the extension host classifies what it checked.
        // All of them in one buffer, each sender and body a span of it: an array per message
        // would be retained and released at each classification.
        var storage: [UInt8] = []
        var spans: [(sender: Range<Int>, body: Range<Int>)] = []
        for message in loadedMessages {
            let senderStart = storage.count
            storage.append(contentsOf: message.sender.utf8)
            let bodyStart = storage.count
            storage.append(contentsOf: message.body.utf8)
            spans.append((senderStart..<bodyStart, bodyStart..<storage.count))
        }
        let bytes = storage.count
        let classifier =
            asExtension
            ? MessageClassifier(
                rules: loaded.rules,
                regexCacheSize: MessageClassifier.extensionRegexCacheSize,
                lazyDFABudget: MessageClassifier.extensionLazyDFABudget
            ) : MessageClassifier(rules: loaded.rules)
        var decided: [String: Int] = [:]
        let firstPass = clock.now
        storage.withUnsafeBufferPointer { all in
            for span in spans {
                let decision = classifier.classify(
                    validatedSender: UnsafeBufferPointer(rebasing: all[span.sender]),
                    body: UnsafeBufferPointer(rebasing: all[span.body])
                )
                decided[decision.action.description, default: 0] += 1
            }
        }
        let (rounds, perRound) = (self.rounds.value, self.perRound.value)
        let passes = max(1, (perRound + spans.count - 1) / spans.count)
        // Long work is announced: the rounds take about this long, by the pass that counted the
        // decisions (64 KiB bodies with costly regexes run at a hundred messages a second).
        let estimate = (clock.now - firstPass).seconds * Double(passes * rounds)
        if !json && estimate > 10 {
            Terminal.error(
                "note: \(rounds) round\(rounds == 1 ? "" : "s") of \(Figures.grouped(Int64(passes * spans.count))) messages will take about \(Figures.grouped(Int64(estimate.rounded()))) s; lower --per-round for a quicker figure.\n"
            )
        }
        var best = Double.infinity
        for round in 1...rounds {
            if !json && Terminal.stderrIsTerminal {
                Terminal.error(Terminal.progressLines(["round \(round) of \(rounds)…"]))
            }
            let roundStarted = clock.now
            var matched = 0
            storage.withUnsafeBufferPointer { all in
                for _ in 0..<passes {
                    for span in spans {
                        let decision = classifier.classify(
                            validatedSender: UnsafeBufferPointer(rebasing: all[span.sender]),
                            body: UnsafeBufferPointer(rebasing: all[span.body])
                        )
                        if decision.rule != nil { matched += 1 }
                    }
                }
            }
            precondition(matched >= 0)
            best = min(best, (clock.now - roundStarted).seconds)
        }
        let classified = passes * spans.count
        let forms = loaded.rules.regexForms
        let result = Result(
            rules: loaded.rules.ruleCount,
            messages: spans.count,
            bytes: bytes,
            compileSeconds: loaded.source == nil ? nil : loadSeconds,
            classified: classified,
            seconds: best,
            messagesPerSecond: Double(classified) / max(best, 1e-9),
            megabytesPerSecond: Double(passes * bytes) / max(best, 1e-9) / 1e6,
            decided: decided,
            regexAutomata: forms.automata,
            regexPrograms: forms.programs,
            asExtension: asExtension,
            corpus: corpusPath
        )
        if json {
            try printJSON(result)
            return
        }
        let grouped = { (value: Int) in Figures.grouped(Int64(value)) }
        print(
            "\(grouped(result.rules)) rules (regexes: \(grouped(forms.automata)) as DFAs, \(grouped(forms.programs)) as programs)\(result.compileSeconds.map { ", compiled in \(milliseconds($0)) ms" } ?? ", compiled")"
        )
        let actions = decided.sorted { $0.key < $1.key }.map { "\(grouped($0.value)) \($0.key)" }
        print(
            "\(grouped(result.messages)) message\(result.messages == 1 ? "" : "s"), \(grouped(bytes)) bytes: \(actions.joined(separator: ", "))"
        )
        print(
            "best of \(rounds) round\(rounds == 1 ? "" : "s") of \(grouped(classified)) messages: \(grouped(Int(result.messagesPerSecond))) messages/s, \(Double(Int(result.megabytesPerSecond * 10)) / 10) MB/s, one core\(asExtension ? ", as an extension keeps its lazy DFAs" : "")"
        )
        if let corpusPath { print("Hyperscan's corpus: \(corpusPath)") }
    }

    private func milliseconds(_ seconds: Double) -> String { Figures.grouped(Int64((seconds * 1000).rounded())) }
}
