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

    /// The installed generation counts as loaded only when every extension that is on holds a
    /// copy of its installed shard; one that is off is not asked.
    @Test func loadedMeansEveryExtensionThatIsOnHoldsItsShard() throws {
        let directory = try TemporaryDirectory()
        let group = directory.file("group")
        let paths = try shards(in: directory)
        let record = try InstalledShards.install(shardsAt: paths, generation: 3, in: group)
        try FileManager.default.createDirectory(atPath: group + "/loaded", withIntermediateDirectories: true)
        #expect(!record.isLoaded(statuses: [.enabled, .enabled, .enabled], in: group))
        #expect(record.isLoaded(statuses: [.disabled, .unknown, .disabled], in: group))
        for (index, path) in paths.enumerated() where index < 2 {
            try FileManager.default.copyItem(
                atPath: path,
                toPath: AppGroupLayout.loadedCopy(record.names[index], in: group)
            )
        }
        #expect(record.isLoaded(statuses: [.enabled, .enabled, .disabled], in: group))
        #expect(!record.isLoaded(statuses: [.enabled, .enabled, .enabled], in: group))
        // A copy of another shard (what CallKit held before an expired request) is not loaded.
        try FileManager.default.copyItem(
            atPath: paths[0],
            toPath: AppGroupLayout.loadedCopy(record.names[2], in: group)
        )
        #expect(!record.isLoaded(statuses: [.disabled, .disabled, .enabled], in: group))
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

    /// What an app's bundle lookup can hand over by mistake (no shard at all, one shard twice,
    /// generation 0) is refused with a sentence before anything is copied, not recorded as a
    /// set that blocks nothing.
    @Test func aSetWithNoShardsTwiceANameOrGenerationZeroIsRefused() throws {
        let directory = try TemporaryDirectory()
        let group = directory.file("group/blocklist")
        let paths = try shards(in: directory)
        for (shipped, generation, expected) in [
            ([], 1, "The set to install has no shards: the app's bundle holds no shard file."),
            (paths, 0, "Generation 0 is no publication's: a publication counts from 1."),
            (
                [paths[0], paths[1], paths[0]], 1,
                "\(paths[0]) is the second shard named shipped-1.blk in the set to install."
            ),
        ] as [([String], UInt64, String)] {
            let error = #expect(throws: UpdateError.self) {
                try InstalledShards.installIfNeeded(shippedShardsAt: shipped, generation: generation, in: group)
            }
            #expect(error?.message == expected)
            #expect(!FileManager.default.fileExists(atPath: group + "/shards"))
            #expect(!FileManager.default.fileExists(atPath: InstalledShards.recordPath(in: group)))
        }
    }

    /// CallKit's manager with every extension on, whose reloads always succeed.
    struct EveryExtensionOn: CallDirectoryManaging {
        func reloadExtension(withIdentifier identifier: String) async throws(CallDirectoryManagerError) {}
        func enabledStatus(ofExtension identifier: String) async throws(CallDirectoryManagerError)
            -> CallDirectoryEnabledStatus
        { .enabled }
    }

    /// An app that names fewer (or more) extensions than the installed set has shards cannot
    /// load it all: the reload says so in a sentence, never that the set is loaded.
    @Test func extensionsFewerThanShardsAreNamedNotLoaded() async throws {
        let directory = try TemporaryDirectory()
        let group = directory.file("group/blocklist")
        let record = try InstalledShards.install(shardsAt: try shards(in: directory), generation: 1, in: group)
        let reload = await record.reloadCallKit(
            extensions: ["app.CallDirectory01"],
            using: EveryExtensionOn(),
            in: group
        )
        #expect(!reload.isLoaded)
        #expect(
            reload.problem
                == "The app names 1 Call Directory extensions, but the installed set has 3 shards: each shard needs an extension of its own (BlocklistCallDirectoryExtensions in the Info.plist)."
        )
        let matched = await record.reloadCallKit(
            extensions: ["app.CallDirectory01", "app.CallDirectory02", "app.CallDirectory03"],
            using: EveryExtensionOn(),
            in: group
        )
        #expect(matched.problem == nil)
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

/// `InstalledShards.step` (issue 44, item 4): what the Notification Service Extension does with a
/// push the tools made, as `blocklist push payload` writes it.
@Suite struct PushStepTests {
    @Test func aPushIsAppliedInlineOrFetchedFromItsSignedURL() throws {
        let dir = try TemporaryDirectory()
        func run(_ arguments: [String]) throws -> String {
            let result = try runBlocklist(arguments, in: dir.path)
            try #require(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }
        _ = try run(["generate", "--pattern", "+8270####", "-o", "set", "--no-sync"])
        _ = try run(["keys", "create", "keys"])
        _ = try run(["publish", "set", "--key", "keys/signing.key", "--to", "pub"])
        let shipped = try FileManager.default.contentsOfDirectory(atPath: dir.file("pub/1"))
            .filter { $0.hasSuffix(".blk") }.sorted().map { dir.file("pub/1/" + $0) }
        let group = dir.file("group")
        var installed = try InstalledShards.install(shardsAt: shipped, generation: 1, in: group)
        _ = try run(["generate", "--pattern", "+8270####", "--exclude", "1234", "-o", "set", "--no-sync"])
        _ = try run(["publish", "set", "--key", "keys/signing.key", "--to", "pub"])
        let payload = try run(
            ["push", "payload", "--from", "pub", "--key", "keys/signing.key", "--url", "https://cdn.example/pub"]
        )
        let userInfo = try #require(
            try JSONSerialization.jsonObject(with: Data(payload.split(separator: "\n")[0].utf8)) as? [String: Any]
        )
        let push = try #require(userInfo["blocklist"] as? [String: Any])
        let inline = try #require((push["inline"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) })
        let announcement = [UInt8](try JSONSerialization.data(withJSONObject: try #require(push["announcement"])))
        let root = try Root.trusted(try readBytes(dir.file("keys/root.json")), what: "root.json")
        let pushKey = try readBytes(dir.file("keys/push.key"))
        let now = Int64(Date().timeIntervalSince1970)

        // With the push key, the inline update for generation 1 is applied.
        guard
            case .apply(let update) = try installed.step(
                inline: inline,
                announcement: announcement,
                root: root,
                pushKey: pushKey,
                now: now
            )
        else {
            Issue.record("an inline update for the installed generation is not applied")
            return
        }
        #expect(update.from == 1 && update.to == 2)
        // Without one, the update file for generation 1 comes from the announcement's URL.
        let fetch = try installed.step(inline: inline, announcement: announcement, root: root, pushKey: nil, now: now)
        guard case .fetch(let url, let name, 2) = fetch else {
            Issue.record("without a push key the push is not fetched: \(fetch)")
            return
        }
        #expect(url == "https://cdn.example/pub/from-1.push" && name == "from-1.push")
        // Applied, the set is at generation 2: the same push asks nothing more.
        #expect(try installed.apply(update, in: group) == [1])
        guard
            case .nothing = try installed.step(
                inline: inline,
                announcement: announcement,
                root: root,
                pushKey: pushKey,
                now: now
            )
        else {
            Issue.record("a push for the installed generation asks something")
            return
        }
        // An announcement whose bytes were changed is refused, never followed.
        var tampered = announcement
        if let index = tampered.firstIndex(of: UInt8(ascii: "2")) { tampered[index] = UInt8(ascii: "3") }
        installed.generation = 1
        #expect(throws: UpdateError.self) {
            try installed.step(inline: nil, announcement: tampered, root: root, pushKey: nil, now: now)
        }
    }
}
