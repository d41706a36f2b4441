import BlocklistCore
import Foundation
import TestSupport
import Testing

@testable import CallDirectorySimulator
@testable import SetReading
@testable import SetStorage

/// A store another program changed: every value the simulator reads back is checked against its
/// type and range, and one that is not (an unknown state word, NULL, text, a real, a negative count,
/// an out-of-range switch or index) is refused by the column's name instead of read as 0 or used.
@Suite struct StoreTamperTests {
    static func tampered(_ update: String) throws -> (store: CallDirectoryStore, directory: TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let generate = try runBlocklist(["generate", "--pattern", "+8270###", "--no-sync", "-o", directory.file("set")])
        try #require(generate.status == 0, "\(generate.stderr)")
        let store = try CallDirectoryStore(path: directory.file("store.sqlite"))
        _ = try store.register(try Manifest.load(from: directory.file("set")))
        #expect(try store.extensions().count == 1)
        try store.database.execute(update)
        return (store, directory)
    }

    @Test(arguments: [
        ("UPDATE extensions SET state = 'bogus'", #"state "bogus", which is none of registered, loaded and failed"#),
        ("UPDATE extensions SET loaded_count = -5", #"loaded_count "-5", which is not a whole number of 0 or more"#),
        ("UPDATE extensions SET loaded_count = 'abc'", #"loaded_count "abc""#),
        ("UPDATE extensions SET enabled = 7", #"enabled "7", which is not a whole number from 0 to 1"#),
        ("UPDATE extensions SET needs_full_reload = 0.5", #"needs_full_reload "0.5""#),
        ("UPDATE extensions SET shard_index = 99999999999", #"shard_index "99999999999""#),
        ("UPDATE extensions SET peak_memory_kib = x'00'", #"peak_memory_kib"#),
        ("UPDATE extensions SET last_duration_ms = -1", #"last_duration_ms "-1""#),
    ])
    func aValueOutOfItsDomainIsRefusedByName(update: String, words: String) throws {
        let (store, _) = try Self.tampered(update)
        #expect {
            try store.extensions()
        } throws: { error in
            "\(error)".contains(words) && "\(error)".contains("changed by another program")
        }
    }

    @Test func nullsWhereAValueMayBeMissingAreRead() throws {
        let (store, _) = try Self.tampered("UPDATE extensions SET last_load_at = NULL, peak_memory_kib = NULL")
        let row = try #require(try store.extensions().first)
        #expect(row.lastLoadAt == nil && row.peakMemoryKiB == nil && row.loadedCount == 0)
    }
}
