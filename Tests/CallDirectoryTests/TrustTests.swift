import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import CallDirectorySimulator
@testable import SetReading
@testable import SetStorage

/// Issue 9: blocklist never touches what it did not make, and every state it reports is true.
/// Each test plants files a user cares about and checks them byte for byte afterwards.
@Suite struct TrustTests {
    static let small = ["--pattern", "+8270####", "--range-size", "2000", "--capacity", "1999", "--no-sync"]

    /// Every file below `path` with its bytes (symlinks by their target text), for before/after.
    func snapshot(_ path: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let manager = FileManager.default
        for relative in try manager.subpathsOfDirectory(atPath: path) {
            let full = path + "/" + relative
            if let target = try? manager.destinationOfSymbolicLink(atPath: full) {
                result[relative] = Array(("-> " + target).utf8)
            } else if let attributes = try? manager.attributesOfItem(atPath: full),
                attributes[.type] as? FileAttributeType == .typeRegular
            {
                result[relative] = try readBytes(full)
            } else {
                result[relative] = []
            }
        }
        return result
    }

    /// A folder of a user's: two files and a subfolder.
    func plantUserFiles(in path: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/sub", withIntermediateDirectories: true)
        try writeBytes(Array("my notes\n".utf8), to: path + "/notes.txt")
        try writeBytes([0, 1, 2, 255], to: path + "/sub/photo.bin")
    }

    /// update has no --force: its refusal of a directory of someone else's files offers none.
    @Test func updateRefusesAForeignDirectoryWithoutOfferingForce() throws {
        let scratch = try TemporaryDirectory()
        for arguments in [
            ["generate", "--output", scratch.file("set")] + Self.small, ["keys", "create", scratch.file("keys")],
            ["publish", scratch.file("set"), "--key", scratch.file("keys/signing.key"), "--to", scratch.file("pub")],
        ] {
            let made = try runBlocklist(arguments)
            try #require(made.status == 0, "\(arguments): \(made.stderr)")
        }
        try FileManager.default.createDirectory(atPath: scratch.file("home"), withIntermediateDirectories: true)
        try writeBytes(Array("todo\n".utf8), to: scratch.file("home/todo.txt"))
        let refused = try runBlocklist([
            "update", "--from", scratch.file("pub"), "--trust", scratch.file("keys/root.json"), "--app-group",
            scratch.file("home"),
        ])
        #expect(refused.status == 1 && refused.stderr.contains("holds no blocklist set"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("--force"), "\(refused.stderr)")
    }

    @Test func aUsersSetUpFolderAndOtherFilesSurviveGenerateWithForce() throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("home")
        try plantUserFiles(in: output + "/set-up")
        try writeBytes(Array("todo\n".utf8), to: output + "/todo.txt")
        let before = try snapshot(output)

