import ArgumentParser
import BlocklistCore
import CommandSupport
import MessageFilterCompiler
import MessageFilterCore

/// `blocklist sms`: rules for the Message Filter extension, the second extension blocking apps ship.
struct SMS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sms",
        abstract:
            "Compile and check SMS rules for a Message Filter extension, serve deferred queries, simulate Messages.",
        discussion: """
            Rules (a JSON array) match a message's sender or body by prefix, suffix, contains or regex, or the \
            hosts it links to by domain, and give allow, junk, promotion or transaction (with an iOS 16 \
            sub-action). A rule may instead combine conditions: all of "all" must hold and none of "none". \
            Options: caseSensitive, normalize, and confusables (look-alike letters match, as UTS #39 has them). \
            Precedence: allow, then junk, then transaction, then promotion; among rules with the same action the \
            first in the file decides. No match gives none, which the extension may defer to a server. \
            docs/MESSAGE-FILTER.md has every field with an example.
            """,
        subcommands: [
            SMSCompile.self, SMSVerify.self, SMSCheck.self, SMSBenchCommand.self, SMSServe.self, SMSSimulate.self,
        ]
    )
}

/// Prints the rules file's warnings to standard error.
func printWarnings(_ warnings: [String]) {
    for warning in warnings { Terminal.error("warning: \(warning)\n") }
}

struct SMSCompile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compile",
        abstract: "Compile a rules file into the file a Message Filter extension loads.",
        discussion: """
            Writes DIR/\(CompiledRulesFile.name) aside and renames it into place; an existing file there is replaced \
            only if it is compiled rules. Rules that repeat or contradict others get a warning: precedence decides.
            """
    )

    @Argument(
        help: ArgumentHelp("The rules file (JSON), or - for standard input.", valueName: "rules.json"),
        completion: .file()
    )
    var rules: String

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("The directory to write \(CompiledRulesFile.name) into.", valueName: "dir"),
        completion: .directory
    )
    var output: String

    @Flag(
        help: """
            Compile a rules file that holds no rules (refused otherwise: the extension would let every \
            message through).
            """
    )
    var allowEmpty = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    struct Report: Encodable {
        var file: String
        var rules: Int
        var bytes: Int
        var states: Int
        /// Regex rules shipped as a DFA, and as their NFA program (the DFA was too large).
        var regexAutomata: Int
        var regexPrograms: Int
        var warnings: [String]
    }

    func run() throws {
        let bytes = try RulesLoader.readInput(rules, limit: RulesFile.maximumBytes)
        let file = try RulesFile.load(bytes: bytes, source: rules)
        guard !file.rules.isEmpty || allowEmpty else {
            throw MessageFilterError(
                .invalidRules,
                "\(rules == "-" ? "Standard input" : rules) holds no rules, so the extension would let every message through; nothing was written. Add rules, or pass --allow-empty to compile an empty file on purpose."
            )
        }
        let compiled = RulesCompiler.compile(file.rules)
        // Read back before it is written: what lands on disk is what an extension accepts.
        let check = try CompiledRules(bytes: compiled, name: rules)
        guard output != "-" else {
            throw MessageFilterError(
                .invalidRules,
                "--output names the directory the compiled file goes to; - (standard output) cannot hold it. Give a directory."
            )
        }
        let path = try CompiledRulesFile.write(compiled, toDirectory: output)
        printWarnings(file.warnings)
        if json {
            try printJSON(
                Report(
                    file: path,
                    rules: file.rules.count,
                    bytes: compiled.count,
                    states: check.stateCount,
                    regexAutomata: check.regexForms.automata,
                    regexPrograms: check.regexForms.programs,
                    warnings: file.warnings
                )
            )
            return
        }
        var kinds: [MatchKind: Int] = [:]
        for rule in file.rules { kinds[rule.match, default: 0] += 1 }
        let summary = MatchKind.allCases.compactMap { kind in
            kinds[kind].map { "\(Figures.grouped(Int64($0))) \(kind == .all ? "combined" : kind.description)" }
        }
        print(
            "Compiled \(Figures.grouped(Int64(file.rules.count))) rule\(file.rules.count == 1 ? "" : "s")\(summary.isEmpty ? "" : " (\(summary.joined(separator: ", ")))") into \(path)"
        )
        print(
            "  \(Figures.grouped(Int64(compiled.count))) bytes, \(Figures.grouped(Int64(check.stateCount))) automaton states"
        )
        let forms = check.regexForms
        if forms.automata + forms.programs > 0 {
            print(
                "  regexes: \(Figures.grouped(Int64(forms.automata))) as DFAs, \(Figures.grouped(Int64(forms.programs))) as programs (their DFA would pass \(Figures.grouped(Int64(RegexAutomaton.maximumStates))) states or the file's budget)"
            )
        }
        // Which ones, and what a crafted text can cost them (docs/MESSAGE-FILTER.md).
        let programs = check.programRegexes
        for (rule, instructions) in programs.prefix(10) {
            print(
                "  rule \(rule + 1) (\"\(check.rule(rule).name)\"): a program of \(Figures.grouped(Int64(instructions))) instructions; it reads the whole message, up to \(Figures.grouped(Int64(instructions))) steps a character where a text keeps its lazy DFA building states"
            )
        }
        if programs.count > 10 {
            print("  and \(Figures.grouped(Int64(programs.count - 10))) more regexes as programs")
        }
    }
}

