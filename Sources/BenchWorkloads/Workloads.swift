import BlocklistCore
import BlocklistSystem
import CallDirectorySimulator
import CommandSupport
internal import LibC
import MessageFilterCompiler
import MessageFilterCore
import MessageFilterHosting
import SetReading
import SetStorage

/// The workloads the CLI's `bench` runs, each in a child process of its own so that the OS
/// measures it alone. `run` is what the child does; it returns the report the parent reads
/// (`Measured.read(report:)`): "key value" lines.
package enum Workload {
    /// Runs workload `name` in `directory` (`count` is its size where it has one) and returns its
    /// report. `extensionHost` is the Call Directory host the load workload starts.
    package static func run(
        _ name: String,
        directory: String,
        count: Int64,
        extensionHost: String
    ) throws -> String {
        let set = directory + "/set"
        let clock = ContinuousClock()
        let started = clock.now
        var bytes: Int64?
        var entries: Int64 = 0
        var hostPeak: Int?
        switch name {
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
            entries = try readInOrder(manifest.shards.map { manifest.path(of: $0, in: set) })
            bytes = manifest.totalBytes
        case "seed":
            entries = seedApproach(candidates: count)
        case "load":
            let store = try CallDirectoryStore(path: directory + "/store.sqlite")
            let loader = try SetLoader(
                system: CallDirectorySystem(store: store, hostPath: extensionHost),
                directory: set
            )
            let only = Array(1...Int(count))
            try store.setEnabled(true, identifiers: try loader.identifiers(only: only).map(\.identifier))
            for (identifier, outcome) in try loader.load(only: only) {
                guard case .loaded(let result) = outcome else {
                    if case .failed(let code, let message) = outcome {
                        throw BlocklistError(.io, "\(identifier) did not load (\(code)): \(message)")
                    }
                    throw BlocklistError(.io, "\(identifier) was not loaded: \(outcome).")
                }
                entries += result.entries
                hostPeak = max(hostPeak ?? 0, result.peakMemoryKiB)
            }
            bytes = fileSize(store.path) + fileSize(store.path + "-wal")
        case "sms-compiled", "sms-linear":
            return try classify(compiled: name == "sms-compiled", messages: count)
        case "sms-worst":
            let worst = try HostileRegexes.worst(patterns: Int(count))
            return
                "entries \(worst.pairs)\nseconds \(worst.seconds)\ndetail \(worst.pattern) (\(worst.form)) on \(worst.body); as programs, at most \((worst.program.nanosecondsPerStep * 100).rounded() / 100) ns per instruction and byte (\(worst.program.pattern) on \(worst.program.body): \((worst.program.seconds * 1e4).rounded() / 10) ms); folding the message: \(Int((worst.folding * 1e6).rounded())) µs at most (\(worst.foldingBody))\n"
        case "sms-corpus":
            // The corpus of `sms-compiled` for Benchmarks/Hyperscan: the same rules as patterns
            // and the same messages, in files a C program reads.
            let corpus = try SMSBench.hyperscanCorpus(in: directory)
            return "entries \(corpus.messages)\nseconds 0\ndetail \(corpus.path)\n"
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
            return "rules \(path)\n"
        default:
            throw BlocklistError(
                .invalidInput,
                "Unknown bench workload \(name); the workloads are generate, verify, read, seed, load, sms-compiled, sms-linear, sms-worst and sms-frames."
            )
        }
        let seconds = (clock.now - started).seconds
        let memory = ProcessMemory.read()
        var report =
            "entries \(entries)\nseconds \(seconds)\npeak \(memory?.peakResident ?? 0)\nanonymous \(memory?.anonymous ?? 0)\n"
        if let bytes { report += "bytes \(bytes)\n" }
        if let hostPeak { report += "host-peak \(hostPeak)\n" }
        return report
    }

    /// The rules and messages of `sms-compiled` (and of Benchmarks/Hyperscan).
    package static func classificationCorpus(messages count: Int) -> (
        rules: [MessageRule], messages: [(sender: String, body: String)]
    ) {
        var corpus = SyntheticCorpus(seed: 7)
        let rules = corpus.rules(contains: 1000, regex: 50)
        return (rules, corpus.messages(min(count, 10_000), rules: rules))
    }

    /// 1,000 contains and 50 regex rules, 160-byte bodies, one core: `count` classifications by
    /// the compiled rules, of each message's UTF-8 as the extension's host hands it over, or by
    /// today's linear scan, of Strings. Only the classifying is timed.
    static func classify(compiled: Bool, messages count: Int64) throws -> String {
        let (rules, messages) = classificationCorpus(messages: Int(count))
        let rounds = max(1, Int(count) / messages.count)
        let clock = ContinuousClock()
        var matched = 0
        guard compiled else {
            let filter = try LinearScanFilter(rules: rules)
            let started = clock.now
            for _ in 0..<rounds {
                for message in messages
                where filter.classify(sender: message.sender, body: message.body).action != .none {
                    matched += 1
                }
            }
            let seconds = (clock.now - started).seconds
            return "entries \(rounds * messages.count)\nseconds \(seconds)\nbytes \(matched)\n"
        }
        // As Hyperscan reads them (Benchmarks/Hyperscan): the messages' UTF-8 in one buffer,
        // checked once before the clock starts, as the extension's host checks each message.
        let classifier = MessageClassifier(rules: try CompiledRules(bytes: RulesCompiler.compile(rules), name: "bench"))
        var text: [UInt8] = []
        var fields: [(sender: Range<Int>, body: Range<Int>)] = []
        for message in messages {
            let sender = text.count..<(text.count + message.sender.utf8.count)
            text += message.sender.utf8
            let body = text.count..<(text.count + message.body.utf8.count)
            text += message.body.utf8
            fields.append((sender, body))
        }
        return try text.withUnsafeBufferPointer { text in
            for field in fields {
                try MessageClassifier.validate(
                    sender: .init(rebasing: text[field.sender]),
                    body: .init(rebasing: text[field.body])
                )
            }
            let started = clock.now
            for _ in 0..<rounds {
                for field in fields {
                    let decision = classifier.classify(
                        validatedSender: .init(rebasing: text[field.sender]),
                        body: .init(rebasing: text[field.body])
                    )
                    if decision.action != .none { matched += 1 }
                }
            }
            let seconds = (clock.now - started).seconds
            return "entries \(rounds * messages.count)\nseconds \(seconds)\nbytes \(matched)\n"
        }
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Expands every shard into a fixed buffer and checks that the numbers ascend across all of them.
    package static func readInOrder(_ paths: [String]) throws(BlocklistError) -> Int64 {
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
    package static func seedApproach(candidates: Int64) -> Int64 {
        let offset: Int64 = 25 * 2_000_000
        var entries: Int64 = 0
        var sink: Int64 = 0
        var formatted = [CChar](repeating: 0, count: 32)
        for number in 1..<max(candidates, 1) {
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
