import ArgumentParser
import ArgumentTypes
import BlocklistCore
import BlocklistSystem
import CallDirectorySimulator
import CommandSupport
import JSONStream
internal import LibC
import ListImport
import SetReading
import SetStorage

/// The store, shared by the simulator's commands: one simulated phone's CallKit, which holds the
/// extensions of one app. It lives beside the set it loads (`DIR/CallDirectory.sqlite`), so that
/// loading another set never replaces the extensions of the first; `--store` names another.
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The simulated CallKit store (SQLite). (default: DIR/CallDirectory.sqlite, beside the set)",
            valueName: "path"
        )
    )
    var store: String?

    /// The store of the set in `directory`: `--store`, or the one beside the set.
    func path(for directory: String) -> String {
        if let store { return store }
        var directory = directory
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        return directory == "/" ? "/CallDirectory.sqlite" : directory + "/CallDirectory.sqlite"
    }

    /// The system, for commands that start no extension host.
    func system(for directory: String) throws -> CallDirectorySystem {
        CallDirectorySystem(store: try Self.open(path(for: directory)), hostPath: HostOptions.defaultHost())
    }

    /// Opens (or makes) the store at `path`; a directory that does not hold it is named, with
    /// the option that points elsewhere, rather than SQLite's "unable to open database file".
    static func open(_ path: String) throws -> CallDirectoryStore {
        let parent = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        if (try? FileSystem.kind(parent)) != .directory {
            throw BlocklistError(
                .io,
                "The store \(path) cannot be made: its directory \(parent) does not exist; give --store a path in a directory that does, or leave it out to keep the store beside the set."
            )
        }
        return try CallDirectoryStore(path: path)
    }

    /// Refuses a set directory that holds no set before the store is opened or made, so that a
    /// mistyped DIR is named as what is wrong.
    static func requireSet(_ directory: String) throws(BlocklistError) { _ = try Manifest.load(from: directory) }
}

/// The extension host, for the command that starts it (`load`).
struct HostOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The extension-host executable. (default: blocklist-extension, installed with blocklist)",
            valueName: "path"
        )
    )
    var extensionHost: String?

    /// The system with this host; a missing default host is named before the store is touched.
    func system(store: String) throws -> CallDirectorySystem {
        if extensionHost == nil, let missing = missingHelper("blocklist-extension") {
            throw BlocklistError(.io, missing)
        }
        if let extensionHost, access(extensionHost, X_OK) != 0 {
            throw BlocklistError(
                .io,
                "--extension-host \(extensionHost) cannot be run: \(String(cString: strerror(errno)))."
            )
        }
        return CallDirectorySystem(
            store: try StoreOptions.open(store),
            hostPath: extensionHost ?? Self.defaultHost()
        )
    }

    static func defaultHost() -> String { siblingExecutable("blocklist-extension") }
}

/// The most extensions a list may name: no set has more shards (`BlockSpec.maximumShardCount`).
let maximumExtensionNumber = BlockSpec.maximumShardCount

/// The indexes a list of extensions names (`ExtensionList`), `nil` for all.
func parseShardList(_ text: String) throws -> [Int]? {
    try ExtensionList(parsing: text, maximum: maximumExtensionNumber).indexes
}

