import Foundation

/// How long the tests' seeded runs are. `.ci/run` sets `BLOCKLIST_LONG_TESTS=1` and gets the full
/// counts; `swift test` alone runs the same seeds over fewer cases, so that it answers in about a
/// minute and a half.
package enum SeededRuns {
    /// True under `.ci/run` (`BLOCKLIST_LONG_TESTS=1`).
    package static let long = ProcessInfo.processInfo.environment["BLOCKLIST_LONG_TESTS"] == "1"

    /// `full` under `.ci/run`, else `short`.
    package static func count(_ full: Int, short: Int) -> Int { long ? full : short }
}
