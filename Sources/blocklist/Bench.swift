#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import MessageFilterCompiler
import MessageFilterCore
import MessageFilterHosting
import CommandSupport
import BlocklistCore
import BlocklistSet
import BlocklistSetReading
import CallDirectorySimulator
import BlocklistSystem

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
            """)

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
        var messageFilter: [SMSBench.Row]
    }

    func validate() throws {
        if let loadShards, !(1...50).contains(loadShards) { throw ValidationError("--load-shards must be from 1 to 50.") }
    }

    func run() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        let seedCandidates: Int64 = quick ? 200_000 : 2_000_000
        let shards = loadShards ?? 3
        let steps: [(label: String, arguments: [String])] = [
            ("generate (50 shards)", ["generate", directory]),
            ("verify (50 shards)", ["verify", directory]),
            ("read + order check (50 shards)", ["read", directory]),
            ("seed approach, \(Terminal.grouped(seedCandidates)) candidates", ["seed", directory, String(seedCandidates)]),
            ("load \(shards) shard\(shards == 1 ? "" : "s") into a fresh store", ["load", directory, String(shards)]),
        ]
        var rows: [Row] = []
        for (label, arguments) in steps {
            if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines(["running \(label)…"])) }
            let measured = try Self.measure(arguments)
            rows.append(
                Row(
                    workload: label, entries: measured.entries, seconds: measured.seconds,
                    entriesPerSecond: Double(measured.entries) / max(measured.seconds, 1e-9), bytesOnDisk: measured.bytes,
                    peakResidentKiB: measured.peakKiB, peakAnonymousKiB: measured.anonymousKiB, ruMaxRSSKiB: measured.ruMaxRSSKiB,
                    extrapolated: false))
            if let hostPeak = measured.hostPeakKiB {
                rows.append(
                    Row(
                        workload: "  extension host during that load", entries: measured.entries, seconds: measured.seconds,
                        entriesPerSecond: Double(measured.entries) / max(measured.seconds, 1e-9), bytesOnDisk: nil,
                        peakResidentKiB: hostPeak, peakAnonymousKiB: 0, ruMaxRSSKiB: nil, extrapolated: false))
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
        let sms = try SMSBench(directory: directory, quick: quick).run { label in
            if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.progressLines(["running \(label)"])) }
        }
        if !json && Terminal.stderrIsTerminal { Terminal.error(Terminal.clearProgress) }
        let report = Report(quick: quick, rows: rows, generatorSpeedupOverSeed: speedup, messageFilter: sms)
        if json { return try printJSON(report) }

        print(
            pad("workload", 42) + pad("entries", 13, right: true) + pad("wall time", 11, right: true) + pad("entries/s", 15, right: true)
                + pad("on disk", 11, right: true) + pad("peak RSS", 12, right: true) + pad("peak anon", 11, right: true))
        for row in rows {
            print(
                pad(row.workload, 42) + pad(Terminal.grouped(row.entries), 13, right: true)
                    + pad(Self.duration(row.seconds), 11, right: true) + pad(Terminal.grouped(Int64(row.entriesPerSecond)), 15, right: true)
                    + pad(row.bytesOnDisk.map { Terminal.bytes($0) } ?? "-", 11, right: true)
                    + pad(row.extrapolated ? "-" : "\(Terminal.grouped(Int64(row.peakResidentKiB))) KiB", 12, right: true)
                    + pad(row.extrapolated || row.peakAnonymousKiB == 0 ? "-" : "\(Terminal.grouped(Int64(row.peakAnonymousKiB))) KiB", 11, right: true))
        }
        print("generate is \(Terminal.grouped(Int64(speedup.rounded())))× faster than the seed's approach (target: 1000×)")
        print()
        print(pad("message filter", 42) + pad("messages", 13, right: true) + pad("wall time", 11, right: true) + pad("messages/s", 15, right: true) + pad("peak RSS", 12, right: true) + "  note")
        for row in sms {
            print(
                pad(row.workload, 42) + pad(Terminal.grouped(row.messages), 13, right: true) + pad(Self.duration(row.seconds), 11, right: true)
                    + pad(Terminal.grouped(Int64(row.messagesPerSecond)), 15, right: true)
                    + pad(row.peakResidentKiB.map { "\(Terminal.grouped(Int64($0))) KiB" } ?? "-", 12, right: true) + "  " + (row.note ?? ""))
        }
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

    /// Runs `blocklist bench-workload ARGUMENTS` and reads its report, sampling its memory every 5 ms.
    static func measure(_ arguments: [String]) throws -> Measured {
        let child = try ChildProcess(path: executablePath(), arguments: ["bench-workload"] + arguments)
        var measured = Measured()
        var output: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            if let memory = ProcessMemory.read(pid: child.pid) {
                measured.peakKiB = max(measured.peakKiB, memory.peakResident)
                measured.anonymousKiB = max(measured.anonymousKiB, memory.anonymous)
            }
            guard child.waitForOutput(milliseconds: 5) else { continue }
            let count = try child.read(into: buffer)
            if count == 0 { break }
            output += buffer[0..<count]
        }
        child.release()
        try child.wait()
        guard child.exitStatus == 0, child.termSignal == 0 else {
            throw BlocklistError(.io, "The bench workload \(arguments[0]) failed (status \(child.exitStatus), signal \(child.termSignal)).")
        }
        measured.ruMaxRSSKiB = child.maximumResidentKiB
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

    private func makeTemporaryDirectory() throws -> String {
        let parent = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((parent + "/blocklist-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BlocklistError(.io, "Creating a temporary directory in \(parent) failed: \(String(cString: strerror(errno))).")
        }
        return String(cString: made)
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
        commandName: "bench-workload", abstract: "Run one workload of `blocklist bench` (used by bench).", shouldDisplay: false)

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
            let manifest = try ShardSet.generate(try ShardPlan(try BlockSpec(patterns: BlockSpec.defaultPatterns, exclusions: BlockSpec.defaultExclusions)), into: set, sync: true)
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
            let loader = try SetLoader(system: CallDirectorySystem(store: store, hostPath: StoreOptions.defaultHost()), directory: set)
            let only = Array(1...Int(count))
            try store.setEnabled(true, identifiers: try loader.identifiers(only: only).map(\.identifier))
            for (identifier, outcome) in try loader.load(only: only) {
                guard case .loaded(let result) = outcome else { throw BlocklistError(.io, "\(identifier) did not load: \(outcome)") }
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
                let classifier = MessageClassifier(rules: try CompiledRules(bytes: RulesCompiler.compile(rules), name: "bench"))
                let started = clock.now
                for _ in 0..<rounds {
                    for message in messages where classifier.classify(sender: message.sender, body: message.body).action != .none { matched += 1 }
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
                for message in messages where filter.classify(sender: message.sender, body: message.body).action != .none { matched += 1 }
            }
            entries = Int64(rounds * messages.count)
            print("entries \(entries)\nseconds \((clock.now - started).seconds)\nbytes \(matched)\n", terminator: "")
            return
        case "sms-frames":
            // The extension's memory workload as query frames, for Scripts/update-hot-functions.sh.
            let (path, messages) = try SMSBench.extensionCorpus(in: directory, messages: Int(count))
            var frames: [UInt8] = []
            for message in messages { frames += MessageFilterWire.encodeQuery(sender: Array(message.sender.utf8), body: Array(message.body.utf8)) }
            try FileSystem.writeNewFile(directory + "/frames.bin", frames, sync: false)
            print("rules \(path)")
            return
        default:
            throw ValidationError("Unknown workload \(workload).")
        }
        let seconds = (clock.now - started).seconds
        let memory = ProcessMemory.read()
        var report = "entries \(entries)\nseconds \(seconds)\npeak \(memory?.peakResident ?? 0)\nanonymous \(memory?.anonymous ?? 0)\n"
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
                    guard number > previous else { throw BlocklistError(.corruptShard, "\(path): \(number) does not ascend.") }
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
