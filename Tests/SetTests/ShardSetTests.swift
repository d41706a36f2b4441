import BlocklistSystem
import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import SetReading
@testable import SetStorage

@Suite struct ShardSetTests {
    static let smallSpec = {
        try! BlockSpec(patterns: ["+8270####"], exclusions: ["000"], rangeSize: 2000, capacity: 1999)
    }()

    private func generate(_ spec: BlockSpec = smallSpec, into directory: String) throws -> Manifest {
        let generated = try ShardSet.generate(try ShardPlan(spec), into: directory, sync: false)
        let manifest = try Manifest.load(from: directory)
        #expect(generated.directory == manifest.directory && generated.totalEntries == manifest.totalEntries)
        return manifest
    }

    private func setFiles(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test func generatedSetVerifiesAndMatchesItsManifest() throws {
        let directory = try TemporaryDirectory()
        let manifest = try generate(into: directory.path)
        #expect(manifest.shards.count == 5)
        #expect(manifest.spec.patterns.map(\.description) == ["+8270####"])
        let plan = try ShardPlan(Self.smallSpec)
        #expect(manifest.totalEntries == plan.totalEntries)
        #expect(manifest.shards.map(\.count) == plan.shards.map(\.entryCount))
        #expect(manifest.shards[0].file == "shard-01.blk")

        let result = ShardSet.verify(directory.path)
        #expect(result.problems.map(\.message) == [])
        #expect(result.isValid)
        #expect(result.entriesVerified == manifest.totalEntries)
        #expect(try Manifest.load(from: directory.path) == manifest)
    }

    @Test func aNewGenerationReplacesTheOldAndLeavesNoTrace() throws {
        let directory = try TemporaryDirectory()
        let first = try generate(into: directory.path)
        let second = try generate(
            try BlockSpec(patterns: ["+8271####"], exclusions: ["11"], rangeSize: 5000),
            into: directory.path
        )
        #expect(first.directory != second.directory)
        #expect(try setFiles(directory.path) == [ShardSet.lockFileName, Manifest.fileName, second.directory].sorted())
        #expect(ShardSet.verify(directory.path).isValid)
        #expect(try Manifest.load(from: directory.path).spec.exclusions == ["11"])
    }

    @Test func aFailedGenerateKeepsThePreviousSet() throws {
        let directory = try TemporaryDirectory()
        let before = try generate(into: directory.path)
        // A leftover of a killed run is cleaned (it carries its marker); a refused spec writes nothing.
        let leftover = directory.file(".staging-0123456789abcdef")
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: false)
        try writeBytes(
            Array("blocklist generation 0123456789abcdef\n".utf8),
            to: leftover + "/" + OutputDirectory.markerName
        )
        try writeBytes([1, 2, 3], to: leftover + "/shard-01.blk")
        #expect(throws: BlocklistError.self) {
            try ShardPlan(try BlockSpec(patterns: ["+8270########"], capacity: 1000))
        }
        // Fail in the middle of writing, after three shards.
        let plan = try ShardPlan(try BlockSpec(patterns: ["+8271####"], rangeSize: 1000))
        let cancelled = #expect(throws: BlocklistError.self) {
            try ShardSet.generate(plan, into: directory.path, sync: false) { (progress) throws(BlocklistError) in
                if progress.shardsDone == 3 { throw BlocklistError(.io, "injected failure") }
            }
        }
        #expect(cancelled?.message == "injected failure")
        #expect(try Manifest.load(from: directory.path) == before)
        #expect(try setFiles(directory.path) == [ShardSet.lockFileName, Manifest.fileName, before.directory].sorted())
        #expect(ShardSet.verify(directory.path).isValid)

        _ = try generate(into: directory.path)
        let afterSecond = try Manifest.load(from: directory.path)
        #expect(afterSecond.directory != before.directory)
        let lock = try FileLock(path: directory.file(ShardSet.lockFileName), what: "test")
        let busy = #expect(throws: BlocklistError.self) {
            try ShardSet.generate(plan, into: directory.path, sync: false)
        }
        #expect(busy?.code == .busy)
        lock.unlock()
        #expect(try Manifest.load(from: directory.path) == afterSecond)
        #expect(ShardSet.verify(directory.path).isValid)
    }

    @Test func outputPathThatIsAFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        try writeBytes([1], to: directory.file("f"))
        let error = #expect(throws: BlocklistError.self) { try generate(into: directory.file("f")) }
        #expect(error?.message.contains("is not a directory") == true)
        let missingParent = #expect(throws: BlocklistError.self) { try generate(into: directory.file("no/such")) }
        #expect(missingParent?.message.contains("Cannot create the output directory") == true)
    }

    /// Edits a generated set and expects verify to report a problem naming `expectedFragment`.
    private func expectProblem(_ expectedFragment: String, after damage: (TemporaryDirectory, Manifest) throws -> Void)
        throws
    {
        let directory = try TemporaryDirectory()
        let manifest = try generate(into: directory.path)
        try damage(directory, manifest)
        let result = ShardSet.verify(directory.path)
        #expect(!result.isValid)
        #expect(
            result.problems.contains { $0.message.contains(expectedFragment) },
            "expected a problem with \"\(expectedFragment)\", got \(result.problems.map(\.message))"
        )
    }

    private func editManifest(_ directory: TemporaryDirectory, _ edit: (inout Manifest) -> Void) throws {
        var manifest = try Manifest.load(from: directory.path)
        edit(&manifest)
        try writeBytes(try manifest.jsonForTests(), to: directory.file(Manifest.fileName))
    }

    @Test func verifyReportsManifestMismatches() throws {
        try expectProblem("count") { directory, _ in try editManifest(directory) { $0.shards[1].count += 1 } }
        try expectProblem("checksum") { directory, _ in
            try editManifest(directory) { $0.shards[2].checksum = "00000000" }
        }
        try expectProblem("entries in all") { directory, _ in try editManifest(directory) { $0.totalEntries += 1 } }
        try expectProblem("shard-03.blk") { directory, manifest in
            try FileManager.default.removeItem(atPath: manifest.path(of: manifest.shards[2], in: directory.path))
        }
        try expectProblem("is not listed") { directory, manifest in
            try writeBytes([0], to: directory.path + "/" + manifest.directory + "/stray.blk")
        }
        try expectProblem("shard index") { directory, manifest in
            // Two shards swapped on disk.
            let a = manifest.path(of: manifest.shards[0], in: directory.path)
            let b = manifest.path(of: manifest.shards[1], in: directory.path)
            try FileManager.default.moveItem(atPath: a, toPath: a + ".tmp")
            try FileManager.default.moveItem(atPath: b, toPath: a)
            try FileManager.default.moveItem(atPath: a + ".tmp", toPath: b)
        }
        try expectProblem("makes") { directory, _ in
            try editManifest(directory) {
                $0.spec.rangeSize = 1000
                $0.spec.capacity = 999
            }
        }
        try expectProblem("the spec generates") { directory, _ in
            try editManifest(directory) {
                $0.spec.exclusions = ["0000"]
                $0.spec.capacity = 2000
            }
        }
        try expectProblem("not a valid manifest") { directory, _ in
            try writeBytes(Array("{".utf8), to: directory.file(Manifest.fileName))
        }
        try expectProblem("has no manifest.json") { directory, _ in
            try FileManager.default.removeItem(atPath: directory.file(Manifest.fileName))
        }
    }

    @Test(arguments: ["../etc", "/etc", ".hidden", "a/b"])
    func manifestPathsOutsideTheSetAreRefused(name: String) throws {
        try expectProblem("refusing to follow it") { directory, _ in
            try editManifest(directory) { $0.shards[0].file = name }
        }
        try expectProblem("refusing to follow it") { directory, _ in try editManifest(directory) { $0.directory = name }
        }
    }

    @Test func newerManifestVersionIsRefused() throws {
        try expectProblem("newer than the version 2") { directory, _ in try editManifest(directory) { $0.version = 3 } }
    }

    @Test func emptyShardsAreAllowedInASet() throws {
        // Every number of the second range contains "11", so shard 2 is empty.
        let directory = try TemporaryDirectory()
        let spec = try BlockSpec(patterns: ["+1###"], exclusions: ["11"], rangeSize: 100)
        _ = try ShardSet.generate(try ShardPlan(spec), into: directory.path, sync: false)
        #expect(try Manifest.load(from: directory.path).shards[1].count == 0)
        #expect(ShardSet.verify(directory.path).isValid)
    }
}
