import BlocklistCore
import Foundation
import TestSupport
import Testing

/// `blocklist diff` against set arithmetic on the lists the two sets were made from, on seeded
/// random sets: blocked numbers and labels, one shard and several, sets and publications.
@Suite struct DiffTests {
    struct Report: Decodable {
        struct Shard: Decodable {
            var index: Int
            var added: Int64
            var removed: Int64
            var labelsAdded: Int64
            var labelsRemoved: Int64
        }
        var added: Int64
        var removed: Int64
        var labelsAdded: Int64
        var labelsRemoved: Int64
        var shards: [Shard]
    }

    /// Two seeded sets: B keeps most of A's numbers, drops some, adds some; keeps, changes, drops
    /// and adds labels.
    static func lists(seed: UInt64) -> (a: Set<Int64>, b: Set<Int64>, la: [Int64: String], lb: [Int64: String]) {
        var random = SplitMix64(state: seed)
        func number() -> Int64 { 827_012_000_000 + Int64(random.next() % 1_000_000) }
        var a = Set<Int64>()
        while a.count < 6_000 { a.insert(number()) }
        var b = Set(a.filter { _ in random.next() % 10 != 0 })
        while b.count < 6_100 { b.insert(number()) }
        let names = ["Pizza", "Bank", "Clinic", "Taxi"]
        var la: [Int64: String] = [:]
        while la.count < 400 { la[number()] = names[Int(random.next() % 4)] }
        var lb: [Int64: String] = [:]
        for (key, value) in la where random.next() % 8 != 0 {
            lb[key] = random.next() % 5 == 0 ? names[Int(random.next() % 4)] : value
        }
        while lb.count < 420 { lb[number()] = names[Int(random.next() % 4)] }
        return (a, b, la, lb)
    }

    static func write(
        _ numbers: Set<Int64>,
        _ labels: [Int64: String],
        to directory: TemporaryDirectory,
        as name: String
    )
        throws
    {
        try Data(numbers.sorted().map { "+\($0)\n" }.joined().utf8).write(
            to: URL(fileURLWithPath: directory.file(name + ".txt"))
        )
        try Data(labels.sorted { $0.key < $1.key }.map { "+\($0.key),\($0.value)\n" }.joined().utf8).write(
            to: URL(fileURLWithPath: directory.file(name + "-labels.csv"))
        )
    }

    static func generate(_ name: String, capacity: Int?, in directory: TemporaryDirectory) throws {
        let result = try runBlocklist(
            ["generate", "--numbers", name + ".txt", "--labels", name + "-labels.csv", "-o", name, "--no-sync"]
                + (capacity.map { ["--capacity", String($0)] } ?? []),
            in: directory.path
        )
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Which labels count as added and removed: a label new or changed is added; one gone or
    /// changed is removed.
    static func labelChanges(_ la: [Int64: String], _ lb: [Int64: String]) -> (added: Set<Int64>, removed: Set<Int64>) {
        (Set(lb.keys.filter { la[$0] != lb[$0] }), Set(la.keys.filter { la[$0] != lb[$0] }))
    }

    @Test(arguments: [UInt64(1), 2])
    func oneShardEqualsSetArithmetic(seed: UInt64) throws {
        let dir = try TemporaryDirectory()
        let (a, b, la, lb) = Self.lists(seed: seed)
        try Self.write(a, la, to: dir, as: "A")
        try Self.write(b, lb, to: dir, as: "B")
        try Self.generate("A", capacity: nil, in: dir)
        try Self.generate("B", capacity: nil, in: dir)
        let json = try runBlocklist(["diff", "A", "B", "--json"], in: dir.path)
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(json.stdout.utf8))
        let labels = Self.labelChanges(la, lb)
        #expect(report.added == Int64(b.subtracting(a).count) && report.removed == Int64(a.subtracting(b).count))
        #expect(report.labelsAdded == Int64(labels.added.count) && report.labelsRemoved == Int64(labels.removed.count))
        #expect(report.shards.count == 1)

        // --numbers: exactly those numbers, each with its sign (and a new label its text).
        let lines = try runBlocklist(["diff", "A", "B", "--numbers"], in: dir.path)
        #expect(lines.status == 0)
        var blocked = Set<Int64>()
        var unblocked = Set<Int64>()
        var identified: [Int64: String] = [:]
        var unidentified = Set<Int64>()
        for line in lines.stdout.split(separator: "\n") {
            let parts = line.dropFirst().split(separator: "\t", omittingEmptySubsequences: false)
            let number = try #require(Int64(parts[0]), "\(line)")
            switch (line.first, parts.count) {
            case ("+", 1): blocked.insert(number)
            case ("-", 1): unblocked.insert(number)
            case ("+", 2): identified[number] = String(parts[1])
            case ("-", 2): unidentified.insert(number)
            default: Issue.record("unexpected line \(line)")
            }
        }
        #expect(blocked == b.subtracting(a) && unblocked == a.subtracting(b))
        #expect(Set(identified.keys) == labels.added && unidentified == labels.removed)
        #expect(identified.allSatisfy { lb[$0.key] == $0.value })
        #expect(lines.stderr.contains("In all, 1 of 1 shard changed"))

        // A set against itself, and against a set with no change.
        let same = try runBlocklist(["diff", "A", "A", "--json"], in: dir.path)
        let none = try JSONDecoder().decode(Report.self, from: Data(same.stdout.utf8))
        #expect(none.added == 0 && none.removed == 0 && none.labelsAdded == 0 && none.shards.isEmpty)
    }

