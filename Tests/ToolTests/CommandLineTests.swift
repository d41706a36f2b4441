import BenchWorkloads
import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import SetReading
@testable import SetStorage

/// Runs the built `blocklist` binary and checks stdout, stderr and the exit status.
@Suite struct CommandLineTests {
    static let smallSpec = [
        "--pattern", "+8270###", "--pattern", "+8271##", "--exclude", "000", "--exclude", "55", "--range-size", "300",
    ]

    @Test func generateVerifyInspectAndCatAgree() throws {
        let directory = try TemporaryDirectory()
        let output = directory.file("out")
        let generate = try runBlocklist(["generate"] + Self.smallSpec + ["--output", output])
        #expect(generate.status == 0, "\(generate.stderr)")
        #expect(generate.stdout.contains("Generated 4 shards"))
        let one = try runBlocklist(["generate", "--pattern", "+8270###", "--output", directory.file("one")])
        #expect(one.stdout.hasPrefix("Generated 1 shard in "), "\(one.stdout)")
        #expect(generate.stderr.isEmpty, "no progress bar when stderr is not a terminal")

        let verify = try runBlocklist(["verify", output])
        #expect(verify.status == 0)
        #expect(verify.stdout.hasPrefix("OK: 4 shards"))

        // cat prints exactly what a brute-force expansion of the spec gives, in order.
        let manifest = try Manifest.load(from: output)
        let files = manifest.shards.map { manifest.path(of: $0, in: output) }
        let cat = try runBlocklist(["cat"] + files)
        #expect(cat.status == 0)
        // Numerically, the 6-digit +8271## numbers come before the 7-digit +8270### ones.
        var expected: [Int64] = []
        for (prefix, width) in [("8270", 3), ("8271", 2)] {
            for value in 0..<Int(pow(10, Double(width))) {
                let suffix = String(value)
                let digits = prefix + String(repeating: "0", count: width - suffix.count) + suffix
                if !digits.contains("000") && !digits.contains("55") { expected.append(Int64(digits)!) }
            }
        }
        expected.sort()
        #expect(cat.stdout.split(separator: "\n").map { Int64($0)! } == expected)
        #expect(manifest.totalEntries == Int64(expected.count))

        let inspect = try runBlocklist(["inspect", files[0]])
        #expect(inspect.status == 0)
        #expect(inspect.stdout.contains("shard index   1"))
        let json = try runBlocklist(["inspect", "--json", files[0]])
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(decoded?["entries"] as? Int == Int(manifest.shards[0].count))
    }

