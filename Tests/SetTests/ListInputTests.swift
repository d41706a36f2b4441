import BenchWorkloads
import Foundation
import SetStorage
import TestSupport
import Testing

@testable import BlocklistCore
@testable import ListImport

/// The list inputs as users hand them over: gzip of any size and shape, CSV as RFC 4180 reads it,
/// over-long lines, refused inputs, and allow patterns over vast ranges. Each parser is checked
/// against an independent one: `zcat` for gzip, Python's `csv` module for records.
@Suite struct ListInputTests {
    /// `bytes` compressed by gzip at `level`.
    func gzip(_ bytes: [UInt8], level: Int) throws -> [UInt8] {
        let result = try runProcess("/usr/bin/env", ["gzip", "-c", "-\(level)"], input: Data(bytes))
        #expect(result.status == 0)
        return Array(result.stdout)
    }

    /// Every blocked number of the set in `output`, in order.
    func blocked(_ output: String) throws -> [Int64] {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(try readBytes(output + "/manifest.json")))
        var numbers: [Int64] = []
        for shard in manifest.shards {
            let reader = try ShardReader(path: manifest.path(of: shard, in: output))
            while let number = try reader.next() { numbers.append(number) }
        }
        return numbers
    }

    /// Seeded: lists from a few bytes to 2 MB, cut into 1–5 gzip members at random places (some
    /// empty, at random levels), read from a file and from standard input, come out as the numbers
    /// `zcat` reads from the same bytes.
    @Test(arguments: SeededRuns.long ? Array(1...6) : [1, 2, 3, 5]) func gzipListsOfAnySizeAndMembersMatchZcat(
        seed: UInt64
    ) throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: seed)
        let lines = [10, 3_000, 40_000, 150_000, 7, 60_000][Int(seed - 1)]
        var text: [UInt8] = []
        for _ in 0..<lines {
            text += Array("+33\(Int64.random(in: 100_000_000..<1_000_000_000, using: &random))\n".utf8)
        }
        let members = Int.random(in: 1...5, using: &random)
        var cuts = (0..<(members - 1)).map { _ in Int.random(in: 0...text.count, using: &random) }.sorted()
        cuts = [0] + cuts + [text.count]
        var file: [UInt8] = []
        for (from, to) in zip(cuts, cuts.dropFirst()) {
            file += try gzip(Array(text[from..<to]), level: Int.random(in: 1...9, using: &random))
        }
        try writeBytes(file, to: directory.file("list.gz"))

        let zcat = try runProcess("/usr/bin/env", ["zcat", directory.file("list.gz")])
        #expect(zcat.status == 0)
        let expected = Set(
            String(decoding: zcat.stdout, as: UTF8.self).split(separator: "\n").map { Int64($0.dropFirst())! }
        ).sorted()
        #expect(expected.count > 0)

        let fromFile = try runBlocklist(
            ["generate", "--numbers", "list.gz", "--no-sync", "-o", "file"],
            in: directory.path
        )
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(try blocked(directory.file("file")) == expected, "\(file.count) bytes in \(members) members")

        let fromPipe = try runProcess(
            "/bin/sh",
            [
                "-c",
                "cd '\(directory.path)' && '\(productsDirectory)/blocklist' generate --numbers - --no-sync -o pipe < list.gz",
            ]
        )
        #expect(fromPipe.status == 0)
        #expect(try blocked(directory.file("pipe")) == expected)
    }

    /// A file of zeros far larger than the buffers (a small gzip bomb) is read to its end.
    @Test func aGzipOfZerosIsReadThrough() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(try gzip([UInt8](repeating: 0, count: 8 << 20), level: 9), to: directory.file("zeros.gz"))
        let result = try runBlocklist(
            ["generate", "--numbers", "zeros.gz", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("zeros.gz:1: the line is 8388608 bytes, longer than 1024"), "\(result.stderr)")
    }

    /// Bytes after the last member, and a file that ends inside a member: refused with the offset,
    /// as `zcat` refuses them, and nothing is created.
    @Test func trailingBytesAndTruncationAreRefusedWithTheirOffset() throws {
        let directory = try TemporaryDirectory()
        let member = try gzip(Array((0..<5_000).map { "+3316212\($0 + 10_000)\n" }.joined().utf8), level: 6)
        let cases: [(name: String, bytes: [UInt8], says: String)] = [
            (
                "garbage.gz", member + Array("garbage\n".utf8),
                "from byte \(member.count) on, that are not another gzip member"
            ),
            // gzip itself passes over trailing zeros (tape padding); this reader refuses them too.
            ("zeros.gz", member + member + [0, 0, 0, 0], "from byte \(2 * member.count) on"),
            ("onebyte.gz", member + [0x1F], "from byte \(member.count) on"),
            (
                "truncated.gz", member + Array(member.prefix(member.count - 9)),
                "truncated gzip file: it ends at byte \(2 * member.count - 9) inside the gzip member that starts at byte \(member.count)"
            ),
            ("header.gz", Array(member.prefix(5)), "truncated gzip file"),
        ]
        for (name, bytes, says) in cases {
            try writeBytes(bytes, to: directory.file(name))
            if name != "zeros.gz" {
                #expect(
                    try runProcess("/usr/bin/env", ["zcat", directory.file(name)]).status != 0,
                    "zcat reads \(name)"
                )
            }
            let result = try runBlocklist(
                ["generate", "--numbers", name, "--no-sync", "-o", "out-" + name],
                in: directory.path
            )
            #expect(result.status == 1)
            #expect(result.stderr.contains(name) && result.stderr.contains(says), "\(name): \(result.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: directory.file("out-" + name)),
                "\(name) left its output directory"
            )
        }
    }

    /// A refused input creates nothing in a new output directory, not even the lock file; an
    /// existing directory keeps what it had.
    @Test func aRefusedInputCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+33162123456\nnot a number\n".utf8), to: directory.file("bad.txt"))
        for input in ["bad.txt", "missing.txt"] {
            let result = try runBlocklist(
                ["generate", "--numbers", input, "--no-sync", "-o", "new"],
                in: directory.path
            )
            #expect(result.status == 1, "\(result.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: directory.file("new")),
                "\(input) left the output directory"
            )
        }
        try FileManager.default.createDirectory(atPath: directory.file("kept"), withIntermediateDirectories: false)
        try writeBytes([1], to: directory.file("kept/.gitkeep"))
        #expect(
            try runBlocklist(["generate", "--numbers", "bad.txt", "--no-sync", "-o", "kept"], in: directory.path).status
                == 1
        )
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.file("kept")).sorted() == [
                ".blocklist.lock", ".gitkeep",
            ]
        )
    }

    /// What people hand over that is neither text nor gzip, made by the real tools (xz, zstd,
    /// bzip2, zip, Python's zlib, iconv), under any name: each is named with the command that makes
    /// it readable, even with --skip-invalid, and the set already there stays. Before, an xz file
    /// named .gz read as 2 invalid lines, and with --skip-invalid replaced the set with an empty one.
    @Test func compressedAndUTF16InputsAreNamedAndTheSetStays() throws {
        let directory = try TemporaryDirectory()
        let text = Array("+33162123456\n+33162123457\n".utf8)
        try writeBytes(text, to: directory.file("numbers.txt"))
        #expect(
            try runBlocklist(["generate", "--numbers", "numbers.txt", "--no-sync", "-o", "set"], in: directory.path)
                .status == 0
        )
        let before = try blocked(directory.file("set"))
        let cases: [(name: String, command: [String], words: String)] = [
            ("list.gz", ["xz", "-c"], "xz-compressed"),
            ("list.txt", ["zstd", "-q", "-c"], "zstd-compressed"),
            ("list.csv", ["bzip2", "-c"], "bzip2-compressed"),
            (
                "list.z",
                ["python3", "-c", "import sys, zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))"],
                "a raw zlib stream"
            ),
            (
                "list16.txt", ["iconv", "-f", "UTF-8", "-t", "UTF-16"],
                "UTF-16LE text (it starts with a byte-order mark)"
            ),
            (
                "list32.txt", ["iconv", "-f", "UTF-8", "-t", "UTF-32"],
                "UTF-32LE text (it starts with a byte-order mark)"
            ),
            ("list16le.txt", ["iconv", "-f", "UTF-8", "-t", "UTF-16LE"], "UTF-16LE text"),
            ("list16be.txt", ["iconv", "-f", "UTF-8", "-t", "UTF-16BE"], "UTF-16BE text"),
            ("list32be.txt", ["iconv", "-f", "UTF-8", "-t", "UTF-32BE"], "UTF-32BE text"),
        ]
        for (name, command, words) in cases {
            let made = try runProcess("/usr/bin/env", command, input: Data(text))
            try #require(made.status == 0, "\(command)")
            try writeBytes(Array(made.stdout), to: directory.file(name))
            for skip in [[], ["--skip-invalid"]] {
                let result = try runBlocklist(
                    ["generate", "--numbers", name, "--no-sync", "-o", "set"] + skip,
                    in: directory.path
                )
                #expect(
                    result.status == 1 && result.stderr.contains("\(name) is \(words)"),
                    "\(name): \(result.stderr)"
                )
                #expect(result.stderr.contains("nothing was read"), "\(name): \(result.stderr)")
            }
            #expect(try blocked(directory.file("set")) == before, "\(name) changed the set")
        }
        // The command the xz sentence gives makes a file that reads.
        let xz = try runBlocklist(["generate", "--numbers", "list.gz", "--no-sync", "-o", "set"], in: directory.path)
        #expect(xz.stderr.contains("(xz -dc list.gz > list.gz.txt)"), "\(xz.stderr)")
        let zip = try runProcess("/usr/bin/env", ["sh", "-c", "cd '\(directory.path)' && zip -q list.zip numbers.txt"])
        try #require(zip.status == 0)
        let zipped = try runBlocklist(
            ["generate", "--numbers", "list.zip", "--no-sync", "-o", "set"],
            in: directory.path
        )
        #expect(zipped.status == 1 && zipped.stderr.contains("list.zip is a zip archive"), "\(zipped.stderr)")
    }

    /// Seeded, against Python: random lists in every encoding and wrapping people export (UTF-8
    /// with or without a BOM, UTF-16 and UTF-32 with a BOM, UTF-16LE/BE without one; plain, gzip,
    /// zlib, bzip2 or xz, made by Python's `codecs`, `gzip`, `zlib`, `bz2` and `lzma`; line endings
    /// LF, CRLF and lone CR mixed). Python says what each file is: a list generate reads (its
    /// numbers are those of Python's universal-newline reading) or one it names (by the words of
    /// its sentence). generate must agree on every file.
    @Test(arguments: SeededRuns.long ? Array(1...4) : [1]) func everyEncodingAndEndingAgreesWithPython(seed: UInt64)
        throws
    {
        let directory = try TemporaryDirectory()
        let script = """
            import bz2, codecs, gzip, io, json, lzma, random, sys, zlib
            random.seed(int(sys.argv[2]))
            out = sys.argv[1]
            cases = []
            for i in range(30):
                numbers = [random.randrange(100_000_000, 1_000_000_000) for _ in range(random.randrange(1, 400))]
                endings = [random.choice(["\\n", "\\r\\n", "\\r"]) for _ in numbers]
                text = "".join(f"+33{n}{e}" for n, e in zip(numbers, endings))
                encoding = random.choice(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
                data = text.encode(encoding)
                wrap = random.choice(["none", "none", "gzip", "zlib", "bz2", "xz"])
                data = {"none": lambda d: d, "gzip": gzip.compress, "zlib": zlib.compress,
                        "bz2": bz2.compress, "xz": lzma.compress}[wrap](data)
                name = f"list{i}" + random.choice([".txt", ".csv", ".gz", ""])
                open(f"{out}/{name}", "wb").write(data)
                if wrap in ("none", "gzip") and encoding.startswith("utf-8"):
                    # Python's own reading: decompress, decode (a BOM dropped), universal newlines.
                    raw = gzip.decompress(data) if wrap == "gzip" else data
                    lines = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", newline=None).read().split("\\n")
                    expected = sorted({int(l[1:]) for l in lines if l})
                    cases.append({"name": name, "numbers": expected})
                else:
                    words = {"zlib": "a raw zlib stream", "bz2": "bzip2-compressed", "xz": "xz-compressed"}.get(wrap)
                    if words is None:
                        words = {"utf-16": "UTF-16LE text", "utf-32": "UTF-32LE text", "utf-16-le": "UTF-16LE text",
                                 "utf-16-be": "UTF-16BE text"}[encoding]
                    if wrap == "gzip":
                        words = "gzip-compressed " + words.split(" (")[0]
                    cases.append({"name": name, "words": words})
            print(json.dumps(cases))
            """
        let made = try runProcess("/usr/bin/env", ["python3", "-c", script, directory.path, String(seed)])
        try #require(made.status == 0)
        let cases = try #require(try JSONSerialization.jsonObject(with: made.stdout) as? [[String: Any]])
        #expect(cases.count == 30)
        for (offset, item) in cases.enumerated() {
            let name = try #require(item["name"] as? String)
            let result = try runBlocklist(
                ["generate", "--numbers", name, "--no-sync", "-o", "out\(offset)"],
                in: directory.path
            )
            if let numbers = item["numbers"] as? [Int64] {
                #expect(result.status == 0, "\(name): \(result.stderr)")
                #expect(try blocked(directory.file("out\(offset)")) == numbers, "\(name)")
            } else if let words = item["words"] as? String {
                #expect(
                    result.status == 1 && result.stderr.contains("\(name) is \(words)"),
                    "\(name): \(result.stderr)"
                )
            } else {
                Issue.record("\(name): Python gave neither numbers nor words")
            }
            if item["numbers"] == nil {
                #expect(!FileManager.default.fileExists(atPath: directory.file("out\(offset)/manifest.json")))
            }
        }
    }

    /// What the field test of issue 30 pasted: an Excel export with the name first, and one
    /// number labelled differently in two files, each named for what it is.
    @Test func aNameFirstExportAndALabelConflictAcrossFilesAreNamed() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(
            [0xEF, 0xBB, 0xBF] + Array("Name;Phone\r\nAlice;+33 1 62 12 34 56\r\n".utf8),
            to: directory.file("contacts.csv")
        )
        let nameFirst = try runBlocklist(
            ["generate", "--numbers", "contacts.csv", "--no-sync", "-o", "a"],
            in: directory.path
        )
        #expect(nameFirst.status == 1, "\(nameFirst.stderr)")
        #expect(
            nameFirst.stderr.contains(
                "contacts.csv:2: \"Alice\" is not a phone number: 'A' at column 1; the number is read from the first field, and this line's second field holds one: put the phone column first"
            ),
            "\(nameFirst.stderr)"
        )
        try writeBytes(Array("+33611111111,Spam\n".utf8), to: directory.file("one.csv"))
        try writeBytes(Array("+33611111111,Other\n".utf8), to: directory.file("two.csv"))
        let conflict = try runBlocklist(
            ["generate", "--labels", "one.csv", "--labels", "two.csv", "--no-sync", "-o", "b"],
            in: directory.path
        )
        #expect(conflict.status != 0 && conflict.stderr.contains("(in one.csv, two.csv)"), "\(conflict.stderr)")
    }

    /// Nothing is committed from nothing: lists that give no number (an empty file, every line
    /// skipped) are refused and the set stays, unless --allow-empty asks for an empty set.
    @Test func listsGivingNoNumberAreRefusedUnlessAnEmptySetIsAskedFor() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+33162123456\n".utf8), to: directory.file("numbers.txt"))
        try writeBytes([], to: directory.file("empty.txt"))
        try writeBytes(Array("not a number\nnor this\n".utf8), to: directory.file("junk.txt"))
        try writeBytes(Array(#"{"name": "Empty", "patterns": []}"#.utf8), to: directory.file("empty.json"))
        #expect(
            try runBlocklist(["generate", "--numbers", "numbers.txt", "--no-sync", "-o", "set"], in: directory.path)
                .status == 0
        )
        for arguments in [
            ["--numbers", "empty.txt"], ["--numbers", "junk.txt", "--skip-invalid"], ["--labels", "empty.txt"],
            ["--list", "empty.json"],
        ] {
            let result = try runBlocklist(["generate"] + arguments + ["--no-sync", "-o", "set"], in: directory.path)
            #expect(
                result.status == 1 && result.stderr.contains("no number to block or identify"),
                "\(arguments): \(result.stderr)"
            )
            #expect(result.stderr.contains("--allow-empty"))
            #expect(try blocked(directory.file("set")) == [33_162_123_456], "\(arguments) changed the set")
        }
        let allowed = try runBlocklist(
            ["generate", "--numbers", "empty.txt", "--allow-empty", "--no-sync", "-o", "set"],
            in: directory.path
        )
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try blocked(directory.file("set")).isEmpty)
        // And the empty set verifies.
        #expect(try runBlocklist(["verify", "set"], in: directory.path).status == 0)
    }

    /// Lines up to the limit are read; a longer one is named with its length, and `--skip-invalid`
    /// skips it like any other invalid line.
    @Test func theLineLimitIsExactAndAnOverLongLineCanBeSkipped() throws {
        let directory = try TemporaryDirectory()
        let limit = InputLines.maximumLineBytes
        // A number padded with spaces to exactly the limit (with and without a CR), then one byte over.
        let padded = "+33162123456" + String(repeating: " ", count: limit - 12)
        let over = padded + "7"
        // A byte-order mark is not counted (it is only one on line 1).
        let lines = ["\u{FEFF}" + padded, padded + "\r", padded, over, "+33162123457", over + "\r", "+33162123458"]
        try writeBytes(Array(lines.joined(separator: "\n").utf8), to: directory.file("long.txt"))
        let refused = try runBlocklist(
            ["generate", "--numbers", "long.txt", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("long.txt has 2 invalid lines"), "\(refused.stderr)")
        #expect(refused.stderr.contains("long.txt:4: the line is 1025 bytes, longer than 1024"), "\(refused.stderr)")
        #expect(refused.stderr.contains("long.txt:6: the line is 1025 bytes"), "\(refused.stderr)")
        let skipped = try runBlocklist(
            ["generate", "--numbers", "long.txt", "--skip-invalid", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stderr.contains("skipped 2 invalid lines of long.txt"), "\(skipped.stderr)")
        #expect(try blocked(directory.file("out")) == [33_162_123_456, 33_162_123_457, 33_162_123_458])
    }

    /// Line endings are read as Python's universal newlines read them: a line feed, a carriage
    /// return and line feed, or a carriage return alone (classic Mac OS exports), mixed in one
    /// file, from a file, gzip and a pipe. Seeded; seeds 1 and 2 put a carriage return as the last
    /// byte of the first buffer (32 KiB), with and without a line feed after it.
    @Test(arguments: SeededRuns.long ? Array(1...4) : [1]) func lineEndingsAreReadAsPythonsUniversalNewlines(
        seed: UInt64
    ) throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: seed)
        let endings: [[UInt8]] = [[10], [13, 10], [13]]
        let alphabet = Array("+0123456789 ,;\"abcXYZ-()".utf8)
        var text: [UInt8] = []
        while text.count < 200_000 {
            if seed <= 2, text.count >= 32_700, text.count < 32_767 {
                text += Array(repeating: UInt8(ascii: "7"), count: 32_767 - text.count - 1) + [13]
                text += seed == 1 ? [10] : []
                continue
            }
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                text.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)])
            }
            text += endings[Int.random(in: 0..<endings.count, using: &random)]
        }
        if seed.isMultiple(of: 2) { text.removeLast() }
        if seed <= 2 { try #require(text[32_766] == 13) }
        try writeBytes(text, to: directory.file("lines.txt"))
        try writeBytes(try gzip(text, level: 6), to: directory.file("lines.gz"))
        let script = """
            import sys
            text = open(sys.argv[1], newline=None, encoding="latin-1").read()
            lines = text.split("\\n")
            if text.endswith("\\n") or text == "":
                lines.pop()
            sys.stdout.write("".join(line.encode("latin-1").hex() + "\\n" for line in lines))
            """
        let python = try runProcess("/usr/bin/env", ["python3", "-c", script, directory.file("lines.txt")])
        try #require(python.status == 0)
        let expected = String(decoding: python.stdout, as: UTF8.self).split(
            separator: "\n",
            omittingEmptySubsequences: false
        )
        .dropLast().map(String.init)
        func hexLines(_ input: InputLines) throws -> [String] {
            var lines: [String] = []
            while let line = try input.next() {
                lines.append(line.map { String(format: "%02x", $0) }.joined())
            }
            return lines
        }
        #expect(try hexLines(InputLines(path: directory.file("lines.txt"))) == expected)
        #expect(try hexLines(InputLines(path: directory.file("lines.gz"))) == expected)
        var pipe: [Int32] = [0, 0]
        try #require(pipe.withUnsafeMutableBufferPointer { Glibc.pipe($0.baseAddress!) } == 0)
        let (bytes, writeEnd) = (text, pipe[1])
        let writer = Thread {
            // Short writes, so that endings fall across reads.
            var offset = 0
            var chunk = 1
            while offset < bytes.count {
                let count = min(chunk, bytes.count - offset)
                _ = bytes.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress! + offset, count) }
                offset += count
                chunk = chunk % 997 + 1
            }
            close(writeEnd)
        }
        writer.start()
        #expect(try hexLines(InputLines(descriptor: pipe[0], name: "pipe", owned: true)) == expected)

        // And a list with lone carriage returns makes the set it lists.
        try writeBytes(Array("+33162123456\r+33162123457\r\r+33162123458".utf8), to: directory.file("mac.txt"))
        let generated = try runBlocklist(
            ["generate", "--numbers", "mac.txt", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(try blocked(directory.file("out")) == [33_162_123_456, 33_162_123_457, 33_162_123_458])
    }

    /// Labels are CSV as RFC 4180 reads them: quotes doubled inside a quoted field, a separator
    /// inside quotes, `;` headers; a third field is refused with its line, never glued on.
    @Test func labelsAreReadAsRFC4180Records() throws {
        let directory = try TemporaryDirectory()
        let lines = [
            "number;label",
            "+33162123456;\"He said \"\"hi\"\"\"",
            "+33162123457;\"ACME, Inc.; sales\"",
            "\"+33 1 62 12 34 58\";Plain",
        ]
        try writeBytes(Array(lines.joined(separator: "\r\n").utf8), to: directory.file("labels.csv"))
        let result = try runBlocklist(
            ["generate", "--labels", "labels.csv", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("labels.csv:1 has no digits and a separator; read as a CSV header"),
            "\(result.stderr)"
        )
        let cat = try runBlocklist(
            ["cat", "--labels"]
                + (try FileManager.default.contentsOfDirectory(atPath: directory.file("out")))
                .filter { $0.hasPrefix("set-") }.map { directory.file("out/\($0)/shard-01.blk") }
        )
        #expect(
            cat.stdout == "33162123456\tHe said \"hi\"\n33162123457\tACME, Inc.; sales\n33162123458\tPlain\n",
            "\(cat.stdout)"
        )

        try writeBytes(
            Array("+33162123456,Spam\n+33162123457,ACME, Inc.\n+33162123458,\"x\"y\n".utf8),
            to: directory.file("three.csv")
        )
        let three = try runBlocklist(
            ["generate", "--labels", "three.csv", "--no-sync", "-o", "out3"],
            in: directory.path
        )
        #expect(three.status == 1)
        #expect(
            three.stderr.contains(
                "three.csv:2: it has 3 fields; a labels file holds number,label (quote a label that holds ','"
            ),
            "\(three.stderr)"
        )
        #expect(
            three.stderr.contains("three.csv:3: the quoted field 2 is followed by 'y' at column 17, not a separator"),
            "\(three.stderr)"
        )

        // A blank label (spaces alone, ASCII or Unicode's) would show an empty caller name.
        try writeBytes(
            Array("+33162123456,\"   \"\n+33162123457,\"\u{3000}\u{A0} \"\n+33162123458,\" A \"\n".utf8),
            to: directory.file("blank.csv")
        )
        let blank = try runBlocklist(
            ["generate", "--labels", "blank.csv", "--no-sync", "-o", "out4"],
            in: directory.path
        )
        #expect(blank.status == 1)
        for line in 1...2 {
            #expect(
                blank.stderr.contains("blank.csv:\(line): the label is blank (only spaces)"),
                "\(blank.stderr)"
            )
        }
        #expect(!blank.stderr.contains("blank.csv:3"), "\(blank.stderr)")
    }

    /// A line break inside a quoted field is read as RFC 4180 reads it, one record over several
    /// lines, and that record is refused whole, named by its first line: none of its other lines
    /// is read as a number (before, the label's second line was). One never closed runs to the
    /// end of the file.
    @Test func aLineBreakInAQuotedLabelRefusesThatRecordWhole() throws {
        let directory = try TemporaryDirectory()
        let text = [
            "+33162123456,\"Spam", "+33162123459 call\"", "+33162123457,\"Plain \"\"x\"\"\"",
            "+33162123458,\"Never", "closed", "+33162123460",
        ]
        try writeBytes(Array((text.joined(separator: "\r\n") + "\r\n").utf8), to: directory.file("labels.csv"))
        let refused = try runBlocklist(
            ["generate", "--labels", "labels.csv", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("labels.csv has 2 invalid lines"), "\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                "labels.csv:1: the quoted field 2 (from column 14) holds a line break (the record goes on to line 2)"
            ),
            "\(refused.stderr)"
        )
        #expect(
            refused.stderr.contains("labels.csv:4: the quoted field 2 (from column 14) is never closed"),
            "\(refused.stderr)"
        )
        let skipped = try runBlocklist(
            ["generate", "--labels", "labels.csv", "--skip-invalid", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(skipped.status == 0, "\(skipped.stderr)")
        let cat = try runBlocklist(
            ["cat", "--labels"]
                + (try FileManager.default.contentsOfDirectory(atPath: directory.file("out")))
                .filter { $0.hasPrefix("set-") }.map { directory.file("out/\($0)/shard-01.blk") }
        )
        #expect(cat.stdout == "33162123457\tPlain \"x\"\n", "\(cat.stdout)")
    }

    /// Seeded differential: random records over quotes, separators, digits and UTF-8 split as
    /// Python's `csv` module splits them (strict, with the separator this reader chose).
    @Test func recordsSplitAsPythonsCSVModuleSplitsThem() throws {
        var random = SplitMix64(state: 4180)
        // Spaces around fields are dropped here and kept by Python, and this reader takes the first
        // of `,`, `;`, tab as the separator where Python is told one: so each line uses one kind
        // of separator, and no spaces or tabs but that separator outside quotes.
        let alphabet: [String] = ["a", "1", "+", "\"", "é", "한", "x", "\"\"", "#"]
        var lines: [String] = []
        for index in 0..<4_000 {
            var line = ""
            if index % 2 == 0 {
                // Well-formed records: quoted and unquoted fields with one separator.
                let separator = [",", ";", "\t"][Int.random(in: 0..<3, using: &random)]
                let fields = (0..<Int.random(in: 1...4, using: &random)).map { _ -> String in
                    let body = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                        ["a", "1", "é", " ", separator, "\"\""][Int.random(in: 0..<6, using: &random)]
                    }.joined()
                    if Bool.random(using: &random) { return "\"" + body + "\"" }
                    return body.replacingOccurrences(of: "\"\"", with: "q").filter { !" ,;\t".contains($0) }
                }
                line = fields.joined(separator: separator)
            } else {
                let separator = [",", ";", "\t"][Int.random(in: 0..<3, using: &random)]
                line = (0..<Int.random(in: 1...12, using: &random)).map { _ in
                    Int.random(in: 0..<4, using: &random) == 0
                        ? separator : alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                }.joined()
            }
            if line.isEmpty || line.first == " " || line.first == "\t" { line = "x" + line }
            lines.append(line)
        }
        // Ours: the fields (unescaped) or nil for a refused record, and the separator chosen.
        var ours: [(fields: [String]?, separator: String)] = []
        for line in lines {
            let bytes = Array(line.utf8)
            let result: (fields: [String]?, separator: String) = bytes.withUnsafeBytes { buffer in
                let present = [",", ";", "\t"].first { line.contains($0) } ?? ","
                guard let fields = try? ListLine.fields(buffer) else { return (nil, present) }
                func text(_ range: Range<Int>, _ quoted: Bool) -> String {
                    let raw = String(decoding: buffer[range], as: UTF8.self)
                    return quoted ? raw.replacingOccurrences(of: "\"\"", with: "\"") : raw
                }
                var out = [text(fields.first, fields.firstQuoted)]
                if let second = fields.second { out.append(text(second, fields.secondQuoted)) }
                out.append(String(fields.count))
                return (out, fields.separator.map { String(UnicodeScalar($0)) } ?? ",")
            }
            ours.append(result)
        }
        let script = """
            import csv, json, sys
            for line in sys.stdin:
                item = json.loads(line)
                try:
                    rows = list(csv.reader([item["line"]], delimiter=item["sep"], strict=True))
                    row = rows[0] if rows else [""]
                    print(json.dumps(row[:2] + [str(len(row))]))
                except csv.Error:
                    print("null")
            """
        var input = Data()
        for (line, mine) in zip(lines, ours) {
            input +=
                try JSONSerialization.data(withJSONObject: ["line": line, "sep": mine.separator]) + Data("\n".utf8)
        }
        let python = try runProcess("/usr/bin/env", ["python3", "-c", script], input: input)
        #expect(python.status == 0)
        let theirs = String(decoding: python.stdout, as: UTF8.self).split(separator: "\n").map {
            try? JSONDecoder().decode([String]?.self, from: Data($0.utf8))
        }
        try #require(theirs.count == lines.count)
        var disagreements: [String] = []
        for (index, line) in lines.enumerated() where ours[index].fields != theirs[index] ?? nil {
            disagreements.append(
                "\(line.debugDescription): ours \(String(describing: ours[index].fields)), Python's \(String(describing: theirs[index] ?? nil))"
            )
        }
        #expect(
            disagreements.isEmpty,
            "\(disagreements.count) of \(lines.count):\n\(disagreements.prefix(10).joined(separator: "\n"))"
        )
        #expect(ours.filter { $0.fields == nil }.count > 100, "the random records should include refused ones")
    }

    /// An allow pattern over a range of 10^10 or 10^14 numbers is never cut into shards or walked
    /// number by number: the blocking stream jumps past it.
    @Test(.timeLimit(.minutes(1))) func anAllowPatternOverAVastRangeIsJumpedOver() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+33162123456\n+12025550100\n+100000000000007\n".utf8), to: directory.file("n.txt"))
        let wide = try runBlocklist(
            [
                "generate", "--numbers", "n.txt", "--allow-pattern", "+1##############", "--allow-pattern",
                "+1##########", "--no-sync", "-o", "a",
            ],
            in: directory.path
        )
        #expect(wide.status == 0, "\(wide.stderr)")
        #expect(try blocked(directory.file("a")) == [33_162_123_456])
        let both = try runBlocklist(
            [
                "generate", "--pattern", "+1##########", "--pattern", "+33162123###", "--no-exclusions",
                "--allow-pattern", "+1##########", "--no-sync", "-o", "b",
            ],
            in: directory.path
        )
        #expect(both.status == 0, "\(both.stderr)")
        #expect(try blocked(directory.file("b")) == Array(33_162_123_000...33_162_123_999))
    }

    /// A US number written nationally, its area code in parentheses, is national (issue 46): it
    /// was read as +212 (Morocco) without a word. With `--default-country 1` it is +1; without,
    /// it is refused with a sentence that says why and what to give. Written with `+1`, or as
    /// digits only, it is read as before.
    @Test func anAreaCodeInParenthesesIsANationalNumber() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("(212) 555-0101\n +1 (212) 555-0102\n12125550103\n".utf8), to: directory.file("us.txt"))
        let refused = try runBlocklist(["generate", "--numbers", "us.txt", "--no-sync", "-o", "a"], in: directory.path)
        #expect(
            refused.status != 0
                && refused.stderr.contains(
                    "us.txt:1: \"(212) 555-0101\" is written nationally (its area code in parentheses) and has no country code; write it as +CC…, or give --default-country (1 for the US and Canada)"
                ),
            "\(refused.stderr)"
        )
        let read = try runBlocklist(
            ["generate", "--numbers", "us.txt", "--default-country", "1", "--no-sync", "-o", "b"],
            in: directory.path
        )
        #expect(read.status == 0, "\(read.stderr)")
        #expect(try blocked(directory.file("b")) == [12_125_550_101, 12_125_550_102, 12_125_550_103])
    }

    /// `lookup` reads a number in every form a list line accepts, with `--default-country` for
    /// national numbers, and refuses what a list refuses with the same sentence.
    @Test func lookupAcceptsTheFormsAListAccepts() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+827012345678\n".utf8), to: directory.file("n.txt"))
        #expect(
            try runBlocklist(["generate", "--numbers", "n.txt", "--no-sync", "-o", "out"], in: directory.path).status
                == 0
        )
        #expect(try runBlocklist(["enable", "all", "out", "--store", "s.db"], in: directory.path).status == 0)
        #expect(try runBlocklist(["load", "out", "--store", "s.db"], in: directory.path).status == 0)
        for form in ["+827012345678", "827012345678", "+82 70-1234-5678", "0082 (70) 1234 5678", "+82.70.1234.5678"] {
            let result = try runBlocklist(["lookup", form, "--store", "s.db"], in: directory.path)
            #expect(
                result.status == 0 && result.stdout.contains("827012345678 is blocked"),
                "\(form): \(result.stdout)\(result.stderr)"
            )
        }
        let national = try runBlocklist(
            ["lookup", "070-1234-5678", "--default-country", "82", "--store", "s.db"],
            in: directory.path
        )
        #expect(national.status == 0, "\(national.stderr)")
        let noCountry = try runBlocklist(["lookup", "070-1234-5678", "--store", "s.db"], in: directory.path)
        #expect(
            noCountry.status == 2
                && noCountry.stderr.contains("has no country code; write it as +CC…, or give --default-country"),
            "\(noCountry.stderr)"
        )
        let letters = try runBlocklist(["lookup", "+82 70 CALL ME", "--store", "s.db"], in: directory.path)
        #expect(
            letters.status == 2 && letters.stderr.contains("is not a phone number: 'C' at column 8"),
            "\(letters.stderr)"
        )
        // Text that is not ASCII is shown as written, the offending character named by its code point.
        let fullwidth = try runBlocklist(["lookup", "+82-70-１２34-5678", "--store", "s.db"], in: directory.path)
        #expect(
            fullwidth.stderr == "Error: \"+82-70-１２34-5678\" is not a phone number: '１' (U+FF11) at column 8.\n",
            "\(fullwidth.stderr)"
        )
        let invisible = try runBlocklist(["lookup", "+8270\u{200B}12345678", "--store", "s.db"], in: directory.path)
        #expect(
            invisible.stderr == "Error: \"+8270\\u{200B}12345678\" is not a phone number: U+200B at column 6.\n",
            "\(invisible.stderr)"
        )
    }

    /// What the attack on this work found: a FIFO whose writer comes late is waited for (never
    /// read as an empty list committed over the old set); a device on standard input is refused;
    /// quoted labels keep their spaces; invisible format characters are refused in labels; the
    /// European "(0)" trunk notation is read as the number it stands for.
    @Test func fifosDevicesLabelsAndTrunkZerosAsUsersHandThemOver() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+33162123456\n".utf8), to: directory.file("n.txt"))
        #expect(
            try runBlocklist(["generate", "--numbers", "n.txt", "--no-sync", "-o", "keep"], in: directory.path).status
                == 0
        )
        #expect(mkfifo(directory.file("p"), 0o600) == 0)
        let late = try runProcess(
            "/bin/sh",
            [
                "-c",
                "cd '\(directory.path)' || exit 9; (sleep 1; timeout 30 sh -c \"printf '+33162123457\\\\n' > p\") & timeout 30 '\(productsDirectory)/blocklist' generate --numbers p --no-sync -o keep; status=$?; wait; exit $status",
            ]
        )
        #expect(late.status == 0)
        #expect(try blocked(directory.file("keep")) == [33_162_123_457])
        // A writer already waiting writes and leaves the moment the list is opened: what it wrote
        // is read, and nothing waits for a second writer (a reopen would wait forever; the
        // timeout turns that hang into a failure).
        let early = try runProcess(
            "/bin/sh",
            [
                "-c",
                "cd '\(directory.path)' || exit 9; timeout 30 sh -c \"printf '+33162123458\\\\n' > p\" & sleep 0.5; timeout 30 '\(productsDirectory)/blocklist' generate --numbers p --no-sync -o keep; status=$?; wait; exit $status",
            ]
        )
        #expect(early.status == 0)
        #expect(try blocked(directory.file("keep")) == [33_162_123_458])

        let device = try runProcess(
            "/bin/sh",
            [
                "-c",
                "cd '\(directory.path)' && '\(productsDirectory)/blocklist' generate --numbers - --no-sync -o dev < /dev/null",
            ]
        )
        #expect(device.status == 1)
        #expect(!FileManager.default.fileExists(atPath: directory.file("dev")))

        try writeBytes(Array("+33162123456,\" x \"\n".utf8), to: directory.file("spaces.csv"))
        #expect(
            try runBlocklist(["generate", "--labels", "spaces.csv", "--no-sync", "-o", "spaces"], in: directory.path)
                .status == 0
        )
        let set = try FileManager.default.contentsOfDirectory(atPath: directory.file("spaces")).first {
            $0.hasPrefix("set-")
        }!
        #expect(
            try runBlocklist(["cat", "--labels", directory.file("spaces/\(set)/shard-01.blk")]).stdout
                == "33162123456\t x \n"
        )

        for (name, label) in [("bidi", "Bank\u{202E}evil"), ("separator", "a\u{2028}b"), ("zero width", "\u{200B}")] {
            try writeBytes(Array("+33162123456,\(label)\n".utf8), to: directory.file("l.csv"))
            let result = try runBlocklist(
                ["generate", "--labels", "l.csv", "--no-sync", "-o", "l"],
                in: directory.path
            )
            #expect(
                result.status == 1 && result.stderr.contains("an invisible format or separator character"),
                "\(name): \(result.stderr)"
            )
        }

        try writeBytes(Array("+33 (0) 1 62 12 34 58\n0033 (0)1 62 12 34 59\n".utf8), to: directory.file("trunk.txt"))
        #expect(
            try runBlocklist(["generate", "--numbers", "trunk.txt", "--no-sync", "-o", "trunk"], in: directory.path)
                .status == 0
        )
        #expect(try blocked(directory.file("trunk")) == [33_162_123_458, 33_162_123_459])
    }

    /// `skip(below:)` of the run generator leaves exactly the numbers at or above the point, for
    /// random patterns, exclusions and points, against generating everything and filtering.
    @Test func theGeneratorSkipsExactlyTheNumbersBelowAPoint() throws {
        var random = SplitMix64(state: 77)
        for _ in 0..<SeededRuns.count(300, short: 30) {
            let length = Int.random(in: 4...6, using: &random)
            let pattern =
                "+" + String(Int.random(in: 1...8, using: &random))
                + (1..<length).map { _ in
                    Bool.random(using: &random) ? "#" : String(Int.random(in: 0...9, using: &random))
                }.joined()
            let exclusions = (0..<Int.random(in: 0...2, using: &random)).map { _ in
                (0..<Int.random(in: 1...2, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }
                    .joined()
            }
            let spec = try BlockSpec(
                patterns: [pattern, "+9" + String(repeating: "#", count: length - 1)].sorted(),
                exclusions: exclusions,
                rangeSize: .max
            )
            let compiled = CompiledSpec(spec)
            let all = compiled.runs().flatMap { Array($0.start...$0.last) }
            let points = (0..<3).map { _ in Int64.random(in: 0...Int64(pow(10, Double(length))) + 5, using: &random) }
                .sorted()
            let takes = points.map { _ in Int.random(in: 0...2, using: &random) }
            // The generator under test, and the same calls replayed on a plain array: a skip drops
            // what is below its point; a take hands over the next maximal consecutive group.
            var got: [Int64] = []
            let generator = compiled.runs()
            var remaining = all[...]
            var expected: [Int64] = []
            for (point, take) in zip(points, takes) {
                generator.skip(below: point)
                remaining = remaining.drop { $0 < point }
                for _ in 0..<take {
                    if let run = generator.next() { got += Array(run.start...run.last) }
                    guard !remaining.isEmpty else { continue }
                    var end = remaining.startIndex + 1
                    while end < remaining.endIndex, remaining[end] == remaining[end - 1] + 1 { end += 1 }
                    expected += remaining[..<end]
                    remaining = remaining[end...]
                }
            }
            while let run = generator.next() { got += Array(run.start...run.last) }
            expected += remaining
            #expect(got == expected, "\(pattern) \(exclusions) skips \(points) takes \(takes)")
        }
    }
}

