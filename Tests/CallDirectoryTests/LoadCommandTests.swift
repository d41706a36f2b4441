import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import CallDirectorySimulator
@testable import SetReading
@testable import SetStorage

/// The simulator's commands run end to end through the built binaries, as docs/USAGE.md shows them.
@Suite(.serialized) struct LoadCommandTests {
    /// +8270#### without "000": five extensions of up to 2,000 candidates.
    static let spec = ["--pattern", "+8270####", "--range-size", "2000", "--no-sync"]

    /// A generated set and the path of a store next to it.
    struct Workspace {
        let directory: TemporaryDirectory
        var output: String { directory.file("out") }
        var store: String { directory.file("store.sqlite") }

        init() throws {
            directory = try TemporaryDirectory()
            let generate = try runBlocklist(["generate"] + LoadCommandTests.spec + ["--output", directory.file("out")])
            try #require(generate.status == 0, "\(generate.stderr)")
        }

        func blocklist(_ arguments: String...) throws -> CommandResult {
            try runBlocklist(arguments + ["--store", store])
        }

        /// Each extension's entries in the store equal its shard's numbers.
        func expectStoreMatchesShards(sourceLocation: SourceLocation = #_sourceLocation) throws {
            let store = try CallDirectoryStore(path: store)
            let manifest = try Manifest.load(from: output)
            for shard in manifest.shards {
                let identifier = CallDirectoryStore.identifier(ofShard: shard.index, of: manifest.shards.count)
                #expect(
                    try store.entries(of: identifier) == readNumbers(manifest.path(of: shard, in: output)),
                    "\(identifier)",
                    sourceLocation: sourceLocation
                )
            }
            #expect(try store.integrityCheck() == "ok", sourceLocation: sourceLocation)
        }
    }

    /// `load --json`: one row per extension with what the table shows, and the summary's counts;
    /// a failed extension is a row with its CallKit code and exit status 1, as without --json.
    @Test func loadReportsAsJSON() throws {
        struct Report: Decodable {
            struct Row: Decodable {
                var identifier: String
                var result: String
                var entries: Int64?
                var added: Int64?
                var error: String?
            }
            struct Summary: Decodable {
                var extensions: Int
                var loaded: Int
                var skipped: Int
                var failed: Int
            }
            var extensions: [Row]
            var summary: Summary
        }
        let workspace = try Workspace()
        let enable = try workspace.blocklist("enable", "1-4", workspace.output, "--json")
        let switched = try JSONSerialization.jsonObject(with: Data(enable.stdout.utf8)) as? [String: Any]
        #expect(switched?["enabled"] as? Bool == true, "\(enable.stdout)")
        #expect((switched?["extensions"] as? [String])?.count == 4)
        let load = try workspace.blocklist("load", workspace.output, "--json")
        #expect(load.status == 0, "\(load.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(load.stdout.utf8))
        let manifest = try Manifest.load(from: workspace.output)
        #expect(report.extensions.map(\.result) == ["loaded", "loaded", "loaded", "loaded", "skipped-disabled"])
        for (row, shard) in zip(report.extensions.prefix(4), manifest.shards) {
            #expect(row.entries == shard.count && row.added == shard.count, "\(row.identifier)")
        }
        #expect(report.summary.extensions == 5 && report.summary.loaded == 4 && report.summary.skipped == 1)
        #expect(report.summary.failed == 0)

        // A budget no host fits in: every enabled extension fails, each row names the code.
        let failed = try workspace.blocklist("load", workspace.output, "--json", "--force", "--memory-budget", "1KiB")
        #expect(failed.status == 1, "\(failed.stderr)")
        let refused = try JSONDecoder().decode(Report.self, from: Data(failed.stdout.utf8))
        #expect(refused.summary.failed == 4 && refused.extensions.prefix(4).allSatisfy { $0.error != nil })
    }

    /// Issue 30: identification entries counted apart from blocking ones, the store named, and a
    /// mistyped set directory or a store directory that does not exist named before anything is made.
    @Test func countsApartAndEveryPathNamed() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+82700000001\n+82700000002\n+82700000003\n".utf8), to: directory.file("numbers.txt"))
        try writeBytes(Array("+82710000001,Caller A\n+82710000002,Caller B\n".utf8), to: directory.file("labels.csv"))
        let missing = try runBlocklist(["load", "mistyped"], in: directory.path)
        #expect(missing.status == 1 && missing.stderr.contains("mistyped does not exist"), "\(missing.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "labels.csv", "numbers.txt",
            ]
        )
        let noSet = try runBlocklist(["status"], in: directory.path)
        #expect(noSet.status == 1 && noSet.stderr.contains("Output does not exist"), "\(noSet.stderr)")
        let generate = try runBlocklist(
            ["generate", "--numbers", "numbers.txt", "--labels", "labels.csv", "-o", "set", "--no-sync"],
            in: directory.path
        )
        #expect(generate.status == 0, "\(generate.stderr)")
        let nowhere = try runBlocklist(["enable", "all", "set", "--store", "nodir/store.sqlite"], in: directory.path)
        #expect(
            nowhere.status == 1 && nowhere.stderr.contains("its directory nodir does not exist"),
            "\(nowhere.stderr)"
        )
        let noStore = try runBlocklist(["status", "set"], in: directory.path)
        #expect(
            noStore.status == 1 && noStore.stderr.contains("There is no store at set/CallDirectory.sqlite"),
            "\(noStore.stderr)"
        )
        // Each set's store is beside it: loading a second set leaves the first one's extensions.
        try writeBytes(Array("+82700000009\n".utf8), to: directory.file("other.txt"))
        #expect(
            try runBlocklist(["generate", "--numbers", "other.txt", "-o", "other", "--no-sync"], in: directory.path)
                .status == 0
        )
        for set in ["set", "other"] {
            let enabled = try runBlocklist(["enable", "all", set], in: directory.path)
            #expect(
                enabled.stdout == "Enabled 1 extension of \(set) in \(set)/CallDirectory.sqlite\n",
                "\(enabled.stdout)"
            )
            let loaded = try runBlocklist(["load", set], in: directory.path)
            #expect(loaded.stdout.contains("0 failed in \(set)/CallDirectory.sqlite;"), "\(loaded.stdout)")
        }
        let first = try runBlocklist(["lookup", "+82700000001", "set"], in: directory.path)
        #expect(first.status == 0 && first.stdout == "82700000001 is blocked by extension-01\n", "\(first.stdout)")
        let second = try runBlocklist(["lookup", "+82700000001", "other"], in: directory.path)
        #expect(second.status == 1, "\(second.stdout)")
        #expect(try runBlocklist(["status", "set"], in: directory.path).stdout.contains("integrity: ok"))

        let enable = try runBlocklist(["enable", "all", "set", "--store", "set/store.sqlite"], in: directory.path)
        #expect(enable.stdout == "Enabled 1 extension of set in set/store.sqlite\n", "\(enable.stdout)")
        let load = try runBlocklist(["load", "set", "--store", "set/store.sqlite"], in: directory.path)
        #expect(load.status == 0)
        #expect(
            load.stderr.contains(
                "loaded 3 blocking entries and 2 identification entries (full, blocking +3 −0; identification +2 −0)"
            ),
            "\(load.stderr)"
        )
        #expect(
            load.stdout.contains("1 extension: 1 loaded, 0 skipped, 0 failed in set/store.sqlite;"),
            "\(load.stdout)"
        )
        let status = try runBlocklist(["status", "set", "--store", "set/store.sqlite", "--json"], in: directory.path)
        let rows = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [[String: Any]]
        #expect(
            rows?.first?["loadedCount"] as? Int == 3 && rows?.first?["identificationCount"] as? Int == 2,
            "\(status.stdout)"
        )
        let table = try runBlocklist(["status", "set", "--store", "set/store.sqlite"], in: directory.path)
        #expect(table.stdout.contains("blocking  identified"), "\(table.stdout)")
        #expect(!table.stdout.contains(" \n"), "no row ends with a space")
        let json = try runBlocklist(
            ["load", "set", "--store", "set/store.sqlite", "--force", "--json"],
            in: directory.path
        )
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let row = (report?["extensions"] as? [[String: Any]])?.first
        #expect(row?["identificationEntries"] as? Int == 2 && row?["entries"] as? Int == 5, "\(json.stdout)")
    }

    @Test func enableLoadStatusLookupAndDisable() throws {
        let workspace = try Workspace()
        let enable = try workspace.blocklist("enable", "all", workspace.output)
        #expect(enable.status == 0 && enable.stdout.contains("Enabled 5 extensions"), "\(enable.stderr)")

        let load = try workspace.blocklist("load", workspace.output)
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stdout.contains("5 extensions: 5 loaded, 0 skipped, 0 failed in "), "\(load.stdout)")
        #expect(load.stdout.split(separator: "\n").filter { $0.contains(" loaded ") }.count == 5, "\(load.stdout)")
        #expect(load.stderr.contains("extension-03: loading"), "plain progress lines when stderr is not a terminal")
        try workspace.expectStoreMatchesShards()

        let status = try workspace.blocklist("status")
        #expect(status.status == 0)
        #expect(status.stdout.split(separator: "\n").filter { $0.contains("yes") && $0.contains("loaded") }.count == 5)
        #expect(status.stdout.contains("integrity: ok"))

        let blocked = try workspace.blocklist("lookup", "+82702345")
        #expect(blocked.status == 0 && blocked.stdout == "82702345 is blocked by extension-02\n", "\(blocked.stdout)")
        let free = try workspace.blocklist("lookup", "82700045")  // contains "000"
        #expect(free.status == 1 && free.stdout.contains("is neither blocked nor identified"))
        let bad = try workspace.blocklist("lookup", "82-70")
        #expect(
            bad.status == 2
                && bad.stderr.contains("\"82-70\" has 4 digits; a number with its country code has at least 7"),
            "\(bad.stderr)"
        )

        let rerun = try workspace.blocklist("load", workspace.output)
        #expect(rerun.status == 0)
        #expect(rerun.stdout.components(separatedBy: "skipped (unchanged)").count == 6, "\(rerun.stdout)")
        #expect(
            rerun.stdout.hasSuffix("5 extensions: 0 loaded, 5 skipped, 0 failed in \(workspace.store)\n"),
            "\(rerun.stdout)"
        )

        #expect(try workspace.blocklist("disable", "2", workspace.output).status == 0)
        let skipped = try workspace.blocklist("load", workspace.output, "--only", "2")
        #expect(skipped.stdout.contains("extension-02     skipped (disabled)"), "\(skipped.stdout)")
        #expect(try workspace.blocklist("lookup", "82702345").status == 1, "a disabled extension blocks nothing")
    }

    /// --store never writes into a file blocklist did not make: someone else's SQLite database
    /// keeps its tables, rows and journal mode, and a file that is not SQLite is named as such.
    @Test func aStoreBlocklistDidNotMakeIsLeftAsItIs() throws {
        let workspace = try Workspace()
        let foreign = workspace.directory.file("photos.sqlite")
        do {
            let database = try SQLiteDatabase(path: foreign, readOnly: false, busyTimeoutMilliseconds: 1000)
            try database.execute("CREATE TABLE albums (name TEXT); INSERT INTO albums VALUES ('summer');")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: foreign))
        let notSQLite = workspace.directory.file("notes.sqlite")
        try "not a database\n".write(toFile: notSQLite, atomically: true, encoding: .utf8)
        for (store, words) in [
            (foreign, "\(foreign) is an SQLite database that blocklist did not make (it holds albums)"),
            (notSQLite, "\(notSQLite) is not an SQLite database, so not a blocklist store"),
        ] {
            for command in [
                ["enable", "all", workspace.output], ["status", workspace.output], ["load", workspace.output],
            ] {
                let result = try runBlocklist(command + ["--store", store])
                #expect(result.status != 0, "\(command) \(store)")
                #expect(result.stderr.contains(words), "\(command): \(result.stderr)")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: foreign)) == before)
        #expect(try String(contentsOfFile: notSQLite, encoding: .utf8) == "not a database\n")
        #expect(!FileManager.default.fileExists(atPath: foreign + "-wal"))
    }

    /// A directory that holds other files but no set is named as such: `generate --output` refuses
    /// such a directory, so the error must not suggest it there; an empty one is still told to run it.
    @Test func aDirectoryOfOtherFilesIsNotToldToGenerateIntoItself() throws {
        let workspace = try Workspace()
        let other = workspace.directory.file("exports")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        try "+82701234\n".write(toFile: other + "/numbers.txt", atomically: true, encoding: .utf8)
        let load = try runBlocklist(["load", other, "--store", workspace.store])
        #expect(load.status != 0)
        #expect(
            load.stderr.contains(
                "\(other) holds no blocklist set: it has no manifest.json but other files (numbers.txt)"
            ),
            "\(load.stderr)"
        )
        #expect(!load.stderr.contains("--output \(other)"), "\(load.stderr)")
        let empty = workspace.directory.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let emptyLoad = try runBlocklist(["load", empty, "--store", workspace.store])
        #expect(emptyLoad.stderr.contains("run `blocklist generate --output \(empty)` first"), "\(emptyLoad.stderr)")
        // What it suggests works.
        #expect(try runBlocklist(["generate", "--numbers", other + "/numbers.txt", "--output", empty]).status == 0)
    }

    @Test func badArgumentsAreRefusedWithASentence() throws {
        let workspace = try Workspace()
        for (arguments, message) in [
            (["load", workspace.output, "--only", "0"], "is not a list of extensions"),
            (["load", workspace.output, "--memory-budget", "lots"], "is not a memory size"),
            (["load", workspace.directory.file("missing")], "does not exist; run `blocklist generate"),
            (["enable", "x-y", workspace.output], "is not a list of extensions"),
        ] {
            let result = try runBlocklist(arguments + ["--store", workspace.store])
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        // A missing extension host fails the load with a hint, not a bare "No such file".
        #expect(try workspace.blocklist("enable", "1", workspace.output).status == 0)
        let noHost = try workspace.blocklist(
            "load",
            workspace.output,
            "--only",
            "1",
            "--extension-host",
            workspace.directory.file("no-host")
        )
        #expect(noHost.status == 1)
        #expect(
            noHost.stderr.contains(
                "--extension-host \(workspace.directory.file("no-host")) cannot be run: No such file or directory."
            ),
            "\(noHost.stderr)"
        )
        #expect(!noHost.stderr.contains("loading"), "named before any extension starts: \(noHost.stderr)")
    }

    /// While one `blocklist load` holds extension 3, a second is refused with currentlyLoading;
    /// SIGKILL of the first keeps what it committed, and a rerun resumes at extension 3.
    @Test func aSecondLoadIsRefusedAndAKilledLoadResumes() throws {
        let workspace = try Workspace()
        #expect(try workspace.blocklist("enable", "all", workspace.output).status == 0)
        // An extension host that stops before shard 3 until it is killed.
        let host = workspace.directory.file("slow-host")
        try """
        #!/bin/sh
        name=$(basename "$1")
        echo $$ > "\(workspace.directory.path)/$name.pid"
        [ "$name" = shard-03.blk ] && exec sleep 60
        exec "\(productsDirectory)/blocklist-extension" "$@"
        """.write(toFile: host, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: host)

        let first = try RunningBlocklist([
            "load", workspace.output, "--store", workspace.store, "--extension-host", host,
        ])
        let marker = workspace.directory.file("shard-03.blk.pid")
        try #require(
            waitUntil {
                FileManager.default.fileExists(atPath: marker) && (try? String(contentsOfFile: marker))?.last == "\n"
            }
        )

        let second = try workspace.blocklist("load", workspace.output, "--force")
        #expect(second.status == 1)
        #expect(second.stdout.contains("failed: currentlyLoading (7)"), "\(second.stdout)\(second.stderr)")
        #expect(second.stderr.contains("another reload is running on the store"))
        let store = try CallDirectoryStore(path: workspace.store)
        let system = CallDirectorySystem(store: store, hostPath: productsDirectory + "/blocklist-extension")
        let manifest = try Manifest.load(from: workspace.output)
        let refused = #expect(throws: CallDirectoryError.self) {
            try system.reload(
                "extension-04",
                shardPath: manifest.path(of: manifest.shards[3], in: workspace.output),
                checksum: manifest.shards[3].checksum
            )
        }
        #expect(refused?.code == .currentlyLoading)

        // The loader dies first; then its host, which would otherwise outlive it asleep.
        kill(first.process.processIdentifier, SIGKILL)
        #expect(waitUntil { !isRunning(first.process.processIdentifier) })
        if let pid = Int32((try String(contentsOfFile: marker)).dropLast()) { kill(pid, SIGKILL) }
        #expect(try first.wait().status != 0)

        #expect(try store.integrityCheck() == "ok")
        #expect(
            try store.entries(of: "extension-01")
                == readNumbers(manifest.path(of: manifest.shards[0], in: workspace.output))
        )
        #expect(try store.entries(of: "extension-02").count == manifest.shards[1].count)
        #expect(try store.entries(of: "extension-03").isEmpty)

        let rerun = try workspace.blocklist("load", workspace.output)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let lines = rerun.stdout.split(separator: "\n")
        #expect(
            lines.filter { $0.contains("skipped (unchanged)") }.map { String($0.prefix(12)) } == [
                "extension-01", "extension-02",
            ]
        )
        #expect(lines.filter { $0.contains(" loaded ") }.count == 3)
        try workspace.expectStoreMatchesShards()
    }
}
