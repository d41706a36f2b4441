import BlocklistCore
import BlocklistSystem
import JSONStream
import ListImport
import SetStorage

/// `blocklist generate`'s options (read by `GenerateCommand`) and its work, shared by the CLI and
/// by the small `blocklist-generate` executable it hands the command to.
///
/// This module links no Foundation: `generate` runs within an extension-sized memory budget.
package struct GenerateOptions: Equatable, Sendable {
    /// The `--pattern`s, parsed as they are added (`addPattern`): 8 bytes each, so that twenty
    /// thousand of them cost 160 KB, shared with the spec and the manifest without a copy.
    package private(set) var patterns: [BlockPattern] = []
    /// How many patterns were written without their `+`, and the first of them, for one note.
    package private(set) var patternsWithoutPlus = 0
    package private(set) var firstPatternWithoutPlus: String?
    package var exclusions: [String] = []
    package var noExclusions = false
    package var rangeSize = BlockSpec.defaultRangeSize
    package var capacity = BlockSpec.defaultCapacity
    package var output = "Output"
    package var noSync = false
    package var json = false
    package var force = false
    /// List inputs (a packed set).
    package var numbers: [String] = []
    package var allow: [String] = []
    package private(set) var allowPatterns: [BlockPattern] = []
    package var labels: [String] = []
    package var lists: [String] = []
    package var skipInvalid = false
    /// Lets list inputs that give no number make an empty set.
    package var allowEmpty = false
    package var defaultCountry: Int64?
    /// `nil` chooses packed when lists are given, range otherwise.
    package var layout: Manifest.Layout?

    package init() {}

    /// Adds a `--pattern`.
    ///
    /// - Throws: `BlocklistError` naming what in `text` is not a pattern.
    package mutating func addPattern(_ text: String) throws(BlocklistError) {
        patterns.append(try BlockPattern(parsing: text))
        if !text.hasPrefix("+") {
            patternsWithoutPlus += 1
            if firstPatternWithoutPlus == nil { firstPatternWithoutPlus = text }
        }
    }

    /// Makes room for `count` patterns and as many allow patterns at once (an array that grows
    /// by doubling holds its old and new buffers together).
    package mutating func reservePatterns(_ count: Int) {
        patterns.reserveCapacity(count)
        allowPatterns.reserveCapacity(count)
    }

    /// Adds an `--allow-pattern`.
    ///
    /// - Throws: `BlocklistError` naming what in `text` is not a pattern.
    package mutating func addAllowPattern(_ text: String) throws(BlocklistError) {
        allowPatterns.append(try BlockPattern(parsing: text))
    }

    /// Whether any list input is given.
    package var hasLists: Bool {
        !numbers.isEmpty || !allow.isEmpty || !allowPatterns.isEmpty || !labels.isEmpty || !lists.isEmpty
    }

    /// The list files given, each of which may be `-` (standard input) once among them all.
    package var listPaths: [String] { numbers + allow + labels + lists }

    /// Whether the set is packed.
    package var isPacked: Bool { layout == .packed || (layout == nil && hasLists) }

    /// The validated spec; with lists and no pattern, `nil` (no patterns).
    package func patternSpec() throws(BlocklistError) -> BlockSpec? {
        if hasLists && patterns.isEmpty { return nil }
        return try spec()
    }

    /// The validated spec.
    package func spec() throws(BlocklistError) -> BlockSpec {
        if noExclusions && !exclusions.isEmpty {
            throw BlocklistError(.invalidSpec, "--no-exclusions and --exclude contradict each other; give one.")
        }
        if layout == .range && hasLists {
            throw BlocklistError(
                .invalidSpec,
                "--layout range cuts pattern ranks, so it takes no --numbers, --allow, --allow-pattern, --labels or --list; use --layout packed."
            )
        }
        if hasLists && patterns.isEmpty && numbers.isEmpty && labels.isEmpty && lists.isEmpty {
            // Lists replace the default pattern, so allow inputs alone would commit an empty set.
            throw BlocklistError(
                .invalidSpec,
                "--allow and --allow-pattern only take numbers out of what a set blocks or identifies; give that too (--numbers, --labels, --list or --pattern), or the new set would be empty."
            )
        }
        if let defaultCountry, !(1...999).contains(defaultCountry) {
            throw BlocklistError(
                .invalidSpec,
                "--default-country \(defaultCountry) is not a country code; give 1 to 999, such as 33."
            )
        }
        return try BlockSpec(
            patterns: patterns.isEmpty ? BlockSpec.default.patterns : patterns,
            exclusions: noExclusions ? [] : (exclusions.isEmpty ? BlockSpec.defaultExclusions : exclusions),
            rangeSize: rangeSize,
            capacity: capacity
        )
    }
}

