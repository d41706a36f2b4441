import Foundation
import HTTPFetch
import SetStorage
import TestSupport
import Testing

@testable import BlocklistCore
@testable import Publication
@testable import UpdateCore
@testable import UpdateInstall

/// Issue 27: updates from the static hosts and networks phones meet (`Scripts/static-host.py`):
/// S3's 403 and a single-page app's HTML for files that do not exist, hosts that honour Range
/// and hosts that ignore it, downloads that are cut or stop moving, then resume.
@Suite(.serialized) struct StaticHostTests {
    typealias Fixture = PublicationTests.Fixture

    /// `Scripts/static-host.py` serving `root` with `options`, stopped when this goes away.
    final class Host {
        let process = Process()
        let input = Pipe()
        let log = Pipe()
        let url: String

        init(_ root: String, _ options: [String] = []) throws {
            let script = packageRoot.appendingPathComponent("Scripts/static-host.py").path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, root] + options
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = log
            try process.run()
            let line = firstLine(of: output)
            guard let port = UInt16(line) else { throw UpdateError(.malformed, "static-host.py said \(line)") }
            url = "http://127.0.0.1:\(port)/"
        }

        /// The requests logged so far (stops the host).
        func requests() -> [String] {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            let text = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return text.split(separator: "\n").map(String.init)
        }

        deinit {
            try? input.fileHandleForWriting.close()
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }

    static func update(_ fixture: Fixture, from host: Host, stall: UInt64 = 10_000_000_000) throws
        -> UpdateInstaller.Outcome
    {
        try UpdateInstaller.update(
            from: try HTTPPublication(host.url, stallTimeout: stall),
            trust: try fixture.trust,
            appGroup: fixture.appGroup,
            now: PublicationTests.now,
            sync: false
        )
    }

