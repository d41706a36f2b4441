import BlocklistCore
internal import LibC
import SetStorage

// The version every blocklist command prints for `--version` is BlocklistCore's (the
// notification service host, which has no CommandSupport, prints it too); the commands see it
// through CommandSupport.
@_exported import var BlocklistCore.blocklistVersion

/// The one-line descriptions of the commands that `blocklist` hands to `blocklist-sms`: both
/// executables list them, so they are written once.
package enum SMSCommandText {
    package static let serve =
        "Answer deferred Message Filter queries over HTTP, as a Message Filter extension's server does."
    package static let simulate =
        "Play the Messages app: contacts pass, the extension answers offline, what it leaves at none is deferred to the server."
}

/// `blocklist generate`, defined once: its options, its help, its parser and its exit paths.
///
/// Both entry points run this: the lean `blocklist-generate` executable, which `blocklist` execs
/// so that generate's memory stays small, and `blocklist` itself when that executable is not
/// beside it. swift-argument-parser only lists the command (`GenerateCommand.abstract`), so no
/// option is ever declared twice. The parser reads one argument at a time from any sequence of
/// strings: the lean executable hands it `argv` without building `CommandLine.arguments`.
package enum GenerateCommand {
    package static let abstract = "Generate the shard files and manifest for a block spec."
    package static let discussion = """
        Writes one compressed shard per Call Directory extension and a manifest.json into the output \
        directory. The new set is written aside and committed by renaming the manifest, so a failed or \
        interrupted run leaves the previous set intact. blocklist only ever removes what it wrote: it \
        refuses /, a manifest.json another program wrote, and (without --force) a directory that is \
        neither empty nor a blocklist set.
        """
    package static let usage = "blocklist generate <options>"

    /// What an argument vector asks for.
    package enum Request: Equatable, Sendable {
        case run(GenerateOptions)
        case help
        case version
    }

    /// An argument vector that does not parse or does not validate: exit status 64, with usage.
    package struct UsageError: Error, Equatable, Sendable {
        package var message: String
    }

    /// One option: its names, what it does to the options (a flag's action, or a value's
    /// placeholder and reader), and its help.
    struct Option: Sendable {
        enum Kind: Sendable {
            case flag(@Sendable (inout GenerateOptions) -> Void)
            /// Values that start with `-` are refused as a missing value unless `dashValues`
            /// (numbers, which may be negative and are then refused by validation with the
            /// tool's own sentence; files, where `-` is standard input).
            case value(
                String,
                dashValues: DashValues,
                @Sendable (inout GenerateOptions, String) throws(UsageError) -> Void
            )
        }
        enum DashValues: Sendable { case refused, number, standardInput }
        var long: String
        var short: Character?
        var kind: Kind
        var help: String

        var label: String {
            let names = (short.map { "-\($0), " } ?? "") + "--" + long
            if case .value(let placeholder, _, _) = kind { return names + " <\(placeholder)>" }
            return names
        }
    }

    /// Every name an option of generate answers to, for shell completion (generate's arguments
    /// are parsed here, not by swift-argument-parser, which writes the completion scripts).
    package static var optionNames: [String] {
        options.flatMap { option in ["--" + option.long] + (option.short.map { ["-\($0)"] } ?? []) }
            + ["--version", "--help", "-h"]
    }

    /// Whether option `name` (`--numbers`, `-o`) takes a path: a list file, or the output directory.
    package static func takesPath(_ name: String) -> Bool {
        options.contains { option in
            guard name == "--" + option.long || option.short.map({ name == "-\($0)" }) == true,
                case .value(_, let dashValues, _) = option.kind
            else { return false }
            return dashValues == .standardInput || option.long == "output"
        }
    }

    static let options: [Option] = [
        Option(
            long: "pattern",
            kind: .value("pattern", dashValues: .refused) { options, text throws(UsageError) in
                try wrap { () throws(BlocklistError) in try options.addPattern(text) }
            },
            help:
                "A number pattern: + then digits, # for any digit. Repeat for more. (default: \(BlockSpec.defaultPatterns[0]))"
        ),
        Option(
            long: "exclude",
            kind: .value("digits", dashValues: .refused) { options, text in options.exclusions.append(text) },
            help:
                "Skip numbers whose digits (country code included) contain this string. Repeat for more. (default: \(BlockSpec.defaultExclusions[0]))"
        ),
        Option(
            long: "no-exclusions",
            kind: .flag { $0.noExclusions = true },
            help: "Exclude nothing (instead of the default exclusion)."
        ),
        Option(
            long: "range-size",
            kind: .value("N", dashValues: .number) { options, text throws(UsageError) in
                options.rangeSize = try number(text, "--range-size <N>")
            },
            help: "Candidates per shard: shard i covers ranks [(i-1)·N, i·N). (default: \(BlockSpec.defaultRangeSize))"
        ),
        Option(
            long: "capacity",
            kind: .value("N", dashValues: .number) { options, text throws(UsageError) in
                options.capacity = try number(text, "--capacity <N>")
            },
            help:
                "The most entries a shard may hold (devices refuse 2,000,000). (default: \(BlockSpec.defaultCapacity))"
        ),
        Option(
            long: "numbers",
            kind: .value("file", dashValues: .standardInput) { options, text in options.numbers.append(text) },
            help:
                "A file of numbers to block, one per line or CSV (first column); - for standard input; gzip is read too. Repeat for more."
        ),
        Option(
            long: "allow",
            kind: .value("file", dashValues: .standardInput) { options, text in options.allow.append(text) },
            help: "A file of numbers never to block or identify (allow wins). Repeat for more."
        ),
        Option(
            long: "allow-pattern",
            kind: .value("pattern", dashValues: .refused) { options, text throws(UsageError) in
                try wrap { () throws(BlocklistError) in try options.addAllowPattern(text) }
            },
            help: "A pattern of numbers never to block or identify, e.g. +3316212####. Repeat for more."
        ),
        Option(
            long: "labels",
            kind: .value("file", dashValues: .standardInput) { options, text in options.labels.append(text) },
            help: "A CSV file of number,label: identification entries. Repeat for more."
        ),
        Option(
            long: "list",
            kind: .value("file.json", dashValues: .standardInput) { options, text in options.lists.append(text) },
            help:
                "A list file: JSON patterns, each with an action (block, identify, allow) and a name (the label), as Saracroche's. Repeat for more."
        ),
        Option(
            long: "skip-invalid",
            kind: .flag { $0.skipInvalid = true },
            help: "Skip lines that are not numbers, and report them, instead of refusing the run."
        ),
        Option(
            long: "allow-empty",
            kind: .flag { $0.allowEmpty = true },
            help:
                "Make an empty set when the lists give no number (refused otherwise: an empty set installed empties the list on phones)."
        ),
        Option(
            long: "default-country",
            kind: .value("code", dashValues: .number) { options, text throws(UsageError) in
                options.defaultCountry = try number(
                    text.hasPrefix("+") ? String(text.dropFirst()) : text,
                    "--default-country <code>"
                )
            },
            help: "The country code for numbers written nationally (0 1 62 …), e.g. 33."
        ),
        Option(
            long: "layout",
            kind: .value("range|packed", dashValues: .refused) { options, text throws(UsageError) in
                guard let layout = Manifest.Layout(rawValue: text) else {
                    throw UsageError(message: "--layout is \"\(text)\"; give range or packed.")
                }
                options.layout = layout
            },
            help:
                "range: shard i holds pattern ranks [(i-1)·N, i·N) (default for patterns alone); packed: shards filled with consecutive numbers (default with lists)."
        ),
        Option(
            long: "output",
            short: "o",
            kind: .value("dir", dashValues: .refused) { options, text in options.output = text },
            help: "The output directory (created if its parent exists). (default: Output)"
        ),
        Option(
            long: "no-sync",
            kind: .flag { $0.noSync = true },
            help: "Skip fsync (faster on slow disks; a power cut may then lose the new set, never the old one)."
        ),
        Option(long: "json", kind: .flag { $0.json = true }, help: "Print the summary as JSON."),
        Option(
            long: "force",
            kind: .flag { $0.force = true },
            help: "Write into a directory that is not empty and not a blocklist set (its files are left untouched)."
        ),
    ]

    private static func wrap(_ body: () throws(BlocklistError) -> Void) throws(UsageError) {
        do { try body() } catch { throw UsageError(message: error.message) }
    }

    private static func number(_ text: String, _ label: String) throws(UsageError) -> Int64 {
        guard let value = Int64(text) else {
            throw UsageError(message: "The value '\(text)' is invalid for '\(label)'; give a whole number.")
        }
        return value
    }

    /// Reads `arguments` (those after `generate`): `--name value`, `--name=value`, `-o value`;
    /// repeatable options add, others keep the last value. `-h`/`--help` and `--version` win over
    /// everything else, as in every other command. The options are then validated (the spec, the
    /// output, standard input at most once), so a `.run` is ready to run.
    package static func parse(_ arguments: some Sequence<String>) -> Result<Request, UsageError> {
        var options = GenerateOptions()
        var firstError: UsageError?
        var request: Request?
        // Room for every pattern the arguments can hold: an array that grows by doubling holds
        // its old and new buffers at once, 384 KB for 20,000 patterns. (What is never filled is
        // never touched, so it costs no resident memory.)
        options.reservePatterns(arguments.underestimatedCount / 2)
        var rest = arguments.makeIterator()
        while let argument = rest.next() {
            if asks(argument, for: &request) { continue }
            guard firstError == nil else { continue }
            do throws(UsageError) {
                try read(argument, from: &rest, into: &options, request: &request)
            } catch {
                firstError = error
            }
        }
        if let request { return .success(request) }
        if let firstError { return .failure(firstError) }
        if options.output.isEmpty {
            return .failure(UsageError(message: "--output is empty; give a directory such as Output."))
        }
        if options.listPaths.filter({ $0 == "-" }).count > 1 {
            return .failure(UsageError(message: "Standard input (-) can be read once; give at most one list as -."))
        }
        do {
            _ = try options.spec()
        } catch {
            return .failure(UsageError(message: error.message))
        }
        return .success(.run(options))
    }

    /// Whether `word` asks for help or the version, which win wherever they stand (help over the
    /// version); records it in `request`.
    private static func asks(_ word: String, for request: inout Request?) -> Bool {
        switch word {
        case "-h", "--help": request = .help
        case "--version": request = request ?? .version
        default: return false
        }
        return true
    }

    private static func read(
        _ argument: String,
        from rest: inout some IteratorProtocol<String>,
        into options: inout GenerateOptions,
        request: inout Request?
    ) throws(UsageError) {
        var name = Substring(argument)
        var inlineValue: Substring?
        if argument.hasPrefix("-"), let equals = argument.firstIndex(of: "=") {
            name = argument[..<equals]
            inlineValue = argument[argument.index(after: equals)...]
        }
        if argument == "--" {
            // The end of the options: generate takes no other arguments.
            guard let next = rest.next(), !asks(next, for: &request) else { return }
            throw UsageError(message: "Unexpected argument '\(next)'; generate takes options only (see --help).")
        }
        let option: Option?
        if name.hasPrefix("--") {
            option = Self.option(named: name.dropFirst(2))
        } else if name.count == 2, name.first == "-" {
            option = Self.options.first { $0.short == name.last }
        } else if name.hasPrefix("-") && name != "-" {
            throw UsageError(message: "Unknown option '\(argument)'.")
        } else {
            throw UsageError(message: "Unexpected argument '\(argument)'; generate takes options only (see --help).")
        }
        guard let option else { throw UsageError(message: "Unknown option '\(name)'.") }
        switch option.kind {
        case .flag(let apply):
            guard inlineValue == nil else {
                throw UsageError(message: "'--\(option.long)' is a flag and takes no value (given '\(argument)').")
            }
            apply(&options)
        case .value(_, let dashValues, let apply):
            guard let value = inlineValue.map(String.init) ?? rest.next() else {
                throw UsageError(message: "Missing value for '\(option.label)'.")
            }
            if inlineValue == nil && asks(value, for: &request) { return }
            let refusedDash: Bool
            switch dashValues {
            case .refused: refusedDash = value.hasPrefix("-")
            case .number: refusedDash = false
            case .standardInput: refusedDash = value.hasPrefix("-") && value != "-"
            }
            if refusedDash && inlineValue == nil {
                throw UsageError(message: "Missing value for '\(option.label)' (got the option '\(value)').")
            }
            try apply(&options, value)
        }
    }

    private static func option(named name: Substring) -> Option? {
        options.first { $0.long == name }
    }

    /// The help text, laid out as swift-argument-parser lays out every other command's.
    package static var help: String {
        var text =
            "OVERVIEW: \(abstract)\n\n" + wrapped(discussion, indent: 0, width: 80).joined(separator: "\n") + "\n\n"
        text += "USAGE: \(usage)\n\nOPTIONS:\n"
        let rows =
            options.map { ($0.label, $0.help) } + [
                ("--version", "Show the version."), ("-h, --help", "Show help information."),
            ]
        for (label, help) in rows {
            let lines = wrapped(help, indent: 26, width: 80)
            if label.count + 2 <= 24 {
                text += "  " + label + String(repeating: " ", count: 24 - label.count) + lines[0].dropFirst(26) + "\n"
                for line in lines.dropFirst() { text += line + "\n" }
            } else {
                text += "  " + label + "\n" + lines.joined(separator: "\n") + "\n"
            }
        }
        return text
    }

    /// `text` in lines of at most `width` columns, each indented by `indent` spaces.
    static func wrapped(_ text: String, indent: Int, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && indent + line.count + 1 + word.count > width {
                lines.append(String(repeating: " ", count: indent) + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(String(repeating: " ", count: indent) + line)
        return lines
    }

    /// What a usage error prints, as swift-argument-parser prints one.
    package static func usageMessage(_ error: UsageError) -> String {
        "Error: \(error.message)\nUsage: \(usage)\n  See 'blocklist generate --help' for more information."
    }

    /// Parses `arguments`, runs the command, and exits: 0 after a run, help or version; 64 for
    /// a usage error; 1 for a run that failed. `beforeRun` runs once the arguments are parsed
    /// (the lean executable gives their pages back there).
    package static func main(_ arguments: some Sequence<String>, beforeRun: () -> Void = {}) -> Never {
        // A closed standard input would let the first file opened take descriptor 0, and `-`
        // would then read that file; /dev/null holds the place, and `-` is refused by name.
        let standardInputClosed = fcntl(0, F_GETFD) == -1
        if standardInputClosed { _ = open("/dev/null", O_RDONLY) }
        let json = JSONFailure.requested(arguments)
        switch parse(arguments) {
        case .failure(let error):
            if json { print(JSONFailure.text(code: "usage", message: error.message, exitStatus: 64)) }
            StandardOutput.exit(64, message: usageMessage(error))
        case .success(.help):
            StandardOutput.exit(0, message: help.hasSuffix("\n") ? String(help.dropLast()) : help)
        case .success(.version):
            StandardOutput.exit(0, message: blocklistVersion)
        case .success(.run(let options)) where standardInputClosed && options.listPaths.contains("-"):
            let error = UsageError(
                message: "Standard input is closed, so - has nothing to read; give the list as a file or pipe it in."
            )
            if json { print(JSONFailure.text(code: "usage", message: error.message, exitStatus: 64)) }
            StandardOutput.exit(64, message: usageMessage(error))
        case .success(.run(let options)):
            beforeRun()
            do {
                try GenerateRunner.run(options)
            } catch {
                if json {
                    print(JSONFailure.text(code: error.code.description, message: error.message, exitStatus: 1))
                }
                StandardOutput.exit(1, message: "Error: \(error.message)")
            }
            StandardOutput.exit(0)
        }
    }
}
