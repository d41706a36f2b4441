import BlocklistSystem
import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import CallDirectorySimulator
@testable import SetReading
@testable import SetStorage

/// A generated set, a store and a system in a temporary directory.
private final class Fixture {
    let directory: TemporaryDirectory
    let output: String
    let system: CallDirectorySystem
    var loader: SetLoader

    init(exclusions: [String] = ["000"], hostPath: String = productsDirectory + "/blocklist-extension") throws {
        directory = try TemporaryDirectory()
        output = directory.file("out")
        _ = try ShardSet.generate(
            try ShardPlan(try BlockSpec(patterns: ["+8270####"], exclusions: exclusions, rangeSize: 2000)),
            into: output,
            sync: false
        )
        system = CallDirectorySystem(
            store: try CallDirectoryStore(path: directory.file("store.sqlite")),
            hostPath: hostPath
        )
        loader = try SetLoader(system: system, directory: output)
        try system.store.setEnabled(true, identifiers: try loader.identifiers().map(\.identifier))
    }

    var store: CallDirectoryStore { system.store }

    /// Generates a new set with other exclusions into the same directory and reloads the manifest.
    func regenerate(exclusions: [String]) throws {
        _ = try ShardSet.generate(
            try ShardPlan(try BlockSpec(patterns: ["+8270####"], exclusions: exclusions, rangeSize: 2000)),
            into: output,
            sync: false
        )
        loader = try SetLoader(system: system, directory: output)
    }

    func shardNumbers(_ index: Int) throws -> [Int64] {
        try readNumbers(loader.manifest.path(of: loader.manifest.shards[index - 1], in: output))
    }

    func reload(_ index: Int, _ options: ReloadOptions = ReloadOptions()) throws(CallDirectoryError) -> ReloadResult {
        let shard = loader.manifest.shards[index - 1]
        return try system.reload(
            CallDirectoryStore.identifier(ofShard: index, of: 5),
            shardPath: loader.manifest.path(of: shard, in: output),
            checksum: shard.checksum,
            options: options
        )
    }
}

