import BlocklistCore
import BlocklistSystem
import CommandSupport

/// Where the programs a bench starts live. The caller knows them (beside itself, or in
/// `libexec/blocklist`); this library names none.
package struct BenchPrograms: Sendable {
    /// A program that runs one workload when given `workloadArguments` and then the workload's
    /// own arguments, and prints its report (the CLI's hidden `bench-workload` command).
    package var workloadRunner: String
    package var workloadArguments: [String]
    /// `generate` in a process of its own, for the import workload.
    package var generate: String
    /// The Call Directory extension's host, for the load workload.
    package var extensionHost: String
    /// The Message Filter extension's host.
    package var messageFilterHost: String
    /// The deferral server and the Messages simulator.
    package var sms: String

    package init(
        workloadRunner: String,
        workloadArguments: [String],
        generate: String,
        extensionHost: String,
        messageFilterHost: String,
        sms: String
    ) {
        self.workloadRunner = workloadRunner
        self.workloadArguments = workloadArguments
        self.generate = generate
        self.extensionHost = extensionHost
        self.messageFilterHost = messageFilterHost
        self.sms = sms
    }
}

/// One row of the bench's first table.
package struct BenchRow: Encodable, Sendable {
    package var workload: String
    package var entries: Int64
    package var seconds: Double
    package var entriesPerSecond: Double
    package var bytesOnDisk: Int64?
    package var peakResidentKiB: Int
    package var peakAnonymousKiB: Int
    package var ruMaxRSSKiB: Int?
    package var extrapolated: Bool

    package init(
        workload: String,
        entries: Int64,
        seconds: Double,
        bytesOnDisk: Int64?,
        peakResidentKiB: Int,
        peakAnonymousKiB: Int,
        ruMaxRSSKiB: Int?,
        extrapolated: Bool = false
    ) {
        self.workload = workload
        self.entries = entries
        self.seconds = seconds
        self.entriesPerSecond = Double(entries) / max(seconds, 1e-9)
        self.bytesOnDisk = bytesOnDisk
        self.peakResidentKiB = peakResidentKiB
        self.peakAnonymousKiB = peakAnonymousKiB
        self.ruMaxRSSKiB = ruMaxRSSKiB
        self.extrapolated = extrapolated
    }
}

/// What one workload's child reported, plus what the parent saw of it.
package struct Measured: Sendable, Equatable {
    package var entries: Int64 = 0
    package var seconds: Double = 0
    package var bytes: Int64?
    package var peakKiB = 0
    package var anonymousKiB = 0
    package var hostPeakKiB: Int?
    package var ruMaxRSSKiB = 0
    /// A sentence the workload adds, such as which input was the slowest.
    package var detail: String?

    package init(peakKiB: Int = 0, anonymousKiB: Int = 0, ruMaxRSSKiB: Int = 0) {
        self.peakKiB = peakKiB
        self.anonymousKiB = anonymousKiB
        self.ruMaxRSSKiB = ruMaxRSSKiB
    }

    /// Reads a workload's report, "key value" lines (`WorkloadReport.text`), over what the parent
    /// measured: memory figures keep the larger of the two; unknown keys and lines are skipped.
    package mutating func read(report: String) {
        for line in report.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "entries": entries = Int64(parts[1]) ?? 0
            case "seconds": seconds = Double(parts[1]) ?? 0
            case "bytes": bytes = Int64(parts[1])
            case "peak": peakKiB = max(peakKiB, Int(parts[1]) ?? 0)
            case "anonymous": anonymousKiB = max(anonymousKiB, Int(parts[1]) ?? 0)
            case "host-peak": hostPeakKiB = Int(parts[1])
            case "detail": detail = parts[1]
            default: break
            }
        }
    }
}

package enum BenchHarness {
    /// Runs one workload in a child (`programs.workloadRunner`) and reads its report.
    package static func measure(_ arguments: [String], programs: BenchPrograms) throws(BlocklistError) -> Measured {
        let child = try ChildProcess.run(
            programs.workloadRunner,
            programs.workloadArguments + arguments,
            what: arguments[0]
        )
        var measured = Measured(
            peakKiB: child.peakKiB,
            anonymousKiB: child.anonymousKiB,
            ruMaxRSSKiB: child.ruMaxRSSKiB
        )
        measured.read(report: String(decoding: child.output, as: UTF8.self))
        return measured
    }
}

/// How much work each of the bench's workloads does.
package enum BenchSize: Sendable {
    /// The figures in docs/PERFORMANCE.md.
    case full
    /// Seconds in a release build (`bench --quick`).
    case quick
    /// Every workload run once on a little work, to show the harness works (`swift test` runs it
    /// on a debug build); its rates mean nothing.
    case smoke

    /// Candidates of the seed's approach, extrapolated to 100,000,000.
    package var seedCandidates: Int64 { self == .full ? 2_000_000 : self == .quick ? 200_000 : 20_000 }
    /// Lines of the import against GNU sort.
    package var importLines: Int { self == .full ? 20_000_000 : self == .quick ? 2_000_000 : 50_000 }
    /// Extensions of the simulated load.
    package var loadShards: Int { self == .smoke ? 1 : 3 }
    /// Messages classified offline by the compiled rules and by the linear scan.
    package var compiledMessages: Int { self == .full ? 2_000_000 : self == .quick ? 200_000 : 2_000 }
    package var linearMessages: Int { self == .full ? 2_000 : self == .quick ? 200 : 20 }
    /// Messages through the extension's process, and deferred to the server.
    package var extensionMessages: Int { self == .full ? 20_000 : self == .quick ? 5_000 : 500 }
    package var deferredMessages: Int { self == .full ? 20_000 : self == .quick ? 3_000 : 300 }
    /// Numbers in the publication rows' list (the goals are for 1,000,000).
    package var publicationNumbers: Int { self == .full ? 1_000_000 : self == .quick ? 1_000_000 : 10_000 }
}
