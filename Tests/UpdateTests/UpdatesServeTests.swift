import BenchWorkloads
import BlocklistCore
import Foundation
import HTTPFetch
import TestSupport
import Testing

@testable import Publication
@testable import UpdateCore
@testable import UpdateInstall

/// `updates serve` in the field (issue 27): Range answers for resumable downloads, bundles made
/// once and never over what a phone takes, and memory that stays flat under slow readers.
@Suite(.serialized) struct UpdatesServeTests {
    typealias Fixture = PublicationTests.Fixture
    typealias Server = PublicationCommandTests.Server

    /// One GET on a connection of its own: the status, the headers and the body.
    static func get(_ url: String, _ headers: [(String, String)] = []) throws -> (head: HTTPResponseHead, body: [UInt8])
    {
        var body: [UInt8] = []
        let head = try HTTPFetch.get(
            try HTTPURL(url),
            headers: headers,
            deadline: HTTPFetch.now() + 10_000_000_000,
            maximumBodyBytes: 64 << 20
        ) { body += $0 }
        return (head, body)
    }

    /// A publication with `9/shard-01.blk`, 10,000 seeded bytes, beside it (named as publish
    /// names files, the only names served), and its server; the
    /// publication is removed when this goes away.
    final class Served {
        let fixture = try! Fixture()
        let file: [UInt8]
        let server: Server
        var url: String { server.url + "9/shard-01.blk" }

        init() throws {
            try fixture.publish([PublicationTests.random(2_000, seed: 1)])
            var generator = SplitMix64(state: 27)
            file = (0..<10_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try FileManager.default.createDirectory(
                atPath: fixture.publication + "/9",
                withIntermediateDirectories: true
            )
            try writeBytes(file, to: fixture.publication + "/9/shard-01.blk")
            server = try Server(fixture.publication)
        }
    }

    @Test(
        arguments: [
            ("bytes=0-9", 206, 0..<10),
            ("bytes=9990-", 206, 9990..<10_000),
            ("bytes=-25", 206, 9975..<10_000),
            ("bytes=100-100", 206, 100..<101),
            ("bytes=9000-20000", 206, 9000..<10_000),
            ("bytes=-20000", 206, 0..<10_000),
            ("BYTES=5-6", 206, 5..<7),
            ("bytes=0-1,5-6", 200, 0..<10_000),
            ("bytes=9-0", 200, 0..<10_000),
            ("bytes=x-", 200, 0..<10_000),
            ("items=0-9", 200, 0..<10_000),
        ]
    )
    func oneRangeIsAnswered206WithItsContentRange(range: String, status: Int, slice: Range<Int>) throws {
        let served = try Served()
        let file = served.file
        let answer = try Self.get(served.url, [("Range", range)])
        #expect(answer.head.status == status, "\(range) answered \(answer.head.status)")
        #expect(answer.body == Array(file[slice]), "\(range)")
        #expect(answer.head.value(of: "Accept-Ranges") == "bytes")
        let contentRange = status == 206 ? "bytes \(slice.lowerBound)-\(slice.upperBound - 1)/10000" : nil
        #expect(answer.head.value(of: "Content-Range") == contentRange, "\(range)")
    }

