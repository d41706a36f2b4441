import BlocklistCore
import Foundation
import TestSupport
import Testing

/// `ExtensionFailures` (issue 44, item 5): what extensions could not do, kept for the app to show.
@Suite struct ExtensionFailuresTests {
    @Test func failuresReadBackOldestFirstAndTheNewestAreKept() throws {
        let directory = try TemporaryDirectory()
        #expect(ExtensionFailures.read(in: directory.path).isEmpty)
        for index in 0..<(ExtensionFailures.keep + 5) {
            ExtensionFailures.record("failure \(index)", source: "shard-01.blk", time: Int64(index), in: directory.path)
        }
        let entries = ExtensionFailures.read(in: directory.path)
        #expect(entries.count == ExtensionFailures.keep)
        #expect(entries.first == .init(time: 5, source: "shard-01.blk", sentence: "failure 5"))
        #expect(entries.last?.sentence == "failure \(ExtensionFailures.keep + 4)")
        #expect(!FileManager.default.fileExists(atPath: directory.file(".failures.log.new")))
        ExtensionFailures.clear(in: directory.path)
        #expect(ExtensionFailures.read(in: directory.path).isEmpty)
    }

    /// A sentence with line breaks and tabs stays one record; a long one is cut; a line that is
    /// not a record (a file damaged or written by something else) is skipped.
    @Test func oneRecordALineWhateverTheSentence() throws {
        let directory = try TemporaryDirectory()
        ExtensionFailures.record("two\nlines\tand a tab", source: "Message\tFilter", time: 7, in: directory.path)
        ExtensionFailures.record(String(repeating: "가", count: 1000), source: "NSE", time: 8, in: directory.path)
        let text = try String(contentsOfFile: ExtensionFailures.path(in: directory.path), encoding: .utf8)
        try (text + "garbage without tabs\nx\ty\tz\n").write(
            toFile: ExtensionFailures.path(in: directory.path),
            atomically: true,
            encoding: .utf8
        )
        let entries = ExtensionFailures.read(in: directory.path)
        #expect(entries.count == 2)
        #expect(entries[0] == .init(time: 7, source: "Message Filter", sentence: "two lines and a tab"))
        #expect(entries[1].sentence.utf8.count <= 1000 && entries[1].sentence.unicodeScalars.allSatisfy { $0 == "가" })
    }

    /// Recording never throws: a directory it cannot write to loses the record, nothing else.
    @Test func aDirectoryThatCannotBeWrittenLosesTheRecordQuietly() throws {
        let directory = try TemporaryDirectory()
        ExtensionFailures.record("lost", source: "x", time: 1, in: directory.file("missing/deeper"))
        #expect(ExtensionFailures.read(in: directory.file("missing/deeper")).isEmpty)
    }
}
