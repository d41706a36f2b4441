import ByteCodecs
import Foundation
import SetStorage
import TestSupport
import Testing

@testable import BlocklistCore

/// Imported lists, labels and allow-lists, end to end through `blocklist generate`, checked
/// against independent computations: GNU `sort -u` and a dictionary of labels.
@Suite struct ListTests {
    /// Writes `lines` to `path`.
    func write(_ lines: [String], to path: String) throws {
        try writeBytes(Array(lines.joined(separator: "\n").utf8) + [10], to: path)
    }

    /// Every blocking number and identification entry of the set in `output`.
    func contents(_ output: String) throws -> (blocked: [Int64], labels: [Int64: String]) {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(try readBytes(output + "/manifest.json")))
        var blocked: [Int64] = []
        var labels: [Int64: String] = [:]
        for shard in manifest.shards {
            let reader = try ShardReader(path: manifest.path(of: shard, in: output))
            while let number = try reader.next() { blocked.append(number) }
            let table = try reader.readLabels()
            while let (run, label) = try reader.nextIdentificationRun() {
                for number in run.start...run.last { labels[number] = String(decoding: table[label], as: UTF8.self) }
            }
        }
        return (blocked, labels)
    }

    @Test func importedNumbersEqualSortUniqueOfTheNormalizedInput() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: 11)
        var lines: [String] = []
        var normalized: [String] = []
        for _ in 0..<60_000 {
            let subscriber = Int64.random(in: 0..<2_000_000, using: &random)
            let number = 33_100_000_000 + subscriber
            let digits = String(number)
            let national: String = "0" + String(digits.dropFirst(2))
            // The forms a list may use, all of the same number.
            let spaced: String = "+33 " + String(digits.dropFirst(2))
            let quoted: String = "\"+" + digits + "\",spam,3"
            let dashed: String = "+33 (1) " + String(digits.dropFirst(3).prefix(4)) + "-" + String(digits.dropFirst(7))
            let forms: [String] = ["+" + digits, "00" + digits, digits, spaced, national, quoted, dashed]
            lines.append(forms[Int.random(in: 0..<forms.count, using: &random)])
            normalized.append(digits)
            if Int.random(in: 0..<10, using: &random) == 0 { lines.append(lines.last!) }  // duplicates
            if Int.random(in: 0..<50, using: &random) == 0 { lines.append("# a comment") }
        }
        try write(lines, to: directory.file("numbers.txt"))
        try write(normalized, to: directory.file("normalized.txt"))
        let result = try runBlocklist(
            [
                "generate", "--numbers", "numbers.txt", "--default-country", "33", "--capacity", "40000", "--no-sync",
                "-o", "out",
            ],
            in: directory.path
        )
        #expect(result.status == 0, "\(result.stderr)")

        let sort = Process()
        sort.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sort.arguments = ["sort", "-u", "-n", "-o", directory.file("expected.txt"), directory.file("normalized.txt")]
        try sort.run()
        sort.waitUntilExit()
        let expected = String(decoding: try readBytes(directory.file("expected.txt")), as: UTF8.self).split(
            separator: "\n"
        ).map { Int64($0)! }
        let (blocked, labels) = try contents(directory.file("out"))
        #expect(blocked.count == expected.count)
        #expect(blocked == expected)
        #expect(labels.isEmpty)
        let manifest = try JSONDecoder().decode(
            Manifest.self,
            from: Data(try readBytes(directory.file("out/manifest.json")))
        )
        #expect(manifest.shards.count >= 2)
        #expect(manifest.shards.allSatisfy { $0.count <= 40_000 })
        #expect(try runBlocklist(["verify", "out"], in: directory.path).status == 0)
    }

    @Test func labelsAndAllowListsMatchABruteForceMap() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: 5)
        let names = ["Telemarketing", "Scam", "Démarchage", "Energy", "Insurance \"gold\""]
        var expectedLabels: [Int64: String] = [:]
        var labelLines: [String] = ["number,label"]
        var blockLines: [String] = []
        var blocked = Set<Int64>()
        var allowLines: [String] = []
        var allowed = Set<Int64>()
        for _ in 0..<20_000 {
            let number = 44_200_000_000 + Int64.random(in: 0..<100_000, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                guard expectedLabels[number] == nil else { continue }
                let name = names[Int.random(in: 0..<names.count, using: &random)]
                expectedLabels[number] = name
                labelLines.append("+\(number),\"\(name.replacingOccurrences(of: "\"", with: ""))\"")
                expectedLabels[number] = name.replacingOccurrences(of: "\"", with: "")
            case 1:
                blocked.insert(number)
                blockLines.append("+\(number)")
            default:
                allowed.insert(number)
                allowLines.append("+\(number)")
            }
        }
        try write(labelLines, to: directory.file("labels.csv"))
        try write(blockLines, to: directory.file("block.txt"))
        try write(allowLines, to: directory.file("allow.txt"))
        // An allow pattern takes out a whole block too.
        let result = try runBlocklist(
            [
                "generate", "--numbers", "block.txt", "--labels", "labels.csv", "--allow", "allow.txt",
                "--allow-pattern", "+4420000####",
                "--capacity", "3000", "--no-sync", "-o", "out",
            ],
            in: directory.path
        )
        #expect(result.status == 0, "\(result.stderr)")
        let allowedByPattern: (Int64) -> Bool = { $0 >= 44_200_000_000 && $0 < 44_200_010_000 }
        let wantBlocked = blocked.filter { !allowed.contains($0) && !allowedByPattern($0) }.sorted()
        let wantLabels = expectedLabels.filter { !allowed.contains($0.key) && !allowedByPattern($0.key) }
        let (gotBlocked, gotLabels) = try contents(directory.file("out"))
        #expect(gotBlocked == wantBlocked)
        #expect(gotLabels == wantLabels)
        #expect(try runBlocklist(["verify", "out"], in: directory.path).status == 0)
    }

    @Test func badLinesAreNamedAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, [UInt8], String)] = [
            ("letters", Array("+33162123456\nhello\n".utf8), "numbers.txt:2: \"hello\" is not a phone number"),
            ("sixteen digits", Array("+1234567890123456\n".utf8), "more than 15 digits"),
            ("national without a country", Array("0162123456\n".utf8), "has no country code"),
            ("NUL byte", Array("+3316212\u{0}3456\n".utf8), "NUL byte"),
            (
                "long line without newline", [UInt8](repeating: 0x35, count: 3 << 20),
                "numbers.txt:1: the line is 3145728 bytes, longer than 1024"
            ),
        ]
        for (name, bytes, message) in cases {
            try writeBytes(bytes, to: directory.file("numbers.txt"))
            let result = try runBlocklist(
                ["generate", "--numbers", "numbers.txt", "--no-sync", "-o", "out"],
                in: directory.path
            )
            #expect(result.status != 0, "\(name)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("out/manifest.json")), "\(name)")
            let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: directory.file("out"))) ?? []
            #expect(leftovers.allSatisfy { $0 == ShardSet.lockFileName }, "\(name): \(leftovers)")
        }
        // --skip-invalid goes on and says what it skipped; a BOM and CRLF endings are read.
        try writeBytes(
            [0xEF, 0xBB, 0xBF] + Array("+33162123456\r\nhello\r\n+33162123457\r\n".utf8),
            to: directory.file("numbers.txt")
        )
        let skipped = try runBlocklist(
            ["generate", "--numbers", "numbers.txt", "--skip-invalid", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stderr.contains("skipped 1 invalid line of numbers.txt"))
        #expect(try contents(directory.file("out")).blocked == [33_162_123_456, 33_162_123_457])
        // A bad label.
        try write(["+33162123456,\u{7}bell"], to: directory.file("labels.csv"))
        let label = try runBlocklist(
            ["generate", "--labels", "labels.csv", "--no-sync", "-o", "out2"],
            in: directory.path
        )
        #expect(
            label.status != 0 && label.stderr.contains("labels.csv:1: the label holds the control character U+7"),
            "\(label.stderr)"
        )
    }

    @Test func gzipAndStandardInputAreRead() throws {
        let directory = try TemporaryDirectory()
        try write(["+33162123456", "+33162123458"], to: directory.file("a.txt"))
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-k", directory.file("a.txt")]
        try gzip.run()
        gzip.waitUntilExit()
        let result = try runBlocklist(
            ["generate", "--numbers", "a.txt.gz", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try contents(directory.file("out")).blocked == [33_162_123_456, 33_162_123_458])
        // A truncated gzip file is refused.
        let bytes = try readBytes(directory.file("a.txt.gz"))
        try writeBytes(Array(bytes.prefix(bytes.count - 6)), to: directory.file("b.txt.gz"))
        let truncated = try runBlocklist(
            ["generate", "--numbers", "b.txt.gz", "--no-sync", "-o", "out"],
            in: directory.path
        )
        #expect(truncated.status != 0 && truncated.stderr.contains("b.txt.gz"), "\(truncated.stderr)")
    }

    @Test func aGrowingListKeepsItsShardBoundaries() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: 3)
        var numbers = (0..<100_000).map { _ in "+336\(Int64.random(in: 10_000_000..<100_000_000, using: &random))" }
        try write(numbers, to: directory.file("list.txt"))
        let arguments = ["generate", "--numbers", "list.txt", "--capacity", "10000", "--no-sync", "-o", "out"]
        #expect(try runBlocklist(arguments, in: directory.path).status == 0)
        let before = try JSONDecoder().decode(
            Manifest.self,
            from: Data(try readBytes(directory.file("out/manifest.json")))
        )
        // 50 numbers in one narrow prefix: only the shard that covers it changes.
        numbers += (0..<50).map { "+33612345\(String(format: "%03d", $0))" }
        try write(numbers, to: directory.file("list.txt"))
        let again = try runBlocklist(arguments, in: directory.path)
        #expect(
            again.status == 0 && again.stderr.contains("kept the previous generation's shard boundaries"),
            "\(again.stderr)"
        )
        let after = try JSONDecoder().decode(
            Manifest.self,
            from: Data(try readBytes(directory.file("out/manifest.json")))
        )
        #expect(after.shards.map(\.lowerBound) == before.shards.map(\.lowerBound))
        let changed = zip(before.shards, after.shards).filter { $0.checksum != $1.checksum }.count
        #expect(changed == 1, "\(changed) shards changed")
    }
}