    /// The next root is optional: a host answering 403 or an HTML page for it installs; a
    /// required file behind a 403 fails with the host's answer and the fix.
    @Test(arguments: ["403", "html", "404"])
    func optionalFilesBehindARefusalOrAPageCountAsMissing(missing: String) throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(2_000, seed: 1)])
        let host = try Host(fixture.publication, ["--missing", missing])
        let outcome = try Self.update(fixture, from: host)
        #expect(outcome.generation == 1 && outcome.totalEntries == 2_000)
        let log = host.requests()
        #expect(log.contains { $0.contains("2.root.json") && $0.contains("missing") }, "\(log)")
    }

    @Test func aRequiredFileBehind403FailsWithTheHostsAnswer() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(2_000, seed: 1)])
        try FileManager.default.removeItem(atPath: fixture.publication + "/timestamp.json")
        let host = try Host(fixture.publication, ["--missing", "403"])
        #expect(throws: HTTPFetchError.self) {
            do { _ = try Self.update(fixture, from: host) } catch let error as HTTPFetchError {
                #expect(error.description.contains("403") && error.description.contains("public read"), "\(error)")
                throw error
            }
        }
    }

    /// A download cut short is kept, and the next run asks only for the rest (Range).
    @Test func aCutDownloadResumesWhereItStopped() throws {
        let fixture = try Fixture()
        let shard = PublicationTests.random(150_000, seed: 4)
        try fixture.publish([shard])
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: fixture.publication + "/1/shard-01.blk")[.size] as? Int
        )
        let host = try Host(fixture.publication, ["--cut-after", String(size / 2)])
        #expect(throws: (any Error).self) { _ = try Self.update(fixture, from: host) }
        #expect(try UpdateInstaller.installed(in: fixture.appGroup).publication.generation == 0)
        let second = try Self.update(fixture, from: host)
        #expect(second.generation == 1)
        #expect(try fixture.installedNumbers() == [PublicationTests.expand(shard)])
        let log = host.requests()
        #expect(log.contains { $0.contains("shard-01.blk bytes=\(size / 2)-") && $0.contains("-> 206") }, "\(log)")
        // Only the rest crossed the network the second time (and the metadata).
        #expect(second.bytesDownloaded < Int64(size / 2) + 8_192, "\(second.bytesDownloaded) of \(size)")
        // Nothing is left in the download cache once installed.
        let cache = fixture.appGroup + "/.blocklist-downloads"
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache) == [".blocklist-downloads-marker"])
    }

    /// A phone killed, or out of disk, on its first update (issue 46): the download cache left
    /// empty, with its marker cut short, or with a cached file cut short under its digest's
    /// name; the next update repairs what it made, and installs.
    @Test(arguments: ["empty", "short marker", "short file"]) func aCacheCutShortIsMadeAgain(state: String) throws {
        let fixture = try Fixture()
        let shard = PublicationTests.random(20_000, seed: 46)
        try fixture.publish([shard])
        let cache = fixture.appGroup + "/.blocklist-downloads"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        switch state {
        case "short marker":
            try writeBytes(
                Array(OutputDirectory.downloadsMarkerContent.prefix(5)),
                to: cache + "/.blocklist-downloads-marker"
            )
        case "short file":
            try writeBytes(OutputDirectory.downloadsMarkerContent, to: cache + "/.blocklist-downloads-marker")
            let sum = try runProcess("/usr/bin/sha256sum", [fixture.publication + "/1/shard-01.blk"])
            let digest = String(String(decoding: sum.stdout, as: UTF8.self).prefix(64))
            try writeBytes([1, 2, 3], to: cache + "/" + digest)
        default:
            break
        }
        let host = try Host(fixture.publication, [])
        #expect(try Self.update(fixture, from: host).generation == 1, "\(state)")
        #expect(try fixture.installedNumbers() == [PublicationTests.expand(shard)])
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache) == [".blocklist-downloads-marker"])
    }

    /// An install that does not go through the download cache (from a directory) empties it
    /// all the same: an earlier interrupted run's part is of no use once the set is newer.
    @Test func anInstallFromADirectoryEmptiesTheCache() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(5_000, seed: 47)])
        let cache = fixture.appGroup + "/.blocklist-downloads"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        try writeBytes(OutputDirectory.downloadsMarkerContent, to: cache + "/.blocklist-downloads-marker")
        let stale = String(repeating: "ab", count: 32) + ".part"
        try writeBytes([1, 2, 3], to: cache + "/" + stale)
        try writeBytes([4], to: cache + "/notes.txt")
        let outcome = try UpdateInstaller.update(
            from: DirectoryPublication(directory: fixture.publication),
            trust: try fixture.trust,
            appGroup: fixture.appGroup,
            now: PublicationTests.now,
            sync: false
        )
        #expect(outcome.generation == 1)
        // The part goes; a file of another name, not the cache's, stays.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cache).sorted() == [
                ".blocklist-downloads-marker", "notes.txt",
            ]
        )
    }

    /// The optional `/v1/update` route misbehaving (issue 46) does not stop an update whose
    /// files are all served: it is no bundle, and the files come one by one.
    @Test(arguments: ["cut", "loop", "garbage"]) func aMisbehavingBundleRouteIsPassedOver(fault: String) throws {
        let fixture = try Fixture()
        let shard = PublicationTests.random(5_000, seed: 48)
        try fixture.publish([shard])
        let host = try Host(fixture.publication, ["--bundle-fault", fault])
        #expect(try Self.update(fixture, from: host).generation == 1, "\(fault)")
        #expect(try fixture.installedNumbers() == [PublicationTests.expand(shard)])
        #expect(host.requests().contains { $0.contains("bundle fault") }, "\(fault)")
    }

    /// A network that stops moving stops the update after the stall timeout (not a whole-update
    /// deadline), keeping what arrived; a host that ignores Range then sends it all again.
    @Test func aStalledDownloadStopsAndAHostIgnoringRangeStartsOver() throws {
        let fixture = try Fixture()
        let shard = PublicationTests.random(100_000, seed: 5)
        try fixture.publish([shard])
        let stalling = try Host(fixture.publication, ["--stall-after", "20000"])
        #expect(throws: HTTPFetchError.self) {
            do { _ = try Self.update(fixture, from: stalling, stall: 1_000_000_000) } catch let error as HTTPFetchError
            {
                #expect(error.code == .timeout && error.description.contains("stalled"), "\(error)")
                throw error
            }
        }
        let parts = try FileManager.default.contentsOfDirectory(atPath: fixture.appGroup + "/.blocklist-downloads")
        #expect(parts.contains { $0.hasSuffix(".part") }, "\(parts)")
        let ignoring = try Host(fixture.publication, ["--no-range"])
        let outcome = try Self.update(fixture, from: ignoring)
        #expect(outcome.generation == 1)
        #expect(try fixture.installedNumbers() == [PublicationTests.expand(shard)])
    }

    /// A slow network that keeps moving is never cut off: the update has no whole-update
    /// deadline, only the stall timeout.
    @Test func aSlowButMovingNetworkInstalls() throws {
        let fixture = try Fixture()
        let shard = PublicationTests.random(60_000, seed: 6)
        try fixture.publish([shard])
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: fixture.publication + "/1/shard-01.blk")[.size] as? Int
        )
        // About 2.5 s at this rate, against a stall timeout of 1 s.
        let host = try Host(fixture.publication, ["--rate", String(size * 2 / 5)])
        let outcome = try Self.update(fixture, from: host, stall: 1_000_000_000)
        #expect(outcome.generation == 1 && outcome.totalEntries == Int64(PublicationTests.expand(shard).count))
    }

    /// A host that moved answers 301 for every file, with an absolute path or a relative
    /// reference: the update follows (within five redirects), and installs what the signed
    /// metadata names.
    @Test(arguments: [false, true]) func redirectsAreFollowed(relative: Bool) throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(3_000, seed: 8)])
        // Relative: `Location: ../../1/shard-01.blk`, resolved against the request's URL.
        let host = try Host(
            fixture.publication,
            ["--redirect-from", "/old/"] + (relative ? ["--relative-redirects"] : [])
        )
        let outcome = try UpdateInstaller.update(
            from: try HTTPPublication(host.url + "old/"),
            trust: try fixture.trust,
            appGroup: fixture.appGroup,
            now: PublicationTests.now,
            sync: false
        )
        #expect(outcome.generation == 1)
        let log = host.requests()
        #expect(log.contains { $0.contains("/old/1/shard-01.blk -> 301") }, "\(log)")
    }
}
