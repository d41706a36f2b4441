import BlocklistCore
import BlocklistSystem
internal import LibC
import Publication
import SetStorage
import UpdateCore
import UpdateInstall

/// `blocklist bench`'s publication rows (issue 18's goals): a delta's size, a push's size, the
/// time to verify and apply an update, and the whole way from publication to reloaded
/// extensions with each process's peak memory (`PushSimulation`).
package struct PublicationBench {
    package struct Row: Sendable, Encodable {
        package var workload: String
        package var value: String
        package var goal: String
        package var note: String?
    }

    let directory: String
    let numbers: Int
    let programs: PushSimulation.Programs

    package init(directory: String, numbers: Int, programs: PushSimulation.Programs) {
        self.directory = directory
        self.numbers = numbers
        self.programs = programs
    }

    package func run(progress: (String) -> Void) throws -> [Row] {
        var rows: [Row] = []
        var generator = SplitMix64(state: 18)
        func randomRuns(_ set: Set<Int64>) -> [NumberRun] {
            var runs: [NumberRun] = []
            for number in set.sorted() {
                if let last = runs.last, last.last + 1 == number {
                    runs[runs.count - 1].count += 1
                } else {
                    runs.append(NumberRun(start: number, count: 1))
                }
            }
            return runs
        }
        // The delta for +1,000 random numbers into the list (at the issue's size, 1,000,000).
        progress("publication: the delta for +1,000 numbers")
        var list = Set<Int64>()
        while list.count < numbers {
            list.insert(827_000_000_000 + Int64.random(in: 0..<100_000_000, using: &generator))
        }
        var grown = list
        while grown.count < numbers + 1_000 {
            grown.insert(827_000_000_000 + Int64.random(in: 0..<100_000_000, using: &generator))
        }
        let old = ShardContent(
            version: 2,
            index: 1,
            lowerBound: 0,
            blocking: randomRuns(list),
            labels: [],
            identification: []
        )
        let new = ShardContent(
            version: 2,
            index: 1,
            lowerBound: 0,
            blocking: randomRuns(grown),
            labels: [],
            identification: []
        )
        let (payload, _) = ShardDelta.payload(from: old, to: new)
        let file = try DeltaFile.encode(payload: payload, index: 1, from: 1, to: 2)
        let perNumber = Double(file.count - DeltaFile.headerSize) / 1_000
        rows.append(
            Row(
                workload: "delta, +1,000 into \(numbers.formatted)",
                value: "\(file.count.formatted) B (\(fixed(perNumber, 2)) B/number + \(DeltaFile.headerSize) B header)",
                goal: "≤ 2.5 B/number + 512 B (≤ \((2_500 + 512).formatted) B)",
                note: "the full shard: \(try fullShardBytes(new).formatted) B"
            )
        )

        // Verify and apply: an App Group holding the list takes the +1,000 update from a directory.
        progress("publication: verify and apply the update")
        let base = directory + "/publication-bench"
        _ = try FileSystem.makeDirectory(base)
        _ = try KeyFiles.create(in: base + "/keys", now: Int64(time(nil)))
        let key = try KeyFiles.signingKey(at: base + "/keys/signing.key")
        let root = try FileSystem.readFile(base + "/keys/root.json")
        // Writes `content` as the set and publishes it as the next generation.
        func publish(_ content: ShardContent) throws {
            try writeSet(content, in: base + "/set")
            _ = try Publisher.publish(
                setDirectory: base + "/set",
                signingKey: key,
                root: root,
                to: base + "/pub",
                keep: 3,
                now: Int64(time(nil))
            )
        }
        func update(_ appGroup: String = "app") throws -> UpdateInstaller.Outcome {
            try UpdateInstaller.update(
                from: DirectoryPublication(directory: base + "/pub"),
                trust: root,
                appGroup: base + "/" + appGroup,
                now: Int64(time(nil))
            )
        }
        // Five phones hold the list; each takes the update once, timed, and the median is the
        // figure: one run on a shared machine can be twice another.
        let phones = ["app"] + (2...5).map { "app-\($0)" }
        try publish(old)
        for phone in phones { _ = try update(phone) }
        try publish(new)
        let clock = ContinuousClock()
        var times: [Double] = []
        var outcomes: [UpdateInstaller.Outcome] = []
        for phone in phones {
            let started = clock.now
            outcomes.append(try update(phone))
            times.append((clock.now - started).seconds * 1000)
        }
        times.sort()
        let median = times[times.count / 2]
        let outcome = outcomes[0]
        rows.append(
            Row(
                workload: "update +1,000: bytes in all",
                value: "\(outcome.bytesDownloaded.formatted) B",
                goal: "≤ 2.0 B/number + 600 B (≤ 2,600 B)",
                note: "into \(numbers.formatted): the update file from-1.push, its delta inline"
            )
        )
        rows.append(
            Row(
                workload: "update: verify + apply the +1,000 delta",
                value: "\(fixed(median, 1)) ms",
                goal: "≤ 50 ms",
                note:
                    "median of \(times.count) phones (\(fixed(times[0], 1))–\(fixed(times[times.count - 1], 1)) ms); \(outcome.deltas) delta; the shard of \(outcome.totalEntries.formatted) numbers rewritten, synced and committed"
            )
        )

        // +1 −1: one number out, one in.
        progress("publication: +1 −1")
        var swapped = grown
        swapped.remove(swapped.min()!)
        while swapped.count < grown.count {
            swapped.insert(827_000_000_000 + Int64.random(in: 0..<100_000_000, using: &generator))
        }
        try publish(
            ShardContent(
                version: 2,
                index: 1,
                lowerBound: 0,
                blocking: randomRuns(swapped),
                labels: [],
                identification: []
            )
        )
        let small = try update()
        rows.append(
            Row(
                workload: "update +1 −1: bytes in all",
                value: "\(small.bytesDownloaded.formatted) B",
                goal: "≤ 600 B",
                note: "into \(numbers.formatted): the update file alone"
            )
        )

        // Publication to reloaded, with a 100-number change as an inline push.
        progress("publication: push simulate (100 numbers, inline)")
        let simulated = try PushSimulation.run(
            programs: programs,
            directory: directory + "/push-simulate",
            numbers: numbers,
            change: 100,
            inline: true
        )
        rows.append(
            Row(
                workload: "push: 100-number change",
                value: "\(simulated.pushBytes.formatted) B \(simulated.inline ? "inline" : "with a URL")",
                goal: "fits inline in 4,096 B",
                note: nil
            )
        )
        rows.append(
            Row(
                workload: "publication to reloaded, loopback",
                value: "\(fixed(simulated.publicationToReloadedMilliseconds, 0)) ms",
                goal: "≤ 5,000 ms",
                note:
                    "publish \(fixed(simulated.publishMilliseconds, 0)) ms, extension \(fixed(simulated.deliverMilliseconds, 0)) ms, reload \(fixed(simulated.reloadMilliseconds, 0)) ms"
            )
        )
        rows.append(
            Row(
                workload: "Notification Service Extension peak RSS",
                value: "\(simulated.notificationServicePeakKiB.formatted) KiB",
                goal: "≤ 8,192 KiB",
                note:
                    "update server \(simulated.serverPeakKiB.formatted) KiB, extension host \(simulated.extensionHostPeakKiB.formatted) KiB"
            )
        )
        return rows
    }

    private func fullShardBytes(_ content: ShardContent) throws -> Int {
        let path = directory + "/publication-bench-full.blk"
        let writer = try ShardWriter(path: path, shardIndex: 1, version: 2)
        for run in content.blocking { try writer.append(run) }
        let header = try writer.finish(sync: false)
        try? FileSystem.removeFile(path)
        return Int(header.fileSize)
    }

    /// A one-shard set, committed as generate commits one.
    private func writeSet(_ content: ShardContent, in path: String) throws {
        _ = try ShardSet.generate(producer: RunsProducer([(0, content.blocking)]), into: path, sync: false)
    }

    private func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        return digits == 0 ? String(Int(rounded)) : String(rounded)
    }
}

extension BinaryInteger {
    /// 1234567 as "1,234,567".
    fileprivate var formatted: String { Figures.grouped(Int64(self)) }
}
