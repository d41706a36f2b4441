import ArgumentParser
import BlocklistCore
import BlocklistSet

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate the shard files and manifest for a block spec.",
        discussion: """
            Writes one compressed shard per Call Directory extension and a manifest.json into the output \
            directory. The new set is written aside and committed by renaming the manifest, so a failed or \
            interrupted run leaves the previous set intact.
            """)

    @OptionGroup var spec: SpecOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("The output directory (created if its parent exists).", valueName: "dir"))
    var output = "Output"

    @Flag(help: "Skip fsync (faster on slow disks; a power cut may then lose the new set, never the old one).")
    var noSync = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    struct Summary: Encodable {
        var directory: String
        var generation: String
        var shards: Int
        var entries: Int64
        var bytes: Int64
        var seconds: Double
        var entriesPerSecond: Double
        var peakResidentKiB: Int?
        var peakAnonymousKiB: Int?
    }

    func run() throws {
        let plan = try ShardPlan(try spec.spec())
        let clock = ContinuousClock()
        let started = clock.now
        let showProgress = Terminal.stderrIsTerminal && !json
        var peakAnonymous = ProcessMemory.read()?.anonymous
        let manifest = try ShardSet.generate(plan, into: output, sync: !noSync) { progress in
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
        let memory = ProcessMemory.read()
        let summary = Summary(
            directory: output + "/" + manifest.directory, generation: manifest.generation, shards: manifest.shards.count,
            entries: manifest.totalEntries, bytes: manifest.totalBytes, seconds: elapsed,
            entriesPerSecond: Double(manifest.totalEntries) / max(elapsed, 1e-9),
            peakResidentKiB: memory?.peakResident, peakAnonymousKiB: peakAnonymous.map { max($0, memory?.anonymous ?? 0) })
        if json { return try printJSON(summary) }
        print("Generated \(summary.shards) shards in \(summary.directory) (manifest: \(output)/\(Manifest.fileName))")
        print("  entries      \(Terminal.grouped(summary.entries))")
        print("  bytes        \(Terminal.grouped(summary.bytes)) (\(Terminal.bytes(summary.bytes)))")
        print("  wall time    \(Terminal.fixed(elapsed * 1000, 1)) ms (\(Terminal.grouped(Int64(summary.entriesPerSecond))) entries/s)")
        if let resident = summary.peakResidentKiB, let anonymous = summary.peakAnonymousKiB {
            print("  peak memory  \(Terminal.grouped(Int64(resident))) KiB resident, \(Terminal.grouped(Int64(anonymous))) KiB anonymous")
        }
    }
}