    /// Several shards: each shard's counts are the set arithmetic of the two shards' contents
    /// (as `cat` prints them), and a shard one side lacks counts as empty there. The same two
    /// sets published as generations 1 and 2 give the same counts.
    @Test func shardByShardAndPublishedGenerations() throws {
        let dir = try TemporaryDirectory()
        let (a, b, la, lb) = Self.lists(seed: 3)
        try Self.write(a, la, to: dir, as: "A")
        try Self.write(b, lb, to: dir, as: "B")
        try Self.generate("A", capacity: 2_000, in: dir)
        try Self.generate("B", capacity: 2_000, in: dir)
        let json = try runBlocklist(["diff", "A", "B", "--json"], in: dir.path)
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(json.stdout.utf8))
        func shardFiles(_ set: String) throws -> [String] {
            let generation = try #require(
                try FileManager.default.contentsOfDirectory(atPath: dir.file(set)).first { $0.hasPrefix("set-") }
            )
            return try FileManager.default.contentsOfDirectory(atPath: dir.file(set + "/" + generation))
                .filter { $0.hasSuffix(".blk") }.sorted().map { set + "/" + generation + "/" + $0 }
        }
        func contents(_ file: String?, labels: Bool) throws -> Set<String> {
            guard let file else { return [] }
            let printed = try runBlocklist(["cat", file] + (labels ? ["--labels"] : []), in: dir.path)
            #expect(printed.status == 0)
            return Set(printed.stdout.split(separator: "\n").map(String.init))
        }
        let filesA = try shardFiles("A")
        let filesB = try shardFiles("B")
        #expect(filesA.count >= 3 && filesB.count >= 3, "\(filesA) \(filesB)")
        var total = (added: Int64(0), removed: Int64(0))
        for index in 1...max(filesA.count, filesB.count) {
            let oldFile = index <= filesA.count ? filesA[index - 1] : nil
            let newFile = index <= filesB.count ? filesB[index - 1] : nil
            let (old, new) = (try contents(oldFile, labels: false), try contents(newFile, labels: false))
            let (oldLabels, newLabels) = (try contents(oldFile, labels: true), try contents(newFile, labels: true))
            let shard = report.shards.first { $0.index == index }
            #expect(Int64(new.subtracting(old).count) == shard?.added ?? 0, "shard \(index)")
            #expect(Int64(old.subtracting(new).count) == shard?.removed ?? 0, "shard \(index)")
            // A label line is number<TAB>label: a changed label is one line gone and one new.
            #expect(Int64(newLabels.subtracting(oldLabels).count) == shard?.labelsAdded ?? 0, "shard \(index)")
            #expect(Int64(oldLabels.subtracting(newLabels).count) == shard?.labelsRemoved ?? 0, "shard \(index)")
            total.added += shard?.added ?? 0
            total.removed += shard?.removed ?? 0
        }
        #expect(report.added == total.added && report.removed == total.removed)

        // The same sets, published: generation 1 against generation 2.
        #expect(try runBlocklist(["keys", "create", "keys"], in: dir.path).status == 0)
        for set in ["A", "B"] {
            let published = try runBlocklist(
                ["publish", set, "--key", "keys/signing.key", "--to", "pub"],
                in: dir.path
            )
            #expect(published.status == 0, "\(published.stderr)")
        }
        let generations = try runBlocklist(["diff", "pub/1", "pub/2", "--json"], in: dir.path)
        #expect(generations.status == 0, "\(generations.stderr)")
        let published = try JSONDecoder().decode(Report.self, from: Data(generations.stdout.utf8))
        #expect(published.added == report.added && published.removed == report.removed)
        #expect(published.labelsAdded == report.labelsAdded && published.labelsRemoved == report.labelsRemoved)
    }

    /// What is not a set is named; nothing is printed to stdout.
    @Test func whatIsNotASetIsNamed() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("empty"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("file")))
        // A publication that holds generations 3 and 4 (publish removed the others).
        for held in ["pub/3", "pub/4"] {
            try FileManager.default.createDirectory(atPath: dir.file(held), withIntermediateDirectories: true)
        }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: dir.file("pub/timestamp.json")))
        for (arguments, fault) in [
            (["diff", "missing", "empty"], "missing does not exist"),
            (
                ["diff", "pub/1", "pub/4"],
                "pub/1 does not exist: the publication pub holds generations 3, 4 (publish removes"
            ),
            (
                ["diff", "pub/9", "pub/4"],
                "pub/9 does not exist: the publication pub holds generations 3, 4 (it was never published)"
            ),
            (["diff", "empty", "empty"], "no manifest.json and no shard files"),
            (["diff", "file", "empty"], "file is not a directory"),
        ] {
            let result = try runBlocklist(arguments, in: dir.path)
            #expect(result.status == 1 && result.stderr.contains(fault) && result.stdout.isEmpty, "\(result.stderr)")
        }
    }
}