/// Shard format version 2 on its own: identification entries, labels, size, damage.
@Suite struct ShardFormatVersion2Tests {
    @Test func roundTripsBothKindsAndStaysNearTheBound() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(state: 9)
        let candidates: Int64 = 10_000_000
        let base: Int64 = 33_600_000_000
        var numbers = Set<Int64>()
        while numbers.count < 300_000 { numbers.insert(base + Int64.random(in: 0..<candidates, using: &random)) }
        let blocked = numbers.sorted()
        let labels: [[UInt8]] = [Array("Scam".utf8), Array("Démarchage".utf8), Array("Énergie".utf8)]
        var identified: [(Int64, Int)] = []
        var next = base
        for _ in 0..<5_000 {
            next += Int64.random(in: 1..<50, using: &random)
            identified.append((next, Int.random(in: 0..<labels.count, using: &random)))
        }
        let writer = try ShardWriter(path: directory.file("v2.blk"), shardIndex: 4, version: 2, lowerBound: base)
        for number in blocked { try writer.append(number) }
        try writer.beginIdentification(labels: labels)
        for (number, label) in identified {
            try writer.appendIdentification(NumberRun(start: number, count: 1), label: label)
        }
        let header = try writer.finish(sync: false)
        #expect(header.version == 2 && header.lowerBound == base && header.labelCount == 3)