struct Load: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a shard set into the simulated CallKit, one extension at a time.",
        discussion: """
            Reloads DIR's extensions in order, as the app does with CXCallDirectoryManager. Disabled extensions are \
            reported and skipped; an extension whose loaded checksum equals its shard's is skipped as unchanged \
            (unless --force), so a rerun after a failure resumes where it stopped. Exits 1 if any extension failed.
            """
    )

    @Argument(
        help: ArgumentHelp("The output directory holding manifest.json.", valueName: "dir"),
        completion: .directory
    )
    var directory = "Output"

    @OptionGroup var storeOptions: StoreOptions

    @OptionGroup var hostOptions: HostOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Extensions to load: 3, 1,4-6 or all.", valueName: "list"))
    var only = "all"

    @Option(
        help: ArgumentHelp(
            "How an incremental request sends its list: full (removeAll, add all) or delta (only changes).",
            valueName: "full|delta"
        )
    )
    var strategy: ReloadStrategy = .full

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Kill an extension host above this resident memory.", valueName: "size")
    )
    var memoryBudget = "7MiB"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Entries a second on a device, for the projected time.", valueName: "N")
    )
    var deviceRate: WholeNumber = 90_000

    @Option(parsing: .unconditional, help: ArgumentHelp("The most entries per extension.", valueName: "N"))
    var capacity: WholeNumber = 1_999_999

    @Option(help: ArgumentHelp("Count the capacity per extension or per request.", valueName: "extension|request"))
    var capacityScope: CapacityScope = .perExtension

    @Flag(help: "Reload extensions even when their shard is unchanged.")
    var force = false

    @Flag(help: "Print the results as JSON (progress still goes to standard error).")
    var json = false

    /// One extension's line of the report.
    struct Row: Encodable {
        var identifier: String
        /// loaded, skipped-unchanged, skipped-disabled, failed or removed.
        var result: String
        var incremental: Bool?
        /// Blocking and identification entries held afterwards.
        var entries: Int64?
        /// Blocking entries added and removed.
        var added: Int64?
        var removed: Int64?
        /// Identification entries held afterwards, added and removed.
        var identificationEntries: Int64?
        var identificationAdded: Int64?
        var identificationRemoved: Int64?
        var seconds: Double?
        var peakResidentKiB: Int?
        var deviceSeconds: Double?
        var warning: String?
        var error: String?
        var message: String?
    }

    struct Report: Encodable {
        var extensions: [Row]
        var summary: LoadSummary
        var seconds: Double
        var entriesPerSecond: Double
        var deviceRate: Int
    }

    func validate() throws {
        _ = try parseShardList(only)
        _ = try MemorySize(parsing: memoryBudget).kib
        guard let rate = Int(deviceRate.text), rate >= 1 else {
            throw ValidationError("--device-rate is \(deviceRate); it must be at least 1 entry a second.")
        }
        guard let entries = Int(capacity.text), entries >= 1 else {
            throw ValidationError("--capacity is \(capacity); it must be at least 1.")
        }
    }

    func run() throws {
        try StoreOptions.requireSet(directory)
        let store = storeOptions.path(for: directory)
        let loader = try SetLoader(system: try hostOptions.system(store: store), directory: directory)
        var options = ReloadOptions()
        options.strategy = strategy
        options.memoryBudgetKiB = try MemorySize(parsing: memoryBudget).kib
        options.capacity = Int64(capacity.value)
        options.capacityScope = capacityScope
        let plan = try loader.identifiers(only: try parseShardList(only))
        var progress = LoadProgress(plan: plan.map { ($0.identifier, $0.shard.count) }, deviceRate: deviceRate.value)
        let terminal = Terminal.stderrIsTerminal
        let clock = ContinuousClock()
        let started = clock.now
        func estimate(extra: Int64) -> String {
            guard let left = progress.remaining(extra: extra, elapsed: (clock.now - started).seconds) else { return "" }
            return ", ~\(Terminal.fixed(left.here, 1)) s left (~\(Terminal.fixed(left.device, 0)) s on a device)"
        }

        let outcomes = try loader.load(only: try parseShardList(only), options: options, force: force) { event in
            switch event {
            case .started(let identifier, let entries):
                progress.started(identifier, entries: entries)
                if !terminal { Terminal.error("\(identifier): loading \(Figures.grouped(entries)) entries\n") }
            case .progress(let identifier, let calls):
                guard terminal, let current = progress.current else { return }
                let (done, percent) = progress.currentDone(calls: calls)
                let all = progress.accounted(extra: done)
                Terminal.error(
                    Terminal.progressLines([
                        Terminal.bar(done: all, total: progress.totalEntries, width: 30)
                            + " all      \(Figures.grouped(all)) of \(Figures.grouped(progress.totalEntries))\(estimate(extra: done))",
                        Terminal.bar(done: done, total: current.entries, width: 30) + " \(identifier) \(percent)%",
                    ])
                )
            case .finished(let identifier, let outcome):
                if terminal { Terminal.error(Terminal.clearProgress) }
                progress.finished(identifier, outcome)
                Terminal.error("\(identifier): \(describe(outcome))\(estimate(extra: 0))\n")
            }
        }
        let elapsed = (clock.now - started).seconds
        let summary = LoadSummary(outcomes, deviceRate: deviceRate.value)
        let rate = Double(summary.calls) / max(elapsed, 1e-9)
        if json {
            try printJSON(
                Report(
                    extensions: outcomes.map { row($0.identifier, $0.outcome) },
                    summary: summary,
                    seconds: elapsed,
                    entriesPerSecond: rate,
                    deviceRate: deviceRate.value
                )
            )
            if summary.failed > 0 { throw ExitCode.failure }
            return
        }

        print("extension        result                  entries    time (s)   peak KiB   device time (s)")
        for (identifier, outcome) in outcomes {
            let text: String
            switch outcome {
            case .loaded(let result):
                text =
                    pad("loaded" + (result.incremental ? " (incremental)" : ""), 22)
                    + pad(Figures.grouped(result.entries), 11, right: true)
                    + pad(Terminal.fixed(Double(result.milliseconds) / 1000, 2), 12, right: true)
                    + pad(Figures.grouped(result.peakMemoryKiB), 11, right: true)
                    + pad(
                        Terminal.fixed(LoadSummary.deviceSeconds(result, deviceRate: deviceRate.value), 1),
                        18,
                        right: true
                    )
            case .skippedUnchanged: text = "skipped (unchanged)"
            case .skippedDisabled: text = "skipped (disabled)"
            case .failed(let code, _): text = "failed: \(code)"
            case .removed(let entries):
                text = "removed (not in this set; \(Figures.grouped(entries)) entries cleared)"
            }
            var line = pad(identifier, 17) + text
            while line.last == " " { line.removeLast() }
            print(line)
        }
        var line =
            "\(Figures.counted(summary.extensions, "extension")): \(Figures.grouped(summary.loaded)) loaded, \(Figures.grouped(summary.skipped)) skipped, \(Figures.grouped(summary.failed)) failed"
        if summary.removed > 0 { line += ", \(summary.removed) removed" }
        line += " in \(store)"
        if summary.loaded > 0 {
            line +=
                "; \(Terminal.fixed(elapsed, 1)) s here (\(Figures.grouped(Int64(rate))) entries/s);"
                + " projected \(Figures.grouped(Int64(summary.deviceSeconds.rounded()))) s on a device at \(Figures.grouped(Int64(deviceRate.value))) entries/s"
        }
        print(line)
        if summary.failed > 0 { throw ExitCode.failure }
    }

    private func row(_ identifier: String, _ outcome: SetLoader.Outcome) -> Row {
        var row = Row(identifier: identifier, result: "")
        switch outcome {
        case .loaded(let result):
            row.result = "loaded"
            row.incremental = result.incremental
            row.entries = result.entries
            row.added = result.added
            row.removed = result.removed
            row.identificationEntries = result.identificationEntries
            row.identificationAdded = result.identificationAdded
            row.identificationRemoved = result.identificationRemoved
            row.seconds = Double(result.milliseconds) / 1000
            row.peakResidentKiB = result.peakMemoryKiB
            row.deviceSeconds = LoadSummary.deviceSeconds(result, deviceRate: deviceRate.value)
            row.warning = result.warning
        case .skippedUnchanged: row.result = "skipped-unchanged"
        case .skippedDisabled: row.result = "skipped-disabled"
        case .failed(let code, let message):
            row.result = "failed"
            row.error = "\(code)"
            row.message = message
        case .removed(let entries):
            row.result = "removed"
            row.entries = entries
        }
        return row
    }

    private func describe(_ outcome: SetLoader.Outcome) -> String {
        switch outcome {
        case .removed(let entries):
            return
                "removed: the set has no such extension any more; its \(Figures.grouped(entries)) entries are cleared and it is unregistered"
        case .loaded(let result) where result.warning != nil:
            return "loaded \(Figures.grouped(result.entries)) entries; warning: \(result.warning!)"
        case .loaded(let result):
            let blocking = result.entries - result.identificationEntries
            var held = Figures.counted(blocking, "blocking entry", plural: "blocking entries")
            var changes = "+\(Figures.grouped(result.added)) −\(Figures.grouped(result.removed))"
            if result.identificationEntries > 0 || result.identificationAdded > 0 || result.identificationRemoved > 0 {
                held +=
                    " and "
                    + Figures.counted(
                        result.identificationEntries,
                        "identification entry",
                        plural: "identification entries"
                    )
                changes +=
                    "; identification +\(Figures.grouped(result.identificationAdded)) −\(Figures.grouped(result.identificationRemoved))"
            }
            return
                "loaded \(held) (\(result.incremental ? "incremental" : "full"), blocking \(changes)) in \(Terminal.fixed(Double(result.milliseconds) / 1000, 2)) s, peak \(Figures.grouped(result.peakMemoryKiB)) KiB"
        case .skippedUnchanged: return "skipped (unchanged)"
        case .skippedDisabled: return "skipped (disabled in Settings)"
        case .failed(let code, let message): return "failed with \(code): \(message)"
        }
    }
}