    @Test func verifyNamesEveryBrokenFileAndFails() throws {
        let directory = try TemporaryDirectory()
        let output = directory.file("out")
        #expect(try runBlocklist(["generate"] + Self.smallSpec + ["--output", output]).status == 0)
        let manifest = try Manifest.load(from: output)
        for shard in manifest.shards.prefix(2) {
            let path = manifest.path(of: shard, in: output)
            var bytes = try readBytes(path)
            bytes[bytes.count / 2] ^= 0x40
            try writeBytes(bytes, to: path)
        }
        let verify = try runBlocklist(["verify", output])
        #expect(verify.status == 1)
        let lines = verify.stderr.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("Error: ") }.count == 2)
        #expect(lines.contains { $0.contains("shard-01.blk") } && lines.contains { $0.contains("shard-02.blk") })
        #expect(verify.stdout.isEmpty)
    }

    @Test(arguments: [
        (["generate", "--pattern", "+82x0###"], "has \"x\" at character 4"),
        (["generate", "--pattern", "+0###"], "must start with the country code"),
        (["generate", "--pattern", "+1234567890123456"], "has 16 digits"),
        (["generate", "--exclude", ""], "An exclusion is empty"),
        (["generate", "--exclude", "1a"], "is not all digits"),
        (["generate", "--range-size", "0"], "range size is 0"),
        (["generate", "--capacity=-5"], "capacity is -5"),
        (["generate", "--capacity", "100000000000000"], "a shard holds at most 4294967295 entries"),
        (["generate", "--pattern", "+1###", "--pattern", "+12##"], "overlap"),
        (["generate", "--pattern", "+1###############"], "digits"),
        (["generate", "--pattern", "+8270########", "--range-size", "1000"], "at most 10000 are allowed"),
        (["generate", "--no-exclusions", "--exclude", "0"], "contradict"),
        (["generate", "--allow-pattern", "abc"], "Pattern \"abc\" has \"a\" at character 1"),
        (["generate", "--numbers", "-", "--labels", "-"], "Standard input (-) can be read once"),
        (["generate", "--allow-pattern", "+999#######"], "or the new set would be empty"),
        (["generate", "--allow", "a.txt"], "or the new set would be empty"),
        (["cat"], "Missing expected argument"),
    ])
    func badArgumentsGetOneSentenceAndExit64(arguments: [String], fragment: String) throws {
        let directory = try TemporaryDirectory()
        let result = try runBlocklist(
            arguments + (arguments[0] == "generate" ? ["--output", directory.file("out")] : [])
        )
        #expect(result.status == 64)
        #expect(result.stderr.contains(fragment), "\(result.stderr)")
        // The command's own usage line, not the root's.
        if arguments[0] == "generate" {
            #expect(result.stderr.contains("Usage: blocklist generate"), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("out")), "nothing is written")
    }

    @Test func capacityAndBadPathsFailWithoutWriting() throws {
        let directory = try TemporaryDirectory()
        let capacity = try runBlocklist(["generate", "--capacity", "1000000", "--output", directory.file("out")])
        #expect(capacity.status == 1)
        #expect(capacity.stderr.contains("Shard 2 (candidates 2,000,000 to 3,999,999) would hold 1,992,600 entries"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("out")))

        try writeBytes([1], to: directory.file("file"))
        let file = try runBlocklist(["generate", "--pattern", "+1#", "--output", directory.file("file")])
        #expect(file.status == 1)
        #expect(file.stderr.contains("is not a directory"))
        #expect(try readBytes(directory.file("file")) == [1])

        let missing = try runBlocklist(["verify", directory.file("nowhere")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("does not exist"))

        let notShard = try runBlocklist(["inspect", directory.file("file")])
        #expect(notShard.status == 1)
        #expect(notShard.stderr.contains("\(directory.file("file")) is not a shard file"))
    }

    @Test func generateJSONSummaryParses() throws {
        let directory = try TemporaryDirectory()
        let result = try runBlocklist([
            "generate", "--pattern", "+1####", "--json", "--no-sync", "--output", directory.file("o"),
        ])
        #expect(result.status == 0)
        let summary = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(summary?["shards"] as? Int == 1)
        // The default exclusion "000" applies: 10,000 candidates less those with "000" in "1" + 4 digits.
        let accepted = (0..<10000).filter {
            !("1" + String(repeating: "0", count: 4 - String($0).count) + String($0)).contains("000")
        }
        #expect(summary?["entries"] as? Int == accepted.count)
        #expect((summary?["peakResidentKiB"] as? Int ?? 0) > 0)
    }

    /// With `--json`, every command prints one JSON object on standard output when it fails:
    /// the error (code, message, exit status), or the command's own report of what failed
    /// (`verify`). Read by Python's `json` module, an independent parser, and a command line
    /// refused by the parser itself (status 64) is one too.
    @Test func everyCommandsFailureIsOneJSONObject() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("[]".utf8), to: directory.file("none.json"))
        try writeBytes(Array("not a shard".utf8), to: directory.file("junk.blk"))
        let failing: [[String]] = [
            ["generate", "--numbers", "missing.txt", "-o", "out"],
            ["generate", "--no-such-option"],
            ["inspect", "junk.blk"],
            ["load", "missing"],
            ["enable", "1", "missing"],
            ["disable", "1", "missing"],
            ["status", "--store", "missing/store.sqlite"],
            ["lookup"],
            ["lookup", "+3316212", "--store", "missing/store.sqlite"],
            ["list-file", "check", "missing.json"],
            ["sms", "compile", "none.json", "-o", "rules"],
            ["sms", "verify", "junk.blk"],
            ["sms", "check", "--rules", "junk.blk", "--sender", "+1", "--body", "x"],
            ["sms", "simulate", "--rules", "missing.blsms"],
            ["publish", "missing", "--key", "missing.key", "--to", "pub"],
            ["publication", "status", "missing"],
            ["update", "--from", "missing", "--trust", "missing.json", "--app-group", "app"],
        ]
        let script = """
            import json, sys
            text = sys.stdin.read()
            value, end = json.JSONDecoder().raw_decode(text)
            assert text[end:].strip() == "", "more than one value"
            error = value["error"]
            assert set(error) == {"code", "message", "exitStatus"}, error
            assert isinstance(error["code"], str) and error["code"], error
            assert isinstance(error["message"], str) and error["message"], error
            print(error["exitStatus"])
            """
        for arguments in failing {
            let result = try runBlocklist(arguments + ["--json"], in: directory.path)
            #expect(result.status != 0, "\(arguments)")
            let python = try runProcess("/usr/bin/env", ["python3", "-c", script], input: Data(result.stdout.utf8))
            #expect(python.status == 0, "\(arguments): \(result.stdout)")
            #expect(
                String(decoding: python.stdout, as: UTF8.self) == "\(result.status)\n",
                "\(arguments): \(result.stdout)"
            )
            #expect(!result.stderr.isEmpty, "\(arguments): the sentence goes to standard error too")
        }
        // verify reports a failure itself, in its own object, once.
        let verify = try runBlocklist(["verify", "missing", "--json"], in: directory.path)
        #expect(verify.status == 1)
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect(report?["valid"] as? Bool == false, "\(verify.stdout)")
    }

    /// Found by the field test: with no descriptor free, a static Swift program sees an empty
    /// command line, and `blocklist update …` printed the help and exited 0, an update that
    /// seemed to run. And a write past `ulimit -f` killed generate by SIGXFSZ, without a word.
    @Test func noFreeDescriptorAndAFileSizeLimitAreSentencesNotSilence() throws {
        let directory = try TemporaryDirectory()
        let blocklist = "\(productsDirectory)/blocklist"
        for arguments in ["--version", "update --from pub --trust root.json --app-group app"] {
            let starved = try runProcess("/bin/sh", ["-c", "exec 2>&1; ulimit -n 3; exec '\(blocklist)' \(arguments)"])
            let output = String(decoding: starved.stdout, as: UTF8.self)
            #expect(starved.status == 1, "\(arguments): \(output)")
            #expect(output.contains("could not read its own command line"), "\(output)")
        }
        var numbers = ""
        for index in 0..<200_000 { numbers += "+3316\(1_000_000 + index * 7)\n" }
        try writeBytes(Array(numbers.utf8), to: directory.file("numbers.txt"))
        let limited = try runProcess(
            "/bin/sh",
            [
                "-c",
                "cd '\(directory.path)' && ulimit -f 100 && exec '\(blocklist)' generate --numbers numbers.txt -o out --no-sync 2>&1",
            ]
        )
        let output = String(decoding: limited.stdout, as: UTF8.self)
        #expect(limited.status == 1, "\(output)")
        #expect(output.contains("File too large"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("out")))
    }

    /// A debug `bench --smoke` generates the default set three times: under .ci/run only, which
    /// also runs the release `bench --quick`.
    @Test(.enabled(if: SeededRuns.long)) func benchMeasuresEveryWorkloadInAChildProcess() throws {
        struct Report: Decodable {
            struct Row: Decodable {
                var workload: String
                var entries: Int64
                var seconds: Double
                var peakResidentKiB: Int
                var extrapolated: Bool
            }
            struct MessageRow: Decodable {
                var workload: String
                var messages: Int64
                var seconds: Double
            }
            var rows: [Row]
            var generatorSpeedupOverSeed: Double
            var messageFilter: [MessageRow]
        }
        // --smoke: every workload on a little work (the full measurement is `bench`'s own).
        let result = try runBlocklist(["bench", "--smoke", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let rows = Dictionary(uniqueKeysWithValues: report.rows.map { ($0.workload, $0) })
        for workload in ["generate (50 shards)", "verify (50 shards)", "read + order check (50 shards)"] {
            #expect(rows[workload]?.entries == 98_552_781, "\(workload)")
        }
        // Extension 26's range: the candidates 50,000,001 to 50,019,999 without "000".
        let seedEntries = (50_000_001..<50_020_000).filter { !("8270" + String($0)).contains("000") }.count
        #expect(rows["seed approach, 20,000 candidates"]?.entries == Int64(seedEntries))
        #expect(rows["seed approach, 50 ranges (extrapolated)"]?.extrapolated == true)
        #expect(rows["load 1 shard into a fresh store"]?.entries == 996_300)  // shard 1
        #expect(rows["import 50,000 unsorted numbers"]?.entries == 50_000)
        #expect(
            rows["  extension host during that load"].map { $0.peakResidentKiB > 0 && $0.peakResidentKiB < 7 * 1024 }
                == true
        )
        for row in report.rows where !row.extrapolated {
            #expect(row.seconds > 0 && row.peakResidentKiB > 0, "\(row.workload)")
        }
        #expect(report.generatorSpeedupOverSeed > 1)
        // The message filter's five rows, each with the messages its size asks for (the worst-case
        // row: two hostile regexes on each of its bodies).
        let messages = Dictionary(uniqueKeysWithValues: report.messageFilter.map { ($0.workload, $0.messages) })
        #expect(messages["sms: compiled, 1,000 contains + 50 regex"] == 2_000)
        #expect(messages["sms: linear scan, same rules"] == 20)
        #expect(messages["sms: worst regex, 64 KiB adversarial body"] == Int64(2 * HostileRegexes.bodies.count))
        #expect(messages["sms: extension process, 10,000 rules"] == 500)
        #expect(messages["sms: deferred over loopback, 16 in flight"] == 300)
    }
}

