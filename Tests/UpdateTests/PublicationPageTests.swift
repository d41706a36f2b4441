import BlocklistCore
import Foundation
import TestSupport
import Testing

@testable import Publication

/// The publication's page (`index.html`), as a publisher and a browser meet it: written by every
/// publish, its figures those of `publication status --json` (checked by
/// Scripts/publication-page-check.py, a reader written apart, on the file and on the DOM headless
/// Chromium makes of it), served by `updates serve`, and never written over a file publish did not write.
@Suite(.serialized) struct PublicationPageTests {
    /// Chromium, when installed (`.ci/run` installs it; `BLOCKLIST_REQUIRE_CHROMIUM=1` makes its absence a failure).
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let requireChromium = ProcessInfo.processInfo.environment["BLOCKLIST_REQUIRE_CHROMIUM"] == "1"

    /// Four generations of a set that grows, loses numbers and changes labels, published as the
    /// field publishes: generate, then publish, through the built program.
    static func publishGenerations(in directory: TemporaryDirectory) throws {
        #expect(try runBlocklist(["keys", "create", "keys"], in: directory.path).status == 0)
        var random = SplitMix64(state: 30)
        var numbers = Set<Int>()
        for generation in 1...4 {
            for _ in 0..<(3_000 * generation) { numbers.insert(Int(random.next() % 2_500_000)) }
            if generation > 1 {
                let held = numbers.sorted()
                for _ in 0..<400 { numbers.remove(held[Int(random.next() % UInt64(held.count))]) }
            }
            let lines = numbers.sorted().map { "+8270\(String(1_000_000 + $0).dropFirst())\n" }.joined()
            try writeBytes(Array(lines.utf8), to: directory.file("numbers.txt"))
            let labels = (0..<(5 + generation)).map { "+82711\(String(100_000 + $0).dropFirst()),Caller \($0 % 3)\n" }
            try writeBytes(Array(labels.joined().utf8), to: directory.file("labels.csv"))
            let generate = try runBlocklist(
                [
                    "generate", "--numbers", "numbers.txt", "--labels", "labels.csv", "--capacity", "12000", "-o",
                    "set", "--no-sync",
                ],
                in: directory.path
            )
            #expect(generate.status == 0, "\(generate.stderr)")
            let publish = try runBlocklist(
                ["publish", "set", "--key", "keys/signing.key", "--to", "pub", "--json"],
                in: directory.path
            )
            #expect(publish.status == 0, "\(publish.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(publish.stdout.utf8)) as? [String: Any]
            #expect(report?["page"] as? String == "pub/index.html", "\(publish.stdout)")
        }
    }

    /// Runs the checker on `page` against `status`; its output and whether it passed.
    static func check(_ page: String, against status: String) throws -> (passed: Bool, output: String) {
        let result = try runProcess(
            "/usr/bin/env",
            ["python3", packageRoot.path + "/Scripts/publication-page-check.py", page, status]
        )
        return (result.status == 0, String(decoding: result.stdout, as: UTF8.self))
    }

    @Test func thePageShowsWhatStatusSaysInTheFileAndInABrowser() throws {
        let directory = try TemporaryDirectory()
        try Self.publishGenerations(in: directory)
        let status = try runBlocklist(["publication", "status", "pub", "--json"], in: directory.path)
        #expect(status.status == 0)
        try writeBytes(Array(status.stdout.utf8), to: directory.file("status.json"))
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let generations = json?["generations"] as? [[String: Any]] ?? []
        // --keep 3 (the default) holds the newest three and the one before them until the next publish.
        #expect(generations.map { $0["generation"] as? Int } == [1, 2, 3, 4], "\(status.stdout)")
        #expect(
            generations.dropFirst().allSatisfy { ($0["added"] as? Int ?? 0) > 0 && ($0["removed"] as? Int ?? 0) > 0 }
        )
        #expect(generations.dropFirst().contains { ($0["deltaBytes"] as? Int ?? 0) > 0 }, "no delta to chart")

