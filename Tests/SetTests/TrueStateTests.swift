import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import CallDirectorySimulator
@testable import SetReading
@testable import SetStorage

/// Issue 9: every state blocklist reports is true, output failures are failures, and hostile files
/// and arguments get a sentence, never a trap or a hang.
@Suite struct TrueStateTests {
    static let small = ["--pattern", "+8270####", "--range-size", "2000", "--capacity", "1999", "--no-sync"]

    /// A generated small set and a store with every extension enabled.
    struct Workspace {
        let scratch: TemporaryDirectory
        var output: String { scratch.file("out") }
        var store: String { scratch.file("store.sqlite") }

        init(_ spec: [String] = TrueStateTests.small) throws {
            scratch = try TemporaryDirectory()
            let generate = try runBlocklist(["generate", "--output", scratch.file("out")] + spec)
            #expect(generate.status == 0, "\(generate.stderr)")
            #expect(
                try runBlocklist(["enable", "all", scratch.file("out"), "--store", scratch.file("store.sqlite")]).status
                    == 0
            )
        }

        func run(_ arguments: [String]) throws -> CommandResult { try runBlocklist(arguments + ["--store", store]) }
    }

    @Test func aFailedAppGroupCopyAfterTheCommitIsAWarningNotAFailure() throws {
        let workspace = try Workspace()
        // The App Group directory is a file, so saving the copy fails after the commit.
        try writeBytes([1], to: workspace.store + ".appgroup")
        let load = try workspace.run(["load", workspace.output])
        #expect(load.status == 0, "\(load.stdout)\(load.stderr)")
        #expect(load.stdout.contains("5 extensions: 5 loaded, 0 skipped, 0 failed"), "\(load.stdout)")
        #expect(load.stderr.contains("warning:") && load.stderr.contains("App Group copy"), "\(load.stderr)")
        let rows = try CallDirectoryStore(path: workspace.store, readOnly: true).extensions()
        #expect(rows.allSatisfy { $0.state == .loaded && $0.lastError == nil })
        #expect(try workspace.run(["lookup", "82701001"]).status == 0)
    }

    @Test func extensionsTheNewSetNoLongerHasAreEmptiedAndUnregistered() throws {
        let workspace = try Workspace()
        #expect(try workspace.run(["load", workspace.output]).status == 0)
        #expect(try workspace.run(["lookup", "82709999"]).stdout.contains("extension-05"))
        // A smaller spec: one shard.
        let smaller = try runBlocklist(["generate", "--output", workspace.output, "--pattern", "+8270###", "--no-sync"])
        #expect(smaller.status == 0, "\(smaller.stderr)")
        #expect(try workspace.run(["enable", "1", workspace.output]).status == 0)
        let load = try workspace.run(["load", workspace.output])
        #expect(load.status == 0, "\(load.stdout)\(load.stderr)")
        #expect(
            load.stdout.contains("extension-05     removed (not in this set; 1,998 entries cleared)"),
            "\(load.stdout)"
        )
        #expect(load.stdout.contains("1 extension: 1 loaded, 0 skipped, 0 failed, 4 removed"), "\(load.stdout)")
        let store = try CallDirectoryStore(path: workspace.store, readOnly: true)
        #expect(try store.extensions().map(\.identifier) == ["extension-01"])
        #expect(try store.integrityCheck() == "ok")
        #expect(try workspace.run(["lookup", "82709999"]).status == 1)
        let count = try SQLiteDatabase(path: workspace.store, readOnly: true).prepare(
            "SELECT count(*) FROM blocking_entries"
        )
        _ = try count.step()
        #expect(count.integer(0) == (try Manifest.load(from: workspace.output)).totalEntries)
    }

    @Test func readOnlyCommandsNeverCreateOrChangeFiles() throws {
        let workspace = try Workspace()
        #expect(try workspace.run(["load", workspace.output]).status == 0)
        let shard = try Manifest.load(from: workspace.output).shards[0]
        let shardPath =
            workspace.output + "/" + (try Manifest.load(from: workspace.output).directory) + "/" + shard.file
        func state() throws -> [String: String] {
            var result: [String: String] = [:]
            for name in try FileManager.default.subpathsOfDirectory(atPath: workspace.scratch.path) {
                let attributes = try FileManager.default.attributesOfItem(atPath: workspace.scratch.file(name))
                // A WAL reader records its read mark in the -shm wal-index, which SQLite keeps
                // for exactly that (it holds no data): it must exist before and keep its size,
                // but its time may move. Every other file must stay as it was.
                let time = name.hasSuffix("-shm") ? "" : " \(attributes[.modificationDate] ?? 0)"
                result[name] = "\(attributes[.size] ?? 0)\(time)"
            }
            return result
        }
        let before = try state()
        for arguments in [
            ["status"], ["status", "--json"], ["lookup", "82701001"],
        ] {
            _ = try workspace.run(arguments)
        }
        _ = try runBlocklist(["verify", workspace.output])
        _ = try runBlocklist(["inspect", shardPath])
        _ = try runBlocklist(["cat", shardPath])
        let after = try state()
        for (name, value) in after where before[name] != value {
            Issue.record("\(name) changed: \(before[name] ?? "absent") → \(value)")
        }
        #expect(after.count == before.count)

        // A typo in --store: a sentence saying how to make one, exit 2, and no file.
        let typo = workspace.scratch.file("typo.sqlite")
        let lookup = try runBlocklist(["lookup", "82701001", "--store", typo])
        #expect(lookup.status == 2)
        #expect(
            lookup.stderr.contains("There is no store at \(typo); `blocklist enable all DIR` makes one beside the set"),
            "\(lookup.stderr)"
        )
        let status = try runBlocklist(["status", "--store", typo])
        #expect(status.status != 0 && status.stderr.contains("There is no store"))
        #expect(!FileManager.default.fileExists(atPath: typo))
    }

    @Test(arguments: [
        ["verify", "OUT"], ["verify", "OUT", "--json"], ["inspect", "SHARD"], ["inspect", "SHARD", "--json"],
        ["cat", "SHARD"],
        ["status", "--store", "STORE"], ["status", "--json", "--store", "STORE"],
        ["enable", "1", "OUT", "--store", "STORE"],
        ["load", "OUT", "--store", "STORE", "--force"], ["lookup", "82701001", "--store", "STORE"],
        ["generate", "--output", "OUT"] + TrueStateTests.small,
        ["generate", "--json", "--output", "OUT"] + TrueStateTests.small,
        ["--help"], ["generate", "--help"], ["sms", "serve", "--help"], ["sms", "simulate", "--help"],
    ])
    func aFullStandardOutputIsAFailure(arguments: [String]) throws {
        let workspace = try Workspace()
        let manifest = try Manifest.load(from: workspace.output)
        let shard = workspace.output + "/" + manifest.directory + "/" + manifest.shards[0].file
        let resolved = arguments.map {
            $0 == "OUT" ? workspace.output : $0 == "SHARD" ? shard : $0 == "STORE" ? workspace.store : $0
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productsDirectory + "/blocklist")
        process.arguments = resolved
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0, "\(resolved) exited 0 with its output lost")
        #expect(stderr.contains("Writing to standard output failed") || stderr.contains("No space left"), "\(stderr)")
    }

    @Test func catPrintsWhatEarlierFilesHeldBeforeItsError() throws {
        let workspace = try Workspace()
        let manifest = try Manifest.load(from: workspace.output)
        let shard = workspace.output + "/" + manifest.directory + "/" + manifest.shards[0].file
        let result = try runBlocklist(["cat", shard, workspace.scratch.file("missing.blk")])
        #expect(result.status == 1)
        #expect(result.stdout.split(separator: "\n").count == Int(manifest.shards[0].count))
        #expect(result.stderr.contains("missing.blk"))
    }

    @Test func aShardEndingAtTheLargestNumberReadsEverywhereWithoutATrap() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("max.blk")
        try writeShard([NumberRun(start: 5, count: 2), NumberRun(start: Int64.max - 9, count: 10)], to: path)
        #expect(try readNumbers(path).last == Int64.max)
        #expect(try ShardVerifier.verify(path).header.last == Int64.max)
        var diff = RunDiff(
            old: [NumberRun(start: Int64.max - 3, count: 4)].makeIterator(),
            new: [NumberRun(start: Int64.max - 1, count: 2)].makeIterator()
        )
        #expect(diff.next() == .remove(NumberRun(start: Int64.max - 3, count: 2)))
        #expect(diff.next() == nil)
        for arguments in [["inspect", path], ["cat", path]] {
            let result = try runBlocklist(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(try runBlocklist(["cat", path]).stdout.hasSuffix("\(Int64.max)\n"))
        // The extension host streams it (into /dev/null) and exits normally.
        let host = Process()
        host.executableURL = URL(fileURLWithPath: productsDirectory + "/blocklist-extension")
        host.arguments = [path]
        host.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        host.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try host.run()
        host.waitUntilExit()
        #expect(host.terminationReason == .exit && host.terminationStatus == 0)
    }

    @Test func fifosDevicesAndDirectoriesAreRefusedByTypeWithoutBlocking() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        for (file, type) in [
            (fifo, "a FIFO"), ("/dev/zero", "a character device"), ("/dev/null", "a character device"),
            (directory.path, "a directory"),
        ] {
            for command in ["inspect", "cat"] {
                let result = try runBlocklist([command, file])
                #expect(result.status == 1, "\(command) \(file)")
                #expect(result.stderr.contains("\(file) is \(type)"), "\(command) \(file): \(result.stderr)")
            }
        }
    }

    @Test(arguments: [
        (["load", "--memory-budget", "9223372036854775807MiB"], "is not a memory size from 1KiB"),
        (["load", "--memory-budget", "-5MiB"], "is not a memory size"),
        (["load", "--only", "1-100000000000"], "is not a number from 1 to 10000"),
        (["load", "--only", "1-"], "is open at one end"),
        (["load", "--only", "-3"], "is open at one end"),
        (["load", "--only", ","], "empty item"),
        (["load", "--only", ""], "it is empty"),
        (["load", "--only", "3-1"], "runs backwards"),
        (["enable", "1,,2"], "empty item"),
        (["disable", "0"], "is not a number from 1 to 10000"),
        (["load", "--device-rate", "-5"], "--device-rate is -5; it must be at least 1"),
        (["load", "--capacity", "-1"], "--capacity is -1; it must be at least 1"),
        (["generate", "--capacity", "-5"], "The capacity is -5"),
        (["generate", "--range-size", "-9223372036854775808"], "The range size is -9223372036854775808"),
        (["generate", "--pattern", "+8270####", "--exclude", "827"], "leave none of the 10,000 numbers"),
    ])
    func hostileArgumentsGetTheToolsOwnSentence(arguments: [String], fragment: String) throws {
        let scratch = try TemporaryDirectory()
        let result = try runBlocklist(
            arguments + (arguments[0] == "generate" ? ["--output", scratch.file("out")] : []),
            in: scratch.path
        )
        #expect(result.status != 0)
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out/manifest.json")))
    }

    @Test func duplicateListItemsAreMergedAndOddSpecsGetANote() throws {
        let workspace = try Workspace()
        let enable = try workspace.run(["enable", "2,2,1-3,3", workspace.output])
        #expect(enable.stdout.contains("Enabled 3 extensions"), "\(enable.stdout)")
        let note = try runBlocklist([
            "generate", "--output", workspace.scratch.file("n"), "--pattern", "8270###", "--exclude", "123456789",
            "--no-sync",
        ])
        #expect(note.status == 0)
        #expect(note.stderr.contains("note: pattern 8270### has no +"))
        #expect(note.stderr.contains("note: exclusion 123456789 has 9 digits, more than the 7 of the longest pattern"))

        // Many patterns without their + get one note, not one each.
        let patterns = (0..<300).flatMap { ["--pattern", "82\(1000 + $0)##"] }
        do {
            let many = try runBlocklist(
                ["generate", "--output", workspace.scratch.file("m"), "--no-sync", "--no-exclusions"] + patterns
            )
            #expect(many.status == 0, "\(many.stderr)")
            #expect(many.stderr.components(separatedBy: "note:").count == 2, "\(many.stderr)")
            #expect(many.stderr.contains("note: 300 patterns have no +, such as 821000##"), "\(many.stderr)")
            #expect(many.stdout.contains("entries      30,000"), "\(many.stdout)")
        }
    }

    /// An argument that is not valid UTF-8 is refused by every executable, before anything is
    /// read or written: Swift would have read it with U+FFFD, naming another file.
    @Test func argumentsThatAreNotUTF8AreRefused() throws {
        let scratch = try TemporaryDirectory()
        for (executable, arguments) in [
            ("blocklist", #"generate -o "$(printf 'o\377')""#), ("blocklist-generate", #"-o "$(printf 'o\377')""#),
            ("blocklist", #"verify "$(printf 'o\377')""#),
            ("blocklist", #"sms check --rules x --sender "$(printf 'BANK\377')" --body hi"#),
            ("blocklist-sms", #"serve --rules "$(printf 'r\377')""#),
        ] {
            let result = try RunningBlocklist(
                ["-c", #"exec "$0" "# + arguments, productsDirectory + "/" + executable],
                in: scratch.path,
                executable: "/bin/sh"
            ).wait()
            #expect(result.status == 64, "\(executable) \(arguments): \(result.stderr)")
            #expect(result.stderr.contains("is not valid UTF-8") && result.stderr.contains("\\xFF"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    /// A generation directory swapped for a symbolic link is named as one, not retried as if a
    /// generate kept changing the set.
    @Test func aGenerationThatIsASymlinkIsNamedAsOne() throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("out")
        #expect(try runBlocklist(["generate", "--pattern", "+1###", "--no-sync", "--output", output]).status == 0)
        let manifest = try Manifest.load(from: output)
        let set = output + "/" + manifest.directory
        try FileManager.default.moveItem(atPath: set, toPath: output + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: set, withDestinationPath: "elsewhere")
        let verify = try runBlocklist(["verify", output])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("is a symbolic link"), "\(verify.stderr)")
        #expect(!verify.stderr.contains("kept changing"))
    }

    /// `--numbers -` with standard input closed is named as that; the output directory opened
    /// later never takes descriptor 0 and is never read as the list.
    @Test func aClosedStandardInputIsNamed() throws {
        let scratch = try TemporaryDirectory()
        let result = try RunningBlocklist(
            ["-c", #"exec "$0" generate --numbers - --no-sync -o out <&-"#, productsDirectory + "/blocklist"],
            in: scratch.path,
            executable: "/bin/sh"
        ).wait()
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("Standard input is closed"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
    }
}