/// Runs a generate and prints its summary (or JSON) on stdout, progress and notes on stderr.
package enum GenerateRunner {
    package static func run(_ options: GenerateOptions) throws(BlocklistError) {
        let spec = try options.patternSpec()
        if let first = options.firstPatternWithoutPlus {
            Terminal.error(
                options.patternsWithoutPlus == 1
                    ? "note: pattern \(first) has no +; it is read as +\(first), country code first.\n"
                    : "note: \(Figures.grouped(options.patternsWithoutPlus)) patterns have no +, such as \(first); each is read as + then its digits, country code first.\n"
            )
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
            list.allowEmpty = options.allowEmpty
            list.defaultCountry = options.defaultCountry
            list.capacity = options.capacity
            packed = PackedProducer(list)
            if showProgressFor(options) {
                // A line per file, redrawn at most ten times a second.
                let clock = ContinuousClock()
                let runStarted = clock.now
                var fileStarted = runStarted
                var file = ""
                var drawn = runStarted
                packed!.onReading = { progress in
                    let now = clock.now
                    if progress.name != file {
                        file = progress.name
                        fileStarted = now
                    }
                    guard now - drawn >= .milliseconds(100) || progress.finished else { return }
                    drawn = now
                    Terminal.error(
                        Terminal.progressLines([
                            Terminal.readingLine(
                                progress,
                                fileSeconds: (now - fileStarted).seconds,
                                runSeconds: (now - runStarted).seconds
                            )
                        ])
                    )
                }
                Terminal.error("reading the lists…\r")
            }
            producer = packed!
        } else {
            producer = RangeProducer(try ShardPlan(spec!))
        }
        let clock = ContinuousClock()
        let started = clock.now
        let showProgress = showProgressFor(options)
        var peakAnonymous = ProcessMemory.read()?.anonymous
        let generated = try ShardSet.generate(
            producer: producer,
            into: options.output,
            sync: !options.noSync,
            force: options.force
        ) {
            progress throws(BlocklistError) in
            if let anonymous = ProcessMemory.read()?.anonymous { peakAnonymous = max(peakAnonymous ?? 0, anonymous) }
            if showProgress {
                Terminal.error(
                    Terminal.progressBar(
                        done: progress.entriesDone,
                        total: progress.totalEntries,
                        label:
                            "\(progress.shardsDone)/\(progress.shardCount) shards, \(Figures.grouped(progress.entriesDone)) entries"
                    )
                )
            }
        }
        let elapsed = (clock.now - started).seconds
        if showProgress { Terminal.error(Terminal.clearProgress) }
        packed?.onReading = nil
        for note in (packed?.notes ?? []) + generated.notes { Terminal.error("note: \(note)\n") }
        if let packed, packed.keptBoundaries {
            Terminal.error(
                "note: kept the previous generation's shard boundaries, so only shards whose numbers changed differ.\n"
            )
        }
        let memory = ProcessMemory.read()
        let anonymous = peakAnonymous.map { max($0, memory?.anonymous ?? 0) }
        let rate = Double(generated.totalEntries) / max(elapsed, 1e-9)
        let directory = options.output + "/" + generated.directory
        if options.json {
            // Keys sorted, as the other commands' JSONEncoder output; every value is a number or a
            // path the user gave (escaped).
            var fields: [(String, String)] = [
                ("bytes", String(generated.totalBytes)), ("directory", JSONText.string(directory)),
                ("entries", String(generated.totalEntries)),
                ("entriesPerSecond", String(rate)), ("generation", JSONText.string(generated.generation)),
            ]
            if let anonymous { fields.append(("peakAnonymousKiB", String(anonymous))) }
            if let resident = memory?.peakResident { fields.append(("peakResidentKiB", String(resident))) }
            fields += [("seconds", String(elapsed)), ("shards", String(generated.shardCount))]
            print("{\n" + fields.map { "  \"\($0.0)\" : \($0.1)" }.joined(separator: ",\n") + "\n}")
            return
        }
        print(
            "Generated \(generated.shardCount) shard\(generated.shardCount == 1 ? "" : "s") in \(directory) (manifest: \(options.output)/\(Manifest.fileName))"
        )
        print("  entries      \(Figures.grouped(generated.totalEntries))")
        print("  bytes        \(Figures.grouped(generated.totalBytes)) (\(Terminal.bytes(generated.totalBytes)))")
        print("  wall time    \(Terminal.fixed(elapsed * 1000, 1)) ms (\(Figures.grouped(Int64(rate))) entries/s)")
        if let resident = memory?.peakResident, let anonymous {
            print(
                "  peak memory  \(Figures.grouped(Int64(resident))) KiB resident, \(Figures.grouped(Int64(anonymous))) KiB anonymous"
            )
        }
    }

    static func showProgressFor(_ options: GenerateOptions) -> Bool { Terminal.stderrIsTerminal && !options.json }
}