/// `generate` has one definition (`GenerateCommand`) and three ways in: `blocklist generate`,
/// which execs `blocklist-generate`; `blocklist-generate` itself; and a lone copy of `blocklist`,
/// which runs the command in process. Each must accept and refuse the same arguments with the same
/// words and exit status.
@Suite struct GenerateEntryPointTests {
    static let vectors: [[String]] = [
        [], ["--help"], ["-h"], ["--version"], ["--pattern", "+1###", "--help"],
        ["--pattern", "+1###", "--no-sync"], ["--pattern=+1###", "-o", "x", "--no-sync", "--json"],
        ["--pattern", "1###", "--pattern", "2##", "--no-sync", "--no-exclusions"],
        ["--pattern"], ["--pattern", "--json"], ["--pattern", "+82x0###"],
        ["--pattern", "+1###", "--pattern", "+12##"],
        ["--output"], ["--output", ""], ["-o"], ["--foo"], ["-x"], ["extra"], ["-"], ["--json=1"], ["--no-sync=yes"],
        ["--capacity", "abc"], ["--capacity", "-5"], ["--range-size=0"], ["--default-country", "+1000"],
        ["--default-country", "x"],
        ["--layout", "sideways"], ["--layout", "range", "--numbers", "n.txt"], ["--numbers", "-", "--labels", "-"],
        ["--allow-pattern", "abc"], ["--no-exclusions", "--exclude", "0"], ["--exclude", ""],
        ["--numbers", "n.txt", "--no-sync"], ["--numbers", "missing.txt", "--no-sync"],
        ["--pattern", "+1###", "--output", "a", "--output", "b", "--no-sync"],
    ]

