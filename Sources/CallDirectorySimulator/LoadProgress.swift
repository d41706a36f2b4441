/// A load's progress, as `SetLoader`'s events report it: entries done of the planned total, the
/// extension under way, and how long the rest should take here and on a device.
///
/// Progress is counted in planned entries (each shard's count) of the extensions finished, so a
/// skipped or failed extension still moves the bar; the rate is the context calls the system
/// applied over the time since the load began.
package struct LoadProgress: Sendable {
    /// All planned entries.
    package let totalEntries: Int64
    /// Entries a second on a device, for the projection.
    package let deviceRate: Int
    /// Planned entries of the extensions loaded or failed.
    package private(set) var doneEntries: Int64 = 0
    /// Planned entries of the extensions skipped (unchanged or disabled).
    package private(set) var skippedEntries: Int64 = 0
    /// The extension under way and its planned entries.
    package private(set) var current: (identifier: String, entries: Int64)?
    private let planned: [String: Int64]

    package init(plan: [(identifier: String, entries: Int64)], deviceRate: Int) {
        totalEntries = plan.reduce(0) { $0 + $1.entries }
        self.deviceRate = max(deviceRate, 1)
        planned = Dictionary(plan.map { ($0.identifier, $0.entries) }, uniquingKeysWith: { first, _ in first })
    }

    package mutating func started(_ identifier: String, entries: Int64) { current = (identifier, entries) }

    package mutating func finished(_ identifier: String, _ outcome: SetLoader.Outcome) {
        let entries = planned[identifier] ?? 0
        switch outcome {
        case .loaded, .failed: doneEntries += entries
        case .skippedUnchanged, .skippedDisabled: skippedEntries += entries
        case .removed: break
        }
        current = nil
    }

    /// The current extension's part done after `calls` context calls (a delta or an incremental
    /// full request may make more calls than it has entries), and its percentage.
    package func currentDone(calls: Int64) -> (entries: Int64, percent: Int) {
        guard let current else { return (0, 0) }
        let done = min(max(calls, 0), current.entries)
        return (done, Int(Double(done) * 100 / Double(max(current.entries, 1))))
    }

    /// Entries accounted for: done, skipped, and `extra` of the current extension.
    package func accounted(extra: Int64 = 0) -> Int64 { doneEntries + skippedEntries + extra }

    /// Seconds left here and on a device after `elapsed` seconds, with `extra` entries of the
    /// current extension done; nil until something has been measured.
    package func remaining(extra: Int64 = 0, elapsed: Double) -> (here: Double, device: Double)? {
        let done = doneEntries + extra
        guard done > 0, elapsed > 0 else { return nil }
        let left = Double(max(0, totalEntries - skippedEntries - done))
        return (left / (Double(done) / elapsed), left / Double(deviceRate))
    }
}

/// What a load came to: its outcomes counted, and the device time the loaded ones would take.
package struct LoadSummary: Sendable, Equatable, Encodable {
    package var extensions = 0
    package var loaded = 0
    package var skipped = 0
    package var failed = 0
    package var removed = 0
    /// Context calls the system applied, over all loaded extensions.
    package var calls: Int64 = 0
    /// The loaded extensions' calls at the device rate.
    package var deviceSeconds: Double = 0

    package init(_ outcomes: [(identifier: String, outcome: SetLoader.Outcome)], deviceRate: Int) {
        for (_, outcome) in outcomes {
            switch outcome {
            case .loaded(let result):
                loaded += 1
                calls += result.calls
                deviceSeconds += Self.deviceSeconds(result, deviceRate: deviceRate)
            case .skippedUnchanged, .skippedDisabled: skipped += 1
            case .failed: failed += 1
            case .removed: removed += 1
            }
        }
        extensions = outcomes.count - removed
    }

    /// One loaded extension's calls at `deviceRate` entries a second.
    package static func deviceSeconds(_ result: ReloadResult, deviceRate: Int) -> Double {
        Double(result.calls) / Double(max(deviceRate, 1))
    }
}
