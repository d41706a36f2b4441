import BenchWorkloads
import Benchmark
import BlocklistCore
import CallDirectorySimulator
import Foundation
import ListImport
import MessageFilterCompiler
import MessageFilterCore
import SetReading
import SetStorage

// Wall-clock figures are for local runs (these machines are shared and noisy); CI checks
// mallocCountTotal and peakMemoryResident against Thresholds/ (see .ci/run).

/// The default set, generated once per benchmark process into a temporary directory.
private let workspace: (directory: String, set: String, plan: ShardPlan, manifest: Manifest) = {
    let directory = NSTemporaryDirectory() + "blocklist-benchmarks-\(getpid())"
    try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let plan = try! ShardPlan(
        try! BlockSpec(patterns: BlockSpec.defaultPatterns, exclusions: BlockSpec.defaultExclusions)
    )
    _ = try! ShardSet.generate(plan, into: directory + "/set", sync: false)
    let manifest = try! Manifest.load(from: directory + "/set")
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "blocklist-benchmarks-\(getpid())") }
    return (directory, directory + "/set", plan, manifest)
}()

/// Shard 2: a full shard of 1,992,600 entries, which the *.fullShard benchmarks use.
private var fullShard: String { workspace.manifest.path(of: workspace.manifest.shards[1], in: workspace.set) }

/// 1,000,000 unsorted numbers, one in ten repeated, written once.
private let numbersFile: String = {
    let path = workspace.directory + "/numbers.txt"
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    var text = ""
    text.reserveCapacity(13_000_000)
    var recent = [Int64](repeating: 33_600_000_000, count: 4096)
    for line in 0..<1_000_000 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let random = state >> 16
        let number =
            line > 0 && random % 10 == 0
            ? recent[Int(random >> 8) % 4096] : 33_600_000_000 + Int64(random % 100_000_000)
        recent[line % 4096] = number
        text += "+\(number)\n"
    }
    try! text.write(toFile: path, atomically: false, encoding: .utf8)
    return path
}()

/// The root package's release build of the extension host, built on first use.
private let extensionHost: String = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    let host = root + "/.build/release/blocklist-extension"
    if !FileManager.default.isExecutableFile(atPath: host) {
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = [
            "swift", "build", "-c", "release", "--product", "blocklist-extension", "--package-path", root,
        ]
        try! build.run()
        build.waitUntilExit()
    }
    return host
}()

/// A benchmark of a few long iterations: its allocation count may move by `percent` either way
/// (what the run's own buffers and pages make noise of), its memory by 15%.
private func longRun(allocationsWithin percent: Double) -> Benchmark.Configuration {
    .init(
        metrics: Benchmark.defaultConfiguration.metrics,
        timeUnits: .milliseconds,
        maxDuration: .seconds(10),
        maxIterations: 5,
        thresholds: [
            .mallocCountTotal: .init(relative: [.p90: percent]),
            .peakMemoryResident: .init(relative: [.p90: 15]),
        ]
    )
}

/// The message filter's corpus, 1,000 contains and 50 regex rules and 10,000 messages, made on
/// first use (a global is lazy), so that the other benchmarks' memory does not hold it.
private let corpus: (rules: [MessageRule], messages: [(sender: String, body: String)]) = {
    var generator = SyntheticCorpus(seed: 7)
    let rules = generator.rules(contains: 1000, regex: 50)
    return (rules, generator.messages(10_000, rules: rules))
}()

