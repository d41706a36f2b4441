import BenchWorkloads
import Foundation
import HTTPFetch
import TestSupport
import Testing

@testable import BlocklistCore
@testable import Publication
@testable import UpdateCore
@testable import UpdateInstall

/// Publication through the built programs: the update server, the Notification Service
/// Extension's host under a deadline, and kills during an update.
@Suite(.serialized) struct PublicationCommandTests {
    typealias Fixture = PublicationTests.Fixture

    /// A running `blocklist updates serve`, stopped when it goes away.
    final class Server {
        let process = Process()
        let url: String
        init(_ publication: String) throws {
            process.executableURL = URL(fileURLWithPath: productsDirectory + "/blocklist")
            process.arguments = ["updates", "serve", publication, "--port", "0"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            var line: [UInt8] = []
            while !line.contains(0x0A) {
                let data = pipe.fileHandleForReading.availableData
                if data.isEmpty { break }
                line += data
            }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("listening on ") else { throw UpdateError(.malformed, "the server said \(text)") }
            url = String(text.dropFirst("listening on ".count).prefix { $0 != "\n" })
        }
        deinit {
            process.terminate()
            process.waitUntilExit()
        }
    }

    @Test func updateOverHTTPTakesOneRequestAndTheServerAnswers304() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(3_000, seed: 1), PublicationTests.random(3_000, seed: 2)])
        let server = try Server(fixture.publication)
        let reader = try HTTPPublication(server.url, deadline: HTTPFetch.now() + 20_000_000_000)
        let first = try UpdateInstaller.update(
            from: reader,
            trust: try fixture.trust,
            appGroup: fixture.appGroup,
            now: PublicationTests.now,
            sync: false
        )
        #expect(first.generation == 1 && reader.requests == 1, "\(reader.requests) requests")
        try fixture.publish([PublicationTests.random(3_100, seed: 1), PublicationTests.random(3_000, seed: 2)])
        let again = try HTTPPublication(server.url, deadline: HTTPFetch.now() + 20_000_000_000)
        let second = try UpdateInstaller.update(
            from: again,
            trust: try fixture.trust,
            appGroup: fixture.appGroup,
            now: PublicationTests.now,
            sync: false
        )
        #expect(second.generation == 2 && second.deltas == 1 && again.requests == 1)
        #expect(second.bytesDownloaded == again.bytesReceived && second.bytesDownloaded < 4_000)
        #expect(try fixture.installedNumbers()[0] == PublicationTests.expand(PublicationTests.random(3_100, seed: 1)))

        let timestamp = try HTTPURL(server.url + "timestamp.json")
        let head = try HTTPFetch.get(timestamp, deadline: HTTPFetch.now() + 5_000_000_000, maximumBodyBytes: 1 << 20) {
            _ in
        }
        let etag = try #require(head.value(of: "ETag"))
        let cached = try HTTPFetch.get(
            timestamp,
            headers: [("If-None-Match", etag)],
            deadline: HTTPFetch.now() + 5_000_000_000,
            maximumBodyBytes: 1 << 20
        ) { _ in }
        #expect(cached.status == 304)
        for hostile in ["../keys/signing.key", ".publish.lock", "%2e%2e/keys/root.json", "2/../../keys/push.key"] {
            let answer = try HTTPFetch.get(
                try HTTPURL(server.url + hostile),
                deadline: HTTPFetch.now() + 5_000_000_000,
                maximumBodyBytes: 1 << 20
            ) { _ in }
            #expect(answer.status == 404, "\(hostile) answered \(answer.status)")
        }
    }

    @Test func theDeadlineDeliversABestAttemptAndLeavesTheAppGroup() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(2_000, seed: 1)])
        _ = try fixture.update()
        // A server that accepts and never answers.
        let tarpit = Process()
        tarpit.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tarpit.arguments = [
            "python3", "-c",
            "import socket,time,sys\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(8)\nprint(s.getsockname()[1], flush=True)\nconns=[]\nwhile True:\n  c,_=s.accept(); conns.append(c)",
        ]
        let pipe = Pipe()
        tarpit.standardOutput = pipe
        // Not the test's own error stream: swift test waits for every holder of it to close it.
        tarpit.standardError = FileHandle.nullDevice
        tarpit.standardInput = FileHandle.nullDevice
        try tarpit.run()
        defer {
            // SIGKILL: the test runner's children may inherit SIGTERM blocked.
            kill(tarpit.processIdentifier, SIGKILL)
            tarpit.waitUntilExit()
        }
        let port = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let payload = fixture.directory.file("push.json")
        try writeBytes(
            Array(
                #"{"aps":{"alert":{"title":"t","body":"b"},"mutable-content":1},"blocklist":{"generation":2,"url":"http://127.0.0.1:\#(port)/"}}"#
                    .utf8
            ),
            to: payload
        )
        let before = try fixture.appGroupState()
        // The extension is ended at its deadline, its download directory (in TMPDIR) with it.
        let result = try runBlocklist(
            [
                "push", "deliver", payload, "--app-group", fixture.appGroup, "--trust", fixture.keys + "/root.json",
                "--deadline", "1",
            ],
            environment: ["TMPDIR": fixture.directory.path]
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("The update finishes when you open the app."), "\(result.stdout)")
        #expect(try fixture.appGroupState() == before)
    }

    /// Under .ci/run only: a large download is a 1,000,000-number publication.
    @Test(.enabled(if: SeededRuns.long)) func cellularDefersALargeDownloadAndWifiTakesIt() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(1_000, seed: 1)])
        _ = try fixture.update()
        try fixture.publish([PublicationTests.random(1_000_000, seed: 5)])
        let payload = try PushPayload.make(
            publication: fixture.publication,
            signingKey: try KeyFiles.signingKey(at: fixture.keys + "/signing.key"),
            pushKey: nil,
            url: "http://updates.example/pub/",
            now: PublicationTests.now
        ).json
        let before = try fixture.appGroupState()
        func deliver(_ network: NotificationService.Network) throws -> NotificationService.Delivery {
            try NotificationService.handle(
                payload: payload,
                appGroup: fixture.appGroup,
                trust: try fixture.trust,
                pushKey: nil,
                network: network,
                now: PublicationTests.now,
                isCancelled: { false },
                reader: { _ in DirectoryPublication(directory: fixture.publication) }
            )
        }
        let cellular = try deliver(.cellular)
        #expect(cellular.result == "deferred", "\(cellular.message ?? "")")
        #expect(try fixture.appGroupState() == before)
        let wifi = try deliver(.wifi)
        #expect(wifi.result == "updated" && wifi.outcome?.generation == 2)
    }

    @Test func aKillDuringAnUpdateLeavesTheOldGenerationOrTheNew() throws {
        let fixture = try Fixture()
        let old = (1...4).map { PublicationTests.random(30_000, seed: UInt64($0)) }
        let new = (1...4).map { PublicationTests.random(40_000, seed: UInt64($0) + 100) }
        try fixture.publish(old)
        _ = try fixture.update()
        try fixture.publish(new)
        let saved = fixture.directory.file("app-generation-1")
        try FileManager.default.copyItem(atPath: fixture.appGroup, toPath: saved)
        var generator = SplitMix64(state: 3)
        var outcomes: [UInt64: Int] = [:]
        for attempt in 0..<SeededRuns.count(16, short: 3) {
            // A killed update leaves its download directory in TMPDIR (iOS purges an extension's
            // temporary directory): give it one inside the fixture.
            let process = try RunningBlocklist(
                [
                    "update", "--from", fixture.publication, "--trust", fixture.keys + "/root.json", "--app-group",
                    fixture.appGroup,
                ],
                environment: ["TMPDIR": fixture.directory.path]
            )
            // The first kill comes at once, before any commit, so that even the short run (3
            // attempts, which a fast machine may all finish) sees a kill leave the old generation.
            let delay = UInt32.random(in: 0...400_000, using: &generator)
            usleep(attempt == 0 ? 0 : delay)
            kill(process.process.processIdentifier, SIGKILL)
            _ = try process.wait()
            let generation = try UpdateInstaller.installed(in: fixture.appGroup).publication.generation
            outcomes[generation, default: 0] += 1
            let numbers = try fixture.installedNumbers()
            switch generation {
            case 1: #expect(numbers == old.map(PublicationTests.expand), "attempt \(attempt)")
            case 2: #expect(numbers == new.map(PublicationTests.expand), "attempt \(attempt)")
            default: Issue.record("attempt \(attempt) left generation \(generation)")
            }
            // Back to generation 1 for the next attempt; a later update then tidies what a kill left.
            if generation == 2 {
                try FileManager.default.removeItem(atPath: fixture.appGroup)
                try FileManager.default.copyItem(atPath: saved, toPath: fixture.appGroup)
            }
        }
        #expect(outcomes[1, default: 0] > 0, "\(outcomes)")
        // After any kill, an update completes.
        #expect(try fixture.update().generation == 2)
        #expect(try fixture.installedNumbers() == new.map(PublicationTests.expand))
    }
}