struct SMSVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Check a compiled rules file completely: magic, version, checksums, structure, and every compiled regex (DFA or program).",
        discussion:
            "With --source, also check that it is exactly what that rules file compiles to. Exits 0 only if all holds."
    )

    @Argument(
        help: ArgumentHelp(
            "The compiled rules, or the directory holding \(CompiledRulesFile.name).",
            valueName: "file"
        ),
        completion: .file()
    )
    var file: String

    /// Named `--source`, not `--rules`: elsewhere `--rules` names the rules a command works with,
    /// and here that is the compiled file, the argument.
    @Option(
        help: ArgumentHelp("The rules file (JSON) it should have been compiled from.", valueName: "rules.json"),
        completion: .file()
    )
    var source: String?

    @Flag(help: "Print the result as JSON.")
    var json = false

    struct Report: Encodable {
        var file: String
        var rules: Int
        var states: Int
        var bytes: Int
        /// Regex rules shipped as a DFA, and as their NFA program (the DFA was too large).
        var regexAutomata: Int
        var regexPrograms: Int
        /// The rules file it was compared with, if any.
        var source: String?
    }

    func run() throws {
        let path = CompiledRulesFile.resolve(file)
        let bytes = try RulesLoader.readInput(path, limit: CompiledRulesFormat.maximumFileSize)
        let compiled = try CompiledRules(bytes: bytes, name: path)
        if let source {
            let file = try RulesFile.load(
                bytes: try RulesLoader.readInput(source, limit: RulesFile.maximumBytes),
                source: source
            )
            guard RulesCompiler.compile(file.rules) == bytes else {
                throw MessageFilterError(
                    .corruptRules,
                    "\(path) is sound but is not what \(source) compiles to; run blocklist sms compile again."
                )
            }
        }
        if json {
            try printJSON(
                Report(
                    file: path,
                    rules: compiled.rules.count,
                    states: compiled.stateCount,
                    bytes: compiled.byteCount,
                    regexAutomata: compiled.regexForms.automata,
                    regexPrograms: compiled.regexForms.programs,
                    source: source
                )
            )
            return
        }
        print(
            "OK: \(path): \(Figures.grouped(Int64(compiled.rules.count))) rule\(compiled.rules.count == 1 ? "" : "s"), \(Figures.grouped(Int64(compiled.stateCount))) states, "
                + "\(Figures.grouped(Int64(compiled.byteCount))) bytes\(source.map { ", matches \($0)" } ?? "")"
        )
    }
}