/// The external sorter's in-place sort against the standard library's, on the inputs that undo
/// a careless quicksort: sorted, reversed, all equal, few distinct keys, organ pipes, and random.
@Suite struct InPlaceSortTests {
    @Test func sortsAsTheStandardLibraryDoesWithoutAScratchBuffer() {
        var random = SplitMix64(state: 0x50A7)
        for trial in 0..<400 {
            let count = trial < 40 ? trial : Int.random(in: 0...5_000, using: &random)
            var keys: [UInt64]
            switch trial % 6 {
            case 0: keys = (0..<count).map { UInt64($0) }
            case 1: keys = (0..<count).map { UInt64(count - $0) }
            case 2: keys = Array(repeating: 7, count: count)
            case 3: keys = (0..<count).map { _ in UInt64.random(in: 0...3, using: &random) }
            case 4: keys = (0..<count).map { UInt64(min($0, count - $0)) }
            default: keys = (0..<count).map { _ in random.next() }
            }
            let expected = keys.sorted()
            keys.withUnsafeMutableBufferPointer { sortInPlace($0) }
            #expect(keys == expected, "trial \(trial), \(count) keys")
        }
    }
}

/// Patterns inside a wider one (allow or list patterns may overlap) are never started: each costs
/// a generator with its tables, and 20,000 of them under `+1#########` reached 32 MB.
@Suite struct CoveredPatternTests {
    @Test func patternsAWiderOneHoldsAreSkippedAndNothingIsLost() throws {
        var patterns = (0..<3_000).map { try! BlockPattern(parsing: String(format: "+1%05d####", $0 * 3)) }
        patterns.append(try BlockPattern(parsing: "+1#########"))
        patterns.append(try BlockPattern(parsing: "+2000##"))
        patterns.append(try BlockPattern(parsing: "+20001#"))
        patterns.sort { $0.lowest < $1.lowest }
        let union = try LabelledUnion([], patterns: patterns, labels: [[]], origin: "")
        var runs: [NumberRun] = []
        while let next = try union.nextLabelled() { runs.append(next.run) }
        #expect(
            runs == [NumberRun(first: 200_000, last: 200_099), NumberRun(first: 1_000_000_000, last: 1_999_999_999)]
        )
        #expect(union.startedPatterns <= 4, "\(union.startedPatterns) patterns started")

        // A different label inside a labelled run is still a conflict, not skipped.
        let labelled = try LabelledUnion(
            [],
            patterns: [try BlockPattern(parsing: "+1####"), try BlockPattern(parsing: "+12###")],
            patternLabels: [0, 1],
            labels: [Array("A".utf8), Array("B".utf8)],
            origin: "in test"
        )
        #expect(throws: BlocklistError.self) { while try labelled.nextLabelled() != nil {} }
    }
}