extension ReloadStrategy: ExpressibleByArgument {}
extension CapacityScope: ExpressibleByArgument {}

/// The Settings switches.
struct Switch: ParsableArguments {
    @Argument(help: ArgumentHelp("Extensions: 3, 1,4-6 or all.", valueName: "list"))
    var extensions: String

    @Argument(
        help: ArgumentHelp("The output directory whose manifest lists the extensions.", valueName: "dir"),
        completion: .directory
    )
    var directory = "Output"

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    struct Report: Encodable {
        var enabled: Bool
        var extensions: [String]
        var store: String
    }

    func validate() throws { _ = try parseShardList(extensions) }

    func apply(_ enabled: Bool) throws {
        try StoreOptions.requireSet(directory)
        let store = storeOptions.path(for: directory)
        let loader = try SetLoader(system: try storeOptions.system(for: directory), directory: directory)
        let identifiers = try loader.identifiers(only: try parseShardList(extensions)).map(\.identifier)
        try loader.system.store.setEnabled(enabled, identifiers: identifiers)
        if json { return try printJSON(Report(enabled: enabled, extensions: identifiers, store: store)) }
        print(
            "\(enabled ? "Enabled" : "Disabled") \(Figures.counted(identifiers.count, "extension")) of \(directory) in \(store)"
        )
    }
}