struct SMSCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Classify messages offline and print each one's action and the rule that decided it.",
        discussion: """
            Give one message with --sender and --body, or a JSON Lines file with --file (one {"sender": …, "body": …} \
            per line). Every message is checked before any is classified: an empty sender, invalid UTF-8 or a body \
            over 64 KiB stops the command with the line's number.
            """
    )

    @Option(
        help: ArgumentHelp("Rules: a JSON rules file, compiled rules, or a directory holding them.", valueName: "path"),
        completion: .file()
    )
    var rules: String

    @Option(help: "The sender of one message.")
    var sender: String?

    @Option(help: "The body of one message.")
    var body: String?

    @Option(
        help: ArgumentHelp("A JSON Lines file of messages, or - for standard input.", valueName: "messages.jsonl"),
        completion: .file()
    )
    var file: String?

    @Flag(help: "Print the results as JSON.")
    var json = false

    func validate() throws {
        if file != nil, sender != nil || body != nil {
            throw ValidationError("Give either --file or --sender and --body, not both.")
        }
        if file == nil, sender == nil || body == nil {
            throw ValidationError("Give --sender and --body for one message, or --file for many.")
        }
    }

    struct Result: Encodable {
        var message: Int
        var sender: String
        var action: String
        var subAction: String?
        var rule: Int?
        var ruleName: String?
        var wouldDefer: Bool
    }

    func run() throws {
        let messages: [TestMessage]
        if let file {
            messages = try TestMessage.load(try RulesLoader.readInput(file, limit: 256 << 20), source: file)
        } else {
            let message = TestMessage(sender: sender!, body: body!)
            try message.validate()
            messages = [message]
        }
        let loaded = try RulesLoader.load(rules)
        printWarnings(loaded.warnings)
        let classifier = MessageClassifier(rules: loaded.rules)
        var results: [Result] = []
        for (index, message) in messages.enumerated() {
            let decision = classifier.classify(sender: message.sender, body: message.body)
            let name = decision.rule.map { loaded.rules.rule($0).name }
            results.append(
                Result(
                    message: index + 1,
                    sender: message.sender,
                    action: decision.action.description,
                    subAction: decision.subAction,
                    rule: decision.rule.map { $0 + 1 },
                    ruleName: name,
                    wouldDefer: decision.action == .none
                )
            )
        }
        if json {
            // One object, as every command prints with --json.
            try printJSON(["messages": results])
            return
        }
        for result in results {
            let decided =
                result.rule.map { "rule \($0) \"\(result.ruleName!)\"" }
                ?? "no rule matched; the extension would defer it"
            // A file's messages are numbered however many it holds, so that scripts read one form.
            let label = file == nil ? "" : "message \(result.message): "
            let action = result.action + (result.subAction.map { " (\($0))" } ?? "")
            print("\(label)\(pad(action, 12))\(action.count >= 12 ? " " : "")\(decided)")
        }
    }
}

/// `sms serve` and `sms simulate` run in `blocklist-sms`, which `blocklist` execs before it parses
/// anything (see Blocklist.main), so that SwiftNIO stays out of this program. These entries list
/// them in help, and exec it too if reached some other way.
struct SMSServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: SMSCommandText.serve
    )

    @Argument(parsing: .captureForPassthrough, help: "See blocklist sms serve --help.")
    var arguments: [String] = []

    func run() throws { try handOver(["serve"] + arguments) }
}

struct SMSSimulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: SMSCommandText.simulate
    )

    @Argument(parsing: .captureForPassthrough, help: "See blocklist sms simulate --help.")
    var arguments: [String] = []

    func run() throws { try handOver(["simulate"] + arguments) }
}

func handOver(_ arguments: [String]) throws {
    StandardOutput.flush()
    let path = siblingExecutable("blocklist-sms")
    let reason = replaceProcess(with: path, arguments: ["blocklist-sms"] + arguments)
    throw MessageFilterError(.io, missingHelper("blocklist-sms") ?? "Cannot run \(path): \(reason).")
}