/// Sums a generator's runs, so that the work cannot be optimized away.
private func countEntries(_ runs: RunGenerator) -> Int64 {
    var entries: Int64 = 0
    for run in runs { entries += run.count }
    return entries
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .peakMemoryResident, .mallocCountTotal],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(5),
        maxIterations: 20,
        thresholds: [
            // A few dozen allocations, give or take the runtime's own (seen: ±8); none per entry.
            .mallocCountTotal: .init(absolute: [.p90: 12]),
            .peakMemoryResident: .init(relative: [.p90: 15]),
        ]
    )

    // The generator emits runs; its allocations are its tables, not its entries: the default set
    // (98,552,781 entries) and +8270####### (a tenth of them) should allocate about the same.
    Benchmark("Generator.defaultSet") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(countEntries(workspace.plan.compiled.runs()))
        }
    }
    Benchmark("Generator.tenthOfTheEntries") { benchmark in
        let compiled = CompiledSpec(try BlockSpec(patterns: ["+8270#######"], exclusions: ["000"]))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(countEntries(compiled.runs()))
        }
    }

    Benchmark("Encoder.fullShard") { benchmark in
        let encoder = try ShardEncoder()
        let path = workspace.directory + "/encoded.blk"
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try? FileManager.default.removeItem(atPath: path)
            let writer = try ShardWriter(path: path, shardIndex: 2, encoder: encoder)
            for run in workspace.plan.compiled.runs(shard: 2) { try writer.append(run) }
            blackHole(try writer.finish(sync: false))
        }
    }

    Benchmark("Reader.fullShard") { benchmark in
        let buffer = UnsafeMutableBufferPointer<Int64>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let reader = try ShardReader(path: fullShard)
            var previous = Int64.min
            while true {
                let filled = try reader.read(into: buffer)
                if filled == 0 { break }
                for number in buffer[0..<filled] {
                    precondition(number > previous, "\(number) does not ascend")
                    previous = number
                }
            }
            blackHole(previous)
        }
    }

    Benchmark("Verifier.fullShard") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(
                try ShardVerifier.verify(fullShard, expectedIndex: 2, expected: workspace.plan.compiled.runs(shard: 2))
            )
        }
    }

    // The import's allocations are its buffers and run files, not its lines; its memory is a
    // sort buffer and the merge's, whatever the list's size.
    Benchmark(
        "Import.oneMillionNumbers",
        configuration: longRun(allocationsWithin: 10)
    ) { benchmark in
        var list = ListSpec()
        list.numbers = [numbersFile]
        let output = workspace.directory + "/import-\(UUID().uuidString)"
        benchmark.startMeasurement()
        blackHole(try ShardSet.generate(list, into: output, sync: false))
        benchmark.stopMeasurement()
    }

    Benchmark(
        "Load.fullShard",
        // SQLite allocates per page, so about 140,000 here; a few percent either way is noise.
        configuration: longRun(allocationsWithin: 5)
    ) { benchmark in
        let shard = workspace.manifest.shards[1]
        let store = try CallDirectoryStore(path: workspace.directory + "/store-\(UUID().uuidString).sqlite")
        let system = CallDirectorySystem(store: store, hostPath: extensionHost)
        try store.register(workspace.manifest)
        let identifier = CallDirectoryStore.identifier(ofShard: 2, of: workspace.manifest.shards.count)
        try store.setEnabled(true, identifiers: [identifier])
        benchmark.startMeasurement()
        blackHole(try system.reload(identifier, shardPath: fullShard, checksum: shard.checksum))
        benchmark.stopMeasurement()
    }

    // The message filter (issue 20): 1,000 contains and 50 regex rules, the corpus of `blocklist
    // bench`. Classifying allocates nothing per message, so 10,000 messages allocate what one
    // does; compiling allocates per rule and state, and any change in that count is a change in the
    // compiler.
    Benchmark("MessageFilter.classifyTenThousandMessages") { benchmark in
        let classifier = MessageClassifier(
            rules: try CompiledRules(bytes: RulesCompiler.compile(corpus.rules), name: "benchmark")
        )
        for message in corpus.messages { blackHole(classifier.classify(sender: message.sender, body: message.body)) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            var matched = 0
            for message in corpus.messages
            where classifier.classify(sender: message.sender, body: message.body).rule != nil {
                matched += 1
            }
            blackHole(matched)
        }
    }
    Benchmark(
        "MessageFilter.compileAndLoad",
        configuration: longRun(allocationsWithin: 5)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try CompiledRules(bytes: RulesCompiler.compile(corpus.rules), name: "benchmark"))
        }
    }
}