        let reader = try ShardReader(path: directory.file("v2.blk"))
        var gotBlocked: [Int64] = []
        while let number = try reader.next() { gotBlocked.append(number) }
        #expect(gotBlocked == blocked)
        #expect(try reader.readLabels() == labels)
        var gotIdentified: [(Int64, Int)] = []
        while let (run, label) = try reader.nextIdentificationRun() {
            for number in run.start...run.last { gotIdentified.append((number, label)) }
        }
        #expect(gotIdentified.map(\.0) == identified.map(\.0) && gotIdentified.map(\.1) == identified.map(\.1))

        // The blocking entries' share of the file is within 15% of log2(C(candidates, count)).
        func log2Binomial(_ n: Double, _ k: Double) -> Double {
            (lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)) / log(2)
        }
        let blockingOnly = try ShardWriter(path: directory.file("b.blk"), shardIndex: 1, version: 2)
        for number in blocked { try blockingOnly.append(number) }
        let bits = Double(try blockingOnly.finish(sync: false).fileSize * 8)
        let bound = log2Binomial(Double(candidates), Double(blocked.count))
        #expect(
            bits <= bound * 1.15,
            "\(bits / Double(blocked.count)) bits per entry, bound \(bound / Double(blocked.count))"
        )

        // Any damaged payload byte is refused before anything is read.
        var bytes = try readBytes(directory.file("v2.blk"))
        bytes[bytes.count / 2] ^= 0x10
        try writeBytes(bytes, to: directory.file("bad.blk"))
        let damaged = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file("bad.blk")) }
        #expect(damaged?.code == .corruptShard)
    }

    /// Found by the fuzzer: a version 2 header that claims more blocking entries than its runs
    /// hold was read to an early end without an error by a reader of blocking entries alone
    /// (`cat`), since the totals were checked only after the identification runs.
    @Test func blockingRunsThatFallShortOfTheHeaderAreRefusedAtTheirEnd() throws {
        let directory = try TemporaryDirectory()
        let writer = try ShardWriter(path: directory.file("v2.blk"), shardIndex: 1, version: 2)
        for number in stride(from: Int64(33_162_000_000), to: 33_162_003_000, by: 3) { try writer.append(number) }
        try writer.beginIdentification(labels: [Array("Scam".utf8)])
        try writer.appendIdentification(NumberRun(start: 33_170_000_000, count: 5), label: 0)
        let header = try writer.finish(sync: false)
        for (offset, change) in [(24, Int64(46)), (40, Int64(-3))] {  // the entry count; the last number
            var bytes = try readBytes(directory.file("v2.blk"))
            bytes.withUnsafeMutableBytes { raw in
                let value = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self)) + change
                raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Int64.self)
                let crc = crc32Update(0, UnsafeRawBufferPointer(rebasing: raw[0..<124]))
                raw.storeBytes(of: crc.littleEndian, toByteOffset: 124, as: UInt32.self)
            }
            try writeBytes(bytes, to: directory.file("short.blk"))
            let reader = try ShardReader(path: directory.file("short.blk"))
            var read: Int64 = 0
            let error = #expect(throws: BlocklistError.self) {
                while try reader.next() != nil { read += 1 }
            }
            #expect(error?.code == .corruptShard, "offset \(offset)")
            #expect(read <= header.entryCount)
            let cat = try runBlocklist(["cat", directory.file("short.blk")])
            #expect(cat.status == 1 && cat.stderr.contains("the header"), "\(cat.stderr)")
        }
    }

    /// Found by the field test of session 15 (Fuzz/corpus/regression-v2-*.blk, written by hand
    /// with a payload of the attacker's making and its checksums fixed): `cat` of the blocking
    /// entries alone exited 0 on shards whose label table or identification runs were damaged,
    /// and a damaged label length was named as a run that does not exist.
    @Test func damagedLaterSectionsAreRefusedByEveryReaderAndNamed() throws {
        let cases: [(file: String, words: String)] = [
            ("extra-byte-after-ids-00", "more data after the 3 identification runs"),
            ("label-varint-11bytes", "the length of label 0 of 1 has a varint longer than 64 bits"),
            ("label-varint-nonminimal", "the length of label 0 of 1 has a varint not in its shortest form"),
            ("label-varint-past-end", "the payload ends inside the length of label 0 of 1"),
            ("pad-block-nonzero", "the padding after the blocking runs is not zero bits"),
            ("pad-ids-nonzero", "the padding after the identification runs is not zero bits"),
        ]
        for (name, words) in cases {
            let path = packageRoot.appendingPathComponent("Fuzz/corpus/regression-v2-\(name).blk")
                .path
            for arguments in [["cat", path], ["cat", "--labels", path]] {
                let cat = try runBlocklist(arguments)
                #expect(cat.status == 1 && cat.stderr.contains(words), "\(arguments): \(cat.stderr)")
            }
        }
    }

    @Test func aChangedLabelReloadsAsARemovalAndAnAddition() throws {
        let directory = try TemporaryDirectory()
        try writeBytes(Array("+33162123459,Telemarketing\n+33162123460,Scam\n".utf8), to: directory.file("labels.csv"))
        try writeBytes(Array("+33162123456\n".utf8), to: directory.file("numbers.txt"))
        let generate = ["generate", "--numbers", "numbers.txt", "--labels", "labels.csv", "--no-sync", "-o", "out"]
        #expect(try runBlocklist(generate, in: directory.path).status == 0)
        #expect(try runBlocklist(["enable", "all", "out", "--store", "s.db"], in: directory.path).status == 0)
        #expect(try runBlocklist(["load", "out", "--store", "s.db"], in: directory.path).status == 0)
        let first = try runBlocklist(["lookup", "+33162123460", "--store", "s.db"], in: directory.path)
        #expect(first.status == 0 && first.stdout.contains("identified as \"Scam\" by extension-01"), "\(first.stdout)")

        try writeBytes(
            Array("+33162123459,Telemarketing\n+33162123460,Fraud\n+33162123461,New\n".utf8),
            to: directory.file("labels.csv")
        )
        #expect(try runBlocklist(generate, in: directory.path).status == 0)
        let delta = try runBlocklist(["load", "out", "--store", "s.db", "--strategy", "delta"], in: directory.path)
        #expect(delta.status == 0 && delta.stdout.contains("incremental"), "\(delta.stdout)\(delta.stderr)")
        let changed = try runBlocklist(["lookup", "33162123460", "--store", "s.db", "--json"], in: directory.path)
        #expect(changed.status == 0)
        let answer = try JSONSerialization.jsonObject(with: Data(changed.stdout.utf8)) as? [String: Any]
        let identifiedBy = answer?["identifiedBy"] as? [[String: String]]
        #expect(identifiedBy == [["extension": "extension-01", "label": "Fraud"]], "\(changed.stdout)")
        #expect(
            try runBlocklist(["lookup", "33162123461", "--store", "s.db"], in: directory.path).stdout.contains(
                "\"New\""
            )
        )
        let neither = try runBlocklist(["lookup", "33162123462", "--store", "s.db"], in: directory.path)
        #expect(neither.status == 1 && neither.stdout.contains("neither blocked nor identified"))
    }
}