/// Writes an executable python3 script that plays a misbehaving extension: it sends `records`.
private func fakeHost(in directory: TemporaryDirectory, name: String, records: String) throws -> String {
    let path = directory.file(name)
    let script = """
        #!/usr/bin/env python3
        import struct, sys
        out = sys.stdout.buffer
        incremental = "--incremental" in sys.argv
        def add(*numbers): out.write(struct.pack("<BI", 1, len(numbers)) + b"".join(struct.pack("<q", n) for n in numbers))
        def remove(*numbers): out.write(struct.pack("<BI", 2, len(numbers)) + b"".join(struct.pack("<q", n) for n in numbers))
        def remove_all(): out.write(struct.pack("<BI", 3, 0))
        def complete(): out.write(struct.pack("<BI", 4, 0))
        def cancel(reason): data = reason.encode(); out.write(struct.pack("<BI", 5, len(data)) + data)
        def label(text): data = text.encode(); out.write(struct.pack("<BI", 6, len(data)) + data)
        def add_id(*numbers): out.write(struct.pack("<BI", 7, len(numbers)) + b"".join(struct.pack("<q", n) for n in numbers))
        def remove_id(*numbers): out.write(struct.pack("<BI", 8, len(numbers)) + b"".join(struct.pack("<q", n) for n in numbers))
        def remove_all_id(): out.write(struct.pack("<BI", 9, 0))
        \(records)
        out.flush()
        """
    try script.write(toFile: path, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    return path
}

@Suite(.serialized) struct SimulatorTests {
    @Test func loadsEnabledExtensionsSkipsOthersAndLooksUp() throws {
        let fixture = try Fixture()
        try fixture.store.setEnabled(false, identifiers: ["extension-03"])
        let outcomes = try fixture.loader.load()
        #expect(outcomes.map(\.identifier) == (1...5).map { CallDirectoryStore.identifier(ofShard: $0, of: 5) })
        #expect(outcomes[2].outcome == .skippedDisabled)
        for index in [1, 2, 4, 5] {
            guard case .loaded(let result) = outcomes[index - 1].outcome else {
                Issue.record("extension \(index): \(outcomes[index - 1].outcome)")
                continue
            }
            #expect(!result.incremental)
            #expect(try fixture.store.entries(of: result.identifier) == fixture.shardNumbers(index))
            #expect(result.peakMemoryKiB > 0)
        }
        #expect(try fixture.store.lookup(82_702_345) == ["extension-02"])
        #expect(try fixture.store.lookup(82_700_045).isEmpty)  // "82700045" contains "000"
        #expect(try fixture.store.integrityCheck() == "ok")
        // A second run skips what is unchanged.
        #expect(try fixture.loader.load(only: [1, 2]).map(\.outcome) == [.skippedUnchanged, .skippedUnchanged])
    }

    @Test func isIncrementalFollowsCallKitsRules() throws {
        let fixture = try Fixture()
        let first = try fixture.reload(2)
        #expect(first.incremental == false)  // first load
        #expect(first.calls == first.added && first.removed == 0)
        let second = try fixture.reload(2)
        #expect(second.incremental == true)
        // The full strategy: removeAll for each kind (one call each, every entry removed), then
        // every addition.
        #expect(second.removed == first.entries && second.calls == second.added + 2)
        try fixture.store.setEnabled(false, identifiers: ["extension-02"])
        try fixture.store.setEnabled(true, identifiers: ["extension-02"])
        #expect(try fixture.reload(2).incremental == false)  // re-enabled
        var crash = ReloadOptions()
        crash.crashAfter = 10
        #expect(throws: CallDirectoryError.self) { try fixture.reload(2, crash) }
        #expect(try fixture.reload(2).incremental == false)  // after a failure
        #expect(try fixture.store.entries(of: "extension-02") == fixture.shardNumbers(2))
    }

    @Test(arguments: [0, 1, 500, 1500])
    func aCrashAtEntryKRollsBackToThePreviousEntries(k: Int64) throws {
        let fixture = try Fixture(exclusions: ["000"])
        _ = try fixture.reload(2)
        let before = try fixture.store.entries(of: "extension-02")
        try fixture.regenerate(exclusions: ["00"])
        var options = ReloadOptions()
        options.crashAfter = k
        let error = #expect(throws: CallDirectoryError.self) { try fixture.reload(2, options) }
        #expect(error?.code == .loadingInterrupted)
        #expect(try fixture.store.entries(of: "extension-02") == before)
        #expect(try fixture.store.extension("extension-02")?.state == .failed)
        #expect(try fixture.store.integrityCheck() == "ok")
        _ = try fixture.reload(2)
        #expect(try fixture.store.entries(of: "extension-02") == fixture.shardNumbers(2))
    }

    @Test func aHostOverItsMemoryBudgetIsKilled() throws {
        let fixture = try Fixture()
        var options = ReloadOptions()
        options.memoryBudgetKiB = 64
        let error = #expect(throws: CallDirectoryError.self) { try fixture.reload(1, options) }
        #expect(error?.code == .loadingInterrupted)
        #expect(error?.message.contains("memory budget of 64 KiB") == true)
        #expect(try fixture.store.entries(of: "extension-01").isEmpty)
    }

    @Test func capacityIsEnforcedPerExtensionOrPerRequest() throws {
        let fixture = try Fixture()
        var options = ReloadOptions()
        options.capacity = 100
        let error = #expect(throws: CallDirectoryError.self) { try fixture.reload(2, options) }
        #expect(error?.code == .maximumEntriesExceeded)
        #expect(error?.code.rawValue == 5)
        options.capacity = 1999
        _ = try fixture.reload(2, options)
        options.capacityScope = .perRequest
        _ = try fixture.reload(2, options)
    }

    @Test func identificationEntriesHaveACapacityOfTheirOwnAndIncrementalRemovalsMustExist() throws {
        let scratch = try TemporaryDirectory()
        var options = ReloadOptions()
        options.memoryBudgetKiB = 1 << 20
        options.capacity = 100
        // 100 of each kind fit a capacity of 100: the limit is per kind, as is the order (the
        // identification entries start again below the last blocking one).
        let both = try fakeHost(
            in: scratch,
            name: "both",
            records: """
                if not incremental:
                    add(*range(82700000, 82700100)); label('Scam'); add_id(*range(82700000, 82700100)); complete()
                else:
                    remove_id(82700005); label('Other'); remove_id(82700006); add_id(82700006); complete()
                """
        )
        let fixture = try Fixture(hostPath: both)
        let loaded = try fixture.reload(2, options)
        #expect(loaded.entries == 200, "the entries a load reports count both kinds")
        let identifier = CallDirectoryStore.identifier(ofShard: 2, of: 5)
        #expect(try fixture.store.identificationCount(of: identifier) == 100)
        #expect(try fixture.store.entryCount(of: identifier) == 100)
        // An incremental request removes one, relabels another.
        _ = try fixture.reload(2, options)
        let entries = try fixture.store.identificationEntries(of: identifier)
        #expect(entries.count == 99)
        #expect(!entries.contains { $0.number == 82_700_005 })
        #expect(entries.first { $0.number == 82_700_006 }?.label == "Other")
        #expect(entries.first { $0.number == 82_700_007 }?.label == "Scam")

        // 101 identification entries do not.
        let over = try fakeHost(
            in: scratch,
            name: "over",
            records: "label('Scam'); add_id(*range(82700000, 82700101)); complete()"
        )
        let second = try Fixture(hostPath: over)
        let error = #expect(throws: CallDirectoryError.self) { try second.reload(2, options) }
        #expect(error?.code == .maximumEntriesExceeded, "\(error?.description ?? "")")
        #expect(try second.store.identificationCount(of: identifier) == 0)
    }

    @Test func systemErrorsCarryCallKitsCodes() throws {
        let fixture = try Fixture()
        let missing = #expect(throws: CallDirectoryError.self) {
            try fixture.system.reload("extension-99", shardPath: "/nonexistent", checksum: "")
        }
        #expect(missing?.code == .noExtensionFound)
        try fixture.store.setEnabled(false, identifiers: ["extension-01"])
        #expect((#expect(throws: CallDirectoryError.self) { try fixture.reload(1) })?.code == .extensionDisabled)
        let lock = try FileLock(path: fixture.store.path + ".lock", what: "test")
        #expect((#expect(throws: CallDirectoryError.self) { try fixture.reload(2) })?.code == .currentlyLoading)
        lock.unlock()
        #expect(CallDirectoryError.Code.all.map(\.rawValue) == Array(0...8))
    }

    @Test(arguments: [
        ("add(82702001, 82702000); complete()", CallDirectoryError.Code.entriesOutOfOrder, false),
        ("add(82702001, 82702001); complete()", .duplicateEntries, false),
        ("remove(82702001); complete()", .unexpectedIncrementalRemoval, false),
        ("remove_all(); complete()", .unexpectedIncrementalRemoval, false),
        ("add(82702001)", .loadingInterrupted, false),
        ("cancel('no shard'); ", .unknown, false),
        ("add(82702001) if not incremental else add(82702001); complete()", .duplicateEntries, true),
        // Identification entries follow the same rules, on their own.
        ("label('Scam'); add_id(82702001, 82702000); complete()", .entriesOutOfOrder, false),
        ("label('Scam'); add_id(82702001, 82702001); complete()", .duplicateEntries, false),
        ("remove_id(82702001); complete()", .unexpectedIncrementalRemoval, false),
        ("remove_all_id(); complete()", .unexpectedIncrementalRemoval, false),
        ("add_id(82702001); complete()", .unknown, false),
        (
            "label('Scam'); add_id(82702001) if not incremental else remove_id(82702002); complete()",
            .unexpectedIncrementalRemoval, true
        ),
        (
            "label('Scam'); add_id(82702001) if not incremental else add_id(82702001); complete()", .duplicateEntries,
            true
        ),
    ])
    func misbehavingExtensionsGetCallKitsErrors(records: String, code: CallDirectoryError.Code, secondLoad: Bool) throws
    {
        let scratch = try TemporaryDirectory()
        let fixture = try Fixture(hostPath: try fakeHost(in: scratch, name: "host", records: records))
        var options = ReloadOptions()
        options.memoryBudgetKiB = 1 << 20  // python3 itself takes ~8 MiB
        if secondLoad { _ = try fixture.reload(2, options) }
        let error = #expect(throws: CallDirectoryError.self) { try fixture.reload(2, options) }
        #expect(error?.code == code, "\(error?.description ?? "")")
        #expect(try fixture.store.integrityCheck() == "ok")
    }

    @Test func loadRefusesAShardWhoseChecksumIsNotTheManifests() throws {
        let fixture = try Fixture()
        _ = try fixture.loader.load(only: [2])
        let before = try fixture.store.entries(of: "extension-02")
        // A new set, so that shard 2 must reload; then shard 3's file in shard 2's place: a valid
        // shard, but not the one the manifest lists.
        try fixture.regenerate(exclusions: ["00"])
        let swapped = fixture.loader.manifest
        let target = swapped.path(of: swapped.shards[1], in: fixture.output)
        try writeBytes(try readBytes(swapped.path(of: swapped.shards[2], in: fixture.output)), to: target)
        guard case .failed(let code, let message) = try fixture.loader.load(only: [2])[0].outcome else {
            Issue.record("a swapped shard was loaded")
            return
        }
        #expect(code == .unknown)
        #expect(
            message.contains("but the manifest says \(swapped.shards[1].checksum); refusing to load it"),
            "\(message)"
        )
        #expect(try fixture.store.entries(of: "extension-02") == before)
    }

    @Test func aWriterWaitsForALoadThenGetsASentence() throws {
        let fixture = try Fixture()
        // Another connection holds the write lock, as a load does for a whole request.
        let other = try SQLiteDatabase(path: fixture.store.path)
        try other.execute("BEGIN IMMEDIATE")
        let impatient = try CallDirectoryStore(path: fixture.store.path, busyTimeoutMilliseconds: 200)
        let busy = #expect(throws: BlocklistError.self) {
            try impatient.setEnabled(false, identifiers: ["extension-01"])
        }
        #expect(busy?.code == .busy)
        #expect(
            busy?.message.contains("another process has been writing to it for 200 ms (a load in progress?)") == true,
            "\(busy?.message ?? "")"
        )
        #expect(try impatient.extensions().count == 5, "readers are not blocked")
        try other.execute("COMMIT")
        try impatient.setEnabled(false, identifiers: ["extension-01"])
        #expect(try fixture.store.extension("extension-01")?.enabled == false)
    }

    @Test func theExtensionRefusesAShardOverItsCapacityBeforeAddingAnything() throws {
        let fixture = try Fixture()
        // A valid shard whose one run holds 2,000,000 numbers: one more than an extension may hold.
        let big = fixture.directory.file("big.blk")
        let header = try writeShard([NumberRun(start: 82_700_000_000, count: 2_000_000)], index: 2, to: big)
        let error = #expect(throws: CallDirectoryError.self) {
            try fixture.system.reload("extension-02", shardPath: big, checksum: header.checksum)
        }
        #expect(error?.code == .unknown)
        #expect(
            error?.message.contains("holds 2000000 entries, more than the 1999999") == true,
            "\(error?.message ?? "")"
        )
        #expect(try fixture.store.entries(of: "extension-02").isEmpty)
    }

    @Test func aStoredNumberInsideAFullBatchIsNamed() throws {
        // Additions are stored 512 to a statement; a repeat inside one must still name its entry.
        let scratch = try TemporaryDirectory()
        let records = """
            add(*range(82702000, 82703000)) if not incremental else add(*range(82701700, 82702300)); complete()
            """
        let fixture = try Fixture(hostPath: try fakeHost(in: scratch, name: "host", records: records))
        var options = ReloadOptions()
        options.memoryBudgetKiB = 1 << 20
        #expect(try fixture.reload(2, options).entries == 1000)
        let error = #expect(throws: CallDirectoryError.self) { try fixture.reload(2, options) }
        #expect(error?.code == .duplicateEntries)
        #expect(error?.message.contains("entry 300 (82702000) is already stored") == true, "\(error?.message ?? "")")
        #expect(try fixture.store.entries(of: "extension-02") == Array(82_702_000..<82_703_000))
    }

    @Test func deltaReloadsLeaveTheStoreEqualToTheNewShards() throws {
        var random = SplitMix64(state: 2026)
        let fixture = try Fixture()
        var options = ReloadOptions()
        options.strategy = .delta
        _ = try fixture.loader.load(options: options)
        for _ in 0..<4 {
            let exclusions = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                String(
                    (0..<Int.random(in: 2...3, using: &random)).map { _ in
                        Character(String(Int.random(in: 0...9, using: &random)))
                    }
                )
            }
            // An exclusion such as "27" leaves no +8270#### number at all, which generate refuses.
            guard
                (try? ShardPlan(try BlockSpec(patterns: ["+8270####"], exclusions: exclusions, rangeSize: 2000))) != nil
            else { continue }
            try fixture.regenerate(exclusions: exclusions)
            for (index, (_, outcome)) in try fixture.loader.load(options: options).enumerated() {
                if case .failed(let code, let message) = outcome { Issue.record("\(code): \(message)") }
                #expect(
                    try fixture.store.entries(of: CallDirectoryStore.identifier(ofShard: index + 1, of: 5))
                        == fixture.shardNumbers(index + 1)
                )
            }
        }
        #expect(try fixture.store.integrityCheck() == "ok")
        // One changed number is two calls, not a full reload.
        try fixture.regenerate(exclusions: ["000"])
        _ = try fixture.loader.load(options: options)
        try fixture.regenerate(exclusions: ["000", "82702345"])
        guard case .loaded(let result) = try fixture.loader.load(only: [2], options: options)[0].outcome else {
            Issue.record("not loaded")
            return
        }
        // Only 82702345 went.
        #expect(result.incremental && result.removed == 1 && result.added == 0 && result.calls == 1)
    }

    /// Random host kills, memory kills, Settings switches, spec edits and both strategies, in the
    /// spirit of a chaos run: after each step every extension holds exactly the shard it last
    /// committed, and at the end the store holds the spec's numbers once each.
    @Test(arguments: [7, 2026])
    func aSeededChaosRunConvergesToTheSpec(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let fixture = try Fixture()
        var exclusions = ["000"]
        var shardsByChecksum: [String: [Int64]] = [:]
        func rememberShards() throws {
            for shard in fixture.loader.manifest.shards {
                shardsByChecksum[shard.checksum] = try fixture.shardNumbers(shard.index)
            }
        }
        try rememberShards()
        let identifiers = (1...5).map { CallDirectoryStore.identifier(ofShard: $0, of: 5) }
        var interrupted = 0
        func reloadExpectingFailure(_ index: Int, _ options: ReloadOptions) {
            do {
                _ = try fixture.reload(index, options)
            } catch {
                if error.code == .loadingInterrupted { interrupted += 1 }
            }
        }

        for step in 0..<40 {
            var options = ReloadOptions()
            options.strategy = Bool.random(using: &random) ? .full : .delta
            let index = Int.random(in: 1...5, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                let candidate = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    String(
                        (0..<Int.random(in: 2...4, using: &random)).map { _ in
                            Character(String(Int.random(in: 0...9, using: &random)))
                        }
                    )
                }
                // Exclusions that leave no number (such as "27" in 8270…) are refused by generate.
                guard
                    (try? ShardPlan(try BlockSpec(patterns: ["+8270####"], exclusions: candidate, rangeSize: 2000)))
                        != nil
                else { continue }
                exclusions = candidate
                try fixture.regenerate(exclusions: exclusions)
                try rememberShards()
            case 1:
                try fixture.store.setEnabled(Bool.random(using: &random), identifiers: [identifiers[index - 1]])
            case 2:
                options.crashAfter = Int64.random(in: 0...2000, using: &random)
                reloadExpectingFailure(index, options)
            case 3:
                options.memoryBudgetKiB = 64
                reloadExpectingFailure(index, options)
            default:
                for (identifier, outcome) in try fixture.loader.load(
                    options: options,
                    force: Bool.random(using: &random)
                ) {
                    if case .failed(let code, let message) = outcome, code != .extensionDisabled {
                        Issue.record("step \(step), \(identifier): \(code): \(message)")
                    }
                }
            }
            for row in try fixture.store.extensions() {
                let expected = row.loadedChecksum.map { shardsByChecksum[$0] ?? [-1] } ?? []
                #expect(
                    try fixture.store.entries(of: row.identifier) == expected,
                    "step \(step): \(row.identifier) (\(row.state))"
                )
            }
        }

        try fixture.store.setEnabled(true, identifiers: identifiers)
        for (identifier, outcome) in try fixture.loader.load() {
            if case .failed(let code, let message) = outcome { Issue.record("\(identifier): \(code): \(message)") }
        }
        let stored = try identifiers.flatMap { try fixture.store.entries(of: $0) }
        let spec = (0..<10_000).map { 82_700_000 + Int64($0) }.filter { number in
            !exclusions.contains { String(number).contains($0) }
        }
        #expect(stored == spec)  // ascending across extensions, so once each
        #expect(interrupted > 3, "the run killed hosts")
        #expect(try fixture.store.integrityCheck() == "ok")
    }
}
