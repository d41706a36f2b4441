import BlocklistCore
import Crypto
import Foundation
import ListImport
import SetStorage
import TestSupport
import Testing
import UpdateCore

/// List files (`--list`), the SHA-256 of inputs, and `verify` against the inputs a packed set
/// was made from.
@Suite struct ListFileTests {
    /// Runs `sha256sum` on `path`.
    func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(String(decoding: output, as: UTF8.self).prefix(64))
    }

    @Test func sha256MatchesTheStandardsExamplesAndSha256sum() throws {
        // FIPS 180-4 examples.
        #expect(
            PortableSHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(PortableSHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            PortableSHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        // Every length around the padding boundaries, and a large buffer fed in uneven pieces.
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: 3)
        for length in [1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 300_001] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            try writeBytes(bytes, to: directory.file("b"))
            var hasher = PortableSHA256()
            var offset = 0
            while offset < length {
                let piece = min(length - offset, Int.random(in: 1...200, using: &random))
                bytes[offset..<offset + piece].withUnsafeBytes { hasher.update($0) }
                offset += piece
            }
            let expected = try sha256sum(directory.file("b"))
            #expect(hasher.finish() == expected, "\(length) bytes")
            #expect(PortableSHA256.hex(bytes) == expected, "\(length) bytes")
            // The SHA-256 of everything that links swift-crypto: the same digest.
            #expect(TextEncodings.hex(Crypto.SHA256.hash(data: bytes)) == expected, "\(length) bytes")
        }
    }

    @Test func aListFileBlocksIdentifiesAndAllowsAsABruteForceMapSays() throws {
        let directory = try TemporaryDirectory()
        // Overlapping block patterns, a pattern given twice, identify patterns with two labels
        // next to each other, an allow pattern cutting both kinds, other fields ignored.
        let list = """
            {"name": "FR test", "version": "2026.11", "url": "https://example.invalid",
             "patterns": [
              {"pattern": "+3316212####", "action": "block", "name": "Démarchage", "source": "ARCEP"},
              {"pattern": "331621234##", "action": "block", "name": "Démarchage"},
              {"pattern": "3316299####", "action": "block"},
              {"pattern": "3316299####", "action": "block"},
              {"pattern": "33163#1##", "action": "identify", "name": "Télémarketing"},
              {"pattern": "33163#2##", "action": "identify", "name": "Énergie"},
              {"pattern": "3316212#5##", "action": "identify", "name": "Télémarketing"},
              {"pattern": "33162129###", "action": "allow"},
              {"pattern": "331630###", "action": "allow"}
             ]}
            """
        try writeBytes(Array(list.utf8), to: directory.file("list.json"))
        // A mixed spec: the list, plus numbers and labels files.
        try writeBytes(Array("+33170000001\n+33162129999\n".utf8), to: directory.file("numbers.txt"))
        try writeBytes(Array("+33170000002,Scam\n".utf8), to: directory.file("labels.csv"))

        func numbers(_ pattern: String) -> [Int64] {
            let digits = Array(pattern.utf8.filter { $0 != UInt8(ascii: "+") })
            var result: [Int64] = [0]
            for digit in digits {
                result = result.flatMap { prefix in
                    digit == UInt8(ascii: "#")
                        ? (0...9).map { prefix * 10 + Int64($0) } : [prefix * 10 + Int64(digit - 48)]
                }
            }
            return result
        }
        let allowed = Set(numbers("33162129###") + numbers("331630###"))
        let wantBlocked = Set(numbers("3316212####") + numbers("3316299####") + [33_170_000_001, 33_162_129_999])
            .subtracting(allowed).sorted()
        var wantLabels: [Int64: String] = [33_170_000_002: "Scam"]
        for number in numbers("33163#1##") + numbers("3316212#5##") { wantLabels[number] = "Télémarketing" }
        for number in numbers("33163#2##") { wantLabels[number] = "Énergie" }
        for number in allowed { wantLabels[number] = nil }

        let result = try runBlocklist(
            [
                "generate", "--list", "list.json", "--numbers", "numbers.txt", "--labels", "labels.csv", "--capacity",
                "4000", "--no-sync", "-o", "out",
            ],
            in: directory.path
        )
        #expect(result.status == 0, "\(result.stderr)")
        let (blocked, labels) = try ListTests().contents(directory.file("out"))
        #expect(blocked == wantBlocked)
        #expect(labels == wantLabels)
        let manifest = try JSONDecoder().decode(
            Manifest.self,
            from: Data(try readBytes(directory.file("out/manifest.json")))
        )
        let input = try #require(manifest.spec.inputs?.first { $0.kind == "list" })
        #expect(input.path == directory.file("list.json"))
        #expect(input.lines == 9)
        #expect(input.sha256 == (try sha256sum(directory.file("list.json"))))
        #expect(manifest.shards.count >= 3)

        let check = try runBlocklist(["list-file", "check", "list.json"], in: directory.path)
        #expect(check.stdout.contains("9 patterns: 4 block, 3 identify, 2 allow"), "\(check.stdout)\(check.stderr)")
    }

    @Test func malformedListFilesAreNamedByFieldAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, String, String)] = [
            ("not JSON", "{\"patterns\": [", "list.json is not valid JSON"),
            ("no patterns", "{\"name\": \"x\"}", "list.json has no field \"patterns\""),
            ("patterns not an array", "{\"patterns\": {}}", "field \"patterns\" should be an array"),
            ("no pattern", "{\"patterns\": [{\"action\": \"block\"}]}", "pattern 1 has no field \"pattern\""),
            (
                "pattern a number", "{\"patterns\": [{\"pattern\": 33, \"action\": \"block\"}]}",
                "pattern 1, field \"pattern\" should be a string"
            ),
            (
                "letters", "{\"patterns\": [{\"pattern\": \"33x\", \"action\": \"block\"}]}",
                "pattern 1, field \"pattern\": Pattern \"33x\" has \"x\""
            ),
            (
                "sixteen digits", "{\"patterns\": [{\"pattern\": \"3316212345678901\", \"action\": \"block\"}]}",
                "has 16 digits"
            ),
            (
                "bad action",
                "{\"patterns\": [{\"pattern\": \"33#\", \"action\": \"block\"}, {\"pattern\": \"34#\", \"action\": \"blok\"}]}",
                "pattern 2, field \"action\": \"blok\" is not an action"
            ),
            (
                "identify without a name", "{\"patterns\": [{\"pattern\": \"33#\", \"action\": \"identify\"}]}",
                "pattern 1, field \"name\": an identify pattern needs a name"
            ),
            (
                "empty label", "{\"patterns\": [{\"pattern\": \"33#\", \"action\": \"identify\", \"name\": \"\"}]}",
                "the label is empty"
            ),
            (
                "control character",
                "{\"patterns\": [{\"pattern\": \"33#\", \"action\": \"identify\", \"name\": \"a\\u0007b\"}]}",
                "control character U+7"
            ),
            (
                "long label",
                "{\"patterns\": [{\"pattern\": \"33#\", \"action\": \"identify\", \"name\": \"\(String(repeating: "é", count: 65))\"}]}",
                "130 bytes"
            ),
            (
                "two labels",
                "{\"patterns\": [{\"pattern\": \"331####\", \"action\": \"identify\", \"name\": \"A\"}, {\"pattern\": \"3316###\", \"action\": \"identify\", \"name\": \"B\"}]}",
                "+3316000 has two labels, \"A\" and \"B\""
            ),
            ("null pattern", "{\"patterns\": [null]}", "pattern 1 is null"),
        ]
        for (name, text, message) in cases {
            try writeBytes(Array(text.utf8), to: directory.file("list.json"))
            let result = try runBlocklist(
                ["generate", "--list", "list.json", "--no-sync", "-o", "out"],
                in: directory.path
            )
            #expect(result.status != 0, "\(name)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("out/manifest.json")), "\(name)")
            let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: directory.file("out"))) ?? []
            #expect(leftovers.allSatisfy { $0 == ShardSet.lockFileName }, "\(name): \(leftovers)")
        }
        // Hostile files: a directory, and a file past the size limit, are refused by name.
        let tooLarge = [UInt8](repeating: 0x20, count: ListFile.maximumBytes + 1)
        try writeBytes(tooLarge, to: directory.file("large.json"))
        let large = try runBlocklist(
            ["generate", "--list", "large.json", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(large.status != 0 && large.stderr.contains("large.json is larger than"), "\(large.stderr)")
        let folder = try runBlocklist(["generate", "--list", ".", "--no-sync", "-o", "out"], in: directory.path)
        #expect(folder.status != 0 && folder.stderr.contains("is a directory"), "\(folder.stderr)")
    }

    @Test func decodingKeepsTheVersionInEitherFormAndIgnoresOtherFields() throws {
        let text = #"{"name":"n","version":12,"extra":[1,2],"patterns":[{"pattern":"+33 1","action":"allow","x":1}]}"#
        // A space in a pattern.
        #expect(throws: BlocklistError.self) { try ListFile.decode(Array(text.utf8), source: "f") }
        let good = try ListFile.decode(
            Array(#"{"version":12,"patterns":[{"pattern":"331","action":"allow","x":1}]}"#.utf8),
            source: "f"
        )
        #expect(good.version == "12")
        #expect(
            good.entries == [ListFile.Entry(pattern: try BlockPattern(parsing: "+331"), action: .allow, label: nil)]
        )
        #expect(good.allow == [try BlockPattern(parsing: "+331")] && good.block.isEmpty && good.identify.isEmpty)
        let named = try ListFile.decode(
            Array(#"{"version":"v2","patterns":[{"pattern":"331","action":"identify","name":"Spam"}]}"#.utf8),
            source: "f"
        )
        #expect(named.version == "v2")
        #expect(
            named.identify.map(\.pattern) == [try BlockPattern(parsing: "+331")]
                && named.identify.map(\.label) == [Array("Spam".utf8)]
        )

        // Any other kind of version is a mistake the file's author should hear about.
        for version in ["{}", "[12]", "true"] {
            let text = #"{"version":"# + version + #","patterns":[]}"#
            #expect(throws: BlocklistError.self) { try ListFile.decode(Array(text.utf8), source: "f") }
        }
        #expect(try ListFile.decode(Array(#"{"version":null,"patterns":[]}"#.utf8), source: "f").version == nil)
    }

    @Test func verifySaysWhichInputChangedAndComparesTheSetWithItsInputs() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: 21)
        func numbers(_ count: Int) -> [UInt8] {
            Array(
                (0..<count).map { _ in "+4420\(Int.random(in: 1_000_000...9_999_999, using: &random))\n" }.joined().utf8
            )
        }
        try writeBytes(numbers(5000), to: directory.file("a.txt"))
        try writeBytes(
            Array(#"{"patterns":[{"pattern":"4421#####","action":"identify","name":"Scam"}]}"#.utf8),
            to: directory.file("list.json")
        )
        let generate = ["generate", "--numbers", "a.txt", "--list", "list.json", "--capacity", "2000", "--no-sync"]
        #expect(try runBlocklist(generate + ["-o", "one"], in: directory.path).status == 0)
        let good = try runBlocklist(["verify", "one"], in: directory.path)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("equal to what its 2 unchanged inputs make"), "\(good.stdout)")

        // Same size, other bytes: the SHA-256 tells.
        let original = try readBytes(directory.file("a.txt"))
        var changed = original
        changed[1] = UInt8(ascii: "5")
        try writeBytes(changed, to: directory.file("a.txt"))
        let stale = try runBlocklist(["verify", "one"], in: directory.path)
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("input \(directory.file("a.txt")) changed since generate"), "\(stale.stderr)")

        // A set whose shards are not what its (unchanged) inputs make: the shards of set "one"
        // under the manifest of set "two", made from the changed file.
        #expect(try runBlocklist(generate + ["-o", "two"], in: directory.path).status == 0)
        var first =
            try JSONSerialization.jsonObject(with: Data(try readBytes(directory.file("one/manifest.json"))))
            as! [String: Any]
        let second =
            try JSONSerialization.jsonObject(with: Data(try readBytes(directory.file("two/manifest.json"))))
            as! [String: Any]
        var spec = first["spec"] as! [String: Any]
        spec["inputs"] = (second["spec"] as! [String: Any])["inputs"]
        first["spec"] = spec
        try JSONSerialization.data(withJSONObject: first).write(
            to: URL(fileURLWithPath: directory.file("one/manifest.json"))
        )
        let swapped = try runBlocklist(["verify", "one"], in: directory.path)
        #expect(swapped.status == 1)
        #expect(swapped.stderr.contains("is not what its inputs make, though they are unchanged"), "\(swapped.stderr)")

        // A removed input; verify's temporary directory, used and then removed.
        try FileManager.default.createDirectory(atPath: directory.file("tmp"), withIntermediateDirectories: false)
        let temporary = ["TMPDIR": directory.file("tmp")]
        #expect(try runBlocklist(["verify", "two"], in: directory.path, environment: temporary).status == 0)
        try FileManager.default.removeItem(atPath: directory.file("list.json"))
        let gone = try runBlocklist(["verify", "two"], in: directory.path, environment: temporary)
        #expect(gone.status == 1)
        #expect(
            gone.stderr.contains("input \(directory.file("list.json")) (list) is gone since generate"),
            "\(gone.stderr)"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("tmp")).isEmpty)
    }
}