        // What each generation changed, against `diff` (SetDiff streams both generations
        // whole; the status reads only the shards whose digests differ).
        for generation in generations.dropFirst() {
            let number = generation["generation"] as? Int ?? 0
            let previous = generation["previous"] as? Int ?? 0
            let diff = try runBlocklist(["diff", "pub/\(previous)", "pub/\(number)", "--json"], in: directory.path)
            let totals = try JSONSerialization.jsonObject(with: Data(diff.stdout.utf8)) as? [String: Any]
            for field in ["added", "removed", "labelsAdded", "labelsRemoved"] {
                #expect(
                    totals?[field] as? Int == generation[field] as? Int,
                    "generation \(number) \(field): diff \(totals?[field] ?? "none"), status \(generation[field] ?? "none")"
                )
            }
            let changed = (totals?["shards"] as? [[String: Any]] ?? []).filter { shard in
                ["added", "removed", "labelsAdded", "labelsRemoved"].contains { (shard[$0] as? Int ?? 0) > 0 }
            }.compactMap { $0["index"] as? Int }
            #expect(changed == generation["changedShards"] as? [Int], "generation \(number)")
        }

        let page = directory.file("pub/index.html")
        let fromFile = try Self.check(page, against: directory.file("status.json"))
        #expect(fromFile.passed, "\(fromFile.output)")

        // The checker fails on a page whose figure is wrong: one data-value and its text changed.
        var text = String(decoding: try readBytes(page), as: UTF8.self)
        let added = "\(generations[3]["added"] as? Int ?? 0)"
        text = text.replacingOccurrences(
            of: "data-field=\"added\" data-value=\"\(added)\"",
            with: "data-field=\"added\" data-value=\"\(added)1\""
        )
        try writeBytes(Array(text.utf8), to: directory.file("wrong.html"))
        let wrong = try Self.check(directory.file("wrong.html"), against: directory.file("status.json"))
        #expect(!wrong.passed && wrong.output.contains("added"), "\(wrong.output)")

        guard let chromium = Self.chromium else {
            #expect(!Self.requireChromium, "BLOCKLIST_REQUIRE_CHROMIUM=1 and no Chromium in /usr/bin")
            return
        }
        // Chromium writes a profile, caches and crash settings: all of them in the test's own
        // directory, never the home directory (.ci/run checks that a test run leaves it as it was).
        let home = directory.file("home")
        let arguments = [
            "HOME=" + home, "XDG_CONFIG_HOME=" + home + "/config", "XDG_CACHE_HOME=" + home + "/cache", chromium,
            "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + directory.file("profile"),
        ]
        let dom = try runProcess("/usr/bin/env", arguments + ["--dump-dom", "file://" + page])
        #expect(dom.status == 0)
        try writeBytes(Array(dom.stdout), to: directory.file("dom.html"))
        let fromBrowser = try Self.check(directory.file("dom.html"), against: directory.file("status.json"))
        #expect(fromBrowser.passed, "\(fromBrowser.output)")
        let shot = try runProcess(
            "/usr/bin/env",
            arguments + ["--screenshot=" + directory.file("page.png"), "--window-size=1000,1400", "file://" + page]
        )
        #expect(shot.status == 0)
        let png = try readBytes(directory.file("page.png"))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000, "\(png.count) bytes")
    }

    @Test func shardRunsAndDurationsReadAsPeopleSayThem() {
        #expect(PublicationPage.ranges([]) == "none")
        #expect(PublicationPage.ranges([4]) == "4")
        #expect(PublicationPage.ranges([1, 2, 3, 5, 7, 8]) == "1–3, 5, 7–8")
        #expect(PublicationPage.ranges(Array(1...50)) == "1–50")
        #expect(PublicationStatus.formatDuration(30 * 86_400 - 9) == "in 30 days")
        #expect(PublicationStatus.formatDuration(86_391) == "in 24 hours")
        #expect(PublicationStatus.formatDuration(60) == "in 1 minute")
        #expect(PublicationStatus.formatDuration(-61) == "expired 1 minute ago")
        #expect(PublicationStatus.formatDuration(1) == "in 1 second")
    }

    /// The places people point --to by mistake are named as what they are, and nothing is written:
    /// a set, a key directory, and a generation of the publication (PUBDIR/N).
    @Test func aSetOrAKeyDirectoryIsNotAPublication() throws {
        let directory = try TemporaryDirectory()
        try Self.publishGenerations(in: directory)
        for (target, words) in [
            ("set", "set is a shard set"), ("keys", "keys is a key directory"),
            ("pub/1", "pub/1 is generation 1 of the publication pub: give --to pub"),
            ("pub/1/", "pub/1/ is generation 1 of the publication pub: give --to pub"),
        ] {
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.file(target)).sorted()
            let result = try runBlocklist(
                ["publish", "set", "--key", "keys/signing.key", "--to", target],
                in: directory.path
            )
            #expect(result.status == 1 && result.stderr.contains(words), "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file(target)).sorted() == before)
        }
    }

    /// update's trust root comes from --trust: a file that cannot be read, or is not a root (a
    /// key given by mistake), is named with the option.
    @Test func aWrongTrustRootIsNamedWithItsOption() throws {
        let directory = try TemporaryDirectory()
        try Self.publishGenerations(in: directory)
        for (trust, words) in [
            ("nosuch", "The trust root (--trust) cannot be read"),
            ("keys/signing.key", "the trust root keys/signing.key (--trust)"),
        ] {
            let result = try runBlocklist(
                ["update", "--from", "pub", "--trust", trust, "--app-group", "app"],
                in: directory.path
            )
            #expect(result.status != 0 && result.stderr.contains(words), "\(trust): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("app")))
        }
    }

    @Test func aPageSomeoneElseWroteIsLeftAndNamed() throws {
        let directory = try TemporaryDirectory()
        try Self.publishGenerations(in: directory)
        // Replaced by hand: the next publish leaves it, says so, and still publishes.
        let mine = Array("<html>my own page</html>\n".utf8)
        let page = directory.file("pub/index.html")
        try FileManager.default.removeItem(atPath: page)
        try writeBytes(mine, to: page)
        let publish = try runBlocklist(
            ["publish", "set", "--key", "keys/signing.key", "--to", "pub"],
            in: directory.path
        )
        #expect(publish.status == 0)
        #expect(publish.stderr.contains("was not written by blocklist publish"), "\(publish.stderr)")
        #expect(try readBytes(page) == mine)
        // A new publication directory that already holds someone's index.html is refused whole.
        try FileManager.default.createDirectory(atPath: directory.file("site"), withIntermediateDirectories: false)
        try writeBytes(mine, to: directory.file("site/index.html"))
        let refused = try runBlocklist(
            ["publish", "set", "--key", "keys/signing.key", "--to", "site"],
            in: directory.path
        )
        #expect(refused.status != 0 && refused.stderr.contains("index.html"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("site")) == ["index.html"])
    }

    @Test func theServerServesThePageAtTheRoot() throws {
        let directory = try TemporaryDirectory()
        try Self.publishGenerations(in: directory)
        let server = try PublicationCommandTests.Server(directory.file("pub"))
        let page = try runProcess("/usr/bin/env", ["curl", "-sS", "-L", "-D", "-", server.url + "/"])
        let text = String(decoding: page.stdout, as: UTF8.self)
        #expect(page.status == 0)
        #expect(text.contains("301") && text.lowercased().contains("location: /index.html"), "\(text.prefix(400))")
        #expect(text.lowercased().contains("content-type: text/html; charset=utf-8"), "\(text.prefix(600))")
        #expect(text.contains("<title>Block list publication: generation 4</title>"))
        #expect(text.lowercased().contains("cache-control: no-cache"))
    }
}