    /// HEAD (a CDN's origin check, `curl -I`): the status and headers a GET gets, its length, no
    /// body; a file that is not served is 404 as with GET. Before, every HEAD was answered 404.
    @Test func headAnswersAsGetWithoutTheBody() throws {
        let served = try Served()
        for (path, status) in [
            ("9/shard-01.blk", "200"), ("timestamp.json", "200"), ("nope.txt", "404"), ("v1/update?from=0", "200"),
        ] {
            let get = try Self.get(served.server.url + path)
            let head = try runProcess("/usr/bin/env", ["curl", "-sS", "-I", served.server.url + path])
            let text = String(decoding: head.stdout, as: UTF8.self).lowercased()
            #expect(head.status == 0 && text.hasPrefix("http/1.1 \(status)"), "\(path): \(text)")
            #expect(text.contains("content-length: \(get.body.count)\r\n"), "\(path): \(text)")
            if let etag = get.head.value(of: "ETag") { #expect(text.contains("etag: \(etag.lowercased())")) }
        }
        let root = try runProcess("/usr/bin/env", ["curl", "-sS", "-I", served.server.url])
        #expect(String(decoding: root.stdout, as: UTF8.self).lowercased().contains("location: /index.html"))
    }

    @Test(arguments: ["bytes=10000-", "bytes=10000-10005", "bytes=-0", "bytes=99999999999999999999-"])
    func aRangePastTheEndIsAnswered416WithTheLength(range: String) throws {
        let served = try Served()
        let answer = try Self.get(served.url, [("Range", range)])
        #expect(answer.head.status == 416, "\(range) answered \(answer.head.status)")
        #expect(answer.head.value(of: "Content-Range") == "bytes */10000")
        #expect(String(decoding: answer.body, as: UTF8.self).contains("shard-01.blk, which is 10,000 bytes"))
    }

    @Test func ifRangeServesThePartOnlyForTheSameEntityTag() throws {
        let served = try Served()
        let file = served.file
        let whole = try Self.get(served.url)
        #expect(whole.head.status == 200 && whole.body == file)
        let etag = try #require(whole.head.value(of: "ETag"))
        let same = try Self.get(served.url, [("Range", "bytes=10-19"), ("If-Range", etag)])
        #expect(same.head.status == 206 && same.body == Array(file[10..<20]))
        for other in ["\"0-0-0\"", "W/" + etag, "Thu, 26 Nov 2026 08:00:00 GMT"] {
            let changed = try Self.get(served.url, [("Range", "bytes=10-19"), ("If-Range", other)])
            #expect(changed.head.status == 200 && changed.body == file, "If-Range \(other)")
        }
        // If-None-Match comes first (RFC 9110 §13.2.2).
        let cached = try Self.get(served.url, [("Range", "bytes=10-19"), ("If-None-Match", etag)])
        #expect(cached.head.status == 304)
    }

    /// A FIFO, a directory or a symlink in the publication is not a file to serve: 404 at once
    /// (opening a FIFO without O_NONBLOCK would wait for a writer forever).
    @Test func onlyRegularFilesAreServed() throws {
        let served = try Served()
        let publication = served.fixture.publication
        for directory in ["7", "8"] {
            try FileManager.default.createDirectory(
                atPath: publication + "/" + directory,
                withIntermediateDirectories: true
            )
        }
        #expect(mkfifo(publication + "/7/shard-01.blk", 0o644) == 0)
        try FileManager.default.createSymbolicLink(
            atPath: publication + "/8/shard-01.blk",
            withDestinationPath: "../9/shard-01.blk"
        )
        for path in ["7/shard-01.blk", "8/shard-01.blk", "1", "9/shard-02.blk"] {
            let answer = try Self.get(served.server.url + path)
            #expect(answer.head.status == 404, "\(path) answered \(answer.head.status)")
        }
    }

    /// Seeded random Range headers, well-formed or not, against slicing the file.
    @Test func rangeAnswersMatchSlicesOfTheFile() throws {
        let served = try Served()
        let file = served.file
        var random = SplitMix64(state: 2027)
        let length = file.count
        func position() -> Int {
            [0, 1, length - 1, length, length + 1, Int.random(in: 0..<(2 * length), using: &random)].randomElement(
                using: &random
            )!
        }
        for _ in 0..<300 {
            let (a, b) = (position(), position())
            let spec: String
            switch Int.random(in: 0..<5, using: &random) {
            case 0: spec = "\(a)-\(b)"
            case 1: spec = "\(a)-"
            case 2: spec = "-\(a)"
            case 3: spec = "\(a)-\(b), \(b)-"
            default: spec = " \(a) - \(b)"
            }
            let header = "bytes=" + spec
            let answer = try Self.get(served.url, [("Range", header)])
            // The oracle: RFC 9110 §14.1.2 by hand, slicing the bytes.
            var expected: (status: Int, body: [UInt8]) = (200, file)
            let parts = spec.split(separator: "-", omittingEmptySubsequences: false)
            if !spec.contains(","), !spec.contains(" "), parts.count == 2 {
                if parts[0].isEmpty, let n = Int(parts[1]) {
                    expected = n == 0 ? (416, []) : (206, Array(file[max(0, length - n)...]))
                } else if let first = Int(parts[0]), parts[1].isEmpty {
                    expected = first < length ? (206, Array(file[first...])) : (416, [])
                } else if let first = Int(parts[0]), let last = Int(parts[1]), first <= last {
                    expected = first < length ? (206, Array(file[first...min(last, length - 1)])) : (416, [])
                }
            }
            #expect(answer.head.status == expected.status, "\(header) answered \(answer.head.status)")
            if expected.status != 416 { #expect(answer.body == expected.body, "\(header)") }
        }
    }

    @Test func composeKnowsTheBundlesSizeBeforeReadingAShard() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(20_000, seed: 1), PublicationTests.random(20_000, seed: 2)])
        guard
            case .bundle(let bundle) = try UpdateBundle.compose(publication: fixture.publication, from: 0, limit: .max)
        else {
            Issue.record("no bundle under an unlimited limit")
            return
        }
        guard case .bundle = try UpdateBundle.compose(publication: fixture.publication, from: 0, limit: bundle.count)
        else {
            Issue.record("a bundle of exactly the limit was refused")
            return
        }
        // Without its shards, the size is still known: none is read.
        try FileManager.default.removeItem(atPath: fixture.publication + "/1/shard-01.blk")
        let over = try UpdateBundle.compose(publication: fixture.publication, from: 0, limit: bundle.count - 1)
        guard case .tooLarge(let bytes) = over else {
            Issue.record("a bundle over the limit was made")
            return
        }
        #expect(bytes == bundle.count)
    }

