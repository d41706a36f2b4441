import ArgumentParser
import BlocklistCore
import SetStorage
import SetReading
import BlocklistSystem
import CallDirectorySimulator
import CommandSupport
import MessageFilterCompiler
import MessageFilterCore
import MessageFilterHosting

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

    @Option(help: ArgumentHelp("Shards for the simulated load. (default: 3)", valueName: "N"))
    var loadShards: Int?

    @Flag(help: "Print the results as JSON.")
    var json = false

    struct Row: Encodable {
        var workload: String
        var entries: Int64
        var seconds: Double
        var entriesPerSecond: Double
        var bytesOnDisk: Int64?
        var peakResidentKiB: Int
        var peakAnonymousKiB: Int
        var ruMaxRSSKiB: Int?
        var extrapolated: Bool
    }

    struct Report: Encodable {
        var quick: Bool
        var rows: [Row]
        var generatorSpeedupOverSeed: Double
        /// GNU sort's wall time over the import's, on the same lines; `nil` without GNU sort.
        var importSpeedupOverSort: Double?
        var messageFilter: [SMSBench.Row]
    }

    func validate() throws {
        if let loadShards, !(1...50).contains(loadShards) {
            throw ValidationError("--load-shards must be from 1 to 50.")
        }
    }

    func run() throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "blocklist-bench")
        defer { removeTree(directory) }
        let seedCandidates: Int64 = quick ? 200_000 : 2_000_000
        let shards = loadShards ?? 3
        let steps: [(label: String, arguments: [String])] = [
            ("generate (50 shards)", ["generate", directory]),
            ("verify (50 shards)", ["verify", directory]),
            ("read + order check (50 shards)", ["read", directory]),
            (
                "seed approach, \(Terminal.grouped(seedCandidates)) candidates",
                ["seed", directory, String(seedCandidates)]
            ),
            ("load \(shards) shard\(shards == 1 ? "" : "s") into a fresh store", ["load", directory, String(shards)]),
        ]
        var rows: [Row] = []
        for (label, arguments) in steps {
            if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines(["running \(label)…"])) }
            let measured = try Self.measure(arguments)
            rows.append(
                Row(
                    workload: label,
                    entries: measured.entries,
                    seconds: measured.seconds,
                    entriesPerSecond: Double(measured.entries) / max(measured.seconds, 1e-9),
                    bytesOnDisk: measured.bytes,
                    peakResidentKiB: measured.peakKiB,
                    peakAnonymousKiB: measured.anonymousKiB,
                    ruMaxRSSKiB: measured.ruMaxRSSKiB,
                    extrapolated: false
                )
            )
            if let hostPeak = measured.hostPeakKiB {
                rows.append(
                    Row(
                        workload: "  extension host during that load",
                        entries: measured.entries,
                        seconds: measured.seconds,
                        entriesPerSecond: Double(measured.entries) / max(measured.seconds, 1e-9),
                        bytesOnDisk: nil,
                        peakResidentKiB: hostPeak,
                        peakAnonymousKiB: 0,
                        ruMaxRSSKiB: nil,
                        extrapolated: false
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
        let importRows = try importAgainstSort(directory: directory, lines: quick ? 2_000_000 : 20_000_000)
        rows += importRows
        let importSpeedup = importRows.count == 2 ? importRows[1].seconds / max(importRows[0].seconds, 1e-9) : nil
        let sms = try SMSBench(directory: directory, quick: quick).run { label in
            if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines(["running \(label)"])) }
        }
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        let report = Report(
            quick: quick,
            rows: rows,
            generatorSpeedupOverSeed: speedup,
            importSpeedupOverSort: importSpeedup,
            messageFilter: sms
        )
        if json { return try printJSON(report) }

        print(
            pad("workload", 42) + pad("entries", 13, right: true) + pad("wall time", 11, right: true)
                + pad("entries/s", 15, right: true)
                + pad("on disk", 11, right: true) + pad("peak RSS", 12, right: true) + pad("peak anon", 11, right: true)
        )
        for row in rows {
            print(
                pad(row.workload, 42) + pad(Terminal.grouped(row.entries), 13, right: true)
                    + pad(Self.duration(row.seconds), 11, right: true)
                    + pad(Terminal.grouped(Int64(row.entriesPerSecond)), 15, right: true)
                    + pad(row.bytesOnDisk.map { Terminal.bytes($0) } ?? "-", 11, right: true)
                    + pad(
                        row.extrapolated ? "-" : "\(Terminal.grouped(Int64(row.peakResidentKiB))) KiB",
                        12,
                        right: true
                    )
                    + pad(
                        row.extrapolated || row.peakAnonymousKiB == 0
                            ? "-" : "\(Terminal.grouped(Int64(row.peakAnonymousKiB))) KiB",
                        11,
                        right: true
                    )
            )
        }
        print(
            "generate is \(Terminal.grouped(Int64(speedup.rounded())))× faster than the seed's approach (target: 1000×)"
        )
        if let importSpeedup {
            print(
                "the import takes \(Terminal.fixed(100 / importSpeedup, 0))% of GNU sort's time on the same lines (target: under 100%, within 7,168 KiB)"
            )
        }
        print()
        print(
            pad("message filter", 42) + pad("messages", 13, right: true) + pad("wall time", 11, right: true)
                + pad("messages/s", 15, right: true) + pad("peak RSS", 12, right: true) + "  note"
        )
        for row in sms {
            print(
                pad(row.workload, 42) + pad(Terminal.grouped(row.messages), 13, right: true)
                    + pad(Self.duration(row.seconds), 11, right: true)
                    + pad(Terminal.grouped(Int64(row.messagesPerSecond)), 15, right: true)
                    + pad(row.peakResidentKiB.map { "\(Terminal.grouped(Int64($0))) KiB" } ?? "-", 12, right: true)
                    + "  " + (row.note ?? "")
            )
        }
    }

    /// Imports `lines` unsorted numbers (10% repeated) with `blocklist-generate --numbers`, and
    /// sorts the same file with `LC_ALL=C sort -u -S 6M --parallel=1` (only if GNU sort is there):
    /// the import also parses, deduplicates, packs and writes shards, which sort does not.
    func importAgainstSort(directory: String, lines: Int) throws -> [Row] {
        func progress(_ text: String) {
            if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines([text])) }
        }
        progress("writing \(Terminal.grouped(Int64(lines))) unsorted numbers…")
        let list = directory + "/numbers.txt"
        let bytes = try Self.writeUnsortedNumbers(lines, to: list)
        progress("running import of \(Terminal.grouped(Int64(lines))) numbers…")
        let imported = try Self.run(
            siblingExecutable("blocklist-generate"),
            ["--numbers", list, "--no-sync", "--json", "-o", directory + "/import"],
            what: "import"
        )
        func row(_ label: String, _ run: Run) -> Row {
            Row(
                workload: label,
                entries: Int64(lines),
                seconds: run.seconds,
                entriesPerSecond: Double(lines) / max(run.seconds, 1e-9),
                bytesOnDisk: bytes,
                peakResidentKiB: run.peakKiB,
                peakAnonymousKiB: run.anonymousKiB,
                ruMaxRSSKiB: run.ruMaxRSSKiB,
                extrapolated: false
            )
        }
        var rows = [row("import \(Terminal.grouped(Int64(lines))) unsorted numbers", imported)]
        if access("/usr/bin/sort", X_OK) == 0 {
            progress("running GNU sort of the same lines…")
            let sorted = try Self.run(
                "/usr/bin/env",
                ["LC_ALL=C", "/usr/bin/sort", "-u", "-S", "6M", "--parallel=1", "-o", "/dev/null", list],
                what: "GNU sort"
            )
            rows.append(row("  GNU sort -u -S 6M of the same lines", sorted))
        }
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        return rows
    }

    /// Writes `count` lines `+336XXXXXXXX`, one in ten a repeat of a recent one, through a fixed
    /// buffer; returns the file's size.
    static func writeUnsortedNumbers(_ count: Int, to path: String) throws -> Int64 {
        let file = try FileDescriptor.createExclusive(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
        defer { buffer.deallocate() }
        var recent = [Int64](repeating: 33_600_000_000, count: 4096)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var filled = 0
        var offset: Int64 = 0
        for line in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let random = state >> 16
            let number: Int64
            if line > 0 && random % 10 == 0 {
                number = recent[Int(random >> 8) % recent.count]
            } else {
                number = 33_600_000_000 + Int64(random % 100_000_000)
                recent[line % recent.count] = number
            }
            if filled + 16 > buffer.count {
                try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]), at: offset)
                offset += Int64(filled)
                filled = 0
            }
            buffer[filled] = UInt8(ascii: "+")
            var value = number
            for position in stride(from: 11, through: 1, by: -1) {
                buffer[filled + position] = UInt8(48 + value % 10)
                value /= 10
            }
            buffer[filled + 12] = 10
            filled += 13
        }
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]), at: offset)
        return offset + Int64(filled)
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 1 ? Terminal.fixed(seconds * 1000, 1) + " ms" : Terminal.fixed(seconds, 2) + " s"
    }

    /// What one workload's child reported, plus what this process saw of it.
    struct Measured {
        var entries: Int64 = 0
        var seconds: Double = 0
        var bytes: Int64?
        var peakKiB = 0
        var anonymousKiB = 0
        var hostPeakKiB: Int?
        var ruMaxRSSKiB = 0
    }

    /// What a child process did: its output, wall time and memory as sampled.
    struct Run {
        var output: [UInt8] = []
        var seconds: Double = 0
        var peakKiB = 0
        var anonymousKiB = 0
        var ruMaxRSSKiB = 0
    }

    /// Runs `path` with `arguments`, reading its output and sampling its memory every 5 ms.
    static func run(_ path: String, _ arguments: [String], what: String) throws -> Run {
        let clock = ContinuousClock()
        let started = clock.now
        let child = try ChildProcess(path: path, arguments: arguments)
        var run = Run()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        func sample() {
            if let memory = ProcessMemory.read(pid: child.pid) {
                run.peakKiB = max(run.peakKiB, memory.peakResident)
                run.anonymousKiB = max(run.anonymousKiB, memory.anonymous)
            }
        }
        while true {
            sample()
            guard child.waitForOutput(milliseconds: 5) else { continue }
            let count = try child.read(into: buffer)
            if count == 0 { break }
            run.output += buffer[0..<count]
        }
        child.release()
        // A child may close its output long before it ends (sort -o does at once).
        while try !child.waitIfEnded() {
            sample()
            usleep(5000)
        }
        run.seconds = (clock.now - started).seconds
        guard child.exitStatus == 0, child.termSignal == 0 else {
            throw BlocklistError(
                .io,
                "The bench workload \(what) failed (status \(child.exitStatus), signal \(child.termSignal))."
            )
        }
        run.ruMaxRSSKiB = child.maximumResidentKiB
        return run
    }

    /// Runs `blocklist bench-workload ARGUMENTS` and reads its report.
    static func measure(_ arguments: [String]) throws -> Measured {
        let child = try run(executablePath(), ["bench-workload"] + arguments, what: arguments[0])
        let output = child.output
        var measured = Measured(peakKiB: child.peakKiB, anonymousKiB: child.anonymousKiB)
        measured.ruMaxRSSKiB = child.ruMaxRSSKiB
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "entries": measured.entries = Int64(parts[1]) ?? 0
            case "seconds": measured.seconds = Double(parts[1]) ?? 0
            case "bytes": measured.bytes = Int64(parts[1])
            case "peak": measured.peakKiB = max(measured.peakKiB, Int(parts[1]) ?? 0)
            case "anonymous": measured.anonymousKiB = max(measured.anonymousKiB, Int(parts[1]) ?? 0)
            case "host-peak": measured.hostPeakKiB = Int(parts[1])
            default: break
            }
        }
        return measured
    }

    /// Removes the bench's directory: files and directories it made, never following a link.
    private func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in (try? FileSystem.list(path)) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
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
        let set = directory + "/set"
        let clock = ContinuousClock()
        let started = clock.now
        var bytes: Int64?
        var entries: Int64 = 0
        var hostPeak: Int?
        switch workload {
        case "generate":
            let manifest = try ShardSet.generate(
                try ShardPlan(
                    try BlockSpec(patterns: BlockSpec.defaultPatterns, exclusions: BlockSpec.defaultExclusions)
                ),
                into: set,
                sync: true
            )
            entries = manifest.totalEntries
            bytes = manifest.totalBytes
        case "verify":
            let verification = ShardSet.verify(set)
            if let problem = verification.problems.first { throw problem }
            entries = verification.entriesVerified
            bytes = verification.bytesVerified
        case "read":
            let manifest = try Manifest.load(from: set)
            entries = try Self.readInOrder(manifest.shards.map { manifest.path(of: $0, in: set) })
            bytes = manifest.totalBytes
        case "seed":
            entries = Self.seedApproach(candidates: count)
        case "load":
            let store = try CallDirectoryStore(path: directory + "/store.sqlite")
            let loader = try SetLoader(
                system: CallDirectorySystem(store: store, hostPath: HostOptions.defaultHost()),
                directory: set
            )
            let only = Array(1...Int(count))
            try store.setEnabled(true, identifiers: try loader.identifiers(only: only).map(\.identifier))
            for (identifier, outcome) in try loader.load(only: only) {
                guard case .loaded(let result) = outcome else {
                    throw BlocklistError(.io, "\(identifier) did not load: \(outcome)")
                }
                entries += result.entries
                hostPeak = max(hostPeak ?? 0, result.peakMemoryKiB)
            }
            bytes = Self.fileSize(store.path) + Self.fileSize(store.path + "-wal")
        case "sms-compiled", "sms-linear":
            // 1,000 contains and 50 regex rules, 160-byte bodies, one core.
            var corpus = SyntheticCorpus(seed: 7)
            let rules = corpus.rules(contains: 1000, regex: 50)
            let messages = corpus.messages(Int(min(count, 10_000)), rules: rules)
            var matched = 0
            let rounds = max(1, Int(count) / messages.count)
            if workload == "sms-compiled" {
                let classifier = MessageClassifier(
                    rules: try CompiledRules(bytes: RulesCompiler.compile(rules), name: "bench")
                )
                let started = clock.now
                for _ in 0..<rounds {
                    for message in messages
                    where classifier.classify(sender: message.sender, body: message.body).action != .none {
                        matched += 1
                    }
                }
                entries = Int64(rounds * messages.count)
                bytes = Int64(matched)
                let seconds = (clock.now - started).seconds
                print("entries \(entries)\nseconds \(seconds)\nbytes \(matched)\n", terminator: "")
                return
            }
            let filter = try LinearScanFilter(rules: rules)
            let started = clock.now
            for _ in 0..<rounds {
                for message in messages
                where filter.classify(sender: message.sender, body: message.body).action != .none { matched += 1 }
            }
            entries = Int64(rounds * messages.count)
            print("entries \(entries)\nseconds \((clock.now - started).seconds)\nbytes \(matched)\n", terminator: "")
            return
        case "sms-frames":
            // The extension's memory workload as query frames, for Scripts/update-hot-functions.sh.
            let (path, messages) = try SMSBench.extensionCorpus(in: directory, messages: Int(count))
            var frames: [UInt8] = []
            for message in messages {
                frames += MessageFilterWire.encodeQuery(
                    sender: Array(message.sender.utf8),
                    body: Array(message.body.utf8)
                )
            }
            try FileSystem.writeNewFile(directory + "/frames.bin", frames, sync: false)
            print("rules \(path)")
            return
        default:
            throw ValidationError("Unknown workload \(workload).")
        }
        let seconds = (clock.now - started).seconds
        let memory = ProcessMemory.read()
        var report =
            "entries \(entries)\nseconds \(seconds)\npeak \(memory?.peakResident ?? 0)\nanonymous \(memory?.anonymous ?? 0)\n"
        if let bytes { report += "bytes \(bytes)\n" }
        if let hostPeak { report += "host-peak \(hostPeak)\n" }
        print(report, terminator: "")
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Expands every shard into a fixed buffer and checks that the numbers ascend across all of them.
    static func readInOrder(_ paths: [String]) throws -> Int64 {
        let buffer = UnsafeMutableBufferPointer<Int64>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        var previous = Int64.min
        var count: Int64 = 0
        for path in paths {
            let reader = try ShardReader(path: path)
            while true {
                let filled = try reader.read(into: buffer)
                if filled == 0 { break }
                for number in buffer[0..<filled] {
                    guard number > previous else {
                        throw BlocklistError(.corruptShard, "\(path): \(number) does not ascend.")
                    }
                    previous = number
                }
                count += Int64(filled)
            }
        }
        return count
    }

    /// The seed's loop over one range (its `addBlock070` for extension 26, a typical one: the first
    /// holds no accepted number at all): a String per candidate, "+8270" and an eight-digit suffix
    /// formatted with printf's "%08d" (the seed calls Foundation's `String(format:)`, which this CLI
    /// does not link), a "000" substring test, Int64 parsing.
    @inline(never)
    static func seedApproach(candidates: Int64) -> Int64 {
        let offset: Int64 = 25 * 2_000_000
        var entries: Int64 = 0
        var sink: Int64 = 0
        var formatted = [CChar](repeating: 0, count: 32)
        for number in 1..<candidates {
            let suffix = formatted.withUnsafeMutableBufferPointer { buffer in
                _ = withVaList([Int32(number + offset)]) { vsnprintf(buffer.baseAddress, buffer.count, "%08d", $0) }
                return String(cString: buffer.baseAddress!)
            }
            let numberString = "+8270" + suffix
            if numberString.contains("000") { continue }
            guard let value = Int64(numberString) else { continue }
            sink &+= value
            entries += 1
        }
        return sink == 42 ? 0 : entries  // keeps the work observable
    }
}
