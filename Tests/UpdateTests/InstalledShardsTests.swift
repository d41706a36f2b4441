import BlocklistCore
import Foundation
import TestSupport
import Testing
import UpdateCore

/// `InstalledShards` (issue 44, item 4): the installed set an app keeps in its App Group, which
/// the app and its Notification Service Extension share. Applying a push is driven through the
/// handlers in AppProjectTests.
@Suite struct InstalledShardsTests {
    func shards(in directory: TemporaryDirectory) throws -> [String] {
        try (1...3).map { index in
            let path = directory.file("shipped-\(index).blk")
            _ = try writeShard(
                [NumberRun(start: 827_000_000_000 + Int64(index) * 1000, count: Int64(10 * index))],
                index: index,
                to: path
            )
            return path
        }
    }

    @Test func anInstalledSetIsWholeAndReadsBackAsWritten() throws {
        let directory = try TemporaryDirectory()
        let group = directory.file("group/blocklist")
        let record = try InstalledShards.install(shardsAt: try shards(in: directory), generation: 4, in: group)
        #expect(record.generation == 4 && record.names == ["shipped-1.blk", "shipped-2.blk", "shipped-3.blk"])
        #expect(try InstalledShards.read(in: group) == record)
        #expect(InstalledShards.isWhole(in: group))
        #expect(try readNumbers(InstalledShards.shardPath("shipped-2.blk", in: group)).count == 20)
        // Nothing is left beside the files: each went through a name of its own and a rename.
        let left = try FileManager.default.contentsOfDirectory(atPath: group + "/shards").filter { $0.hasPrefix(".") }
        #expect(left.isEmpty)
        // The record is canonical JSON with hex digests.
        let text = try String(contentsOfFile: InstalledShards.recordPath(in: group), encoding: .utf8)
        #expect(text.hasPrefix(#"{"digests":[""#) && text.contains(#""generation":4"#))
    }

    /// A shard that is not the one recorded (a kill between an update's renames) makes the set not
    /// whole; so does a missing record or shard.
    @Test func aShardOfAnotherGenerationIsNotWhole() throws {
        let directory = try TemporaryDirectory()
        let group = directory.file("group")
        let paths = try shards(in: directory)
        try InstalledShards.install(shardsAt: paths, generation: 1, in: group)
        _ = try writeShard([NumberRun(start: 827_000_002_000, count: 21)], index: 2, to: directory.file("other.blk"))
        try FileManager.default.removeItem(atPath: InstalledShards.shardPath("shipped-2.blk", in: group))
        try FileManager.default.copyItem(
            atPath: directory.file("other.blk"),
            toPath: InstalledShards.shardPath("shipped-2.blk", in: group)
        )
        #expect(!InstalledShards.isWhole(in: group))
        try InstalledShards.install(shardsAt: paths, generation: 1, in: group)
        #expect(InstalledShards.isWhole(in: group))
        try FileManager.default.removeItem(atPath: InstalledShards.recordPath(in: group))
        #expect(!InstalledShards.isWhole(in: group))
        #expect(!InstalledShards.isWhole(in: directory.file("nothing")))
    }

    /// The record the app's first releases wrote (JSONEncoder: digests as arrays of numbers) reads
    /// as the same record.
    @Test func theEarlierRecordFormatReads() throws {
        let directory = try TemporaryDirectory()
        let group = directory.file("group")
        let record = try InstalledShards.install(shardsAt: try shards(in: directory), generation: 2, in: group)
        let earlier: [String: Any] = [
            "generation": 2, "shards": record.names, "digests": record.digests.map { $0.map(Int.init) },
        ]
        try JSONSerialization.data(withJSONObject: earlier)
            .write(to: URL(fileURLWithPath: InstalledShards.recordPath(in: group)))
        #expect(try InstalledShards.read(in: group) == record)
        #expect(InstalledShards.isWhole(in: group))
    }

    @Test(arguments: [
        (#"{"generation":1,"shards":["a.blk"],"digests":[]}"#, "as many"),
        (#"{"generation":1,"shards":["../a.blk"],"digests":["00"]}"#, "file name"),
        (#"{"generation":1,"shards":["a.blk"],"digests":["zz"]}"#, "64 hex digits"),
        (#"{"generation":-1,"shards":[],"digests":[]}"#, "whole number"),
        (#"{"shards":[],"digests":[]}"#, "no \"generation\""),
        (#"[1]"#, "not a JSON object"),
        (#"{"generation":1,"#, "not valid JSON"),
    ])
    func aDamagedRecordIsRefusedWithASentence(record: String, expected: String) throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("group"), withIntermediateDirectories: true)
        try Data(record.utf8).write(to: URL(fileURLWithPath: directory.file("group/installed.json")))
        let error = #expect(throws: UpdateError.self) { try InstalledShards.read(in: directory.file("group")) }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("installed.json") == true)
        #expect(!InstalledShards.isWhole(in: directory.file("group")))
    }

    /// A directory where the shards go is refused with a sentence, not written through.
    @Test func aFileWhereTheShardsDirectoryGoesIsRefused() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("group"), withIntermediateDirectories: true)
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: directory.file("group/shards")))
        let error = #expect(throws: UpdateError.self) {
            try InstalledShards.install(shardsAt: try shards(in: directory), generation: 1, in: directory.file("group"))
        }
        #expect(error?.message.contains("group/shards") == true, "\(error?.message ?? "")")
    }
}
