import ArgumentParser
import BenchWorkloads
import BlocklistCore
import BlocklistSystem
import CommandSupport
internal import LibC

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure what this machine does: generate, verify, read, the seed's approach, a simulated load.",
        discussion: """
            Works in a temporary directory and runs each workload in its own child process, so that the OS \
            measures it alone. Peak RSS is the child's VmHWM (the kernel's high-water mark of its own address \
            space); wait4's ru_maxrss is in the JSON too, but on Linux it includes this process's size, which \
            the child's address space replaced at exec. The seed's approach (a String per candidate with a \
            printf-formatted suffix, a "000" substring test, Int64 parsing) runs on one 2,000,000 range and is \
            extrapolated to 50.
            """
    )

    @Flag(help: "Finish in seconds: the seed's approach on 200,000 candidates instead of 2,000,000.")
    var quick = false

    /// Every workload once on a little work, for the test suite on a debug build.
    @Flag(help: .hidden)
    var smoke = false

    var size: BenchSize { smoke ? .smoke : quick ? .quick : .full }

    @Option(help: ArgumentHelp("Shards for the simulated load. (default: 3)", valueName: "N"))
    var loadShards: Int?

    @Flag(help: "Print the results as JSON.")
    var json = false

    struct Report: Encodable {
        var quick: Bool
        var rows: [BenchRow]
        var generatorSpeedupOverSeed: Double
        /// GNU sort's wall time over the import's, on the same lines; `nil` without GNU sort.
        var importSpeedupOverSort: Double?
        var messageFilter: [SMSBench.Row]
        var publication: [PublicationBench.Row]
    }

    func validate() throws {
        if let loadShards, !(1...50).contains(loadShards) {
            throw ValidationError("--load-shards must be from 1 to 50.")
        }
    }

    func run() throws {
        // Every workload needs these; blocklist-sms only the loopback row, which says when it is missing.
        for helper in ["blocklist-generate", "blocklist-extension", "blocklist-message-filter"] {
            if let missing = missingHelper(helper) { throw BlocklistError(.io, missing) }
        }
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "blocklist-bench")
        defer { removeTree(directory) }
        let seedCandidates = size.seedCandidates
        let shards = loadShards ?? size.loadShards
        let steps: [(label: String, arguments: [String])] = [
            ("generate (50 shards)", ["generate", directory]),
            ("verify (50 shards)", ["verify", directory]),
            ("read + order check (50 shards)", ["read", directory]),
            (
                "seed approach, \(Figures.grouped(seedCandidates)) candidates",
                ["seed", directory, String(seedCandidates)]
            ),
            ("load \(shards) shard\(shards == 1 ? "" : "s") into a fresh store", ["load", directory, String(shards)]),
        ]
        let programs = Self.programs()
        var rows: [BenchRow] = []
        for (label, arguments) in steps {
            if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines(["running \(label)…"])) }
            let measured = try BenchHarness.measure(arguments, programs: programs)
            rows.append(
                BenchRow(
                    workload: label,
                    entries: measured.entries,
                    seconds: measured.seconds,
                    bytesOnDisk: measured.bytes,
                    peakResidentKiB: measured.peakKiB,
                    peakAnonymousKiB: measured.anonymousKiB,
                    ruMaxRSSKiB: measured.ruMaxRSSKiB
                )
            )
            if let hostPeak = measured.hostPeakKiB {
                rows.append(
                    BenchRow(
                        workload: "  extension host during that load",
                        entries: measured.entries,
                        seconds: measured.seconds,
                        bytesOnDisk: nil,
                        peakResidentKiB: hostPeak,
                        peakAnonymousKiB: 0,
                        ruMaxRSSKiB: nil
                    )
                )
            }
        }
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        // The seed loops over 50 ranges of 2,000,000 candidates; its cost is linear in candidates.
        let seed = rows[3]
        let scale = 100_000_000 / Double(seedCandidates)
        var seedFull = seed
        seedFull.workload = "seed approach, 50 ranges (extrapolated)"
        seedFull.entries = Int64(Double(seed.entries) * scale)
        seedFull.seconds = seed.seconds * scale
        seedFull.extrapolated = true
        rows.insert(seedFull, at: 4)
        let speedup = seedFull.seconds / max(rows[0].seconds, 1e-9)
        let importRows = try ImportBench.run(
            directory: directory,
            lines: size.importLines,
            generate: programs.generate,
            progress: progress
        )
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        rows += importRows
        let importSpeedup = importRows.count == 2 ? importRows[1].seconds / max(importRows[0].seconds, 1e-9) : nil
        let sms = try SMSBench(directory: directory, size: size, programs: programs).run { progress("running " + $0) }
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        let publication = try PublicationBench(
            directory: directory,
            numbers: size.publicationNumbers,
            programs: PushSimulation.Programs(
                blocklist: executablePath(),
                server: siblingExecutable("blocklist-sms"),
                notificationService: siblingExecutable("blocklist-notification-service")
            )
        ).run { progress("running " + $0) }
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        let report = Report(
            quick: quick,
            rows: rows,
            generatorSpeedupOverSeed: speedup,
            importSpeedupOverSort: importSpeedup,
            messageFilter: sms,
            publication: publication
        )
        if json { return try printJSON(report) }

        print(
            pad("workload", 42) + pad("entries", 13, right: true) + pad("wall time", 11, right: true)
                + pad("entries/s", 15, right: true)
                + pad("on disk", 11, right: true) + pad("peak RSS", 12, right: true) + pad("peak anon", 11, right: true)
        )
        for row in rows {
            print(
                pad(row.workload, 42) + pad(Figures.grouped(row.entries), 13, right: true)
                    + pad(Self.duration(row.seconds), 11, right: true)
                    + pad(Figures.grouped(Int64(row.entriesPerSecond)), 15, right: true)
                    + pad(row.bytesOnDisk.map { Terminal.bytes($0) } ?? "-", 11, right: true)
                    + pad(
                        row.extrapolated ? "-" : "\(Figures.grouped(Int64(row.peakResidentKiB))) KiB",
                        12,
                        right: true
                    )
                    + pad(
                        row.extrapolated || row.peakAnonymousKiB == 0
                            ? "-" : "\(Figures.grouped(Int64(row.peakAnonymousKiB))) KiB",
                        11,
                        right: true
                    )
            )
        }
        print(
            "generate is \(Figures.grouped(Int64(speedup.rounded())))× faster than the seed's approach (target: 1000×)"
        )
        if let importSpeedup {
            print(
                "the import takes \(Terminal.fixed(100 / importSpeedup, 0))% of GNU sort's time on the same lines (target: under 100%)"
            )
        }
        print()
        print(
            pad("message filter", 42) + pad("messages", 13, right: true) + pad("wall time", 11, right: true)
                + pad("messages/s", 15, right: true) + pad("peak RSS", 12, right: true) + "  note"
        )
        for row in sms {
            print(
                pad(row.workload, 42) + pad(Figures.grouped(row.messages), 13, right: true)
                    + pad(Self.duration(row.seconds), 11, right: true)
                    + pad(Figures.grouped(Int64(row.messagesPerSecond)), 15, right: true)
                    + pad(row.peakResidentKiB.map { "\(Figures.grouped(Int64($0))) KiB" } ?? "-", 12, right: true)
                    + "  " + (row.note ?? "")
            )
        }
        print()
        print(pad("publication", 42) + pad("measured", 44) + "goal")
        for row in publication {
            print(pad(row.workload, 42) + pad(row.value, 44) + row.goal + (row.note.map { "; " + $0 } ?? ""))
        }
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 1 ? Terminal.fixed(seconds * 1000, 1) + " ms" : Terminal.fixed(seconds, 2) + " s"
    }

    func progress(_ text: String) {
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines([text])) }
    }

    /// The programs the bench starts: this one for each workload, and the helpers beside it.
    static func programs() -> BenchPrograms {
        BenchPrograms(
            workloadRunner: executablePath(),
            workloadArguments: ["bench-workload"],
            generate: siblingExecutable("blocklist-generate"),
            extensionHost: HostOptions.defaultHost(),
            messageFilterHost: siblingExecutable("blocklist-message-filter"),
            sms: siblingExecutable("blocklist-sms")
        )
    }

}

/// Removes a directory a command made for itself (bench's, push simulate's): the files and
/// directories in it, never following a link.
func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
        for name in (try? FileSystem.list(path)) ?? [] { removeTree(path + "/" + name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// One workload of `blocklist bench`, run in a child process; prints "key value" lines.
struct BenchWorkload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-workload",
        abstract: "Run one workload of `blocklist bench` (used by bench).",
        shouldDisplay: false
    )

    @Argument var workload: String
    @Argument var directory: String
    @Argument var count: Int64 = 0

    func run() throws {
        print(
            try Workload.run(workload, directory: directory, count: count, extensionHost: HostOptions.defaultHost()),
            terminator: ""
        )
    }
}