struct Enable: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn extensions on, as in Settings › Phone › Call Blocking & Identification.",
        discussion: "The first use registers DIR's extensions in the store, disabled, as installing the app does."
    )
    @OptionGroup var options: Switch
    func run() throws { try options.apply(true) }
}

struct Disable: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn extensions off, as in Settings.")
    @OptionGroup var options: Switch
    func run() throws { try options.apply(false) }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the extensions in the store: switch, state, entries, last load."
    )

    @Argument(help: ArgumentHelp("The set directory whose store to show.", valueName: "dir"), completion: .directory)
    var directory = "Output"

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Print the extensions as JSON. Reads only: a missing store is an error, never created.")
    var json = false

    func run() throws {
        if storeOptions.store == nil { try StoreOptions.requireSet(directory) }
        let store = try CallDirectoryStore(path: storeOptions.path(for: directory), readOnly: true)
        let rows = try store.extensions()
        if json { return try printJSON(rows) }
        print("extension        enabled  state       blocking  identified  checksum   last (ms)  peak KiB  last error")
        for row in rows {
            var line =
                pad(row.identifier, 17) + pad(row.enabled ? "yes" : "no", 9) + pad(row.state.rawValue, 10)
                + pad(Figures.grouped(row.loadedCount), 9, right: true)
                + pad(Figures.grouped(row.identificationCount), 11, right: true) + " "
                + pad(row.loadedChecksum ?? "-", 10)
                + pad(row.lastDurationMilliseconds.map { Figures.grouped($0) } ?? "-", 10, right: true)
                + pad(row.peakMemoryKiB.map { Figures.grouped($0) } ?? "-", 9, right: true) + " "
                + (row.lastError ?? "")
            while line.last == " " { line.removeLast() }
            print(line)
        }
        print("integrity: \(try store.integrityCheck())")
    }
}

