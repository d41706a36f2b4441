import BlocklistCore
import BlocklistSystem
import UpdateCore

/// What expires when in a publication (`blocklist publication status`): the newest root, the
/// current snapshot and the timestamp, each as a phone checks it. A cron job or a monitor calls
/// it to learn, days ahead, that phones would soon refuse the publication.
package struct PublicationStatus: Sendable {
    /// One signed role.
    package struct Role: Sendable {
        /// "root", "snapshot" or "timestamp".
        package var name: String
        /// The root's version, or the generation the snapshot or timestamp is of.
        package var version: UInt64
        package var expires: Int64
        /// What renews it.
        package var fix: String
    }

    package var publication: String
    package var generation: UInt64
    package var shards: Int
    package var entries: Int64
    /// Root, snapshot, timestamp.
    package var roles: [Role]
    /// The generations the publication holds, oldest first, the current one last.
    package var generations: [Generation]

    /// Reads `publication`'s roles (the publisher's own files; signatures are `publish`'s and
    /// `update`'s to check).
    ///
    /// - Throws: if it holds no publication, or its metadata cannot be read.
    package static func read(_ publication: String) throws -> PublicationStatus {
        try read(DirectoryHandle(path: publication), name: publication)
    }

    /// Reads the publication in `directory`, named `publication` in sentences.
    static func read(_ directory: DirectoryHandle, name publication: String) throws -> PublicationStatus {
        let (timestamp, snapshot) = try Publisher.current(directory)
        guard let root = try Publisher.publishedRoots(directory).last?.root else {
            throw UpdateError(
                .malformed,
                "\(publication) publishes no root (1.root.json); publish again with the key directory."
            )
        }
        let publish = "blocklist publish SETDIR --key KEYDIR/signing.key --to \(publication)"
        return PublicationStatus(
            publication: publication,
            generation: snapshot.generation,
            shards: snapshot.shards.count,
            entries: snapshot.shards.reduce(0) { $0 + $1.entries },
            roles: [
                Role(
                    name: "root",
                    version: UInt64(root.version),
                    expires: root.expires,
                    fix: "blocklist keys rotate KEYDIR NEWDIR, then publish with NEWDIR/signing.key"
                ),
                Role(name: "snapshot", version: snapshot.generation, expires: snapshot.expires, fix: publish),
                Role(name: "timestamp", version: timestamp.generation, expires: timestamp.expires, fix: publish),
            ],
            generations: try generations(directory)
        )
    }

    /// The roles that expire before `now + seconds` (or have expired); the timestamp, which
    /// every publish renews and which lives a day by default, before `now + timestampSeconds`.
    package func expiring(now: Int64, within seconds: Int64, timestampWithin timestampSeconds: Int64? = nil) -> [Role] {
        roles.filter { $0.expires <= now + ($0.name == "timestamp" ? timestampSeconds ?? seconds : seconds) }
    }

    /// `seconds` since 1970 as `2026-11-26 08:53 UTC`.
    package static func formatTime(_ seconds: Int64) -> String { TextEncodings.utcTime(seconds) }

    /// A duration as people say it, to the nearest unit: "30 days", "5 hours", "1 minute",
    /// "expired 2 days ago" (a publish's 30 days read seconds later stay 30 days).
    package static func formatDuration(_ seconds: Int64) -> String {
        let magnitude = seconds.magnitude
        let text: String
        if magnitude >= 2 * 86_400 {
            text = Figures.counted((magnitude + 43_200) / 86_400, "day")
        } else if magnitude >= 2 * 3_600 {
            text = Figures.counted((magnitude + 1_800) / 3_600, "hour")
        } else if magnitude >= 60 {
            text = Figures.counted((magnitude + 30) / 60, "minute")
        } else {
            text = Figures.counted(magnitude, "second")
        }
        return seconds <= 0 ? "expired \(text) ago" : "in \(text)"
    }
}