    /// A bundle is made once per (from, generation): the server answers the same bytes after a
    /// shard it holds is removed, and a new publish (a new timestamp.json) makes the next one.
    @Test func aBundleIsMadeOnceAndRemadeAfterAPublish() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(2_000, seed: 1), PublicationTests.random(2_000, seed: 2)])
        let server = try Server(fixture.publication)
        let first = try Self.get(server.url + "v1/update?from=0")
        #expect(first.head.status == 200)
        let shard = fixture.publication + "/1/shard-01.blk"
        let saved = try readBytes(shard)
        try FileManager.default.removeItem(atPath: shard)
        #expect(try Self.get(server.url + "v1/update?from=0").body == first.body)
        // A generation past the newest gets the newest's bundle: the timestamp and the root.
        let ahead = try Self.get(server.url + "v1/update?from=12345")
        #expect(ahead.body == (try Self.get(server.url + "v1/update?from=1")).body)
        #expect(
            try UpdateBundle.decode(ahead.body, what: "the bundle").keys.sorted() == ["1.root.json", "timestamp.json"]
        )
        try writeBytes(saved, to: shard)
        try fixture.publish([PublicationTests.random(2_100, seed: 1), PublicationTests.random(2_000, seed: 2)])
        let second = try Self.get(server.url + "v1/update?from=1")
        #expect(second.head.status == 200)
        let files = try UpdateBundle.decode(second.body, what: "the bundle")
        // A phone at generation 1 gets the update file alone (and the roots).
        #expect(files.keys.sorted() == ["1.root.json", "from-1.push"], "\(files.keys.sorted())")
        let reader = try HTTPPublication(server.url, deadline: HTTPFetch.now() + 30_000_000_000)
        _ = try fixture.update(from: try HTTPPublication(server.url, deadline: HTTPFetch.now() + 30_000_000_000))
        try fixture.publish([PublicationTests.random(2_150, seed: 1), PublicationTests.random(2_000, seed: 2)])
        let third = try fixture.update(from: reader)
        #expect(third.generation == 3 && third.deltas == 1 && reader.requests == 1, "\(reader.requests) requests")
        #expect(try fixture.installedNumbers()[0] == PublicationTests.expand(PublicationTests.random(2_150, seed: 1)))
    }

    /// The server never builds what a phone refuses: over 1 MiB, 404, and the phone goes file by file.
    /// Under .ci/run only: a bundle over the limit is four 300,000-number shards.
    @Test(.enabled(if: SeededRuns.long)) func aBundleOverTheLimitIs404AndThePhoneFetchesFileByFile() throws {
        let fixture = try Fixture()
        try fixture.publish((1...4).map { PublicationTests.random(300_000, seed: UInt64($0)) })
        let server = try Server(fixture.publication)
        let answer = try Self.get(server.url + "v1/update?from=0")
        #expect(answer.head.status == 404)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("over 1,048,576 bytes"))
        let reader = try HTTPPublication(server.url, deadline: HTTPFetch.now() + 30_000_000_000)
        let outcome = try fixture.update(from: reader)
        #expect(outcome.generation == 1 && reader.requests > 1)
    }

    /// Only the files publish writes for phones are served: a key directory or a signing key
    /// copied into the publication by mistake, notes and backups answer 404 (the field test's
    /// case 34).
    @Test func onlyPublishedFilesAreServedNeverAKey() throws {
        let served = try Served()
        let publication = served.fixture.publication
        try FileManager.default.copyItem(atPath: served.fixture.keys, toPath: publication + "/keys")
        try FileManager.default.copyItem(
            atPath: served.fixture.keys + "/signing.key",
            toPath: publication + "/signing.key"
        )
        try writeBytes(Array("notes".utf8), to: publication + "/1/notes.txt")
        for path in ["keys/signing.key", "signing.key", "keys/push.key", "1/notes.txt", "keys/root.json"] {
            let answer = try Self.get(served.server.url + path)
            #expect(answer.head.status == 404, "\(path) answered \(answer.head.status)")
        }
        for path in ["timestamp.json", "root.json", "1.root.json", "1/snapshot.json", "1/shard-01.blk"] {
            let answer = try Self.get(served.server.url + path)
            #expect(answer.head.status == 200, "\(path) answered \(answer.head.status)")
        }
        let table: [(String, Bool)] = [
            ("timestamp.json", true), ("2.root.json", true), ("12/from-11/shard-0042.delta", true),
            ("3/shard-7.blk", true), ("x.root.json", false), ("3/shard-.blk", false), ("3/keys", false),
            ("3/from-x/shard-01.delta", false), ("3/4/shard-01.blk", false), ("signing.key", false), ("", false),
            ("from-3.push", true), ("from-03.push", false), ("from-.push", false), ("3/from-2.push", false),
        ]
        for (path, expected) in table {
            #expect(Publisher.isPublishedFile(path) == expected, "\(path)")
        }
    }
}
