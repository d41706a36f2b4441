import TestSupport
import Testing

@testable import CallDirectorySimulator

/// The load's progress and ETA arithmetic, out of the CLI.
@Suite struct LoadProgressTests {
    static let plan: [(identifier: String, entries: Int64)] = [("a", 1_000), ("b", 2_000), ("c", 1_000)]

    static func loaded(_ identifier: String, calls: Int64) -> SetLoader.Outcome {
        .loaded(
            ReloadResult(
                identifier: identifier,
                incremental: false,
                added: calls,
                removed: 0,
                identificationAdded: 0,
                identificationRemoved: 0,
                calls: calls,
                entries: calls,
                identificationEntries: 0,
                milliseconds: 10,
                peakMemoryKiB: 5_000
            )
        )
    }

    @Test func nothingIsEstimatedBeforeSomethingIsMeasured() {
        let progress = LoadProgress(plan: Self.plan, deviceRate: 100)
        #expect(progress.totalEntries == 4_000)
        #expect(progress.remaining(elapsed: 0) == nil)
        #expect(progress.remaining(elapsed: 10) == nil)
        #expect(progress.remaining(extra: 10, elapsed: 0) == nil)
    }

    @Test func halfDoneInTenSecondsLeavesTenSeconds() throws {
        var progress = LoadProgress(plan: Self.plan, deviceRate: 100)
        progress.started("a", entries: 1_000)
        progress.finished("a", Self.loaded("a", calls: 1_000))
        progress.started("b", entries: 2_000)
        #expect(progress.currentDone(calls: 1_000) == (1_000, 50))
        let left = try #require(progress.remaining(extra: 1_000, elapsed: 10))
        #expect(left.here == 10)  // 2,000 of 4,000 in 10 s
        #expect(left.device == 20)  // 2,000 at 100 a second
        #expect(progress.accounted(extra: 1_000) == 2_000)
    }

    @Test func skippedExtensionsCountAsAccountedButNotAsWorkDone() throws {
        var progress = LoadProgress(plan: Self.plan, deviceRate: 0)  // a rate of 0 is taken as 1
        progress.finished("b", .skippedUnchanged)
        #expect(progress.accounted() == 2_000 && progress.doneEntries == 0)
        progress.finished("a", Self.loaded("a", calls: 1_000))
        let left = try #require(progress.remaining(elapsed: 5))
        #expect(left.here == 5 && left.device == 1_000)  // c's 1,000 entries at 200/s, and at 1/s
        // A delta may make more calls than the extension has entries: the part done stops at 100%.
        progress.started("c", entries: 1_000)
        #expect(progress.currentDone(calls: 5_000) == (1_000, 100))
        #expect(progress.currentDone(calls: -3) == (0, 0))
        progress.finished("c", .failed(code: .unknown, message: "x"))
        #expect(progress.current == nil && progress.accounted() == 4_000)
    }

    @Test func theSummaryCountsEachOutcome() {
        let outcomes: [(identifier: String, outcome: SetLoader.Outcome)] = [
            ("a", Self.loaded("a", calls: 1_000)), ("b", Self.loaded("b", calls: 3_000)), ("c", .skippedDisabled),
            ("d", .skippedUnchanged), ("e", .failed(code: .unknown, message: "x")), ("f", .removed(entries: 9)),
        ]
        let summary = LoadSummary(outcomes, deviceRate: 1_000)
        #expect(summary.extensions == 5 && summary.loaded == 2 && summary.skipped == 2 && summary.failed == 1)
        #expect(summary.removed == 1 && summary.calls == 4_000 && summary.deviceSeconds == 4)
    }
}
