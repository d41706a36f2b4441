import BlocklistCore
import BlocklistLists
import BlocklistSet
import BlocklistSystem

/// `blocklist generate`'s work, shared by the CLI (which parses with swift-argument-parser) and by
/// the small `blocklist-generate` executable it hands the command to, so both print the same.
///
/// This module links no Foundation: `generate` runs within an extension-sized memory budget.
public struct GenerateOptions: Equatable, Sendable {
    /// The `--pattern`s, parsed as they are added (`addPattern`): 8 bytes each, so that twenty
    /// thousand of them cost 160 KB, shared with the spec and the manifest without a copy.
    public private(set) var patterns: [BlockPattern] = []
    /// How many patterns were written without their `+`, and the first of them, for one note.
    public private(set) var patternsWithoutPlus = 0
    public private(set) var firstPatternWithoutPlus: String?
    public var exclusions: [String] = []
    public var noExclusions = false
    public var rangeSize = BlockSpec.defaultRangeSize
    public var capacity = BlockSpec.defaultCapacity
    public var output = "Output"
    public var noSync = false
    public var json = false
    public var force = false
    /// List inputs (a packed set).
    public var numbers: [String] = []
    public var allow: [String] = []
    public private(set) var allowPatterns: [BlockPattern] = []
    public var labels: [String] = []
    public var lists: [String] = []
    public var skipInvalid = false
    public var defaultCountry: Int64?
    /// "range" or "packed"; `nil` chooses packed when lists are given.
    public var layout: String?

    public init() {}

    /// Adds a `--pattern`.
    ///
    /// - Throws: `BlocklistError` naming what in `text` is not a pattern.
    public mutating func addPattern(_ text: String) throws(BlocklistError) {
        patterns.append(try BlockPattern(parsing: text))
        if !text.hasPrefix("+") {
            patternsWithoutPlus += 1
            if firstPatternWithoutPlus == nil { firstPatternWithoutPlus = text }
        }
    }

    /// Adds an `--allow-pattern`.
    ///
    /// - Throws: `BlocklistError` naming what in `text` is not a pattern.
    public mutating func addAllowPattern(_ text: String) throws(BlocklistError) {
        allowPatterns.append(try BlockPattern(parsing: text))
    }

    /// Whether any list input is given.
    public var hasLists: Bool { !numbers.isEmpty || !allow.isEmpty || !allowPatterns.isEmpty || !labels.isEmpty || !lists.isEmpty }

    /// The list files given, each of which may be `-` (standard input) once among them all.
    public var listPaths: [String] { numbers + allow + labels + lists }

    /// Whether the set is packed.
    public var isPacked: Bool { layout == "packed" || (layout == nil && hasLists) }

    /// The validated spec; with lists and no pattern, `nil` (no patterns).
    public func patternSpec() throws(BlocklistError) -> BlockSpec? {
        if hasLists && patterns.isEmpty { return nil }
        return try spec()
    }

    /// The validated spec.
    public func spec() throws(BlocklistError) -> BlockSpec {
        if noExclusions && !exclusions.isEmpty {
            throw BlocklistError(.invalidSpec, "--no-exclusions and --exclude contradict each other; give one.")
        }
        if let layout, layout != "range" && layout != "packed" {
            throw BlocklistError(.invalidSpec, "--layout is \"\(layout)\"; give range or packed.")
        }
        if layout == "range" && hasLists {
            throw BlocklistError(
                .invalidSpec, "--layout range cuts pattern ranks, so it takes no --numbers, --allow, --allow-pattern, --labels or --list; use --layout packed.")
        }
        if let defaultCountry, !(1...999).contains(defaultCountry) {
            throw BlocklistError(.invalidSpec, "--default-country \(defaultCountry) is not a country code; give 1 to 999, such as 33.")
        }
        if patterns.isEmpty {
            return try BlockSpec(
                patterns: BlockSpec.defaultPatterns,
                exclusions: noExclusions ? [] : (exclusions.isEmpty ? BlockSpec.defaultExclusions : exclusions),
                rangeSize: rangeSize, capacity: capacity)
        }
        return try BlockSpec(
            patterns: patterns,
            exclusions: noExclusions ? [] : (exclusions.isEmpty ? BlockSpec.defaultExclusions : exclusions),
            rangeSize: rangeSize, capacity: capacity)
    }