struct Lookup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say which enabled extension blocks or identifies a number.",
        discussion: "Exits 0 if the number is blocked or identified, 1 if neither, 2 on error."
    )

    @Argument(
        help: ArgumentHelp(
            "A number in any form a list accepts: +82 70 1234 5678, 00827012345678, 827012345678, or a national 070-1234-5678 with --default-country.",
            valueName: "number"
        )
    )
    var number: String

    @Argument(help: ArgumentHelp("The set directory whose store to ask.", valueName: "dir"), completion: .directory)
    var directory = "Output"

    @Option(
        help: ArgumentHelp("The country code a national number (one leading 0) gets, as generate's.", valueName: "code")
    )
    var defaultCountry: Int64?

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Print the answer as JSON.")
    var json = false

    struct Answer: Encodable {
        struct Identification: Encodable {
            var `extension`: String
            var label: String
        }
        var number: Int64
        var blockedBy: [String]
        var identifiedBy: [Identification]
    }

    func validate() throws {
        if let defaultCountry, !(1...999).contains(defaultCountry) {
            throw ValidationError(
                "--default-country \(defaultCountry) is not a country code; give 1 to 999, such as 82."
            )
        }
    }

    func run() throws {
        let value: Int64
        do {
            value = try Array(number.utf8).withUnsafeBytes { bytes throws(ListLineError) in
                try ListLine(defaultCountry: defaultCountry).number(bytes)
            }
        } catch let error as ListLineError {
            try fail(code: "invalid input", message: "\(error.reason).")
        }
        let blockers: [String]
        let identifiers: [(identifier: String, label: String)]
        do {
            if storeOptions.store == nil { try StoreOptions.requireSet(directory) }
            let store = try CallDirectoryStore(path: storeOptions.path(for: directory), readOnly: true)
            blockers = try store.lookup(value)
            identifiers = try store.identify(value)
        } catch {
            try fail(code: JSONFailure.code(for: error, status: 2), message: error.message)
        }
        if json {
            let answer = Answer(
                number: value,
                blockedBy: blockers,
                identifiedBy: identifiers.map { Answer.Identification(extension: $0.identifier, label: $0.label) }
            )
            try printJSON(answer)
        } else {
            if blockers.isEmpty && identifiers.isEmpty { print("\(value) is neither blocked nor identified") }
            if !blockers.isEmpty { print("\(value) is blocked by \(blockers.joined(separator: ", "))") }
            for (identifier, label) in identifiers {
                print("\(value) is identified as \(JSONText.string(label)) by \(identifier)")
            }
        }
        if blockers.isEmpty && identifiers.isEmpty { throw ExitCode(1) }
    }

    /// Ends with status 2 (1 means "neither blocked nor identified"): the sentence, and with
    /// `--json` the error object as other commands print it.
    private func fail(code: String, message: String) throws -> Never {
        if json { print(JSONFailure.text(code: code, message: message, exitStatus: 2)) }
        Terminal.error("Error: \(message)\n")
        throw ExitCode(2)
    }
}
