import Crypto
import Foundation
import HTTPFetch
import TestSupport
import Testing

@testable import BlocklistCore
@testable import BlocklistSystem
@testable import Publication
@testable import SetStorage
@testable import UpdateCore
@testable import UpdateInstall

/// Issue 27: the publication in the field. Pushes under an expired root, push URLs, every
/// operator mistake that would brick the phones, time passing over an unchanged list, leftovers
/// of killed runs, and what an update reports.
@Suite struct FieldTests {
    typealias Fixture = PublicationTests.Fixture
    static let now = PublicationTests.now
    static let day: Int64 = 86_400

    static func signingKey(_ fixture: Fixture) throws -> Curve25519.Signing.PrivateKey {
        try KeyFiles.signingKey(at: fixture.keys + "/signing.key")
    }

    /// Publishes `shards` with the key directory `keys` (default: the fixture's).
    @discardableResult
    static func publish(
        _ fixture: Fixture,
        _ shards: [[NumberRun]],
        keys: String? = nil,
        keep: Int = 3,
        now: Int64 = FieldTests.now,
        snapshotLifetime: Int64 = 30 * 86_400
    ) throws -> Publisher.Outcome {
        let directory = keys ?? fixture.keys
        try PublicationTests.writeSet(shards, in: fixture.set)
        return try Publisher.publish(
            setDirectory: fixture.set,
            signingKey: try KeyFiles.signingKey(at: directory + "/signing.key"),
            root: try readBytes(directory + "/root.json"),
            rootPath: directory + "/root.json",
            to: fixture.publication,
            keep: keep,
            now: now,
            snapshotLifetime: snapshotLifetime
        )
    }

    /// Expects `body` to throw an `UpdateError` whose message holds every one of `words`.
    static func expectRefusal(_ words: [String], _ body: () throws -> Void) {
        #expect(throws: UpdateError.self) {
            do { try body() } catch let error as UpdateError {
                for word in words { #expect(error.message.contains(word), "\(error.message) lacks \(word)") }
                throw error
            }
        }
    }

    // MARK: - Security