    @Test func everyEntryPointReadsArgumentsAlike() throws {
        let scratch = try TemporaryDirectory()
        let lone = scratch.file("lone")
        try FileManager.default.createDirectory(atPath: lone, withIntermediateDirectories: false)
        try copyExecutable(productsDirectory + "/blocklist", to: lone + "/blocklist")
        let entryPoints: [(name: String, executable: String, prefix: [String])] = [
            ("blocklist generate", productsDirectory + "/blocklist", ["generate"]),
            ("blocklist-generate", productsDirectory + "/blocklist-generate", []),
            ("a lone blocklist", lone + "/blocklist", ["generate"]),
        ]
        for (index, vector) in Self.vectors.enumerated() {
            var results: [(String, CommandResult)] = []
            for (point, entry) in entryPoints.enumerated() {
                // The same relative paths in a directory of its own for each entry point.
                let directory = scratch.file("\(index)-\(point)")
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                try Data("+33612345678\n+33612345679\n".utf8).write(to: URL(fileURLWithPath: directory + "/n.txt"))
                let result = try RunningBlocklist(entry.prefix + vector, in: directory, executable: entry.executable)
                    .wait()
                results.append((entry.name, result))
            }
            let (firstName, first) = results[0]
            #expect(first.status == 0 || first.status == 1 || first.status == 64, "\(vector): \(first.status)")
            for (name, result) in results.dropFirst() {
                #expect(
                    result.status == first.status,
                    "\(vector): \(name) exits \(result.status), \(firstName) \(first.status)"
                )
                #expect(
                    result.stderr == first.stderr,
                    "\(vector): \(name) says \(result.stderr), \(firstName) \(first.stderr)"
                )
                // A run's summary differs in its timing and memory lines only.
                let steady = { (text: String) in
                    text.replacingOccurrences(of: "[0-9a-f]{16}", with: "*", options: .regularExpression).split(
                        separator: "\n"
                    ).filter {
                        !$0.contains("wall time") && !$0.contains("peak memory") && !$0.contains("seconds")
                            && !$0.contains("KiB") && !$0.contains("entriesPerSecond")
                    }
                }
                #expect(
                    steady(result.stdout) == steady(first.stdout),
                    "\(vector): \(name) prints \(result.stdout), \(firstName) \(first.stdout)"
                )
            }
        }
    }

    /// `sms serve` and `sms simulate` are defined in `blocklist-sms` only: every way of asking for
    /// their help prints that one, and `--version` works on them as on every command.
    @Test func smsServeAndSimulateHaveOneDefinition() throws {
        for command in ["serve", "simulate"] {
            let asked = try runBlocklist(["sms", command, "--help"])
            let viaHelp = try runBlocklist(["help", "sms", command])
            let direct = try RunningBlocklist([command, "--help"], executable: productsDirectory + "/blocklist-sms")
                .wait()
            #expect(asked.status == 0 && viaHelp.status == 0 && direct.status == 0)
            #expect(asked.stdout == viaHelp.stdout, "\(command): \(viaHelp.stdout)")
            #expect(asked.stdout == direct.stdout)
            #expect(asked.stdout.contains("USAGE: blocklist sms \(command)"), "\(asked.stdout)")
            let version = try runBlocklist(["sms", command, "--version"])
            #expect(version.status == 0 && version.stdout == "0.1.0\n", "\(version.stdout) \(version.stderr)")
        }
        let generate = try runBlocklist(["generate", "--version"])
        #expect(generate.stdout == "0.1.0\n")
    }

    /// Issue 30, item 7: `--version` on every executable, the extension hosts included.
    @Test func everyExecutableHasVersion() throws {
        for program in [
            "blocklist", "blocklist-generate", "blocklist-sms", "blocklist-notification-service", "blocklist-extension",
            "blocklist-message-filter",
        ] {
            let version = try RunningBlocklist(["--version"], executable: productsDirectory + "/" + program).wait()
            #expect(
                version.status == 0 && version.stdout == "0.1.0\n",
                "\(program): \(version.stdout) \(version.stderr)"
            )
        }
    }

    /// Issue 30, item 7: an argument that is not UTF-8 exits 64 with the usage line every exit 64
    /// has, naming the command it was given to. Python passes the raw bytes, which Swift cannot.
    @Test func anArgumentThatIsNotUTF8GetsTheUsageLine() throws {
        let script = """
            import subprocess, sys
            for argv, usage in [([b"generate", b"--pattern", b"\\xff"], "Usage: blocklist generate <arguments>"),
                                ([b"list-file", b"check", b"\\xfe.json"], "Usage: blocklist list-file <arguments>"),
                                ([b"\\xff"], "Usage: blocklist <arguments>")]:
                done = subprocess.run([sys.argv[1].encode()] + argv, capture_output=True)
                err = done.stderr.decode()
                assert done.returncode == 64 and "is not valid UTF-8" in err and usage in err, (argv, done.returncode, err)
            print("ok")
            """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script, productsDirectory + "/blocklist"])
        #expect(result.status == 0 && String(decoding: result.stdout, as: UTF8.self) == "ok\n")
    }

    /// `list-file check` and `sms verify` report as JSON too, like every command that reports.
    @Test func listFileCheckAndSMSVerifyReportAsJSON() throws {
        let scratch = try TemporaryDirectory()
        let list = scratch.file("list.json")
        try Data(
            #"{"name": "FR", "version": 12, "patterns": [{"pattern": "33162######", "action": "block", "name": "A"}, {"pattern": "33163######", "action": "allow", "name": "B"}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: list))
        let check = try runBlocklist(["list-file", "check", list, "--json"])
        #expect(check.status == 0, "\(check.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any]
        #expect(
            report?["patterns"] as? Int == 2 && report?["block"] as? Int == 1 && report?["allow"] as? Int == 1
                && report?["identify"] as? Int == 0
        )
        #expect(report?["name"] as? String == "FR" && report?["version"] as? String == "12")

        let rules = packageRoot.appendingPathComponent("docs/examples/sms-rules.json").path
        let compile = try runBlocklist(["sms", "compile", rules, "--output", scratch.file("sms")])
        #expect(compile.status == 0, "\(compile.stderr)")
        let verify = try runBlocklist(["sms", "verify", scratch.file("sms"), "--source", rules, "--json"])
        #expect(verify.status == 0, "\(verify.stderr)")
        let verified = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect((verified?["rules"] as? Int ?? 0) > 0 && verified?["source"] as? String == rules, "\(verify.stdout)")
    }

    /// A lone copy of `blocklist` generates in process and names the helper it lacks for what
    /// needs one, with how to install it; it never degrades without a word.
    @Test func aLoneCopyNamesTheHelperItLacks() throws {
        let scratch = try TemporaryDirectory()
        try copyExecutable(productsDirectory + "/blocklist", to: scratch.file("blocklist"))
        let lone = scratch.file("blocklist")
        let generate = try RunningBlocklist(
            ["generate", "--pattern", "+1###", "--no-sync", "-o", "set"],
            in: scratch.path,
            executable: lone
        ).wait()
        #expect(generate.status == 0, "\(generate.stderr)")
        _ = try RunningBlocklist(["enable", "all", "set", "--store", "s.sqlite"], in: scratch.path, executable: lone)
            .wait()
        let cases: [([String], String, String)] = [
            (["load", "set", "--store", "s.sqlite"], "blocklist-extension", "does not exist"),
            (["sms", "serve", "--rules", "r.json"], "blocklist-sms", "does not exist"),
            (["bench", "--smoke"], "blocklist-generate", "does not exist"),
            // Named before it generates and publishes a million numbers.
            (["push", "simulate", "--numbers", "1000", "--change", "1"], "blocklist-sms", "does not exist"),
        ]
        for (arguments, helper, problem) in cases {
            let result = try RunningBlocklist(arguments, in: scratch.path, executable: lone).wait()
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr.contains(
                    "needs its helper \(helper), and cannot run it: \(scratch.file(helper)) \(problem)"
                )
                    && result.stderr.contains("Scripts/install.sh --prefix"),
                "\(result.stderr)"
            )
        }
        // A helper in the way that cannot be run is named for what it is.
        let host = scratch.file("blocklist-extension")
        let inTheWay: [(make: () throws -> Void, problem: String)] = [
            (
                { try FileManager.default.createDirectory(atPath: host, withIntermediateDirectories: false) },
                "is a directory"
            ),
            (
                { _ = FileManager.default.createFile(atPath: host, contents: Data("#!/bin/sh\n".utf8)) },
                "is not executable"
            ),
        ]
        for (make, problem) in inTheWay {
            try? FileManager.default.removeItem(atPath: host)
            try make()
            let load = try RunningBlocklist(["load", "set", "--store", "s.sqlite"], in: scratch.path, executable: lone)
                .wait()
            #expect(load.status == 1 && load.stderr.contains("\(host) \(problem)"), "\(load.stderr)")
        }
    }
}