        let refused = try runBlocklist(["generate", "--output", output] + Self.small)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("is not empty and holds no blocklist set"), "\(refused.stderr)")
        #expect(try snapshot(output) == before, "a refused generate touches nothing, not even a lock file")

        for round in 0..<3 {
            let forced = try runBlocklist(["generate", "--output", output, "--force"] + Self.small)
            #expect(forced.status == 0, "\(forced.stderr)")
            // Said once: from then on the directory holds a blocklist set.
            #expect(forced.stderr.contains("because of --force") == (round == 0), "\(forced.stderr)")
        }
        let after = try snapshot(output)
        for (path, bytes) in before { #expect(after[path] == bytes, "\(path) changed") }
        #expect(ShardSet.verify(output).isValid)
    }

    @Test func aSymlinkNamedLikeASetIsNeverFollowedOrRemoved() throws {
        let scratch = try TemporaryDirectory()
        let outside = scratch.file("outside")
        try plantUserFiles(in: outside)
        let output = scratch.file("out")
        #expect(try runBlocklist(["generate", "--output", output] + Self.small).status == 0)
        for name in ["set-0123456789abcdef", ".staging-0123456789abcdef", ".manifest-0123456789abcdef.json"] {
            try FileManager.default.createSymbolicLink(atPath: output + "/" + name, withDestinationPath: outside)
        }
        // A real set- directory without blocklist's marker, holding a user's file.
        try FileManager.default.createDirectory(
            atPath: output + "/set-fedcba9876543210",
            withIntermediateDirectories: false
        )
        try writeBytes(Array("keep me".utf8), to: output + "/set-fedcba9876543210/keep.txt")
        let outsideBefore = try snapshot(outside)

        for _ in 0..<2 { #expect(try runBlocklist(["generate", "--output", output] + Self.small).status == 0) }
        #expect(try snapshot(outside) == outsideBefore)
        for name in ["set-0123456789abcdef", ".staging-0123456789abcdef", ".manifest-0123456789abcdef.json"] {
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: output + "/" + name) == outside)
        }
        #expect(try readBytes(output + "/set-fedcba9876543210/keep.txt") == Array("keep me".utf8))
    }

    @Test func aManifestJsonBlocklistDidNotWriteIsNeverReplaced() throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("web")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        let webManifest = Array("{\n  \"name\" : \"My App\",\n  \"start_url\" : \"/\"\n}\n".utf8)
        try writeBytes(webManifest, to: output + "/manifest.json")
        for force in [false, true] {
            let result = try runBlocklist(["generate", "--output", output] + Self.small + (force ? ["--force"] : []))
            #expect(result.status == 1)
            #expect(result.stderr.contains("manifest.json was not written by blocklist"), "\(result.stderr)")
        }
        #expect(try readBytes(output + "/manifest.json") == webManifest)
        #expect(try FileManager.default.contentsOfDirectory(atPath: output) == ["manifest.json"])

        // A manifest.json that is a symlink to a user's file is refused too, and not followed.
        let linked = scratch.file("linked")
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: linked + "/manifest.json",
            withDestinationPath: output + "/manifest.json"
        )
        #expect(try runBlocklist(["generate", "--output", linked, "--force"] + Self.small).status == 1)
        #expect(try readBytes(output + "/manifest.json") == webManifest)
    }

    @Test func theRootAndACurrentDirectoryFullOfFilesAreRefused() throws {
        let root = try runBlocklist(["generate", "--output", "/"] + Self.small)
        #expect(root.status == 1 && root.stderr.contains("Refusing to use / as the output directory"), "\(root.stderr)")
        let rootForced = try runBlocklist(["generate", "--output", "/", "--force"] + Self.small)
        #expect(rootForced.status == 1)
        #expect(!FileManager.default.fileExists(atPath: "/" + ShardSet.lockFileName))

        let scratch = try TemporaryDirectory()
        try plantUserFiles(in: scratch.path)
        let before = try snapshot(scratch.path)
        let dot = try runBlocklist(["generate", "-o", "."] + Self.small, in: scratch.path)
        #expect(dot.status == 1 && dot.stderr.contains("is not empty"))
        #expect(try snapshot(scratch.path) == before)
    }

    @Test func leftoversOfEarlierVersionsAndKilledRunsAreCleanedOnlyWhenProvablyOurs() throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("out")
        #expect(try runBlocklist(["generate", "--output", output] + Self.small).status == 0)
        let current = try Manifest.load(from: output).directory
        // A set written before markers existed: only shard files.
        let legacy = output + "/set-00000000000000aa"
        try FileManager.default.createDirectory(atPath: legacy, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: output + "/" + current + "/shard-01.blk",
            toPath: legacy + "/shard-01.blk"
        )
        // A staging directory a run left empty, and one whose marker was cut short by a kill.
        try FileManager.default.createDirectory(
            atPath: output + "/.staging-00000000000000bb",
            withIntermediateDirectories: false
        )
        try FileManager.default.createDirectory(
            atPath: output + "/.staging-00000000000000cc",
            withIntermediateDirectories: false
        )
        try writeBytes(
            Array("blocklist gen".utf8),
            to: output + "/.staging-00000000000000cc/" + OutputDirectory.markerName
        )
        // A legacy set with a user's file in it stays.
        let mixed = output + "/set-00000000000000dd"
        try FileManager.default.createDirectory(atPath: mixed, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: legacy + "/shard-01.blk", toPath: mixed + "/shard-01.blk")
        try writeBytes([7], to: mixed + "/mine.txt")

        #expect(try runBlocklist(["generate", "--output", output] + Self.small).status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        let now = try Manifest.load(from: output).directory
        #expect(names == [ShardSet.lockFileName, Manifest.fileName, now, "set-00000000000000dd"].sorted())
        #expect(try readBytes(mixed + "/mine.txt") == [7])
    }

    @Test func aGenerationAReaderHoldsStaysUntilItLetsGo() throws {
        let directory = try TemporaryDirectory()
        let spec = try BlockSpec(patterns: ["+8270####"], exclusions: ["000"], rangeSize: 2000, capacity: 1999)
        _ = try ShardSet.generate(try ShardPlan(spec), into: directory.path, sync: false)
        let reading = try ReadingSet(directory: directory.path)
        let held = reading.manifest.directory
        let second = try ShardSet.generate(try ShardPlan(spec), into: directory.path, sync: false)
        #expect(second.notes.contains { $0.contains("a reader (load or verify) is using it") })
        for shard in reading.manifest.shards {
            #expect(FileManager.default.fileExists(atPath: reading.path(of: shard)))
        }
        reading.close()
        let third = try ShardSet.generate(try ShardPlan(spec), into: directory.path, sync: false)
        #expect(third.notes.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.file(held)))
    }

    @Test func aFullLoadCompletesWhileFiveGeneratesCommitNewSets() throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("out")
        let store = scratch.file("store.sqlite")
        let spec = ["--pattern", "+8270######", "--range-size", "100000", "--capacity", "99999", "--no-sync"]
        #expect(try runBlocklist(["generate", "--output", output] + spec).status == 0)
        let loaded = try Manifest.load(from: output)
        #expect(try runBlocklist(["enable", "all", output, "--store", store]).status == 0)
        let load = try RunningBlocklist(["load", output, "--store", store])
        // Commit the new sets while the load is under way: after its first extension, before its last.
        #expect(
            try waitUntil {
                try FileManager.default.fileExists(atPath: store)
                    && (try? CallDirectoryStore(path: store, readOnly: true).extensions().contains {
                        $0.state == .loaded
                    }) == true
            }
        )
        var commits = 0
        for exclusion in ["0000", "1111", "2222", "3333", "4444"] {
            let result = try runBlocklist(["generate", "--output", output, "--exclude", exclusion] + spec)
            #expect(result.status == 0, "\(result.stderr)")
            if result.status == 0 { commits += 1 }
        }
        #expect(load.process.isRunning, "the generates ran while the load was under way")
        let result = try load.wait()
        #expect(commits == 5)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("10 extensions: 10 loaded, 0 skipped, 0 failed"), "\(result.stdout)")
        // Every extension holds the generation the load started from, which stayed on disk.
        let rows = try CallDirectoryStore(path: store, readOnly: true).extensions()
        #expect(rows.map(\.loadedChecksum) == loaded.shards.map(\.checksum))
        #expect(FileManager.default.fileExists(atPath: output + "/" + loaded.directory))
        // Once the load let go, the next generate removes what it held.
        #expect(try runBlocklist(["generate", "--output", output] + spec).status == 0)
        #expect(!FileManager.default.fileExists(atPath: output + "/" + loaded.directory))
    }
}