    /// Reads the arguments after `generate` in the forms the help documents, each option at most
    /// once (`--pattern` and `--exclude` may repeat): `--name value`, `--name=value`, `-o value`.
    ///
    /// - Returns: `nil` for anything else (help, an unknown or repeated option, a value that
    ///   starts with `-`, a number that does not parse, a spec that does not validate): the CLI's
    ///   swift-argument-parser then parses the same arguments and says what is wrong.
    public static func parseStrictly(_ arguments: some Sequence<String>) -> GenerateOptions? {
        var options = GenerateOptions()
        var seen: Set<String> = []
        // Room for every pattern the arguments can hold, taken at the first: an array that grows
        // by doubling holds its old and new buffers at once, 384 KB for 20,000 patterns.
        let mostPatterns = arguments.underestimatedCount / 2
        var rest = arguments.makeIterator()
        while let argument = rest.next() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if name == "-o" { name = "--output" }
            func value() -> String? {
                guard let text = inlineValue ?? rest.next(), !text.hasPrefix("-") else { return nil }
                return text
            }
            let repeatable = ["--pattern", "--exclude", "--numbers", "--allow", "--allow-pattern", "--labels", "--list"].contains(name)
            guard repeatable || seen.insert(name).inserted else { return nil }
            switch name {
            case "--pattern":
                if options.patterns.isEmpty { options.patterns.reserveCapacity(mostPatterns) }
                guard let text = value(), (try? options.addPattern(text)) != nil else { return nil }
            case "--exclude": guard let text = value() else { return nil }; options.exclusions.append(text)
            case "--range-size": guard let number = value().flatMap({ Int64($0) }) else { return nil }; options.rangeSize = number
            case "--capacity": guard let number = value().flatMap({ Int64($0) }) else { return nil }; options.capacity = number
            case "--output": guard let text = value(), !text.isEmpty else { return nil }; options.output = text
            case "--numbers", "--allow", "--labels", "--list":
                // `-` is standard input.
                guard let text = inlineValue ?? rest.next(), !text.isEmpty, text == "-" || !text.hasPrefix("-") else { return nil }
                switch name {
                case "--numbers": options.numbers.append(text)
                case "--allow": options.allow.append(text)
                case "--list": options.lists.append(text)
                default: options.labels.append(text)
                }
            case "--allow-pattern":
                if options.allowPatterns.isEmpty { options.allowPatterns.reserveCapacity(mostPatterns) }
                guard let text = value(), (try? options.addAllowPattern(text)) != nil else { return nil }
            case "--default-country": guard let number = value().flatMap({ Int64($0.hasPrefix("+") ? String($0.dropFirst()) : $0) }) else { return nil }; options.defaultCountry = number
            case "--layout": guard let text = value() else { return nil }; options.layout = text
            case "--skip-invalid": guard inlineValue == nil else { return nil }; options.skipInvalid = true
            case "--no-exclusions", "--no-sync", "--json", "--force":
                guard inlineValue == nil else { return nil }
                switch name {
                case "--no-exclusions": options.noExclusions = true
                case "--no-sync": options.noSync = true
                case "--json": options.json = true
                default: options.force = true
                }
            default: return nil
            }
        }
        guard (try? options.spec()) != nil else { return nil }
        guard options.listPaths.filter({ $0 == "-" }).count <= 1 else { return nil }
        return options
    }
}

