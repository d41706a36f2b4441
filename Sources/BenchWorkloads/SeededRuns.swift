import BlocklistCore
internal import LibC

/// How long the tests' seeded runs are. `.ci/run` sets `BLOCKLIST_LONG_TESTS=1` and gets the full
/// counts; `swift test` alone runs the same seeds over fewer cases, so that it answers in about a
/// minute and a half.
public enum SeededRuns {
    /// True under `.ci/run` (`BLOCKLIST_LONG_TESTS=1`).
    public static let long: Bool = getenv("BLOCKLIST_LONG_TESTS").map { String(cString: $0) == "1" } ?? false

    /// `full` under `.ci/run`, else `short`.
    public static func count(_ full: Int, short: Int) -> Int { long ? full : short }
}