    /// A push under an expired trust root is refused as `update` refuses it, inline or not,
    /// and the App Group stays as it was.
    @Test func aPushUnderAnExpiredRootIsRefused() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(2_000, seed: 1)])
        _ = try fixture.update()
        try fixture.publish([PublicationTests.random(2_050, seed: 1)])
        let made = try PushPayload.make(
            publication: fixture.publication,
            signingKey: try Self.signingKey(fixture),
            pushKey: try KeyFiles.pushKey(at: fixture.keys + "/push.key"),
            url: "http://updates.example/",
            now: PublicationTests.now
        )
        #expect(made.inline)
        let root = try Root.trusted(try fixture.trust, what: "root")
        let late = root.expires + 1
        // The update path refuses it…
        #expect(throws: UpdateError.self) { _ = try fixture.update(now: late) }
        // …and the push path, the same way.
        let before = try fixture.appGroupState()
        let delivery = try NotificationService.handle(
            payload: made.json,
            appGroup: fixture.appGroup,
            trust: try fixture.trust,
            pushKey: try KeyFiles.pushKey(at: fixture.keys + "/push.key"),
            network: .wifi,
            now: late,
            isCancelled: { false },
            reader: { _ in nil }
        )
        #expect(delivery.result == "failed", "\(delivery.result): \(delivery.message ?? "")")
        #expect(delivery.message?.contains("expired") == true, "\(delivery.message ?? "")")
        #expect(try fixture.appGroupState() == before)
        // The sealed push itself does not open under an expired root.
        let inline = try #require(
            {
                guard case .object(let members) = try JSONValue(parsing: made.json, what: "push"),
                    case .object(let blocklist)? = members["blocklist"], case .string(let text)? = blocklist["inline"]
                else { return nil }
                return TextEncodings.base64Decode(Array(text.utf8))
            }() as [UInt8]?
        )
        let pushKey = try KeyFiles.pushKey(at: fixture.keys + "/push.key")
        #expect(throws: UpdateError.self) {
            _ = try InlinePush(opening: inline, pushKey: pushKey, trusting: root, now: late)
        }
        #expect(try InlinePush(opening: inline, pushKey: pushKey, trusting: root, now: Self.now).to == 2)
    }

    /// A push's URL is an http(s) URL, checked by `push payload` and by the phone, and signed:
    /// a local path, another scheme, an unsigned or an edited URL is never used.
    @Test func aPushURLIsSignedAndOnlyHTTP() throws {
        let fixture = try Fixture()
        try fixture.publish([PublicationTests.random(1_000, seed: 1)])
        _ = try fixture.update()
        try fixture.publish([PublicationTests.random(1_010, seed: 1)])
        let key = try Self.signingKey(fixture)
        for bad in [
            fixture.publication, "file:///etc/passwd", "ftp://host/pub", "http://", "http://user@host/", "http://a b/",
            "http://h/pre/?x=1", "http://h/pub#f",
        ] {
            Self.expectRefusal(["push URL"]) {
                _ = try PushPayload.make(
                    publication: fixture.publication,
                    signingKey: key,
                    pushKey: nil,
                    url: bad,
                    now: PublicationTests.now
                )
            }
        }
        for good in ["http://127.0.0.1:8080/", "https://lists.example/pub"] {
            #expect(throws: Never.self) { try PushAnnouncement.checkURL(good) }
        }
        let made = try PushPayload.make(
            publication: fixture.publication,
            signingKey: key,
            pushKey: nil,
            url: "http://updates.example/pub/",
            now: PublicationTests.now
        )
        var asked: [String] = []
        func deliver(_ payload: [UInt8]) throws -> NotificationService.Delivery {
            try NotificationService.handle(
                payload: payload,
                appGroup: fixture.appGroup,
                trust: try fixture.trust,
                pushKey: nil,
                network: .wifi,
                now: Self.now,
                isCancelled: { false },
                reader: { location in
                    asked.append(location)
                    return DirectoryPublication(directory: fixture.publication)
                }
            )
        }
        // An attacker adds an unsigned URL, or edits the signed one: neither is read.
        var text = String(decoding: made.json, as: UTF8.self)
        let unsigned = text.replacingOccurrences(of: "\"announcement\":", with: "\"url\":\"/etc\",\"announcement\":")
        let edited = text.replacingOccurrences(of: "\"signed\":\"", with: "\"signed\":\"A")
        text = text.replacingOccurrences(of: "\"announcement\":", with: "\"ignored\":")
        let before = try fixture.appGroupState()
        for payload in [edited, text] {
            let delivery = try deliver(Array(payload.utf8))
            #expect(delivery.result == "failed", "\(delivery.message ?? "")")
        }
        #expect(asked.isEmpty, "\(asked)")
        #expect(try fixture.appGroupState() == before)
        let delivered = try deliver(Array(unsigned.utf8))
        #expect(delivered.result == "updated" && asked == ["http://updates.example/pub/"], "\(asked)")
    }

    // MARK: - Operator mistakes

    /// Every wrong key is refused before anything is written, naming the mistake and the fix.
    @Test func publishRefusesEveryWrongKeyAndWritesNothing() throws {
        let fixture = try Fixture()
        let shards = [PublicationTests.random(1_000, seed: 1)]
        try Self.publish(fixture, shards)
        let published = try fixture.publicationState()
        // Another publisher's keys (keys create run again, elsewhere).
        let other = fixture.directory.file("other-keys")
        _ = try KeyFiles.create(in: other, now: Self.now)
        Self.expectRefusal(["another publisher", "root version 1"]) { try Self.publish(fixture, shards, keys: other) }
        // The signing key of one directory with the root of another.
        let mixed = fixture.directory.file("mixed")
        try FileManager.default.createDirectory(atPath: mixed, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: other + "/signing.key", toPath: mixed + "/signing.key")
        try FileManager.default.copyItem(atPath: fixture.keys + "/root.json", toPath: mixed + "/root.json")
        Self.expectRefusal(["mixed up"]) { try Self.publish(fixture, shards, keys: mixed) }
        // A rotation two versions up, its predecessor unpublished.
        let second = fixture.directory.file("keys-2")
        let third = fixture.directory.file("keys-3")
        _ = try KeyFiles.rotate(from: fixture.keys, to: second, now: Self.now)
        _ = try KeyFiles.rotate(from: second, to: third, now: Self.now)
        Self.expectRefusal(["root version 3", "from 2 to 2"]) { try Self.publish(fixture, shards, keys: third) }
        // Another publisher's rotation of version 2.
        let foreign = fixture.directory.file("other-keys-2")
        _ = try KeyFiles.rotate(from: other, to: foreign, now: Self.now)
        Self.expectRefusal(["did not sign it", "keys rotate"]) { try Self.publish(fixture, shards, keys: foreign) }
        // No root beside a foreign key.
        try FileManager.default.removeItem(atPath: other + "/root.json")
        Self.expectRefusal(["another publisher's key or a retired one"]) {
            _ = try Publisher.publish(
                setDirectory: fixture.set,
                signingKey: try KeyFiles.signingKey(at: other + "/signing.key"),
                root: nil,
                rootPath: other + "/root.json",
                to: fixture.publication,
                keep: 3,
                now: Self.now
            )
        }
        // An expired root: keys rotate is the fix.
        let late = try Root.trusted(try fixture.trust, what: "root").expires + 1
        Self.expectRefusal(["expired", "keys rotate"]) { try Self.publish(fixture, shards, now: late) }
        // A signing key others can read, as ssh refuses it.
        chmod(fixture.keys + "/signing.key", 0o644)
        Self.expectRefusal(["chmod 600", "signing.key"]) { try Self.publish(fixture, shards) }
        chmod(fixture.keys + "/signing.key", 0o600)
        // None of the refusals wrote anything.
        #expect(try fixture.publicationState() == published)
        // The rotation in order is accepted, and then the old key is refused.
        try Self.publish(fixture, shards, keys: second)
        try Self.publish(fixture, shards, keys: third)
        Self.expectRefusal(["rotated out", "root version 3"]) { try Self.publish(fixture, shards) }
        // Each rotation re-signed the generation with the new key (a phone that follows the
        // rotation would refuse the old key's snapshot), and phones follow.
        #expect(try fixture.update().generation == 3)
    }

    /// The set is verified before anything is signed: an edited spec, swapped shards and a
    /// damaged shard are refused, and the publication is left as it was.
    @Test func publishVerifiesTheSetFirst() throws {
        let fixture = try Fixture()
        let shards = [PublicationTests.random(3_000, seed: 1), PublicationTests.random(3_000, seed: 2)]
        try Self.publish(fixture, shards)
        let published = try fixture.publicationState()
        func attempt(_ damage: (String, String) throws -> Void) throws {
            try PublicationTests.writeSet(shards, in: fixture.set)
            let manifest = fixture.set + "/manifest.json"
            let setName = try #require(
                try FileManager.default.contentsOfDirectory(atPath: fixture.set).first { $0.hasPrefix("set-") }
            )
            try damage(manifest, fixture.set + "/" + setName)
            Self.expectRefusal(["does not verify", "nothing was published"]) {
                _ = try Publisher.publish(
                    setDirectory: fixture.set,
                    signingKey: try Self.signingKey(fixture),
                    root: try readBytes(fixture.keys + "/root.json"),
                    to: fixture.publication,
                    keep: 3,
                    now: Self.now + 60
                )
            }
            #expect(try fixture.publicationState() == published)
        }
        try attempt { manifest, _ in
            let text = try String(contentsOfFile: manifest, encoding: .utf8)
            let edited = text.replacingOccurrences(of: "\"capacity\" : 1999999", with: "\"capacity\" : 5")
            #expect(edited != text)
            try edited.write(toFile: manifest, atomically: false, encoding: .utf8)
        }
        try attempt { _, set in
            try FileManager.default.moveItem(atPath: set + "/shard-01.blk", toPath: set + "/swap")
            try FileManager.default.moveItem(atPath: set + "/shard-02.blk", toPath: set + "/shard-01.blk")
            try FileManager.default.moveItem(atPath: set + "/swap", toPath: set + "/shard-02.blk")
        }
        try attempt { _, set in
            let handle = try #require(FileHandle(forUpdatingAtPath: set + "/shard-02.blk"))
            try handle.seek(toOffset: 200)
            try handle.write(contentsOf: Data([0xFF, 0x00, 0xFF]))
            try handle.close()
        }
    }

    /// A publication that a wrong publish broke (a snapshot another key signed, a damaged shard)
    /// is repaired by the next correct publish, and phones install again.
    @Test func theNextCorrectPublishRepairsABrokenPublication() throws {
        let fixture = try Fixture()
        let shards = [PublicationTests.random(2_000, seed: 1)]
        try Self.publish(fixture, shards)
        // What an older version let through: generation 1 re-signed by another key.
        let stranger = Curve25519.Signing.PrivateKey()
        let path = fixture.publication + "/1/snapshot.json"
        let document = try SignedDocument(parsing: try readBytes(path), what: "snapshot")
        try FileManager.default.removeItem(atPath: path)
        try writeBytes(try SignedDocument.sign(document.payload, with: [stranger]), to: path)
        let directory = try DirectoryHandle(path: fixture.publication)
        try Publisher.writeTimestamp(directory, generation: 1, signingKey: stranger, expires: Self.now + Self.day)
        #expect(throws: UpdateError.self) { _ = try fixture.update() }
        let repaired = try Self.publish(fixture, shards)
        #expect(repaired.published && repaired.generation == 2 && !repaired.resigned.isEmpty)
        #expect(try fixture.update().generation == 2)
        #expect(try fixture.installedNumbers() == shards.map(PublicationTests.expand))
        // A damaged shard of the current generation: republished as well.
        let shard = fixture.publication + "/2/shard-01.blk"
        var bytes = try readBytes(shard)
        bytes[bytes.count - 1] ^= 0xFF
        try FileManager.default.removeItem(atPath: shard)
        try writeBytes(bytes, to: shard)
        let again = try Self.publish(fixture, shards)
        #expect(again.generation == 3 && again.resigned.first?.contains("does not verify") == true, "\(again.resigned)")
    }

    // MARK: - Time

    /// An unchanged list stays installable: a publish once a day re-signs the snapshot before
    /// half its lifetime is gone, and a phone installs it on day 45 as on day 0.
    @Test func anUnchangedListStaysInstallable() throws {
        let fixture = try Fixture()
        let shards = [PublicationTests.random(1_500, seed: 3)]
        try Self.publish(fixture, shards)
        var generations: Set<UInt64> = []
        for day in stride(from: Int64(1), through: 45, by: 1) {
            let outcome = try Self.publish(fixture, shards, now: Self.now + day * Self.day)
            generations.insert(outcome.generation)
            if outcome.published { #expect(outcome.changedShards.isEmpty && !outcome.resigned.isEmpty) }
        }
        // Re-signed on day 16 and day 31, not every day.
        #expect(generations == [1, 2, 3], "\(generations.sorted())")
        let late = try fixture.update(now: Self.now + 45 * Self.day + 3_600)
        #expect(late.generation == 3 && late.totalEntries == 1_500)
        let status = try PublicationStatus.read(fixture.publication)
        #expect(status.roles.map(\.name) == ["root", "snapshot", "timestamp"])
        let now = Self.now + 45 * Self.day
        #expect(status.expiring(now: now, within: 7 * Self.day).map(\.name) == ["timestamp"])
        #expect(status.expiring(now: now, within: 0).isEmpty)
        #expect(status.expiring(now: now, within: 400 * Self.day).count == 3)
    }

    // MARK: - Leftovers and --keep

    /// What killed publishes left (a marked staging directory, a temporary file) goes at the
    /// next publish; what is not provably publish's stays. `--keep 0` keeps the generation
    /// before the new one, which phones that read the old timestamp are still fetching.
    @Test func leftoversOfKilledRunsGoAndForeignFilesStay() throws {
        let fixture = try Fixture()
        try Self.publish(fixture, [PublicationTests.random(1_000, seed: 1)])
        let publication = fixture.publication
        let staging = publication + "/.staging-7"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try writeBytes(Publisher.markerContent, to: staging + "/" + Publisher.markerName)
        try writeBytes([1, 2, 3], to: staging + "/shard-01.blk")
        let unmarked = publication + "/.staging-8"
        try FileManager.default.createDirectory(atPath: unmarked, withIntermediateDirectories: true)
        try writeBytes([1], to: unmarked + "/notes.txt")
        try writeBytes([9], to: publication + "/.publish-tmp/timestamp.json.tmp")
        try writeBytes([9], to: publication + "/.publish-tmp/keep-me")
        // A publish killed while it wrote its marker (issue 46): the marker cut short, nothing else.
        let cut = publication + "/.staging-2"
        try FileManager.default.createDirectory(atPath: cut, withIntermediateDirectories: true)
        try writeBytes(Array(Publisher.markerContent.prefix(4)), to: cut + "/" + Publisher.markerName)
        let outcome = try Self.publish(fixture, [PublicationTests.random(1_100, seed: 1)], keep: 0)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: publication))
        #expect(!names.contains(".staging-7") && !names.contains(".staging-2"))
        #expect(FileManager.default.fileExists(atPath: unmarked + "/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: publication + "/.publish-tmp/keep-me"))
        #expect(!FileManager.default.fileExists(atPath: publication + "/.publish-tmp/timestamp.json.tmp"))
        // --keep 0: no deltas, and generation 1 stays until the next publish.
        #expect(outcome.generation == 2 && outcome.deltas == 0 && outcome.removedGenerations.isEmpty)
        #expect(names.contains("1") && names.contains("2"))
        let third = try Self.publish(fixture, [PublicationTests.random(1_200, seed: 1)], keep: 0)
        #expect(third.removedGenerations == [1])
        // A generation is removed by way of a marked `.staging-N`: nothing of it is left, and
        // nothing of it was ever visible half removed under its own name.
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: publication))
        #expect(!after.contains("1") && !after.contains(".staging-1"), "\(after)")
    }

    /// An update's downloads of a killed run in $TMPDIR go at the next run; a directory without
    /// the marker, or of a process still running, stays.
    @Test func abandonedDownloadsInTheTemporaryDirectoryGo() throws {
        let temporary = try TemporaryDirectory()
        func make(_ name: String, marker: String?) throws {
            try FileManager.default.createDirectory(atPath: temporary.file(name), withIntermediateDirectories: true)
            try writeBytes(
                Array(repeating: 0x61, count: 64),
                to: temporary.file(name + "/" + String(repeating: "a", count: 64))
            )
            if let marker {
                try writeBytes(
                    OutputDirectory.downloadsMarkerContent + Array(marker.utf8),
                    to: temporary.file(name + "/" + OutputDirectory.downloadsMarkerName)
                )
            }
        }
        try make("blocklist-update-dead01", marker: "pid 999999999\n")
        try make("blocklist-update-live01", marker: "pid \(getpid())\n")
        try make("blocklist-update-none01", marker: nil)
        // Killed before the marker was whole (found by the field test): an empty directory, or a
        // marker cut short, alone, a minute old, goes; younger, or beside another file, stays.
        let marker = OutputDirectory.downloadsMarkerName
        let content = OutputDirectory.downloadsMarkerContent
        func makeCutShort(_ name: String, marker bytes: [UInt8]?, old: Bool = true) throws {
            try FileManager.default.createDirectory(atPath: temporary.file(name), withIntermediateDirectories: true)
            if let bytes { try writeBytes(bytes, to: temporary.file(name + "/" + marker)) }
            if old {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(-120)],
                    ofItemAtPath: temporary.file(name)
                )
            }
        }
        try makeCutShort("blocklist-update-empty1", marker: nil)
        try makeCutShort("blocklist-update-zero01", marker: [])
        try makeCutShort("blocklist-update-half01", marker: Array(content.prefix(5)))
        try makeCutShort("blocklist-update-digit1", marker: content + Array("pid 12".utf8))
        try makeCutShort("blocklist-update-young1", marker: nil, old: false)
        try makeCutShort("blocklist-update-other1", marker: Array("something else".utf8))
        DownloadCache.removeAbandoned(in: temporary.path)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: temporary.path))
        #expect(
            names == [
                "blocklist-update-live01", "blocklist-update-none01", "blocklist-update-young1",
                "blocklist-update-other1",
            ],
            "\(names)"
        )
    }

    /// An update file is never larger than the shards it replaces (found by the field test: a
    /// set cut from 60,000 numbers to 5 got a 156 KB update file for a 150-byte shard): the phone
    /// takes the snapshot's way, timestamp, snapshot and the small shard. A small change still
    /// gets its update file.
    @Test func anUpdateFileIsNeverLargerThanTheShardItReplaces() throws {
        let fixture = try Fixture()
        try Self.publish(fixture, [PublicationTests.random(60_000, seed: 3)])
        _ = try fixture.update()
        try Self.publish(fixture, [PublicationTests.random(5, seed: 4)])
        #expect(!FileManager.default.fileExists(atPath: fixture.publication + "/from-1.push"))
        let cut = try fixture.update()
        #expect(cut.generation == 2 && cut.totalEntries == 5)
        #expect(cut.bytesDownloaded < 4_096, "\(cut.bytesDownloaded) bytes")
        try Self.publish(fixture, [PublicationTests.random(5, seed: 4) + [NumberRun(start: 100_000_001, count: 1)]])
        #expect(FileManager.default.fileExists(atPath: fixture.publication + "/from-2.push"))
    }

    // MARK: - Reporting

    /// `update` counts added and removed numbers for whole shards too, and labels apart.
    @Test func anUpdateCountsWholeShardsAndLabelsApart() throws {
        let fixture = try Fixture()
        let first = [PublicationTests.random(3_000, seed: 1), PublicationTests.random(500, seed: 2)]
        try Self.publish(fixture, first, keep: 0)
        let installed = try fixture.update()
        #expect(installed.added == 3_500 && installed.removed == 0)
        // keep 0 makes no deltas: shard 1 comes whole, with 200 numbers more and 100 fewer.
        var numbers = Set(PublicationTests.expand(first[0]))
        let dropped = Array(numbers.sorted().prefix(100))
        for number in dropped { numbers.remove(number) }
        var extra = 0
        for run in PublicationTests.random(400, seed: 99) where extra < 200 && !numbers.contains(run.start) {
            numbers.insert(run.start)
            extra += 1
        }
        let second = [numbers.sorted().map { NumberRun(start: $0, count: 1) }, first[1]]
        try Self.publish(fixture, second, keep: 0)
        // keep 0: no update file either.
        #expect(!FileManager.default.fileExists(atPath: fixture.publication + "/" + InlinePush.fileName(from: 1)))
        let updated = try fixture.update()
        #expect(updated.fullShards == 1 && updated.deltas == 0)
        #expect(updated.added == 200 && updated.removed == 100, "+\(updated.added) −\(updated.removed)")
        #expect(updated.labelsAdded == 0 && updated.labelsRemoved == 0)
        #expect(try fixture.installedNumbers() == second.map(PublicationTests.expand))
        // One shard fewer: the numbers of the shard that goes count as removed.
        try Self.publish(fixture, [second[0]], keep: 0)
        let fewer = try fixture.update()
        #expect(fewer.added == 0 && fewer.removed == 500, "+\(fewer.added) −\(fewer.removed)")
    }

    // MARK: - The programs

    /// `publication status` exits 0 while nothing expires soon, 3 (naming the fix) when
    /// something does; a readable key and a local push URL are refused by the commands; the
    /// notification service host answers --version; a lone `blocklist` names the host it lacks.
    @Test func theProgramsSayWhatExpiresAndWhatIsMissing() throws {
        let fixture = try Fixture()
        // Keys and publication as of now: the programs read the clock.
        let keys = fixture.directory.file("keys-now")
        _ = try KeyFiles.create(in: keys, now: Int64(time(nil)))
        try Self.publish(fixture, [PublicationTests.random(1_000, seed: 1)], keys: keys, now: Int64(time(nil)))
        let fine = try runBlocklist(["publication", "status", fixture.publication])
        #expect(fine.status == 0 && fine.stdout.contains("Nothing expires soon"), "\(fine)")
        #expect(fine.stdout.contains("root") && fine.stdout.contains("snapshot") && fine.stdout.contains("timestamp"))
        let soon = try runBlocklist(["publication", "status", fixture.publication, "--warn-days", "400", "--json"])
        // A day's timestamp is within 30 hours; the root, a year away, within 400 days.
        #expect(
            soon.status == 3 && soon.stderr.contains("keys rotate") && soon.stdout.contains("\"expiringSoon\" : true")
        )
        let none = try runBlocklist(["publication", "status", fixture.directory.file("nowhere")])
        #expect(none.status == 1 && none.stderr.contains("nowhere"), "\(none)")

        let local = try runBlocklist([
            "push", "payload", "--from", fixture.publication, "--key", keys + "/signing.key", "--url",
            fixture.publication, "--no-inline",
        ])
        #expect(local.status != 0 && local.stderr.contains("not an http:// or https:// URL"), "\(local)")
        chmod(fixture.keys + "/signing.key", 0o640)
        let readable = try runBlocklist([
            "publish", fixture.set, "--key", fixture.keys + "/signing.key", "--to", fixture.publication,
        ])
        #expect(readable.status != 0 && readable.stderr.contains("chmod 600"), "\(readable)")
        chmod(fixture.keys + "/signing.key", 0o600)

        let version = try RunningBlocklist(
            ["--version"],
            executable: productsDirectory + "/blocklist-notification-service"
        ).wait()
        #expect(version.status == 0 && version.stdout == blocklistVersion + "\n", "\(version)")

        let lone = fixture.directory.file("lone")
        try FileManager.default.createDirectory(atPath: lone, withIntermediateDirectories: true)
        try copyExecutable(productsDirectory + "/blocklist", to: lone + "/blocklist")
        let deliver = try RunningBlocklist(
            ["push", "deliver", "push.json", "--app-group", "app", "--trust", "root.json"],
            in: lone,
            executable: lone + "/blocklist"
        ).wait()
        #expect(deliver.status != 0, "\(deliver)")
        #expect(
            deliver.stderr.contains("blocklist-notification-service") && deliver.stderr.contains("Scripts/install.sh")
                && deliver.stderr.contains(lone + "/blocklist-notification-service"),
            "\(deliver.stderr)"
        )
    }

    /// The push URL check (ByteCodecs' `WebURL` and the push's policy) against an independent
    /// reading: Python's `urllib.parse.urlsplit`, `ipaddress` and RFC 3986's character classes
    /// with the same rule (scheme http or https in either case, a host of unreserved characters or
    /// a whole bracketed IPv6 address, a port 1…65535 if any, no credentials, no query or fragment,
    /// a path of RFC 3986's characters and `%` escapes, printable ASCII, at most 1,024 bytes), over
    /// 4,000 seeded strings built from the pieces URLs break at. `HTTPURL` is held to the same
    /// reading with its own policy (plain http only; a query and a fragment allowed).
    @Test func urlParsingAgreesWithPythonsURLSplit() throws {
        var generator = SplitMix64(state: 27)
        let pieces = [
            "http://", "https://", "HTTP://", "ftp://", "file:///", "http:/", "//", "http:", "host", "127.0.0.1",
            ":8080", ":", "@", "user:pw@", "/", "/pub/", "?q=1", "#frag", "[::1]", "[", "]", " ", "\t", "é", "%2e",
            "..", "a.b", "-", "_", "~", "\u{7f}", "x", "::", "1.2.3.4", "ffff", "%", "!", "<", ":0", ":65536",
            "[::ffff:1.2.3.4]",
            "[1:2:3:4:5:6:7:8]", "[1::2::3]", "01",
        ]
        var urls: [String] = []
        for _ in 0..<3_000 {
            // Half start as a web URL does, so that both verdicts are common.
            var url = Bool.random(using: &generator) ? ["http://", "https://"].randomElement(using: &generator)! : ""
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                url += pieces[Int.random(in: 0..<pieces.count, using: &generator)]
            }
            urls.append(url)
        }
        // And 1,000 shaped as URLs are, which both checks accept more often.
        for _ in 0..<1_000 {
            var url = ["http://", "https://", "HTTP://"].randomElement(using: &generator)!
            url += ["host", "127.0.0.1", "[::1]", "a.b", "x", "[::ffff:1.2.3.4]", "h_~-"].randomElement(
                using: &generator
            )!
            url += ["", "", ":8080", ":1", ":0", ":65536", ":"].randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                url += ["/", "/pub/", "?q=1", "#frag", "%2e", "!", "<", "%", "é", "..", "[", "]", "x"].randomElement(
                    using: &generator
                )!
            }
            urls.append(url)
        }
        urls.append("http://" + String(repeating: "a", count: 1_100))
        let script = #"""
            import ipaddress, json, re, sys
            from urllib.parse import urlsplit
            PATH = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2})*")
            QUERY = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*")
            def ok(u, schemes=("http", "https"), push=True):
                if any(not (0x20 < ord(c) < 0x7F) for c in u):
                    return False
                if push and (len(u.encode()) > 1024 or "?" in u or "#" in u):
                    return False
                try:
                    p = urlsplit(u)
                except ValueError:
                    return False
                if p.scheme not in schemes or not u.lower().startswith(p.scheme + "://"):
                    return False
                netloc = p.netloc
                if not netloc or "@" in netloc:
                    return False
                if netloc.startswith("["):
                    inside, close, port = netloc[1:].partition("]")
                    if not close or "%" in inside:
                        return False
                    try:
                        ipaddress.IPv6Address(inside)
                    except ValueError:
                        return False
                else:
                    if "[" in netloc or "]" in netloc:
                        return False
                    host, colon, rest = netloc.partition(":")
                    port = colon + rest
                    if not re.fullmatch(r"[A-Za-z0-9._~-]+", host):
                        return False
                if port:
                    if not re.fullmatch(r":[0-9]{1,5}", port) or not 1 <= int(port[1:]) <= 65535:
                        return False
                return bool(PATH.fullmatch(p.path) and QUERY.fullmatch(p.query) and QUERY.fullmatch(p.fragment))
            urls = json.load(sys.stdin)
            print(json.dumps([[ok(u) for u in urls], [ok(u, ("http",), False) for u in urls]]))
            """#
        let python = try runProcess("/usr/bin/env", ["python3", "-c", script], input: try JSONEncoder().encode(urls))
        try #require(python.status == 0)
        let verdicts = try JSONDecoder().decode([[Bool]].self, from: python.stdout)
        try #require(verdicts.count == 2 && verdicts.allSatisfy { $0.count == urls.count })
        var accepted = (push: 0, http: 0)
        for (index, url) in urls.enumerated() {
            let push = (try? PushAnnouncement.checkURL(url)) != nil
            #expect(
                push == verdicts[0][index],
                "push \(url.debugDescription): ours \(push), Python \(verdicts[0][index])"
            )
            // HTTPFetch's URL: the same parser, plain http only, a query and a fragment allowed.
            let http = (try? HTTPURL(url)) != nil
            #expect(
                http == verdicts[1][index],
                "http \(url.debugDescription): ours \(http), Python \(verdicts[1][index])"
            )
            accepted.push += push ? 1 : 0
            accepted.http += http ? 1 : 0
        }
        #expect(accepted.push > 100 && accepted.push < urls.count - 100, "\(accepted.push) push URLs accepted")
        #expect(accepted.http > 100 && accepted.http < urls.count - 100, "\(accepted.http) http URLs accepted")
    }

    // MARK: - What the field test found

    /// A PUBDIR restored from a backup never reuses a generation number phones hold with other
    /// content (the key directory's record is above it); a refused publish leaves no lock in
    /// someone else's directory; a stray `.staging-N` file is named; files are public whatever
    /// the umask; a push key others can read is refused by publish too.
    @Test func publishSurvivesBackupsUmasksAndStrayFiles() throws {
        let fixture = try Fixture()
        let record = fixture.keys + "/" + Publisher.generationRecordName
        func publish(_ shards: [[NumberRun]], to publication: String) throws -> Publisher.Outcome {
            try PublicationTests.writeSet(shards, in: fixture.set)
            return try Publisher.publish(
                setDirectory: fixture.set,
                signingKey: try Self.signingKey(fixture),
                root: try readBytes(fixture.keys + "/root.json"),
                generationRecord: record,
                to: publication,
                keep: 3,
                now: Self.now
            )
        }
        let listA = [PublicationTests.random(1_000, seed: 1)]
        #expect(try publish(listA, to: fixture.publication).generation == 1)
        let backup = fixture.directory.file("backup")
        try FileManager.default.copyItem(atPath: fixture.publication, toPath: backup)
        #expect(try publish([PublicationTests.random(1_100, seed: 1)], to: fixture.publication).generation == 2)
        #expect(try fixture.update().generation == 2)
        // Restored: the same list as its generation 1 still gets a new number, above 2.
        let restored = try publish(listA, to: backup)
        #expect(restored.generation == 3 && restored.resigned.first?.contains("restored") == true, "\(restored)")
        #expect(String(decoding: try readBytes(record), as: UTF8.self) == "3\n")

        // Someone else's directory: refused, and no lock file left in it.
        Self.expectRefusal(["is a key directory (it holds signing.key)"]) { _ = try publish(listA, to: fixture.keys) }
        #expect(!FileManager.default.fileExists(atPath: fixture.keys + "/" + Publisher.lockName))
        // A stray .staging-N file is named, not "File exists".
        try writeBytes([1], to: fixture.publication + "/.staging-9")
        Self.expectRefusal([".staging-9", "move .staging-9 away"]) { _ = try publish(listA, to: fixture.publication) }
        try FileManager.default.removeItem(atPath: fixture.publication + "/.staging-9")

        // umask 077: the publication is still public.
        let fresh = fixture.directory.file("pub-umask")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "umask 077 && exec \"$0\" publish \"$1\" --key \"$2\" --to \"$3\"",
            productsDirectory + "/blocklist", fixture.set, fixture.keys + "/signing.key", fresh,
        ]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // The key directory's record numbers it 4, above what it published elsewhere.
        #expect(String(decoding: try readBytes(record), as: UTF8.self) == "4\n")
        for (path, mode) in [("", 0o755), ("/timestamp.json", 0o644), ("/4", 0o755), ("/4/shard-01.blk", 0o644)] {
            let attributes = try FileManager.default.attributesOfItem(atPath: fresh + path)
            #expect((attributes[.posixPermissions] as? Int) == mode, "\(path): \(attributes[.posixPermissions] ?? "")")
        }
        // A push key others can read: publish refuses it as it refuses the signing key.
        chmod(fixture.keys + "/push.key", 0o644)
        let readable = try runBlocklist(["publish", fixture.set, "--key", fixture.keys + "/signing.key", "--to", fresh])
        #expect(readable.status != 0 && readable.stderr.contains("push.key") && readable.stderr.contains("chmod 600"))
        chmod(fixture.keys + "/push.key", 0o600)
        // --key naming the root or a directory says what --key takes, not chmod.
        for wrong in [fixture.keys + "/root.json", fixture.keys] {
            let answer = try runBlocklist(["publish", fixture.set, "--key", wrong, "--to", fresh])
            #expect(answer.status != 0 && answer.stderr.contains("signing.key") && !answer.stderr.contains("chmod"))
        }
    }

    /// On the phone: a damaged state file costs a full download instead of every update; a push
    /// for an expired publication is not made; a publication URL with a query is refused.
    @Test func thePhoneRecoversFromADamagedStateFile() throws {
        let fixture = try Fixture()
        let shards = [PublicationTests.random(1_000, seed: 1)]
        try fixture.publish(shards)
        _ = try fixture.update()
        try fixture.publish([PublicationTests.random(1_050, seed: 1)])
        let set = try #require(
            try FileManager.default.contentsOfDirectory(atPath: fixture.appGroup).first { $0.hasPrefix("set-") }
        )
        let state = fixture.appGroup + "/" + set + "/" + ShardSet.publicationStateName
        try FileManager.default.removeItem(atPath: state)
        try writeBytes(Array(#"{"generation":1,"shards":["00"]}"#.utf8), to: state)
        let outcome = try fixture.update()
        #expect(outcome.generation == 2 && outcome.fullShards == 1)
        #expect(try fixture.installedNumbers() == [PublicationTests.expand(PublicationTests.random(1_050, seed: 1))])

        Self.expectRefusal(["expired", "blocklist publish first"]) {
            _ = try PushPayload.make(
                publication: fixture.publication,
                signingKey: try Self.signingKey(fixture),
                pushKey: nil,
                url: "http://updates.example/",
                now: Self.now + 2 * Self.day
            )
        }
        #expect(throws: HTTPFetchError.self) { _ = try HTTPPublication("http://127.0.0.1:9/pre/?token=1") }
    }
}