/// Runs a generate and prints its summary (or JSON) on stdout, progress and notes on stderr.
public enum GenerateRunner {
    public static func run(_ options: GenerateOptions) throws(BlocklistError) {
        let spec = try options.patternSpec()
        if let first = options.firstPatternWithoutPlus {
            Terminal.error(
                options.patternsWithoutPlus == 1
                    ? "note: pattern \(first) has no +; it is read as +\(first), country code first.\n"
                    : "note: \(options.patternsWithoutPlus) patterns have no +, such as \(first); each is read as + then its digits, country code first.\n")
        }
        for warning in spec?.warnings ?? [] { Terminal.error("note: \(warning)\n") }
        let producer: any ShardProducer
        var packed: PackedProducer?
        if options.isPacked {
            var list = ListSpec()
            list.spec = spec
            list.numbers = options.numbers
            list.allow = options.allow
            list.allowPatterns = options.allowPatterns
            list.labels = options.labels
            list.lists = options.lists
            list.skipInvalid = options.skipInvalid
            list.defaultCountry = options.defaultCountry
            list.capacity = options.capacity
            packed = PackedProducer(list)
            producer = packed!
            if showProgressFor(options) { Terminal.error("reading and sorting the lists…\r") }
        } else {
            producer = RangeProducer(try ShardPlan(spec!))
        }
        let clock = ContinuousClock()
        let started = clock.now
        let showProgress = showProgressFor(options)
        var peakAnonymous = ProcessMemory.read()?.anonymous
        let generated = try ShardSet.generate(producer: producer, into: options.output, sync: !options.noSync, force: options.force) {
            progress throws(BlocklistError) in
            if let anonymous = ProcessMemory.read()?.anonymous { peakAnonymous = max(peakAnonymous ?? 0, anonymous) }
            if showProgress {
                Terminal.error(
                    Terminal.progressBar(
                        done: progress.entriesDone, total: progress.totalEntries,
                        label: "\(progress.shardsDone)/\(progress.shardCount) shards, \(Terminal.grouped(progress.entriesDone)) entries"))
            }
        }
        let elapsed = (clock.now - started).seconds
        if showProgress { Terminal.error(Terminal.clearProgress) }
        for note in (packed?.notes ?? []) + generated.notes { Terminal.error("note: \(note)\n") }
        if let packed, packed.keptBoundaries { Terminal.error("note: kept the previous generation's shard boundaries, so only shards whose numbers changed differ.\n") }
        let memory = ProcessMemory.read()
        let anonymous = peakAnonymous.map { max($0, memory?.anonymous ?? 0) }
        let rate = Double(generated.totalEntries) / max(elapsed, 1e-9)
        let directory = options.output + "/" + generated.directory
        if options.json {
            // Keys sorted, as the other commands' JSONEncoder output; every value is a number or a
            // path the user gave (escaped).
            var fields: [(String, String)] = [
                ("bytes", String(generated.totalBytes)), ("directory", jsonString(directory)), ("entries", String(generated.totalEntries)),
                ("entriesPerSecond", String(rate)), ("generation", jsonString(generated.generation)),
            ]
            if let anonymous { fields.append(("peakAnonymousKiB", String(anonymous))) }
            if let resident = memory?.peakResident { fields.append(("peakResidentKiB", String(resident))) }
            fields += [("seconds", String(elapsed)), ("shards", String(generated.shardCount))]
            print("{\n" + fields.map { "  \"\($0.0)\" : \($0.1)" }.joined(separator: ",\n") + "\n}")
            return
        }
        print("Generated \(generated.shardCount) shards in \(directory) (manifest: \(options.output)/\(Manifest.fileName))")
        print("  entries      \(Terminal.grouped(generated.totalEntries))")
        print("  bytes        \(Terminal.grouped(generated.totalBytes)) (\(Terminal.bytes(generated.totalBytes)))")
        print("  wall time    \(Terminal.fixed(elapsed * 1000, 1)) ms (\(Terminal.grouped(Int64(rate))) entries/s)")
        if let resident = memory?.peakResident, let anonymous {
            print("  peak memory  \(Terminal.grouped(Int64(resident))) KiB resident, \(Terminal.grouped(Int64(anonymous))) KiB anonymous")
        }
    }

    static func showProgressFor(_ options: GenerateOptions) -> Bool { Terminal.stderrIsTerminal && !options.json }

    /// A JSON string literal (RFC 8259 §7).
    public static func jsonString(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\u{0}"..."\u{1F}":
                let digits = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
