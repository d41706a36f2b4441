import BlocklistCore
import Foundation
import TestSupport
import Testing
import UpdateCore

/// The App Group's installed set as the app and its Notification Service Extension change it
/// (issue 44, items 4 and 5): a push received end to end, a phone more generations behind than
/// the publisher keeps catching up, a kill between an update's renames finished or undone, the
/// shipped set installed only when it is newer, and two writers at once.
@Suite struct AppGroupUpdateTests {
    /// A publication of `generations` generations of a 3-shard set, each excluding one more
    /// number, keeping `keep` earlier ones; the shards of generation 1 to ship.
    struct Publication {
        let dir: TemporaryDirectory
        let shipped: [String]
        let trust: [UInt8]
        let pushKey: [UInt8]

        init(generations: Int, keep: Int = 3) throws {
            let dir = try TemporaryDirectory()
            self.dir = dir
            try Self.run(["keys", "create", "keys"], in: dir)
            var shipped: [String] = []
            for generation in 1...generations {
                let excluded = (1..<generation).map { "--exclude=\(1000 + $0)" }
                try Self.run(
                    ["generate", "--pattern", "+8270#####", "--range-size", "40000", "-o", "set", "--no-sync"]
                        + excluded,
                    in: dir
                )
                try Self.run(
                    ["publish", "set", "--key", "keys/signing.key", "--to", "pub", "--keep", String(keep)],
                    in: dir
                )
                if generation == 1 {
                    let names = try FileManager.default.contentsOfDirectory(atPath: dir.file("pub/1"))
                        .filter { $0.hasSuffix(".blk") }.sorted()
                    try FileManager.default.createDirectory(
                        atPath: dir.file("shipped"),
                        withIntermediateDirectories: true
                    )
                    for name in names {
                        try FileManager.default.copyItem(
                            atPath: dir.file("pub/1/" + name),
                            toPath: dir.file("shipped/" + name)
                        )
                    }
                    shipped = names.map { dir.file("shipped/" + $0) }
                }
            }
            self.shipped = shipped
            trust = try readBytes(dir.file("keys/root.json"))
            pushKey = try readBytes(dir.file("keys/push.key"))
        }

        @discardableResult
        static func run(_ arguments: [String], in dir: TemporaryDirectory) throws -> String {
            let result = try runBlocklist(arguments, in: dir.path)
            try #require(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }

        /// The push `push payload` makes for the newest generation, its `blocklist` member as JSON.
        func push(url: String = "https://cdn.example/pub", key: String = "keys/signing.key") throws -> [UInt8] {
            let payload = try Self.run(
                ["push", "payload", "--from", "pub", "--key", key, "--url", url],
                in: dir
            )
            let userInfo = try #require(
                try JSONSerialization.jsonObject(with: Data(payload.split(separator: "\n")[0].utf8)) as? [String: Any]
            )
            return [UInt8](try JSONSerialization.data(withJSONObject: try #require(userInfo["blocklist"])))
        }

        /// The publication's file at `path`, as a static host serves it; nil when it has none.
        func file(_ path: String) -> [UInt8]? {
            FileManager.default.contents(atPath: dir.file("pub/" + path)).map { [UInt8]($0) }
        }

        var now: Int64 { Int64(Date().timeIntervalSince1970) }

        /// `InstalledShards.receive` with this publication's root, and its push key or none.
        func receive(
            _ push: [UInt8],
            withKey: Bool,
            in group: String,
            fetch: (String, Int) async throws -> [UInt8]?
        ) async -> UpdateOutcome {
            await InstalledShards.receive(
                push: push,
                trust: trust,
                pushKey: withKey ? pushKey : nil,
                now: now,
                in: group,
                fetch: fetch
            )
        }
    }

    @Test func aPushIsReceivedInlineOrFromItsURLAndAFailureIsRecorded() async throws {
        let publication = try Publication(generations: 2)
        let group = publication.dir.file("group")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
        let push = try publication.push()
        var fetched: [String] = []
        let fromURL = { (url: String, _: Int) async throws -> [UInt8]? in
            fetched.append(url)
            return publication.file(String(url.dropFirst("https://cdn.example/pub/".count)))
        }

        // Without the push key, the update file comes from the announcement's signed URL.
        let outcome = await publication.receive(push, withKey: false, in: group, fetch: fromURL)
        guard case .updated(2, let changed) = outcome else {
            Issue.record("the push was not applied from its URL: \(outcome)")
            return
        }
        #expect(!changed.isEmpty && fetched == ["https://cdn.example/pub/from-1.push"])
        #expect(try InstalledShards.isWhole(in: group) && (InstalledShards.read(in: group)).generation == 2)
        #expect(outcome.notificationBody(reloaded: true)?.hasPrefix("Block list updated:") == true)
        #expect(outcome.notificationBody(reloaded: false)?.contains("Open the app") == true)

        // The same push again finds the set current, and leaves the push's alert as it came.
        let again = await publication.receive(push, withKey: true, in: group, fetch: fromURL)
        guard case .current = again else {
            Issue.record("a push for the installed generation changed something: \(again)")
            return
        }
        #expect(again.notificationBody(reloaded: false) == nil)

        // A push that carries neither field is refused in a sentence, not taken as current.
        let empty = await publication.receive(Array("{}".utf8), withKey: true, in: group, fetch: fromURL)
        guard case .failed(let error) = empty else {
            Issue.record("an empty push was taken: \(empty)")
            return
        }
        #expect(error.message == "The push carries neither an announcement nor an inline update.")
        #expect(ExtensionFailures.read(in: group).last?.sentence == error.message)

        // With the push key, the inline update is applied and nothing is fetched.
        let inlineGroup = publication.dir.file("inline")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: inlineGroup)
        fetched = []
        let inline = await publication.receive(push, withKey: true, in: inlineGroup, fetch: fromURL)
        guard case .updated(2, _) = inline else {
            Issue.record("the inline update was not applied: \(inline)")
            return
        }
        #expect(fetched.isEmpty)

        // A host without the update file (a phone behind more than --keep generations): the app
        // catches up; nothing is recorded as a failure.
        let behindGroup = publication.dir.file("behind")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: behindGroup)
        let behind = await publication.receive(push, withKey: false, in: behindGroup, fetch: { _, _ in nil })
        guard case .behind(2) = behind else {
            Issue.record("a missing update file is not read as a phone behind: \(behind)")
            return
        }
        #expect(behind.notificationBody(reloaded: false)?.contains("Open the app") == true)
        #expect(ExtensionFailures.read(in: behindGroup).isEmpty)

        // A push whose announcement's signature was changed is refused; the sentence is recorded
        // for the app, the notification says no path and no code.
        var tampered = push
        let sig = Array("\"sig\":\"".utf8)
        let at = try #require(tampered.indices.first { tampered[$0...].starts(with: sig) }) + sig.count
        tampered[at] = tampered[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let refused = await publication.receive(tampered, withKey: false, in: behindGroup, fetch: fromURL)
        guard case .failed = refused else {
            Issue.record("a tampered push was not refused: \(refused)")
            return
        }
        let failures = ExtensionFailures.read(in: behindGroup)
        #expect(failures.count == 1 && failures.first?.source == "NotificationService")
        #expect(refused.notificationBody(reloaded: false)?.contains("/") == false)
        #expect(try (InstalledShards.read(in: behindGroup)).generation == 1)
    }

    @Test func aPhoneBehindMoreThanTheKeptGenerationsCatchesUp() throws {
        let publication = try Publication(generations: 4, keep: 1)
        let group = publication.dir.file("group")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
        #expect(publication.file("from-1.push") == nil, "the publication still keeps generation 1's update file")
        var paths: [String] = []
        let outcome = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) { path, _, _ in
            paths.append(path)
            return publication.file(path)
        }
        guard case .updated(4, let changed) = outcome else {
            Issue.record("the phone did not catch up to generation 4: \(outcome)")
            return
        }
        #expect(!changed.isEmpty)
        let record = try InstalledShards.read(in: group)
        #expect(record.generation == 4 && InstalledShards.isWhole(in: group))
        // Each shard is generation 4's: the same content as the publication's own.
        for (name, digest) in zip(record.names, record.digests) {
            #expect(try ShardContent.digest(ofShardAt: publication.dir.file("pub/4/" + name)) == digest)
        }
        #expect(paths.contains("timestamp.json"))
        guard
            case .current = InstalledShards.catchUp(
                trust: publication.trust,
                now: publication.now,
                in: group,
                fetch: { path, _, _ in publication.file(path) }
            )
        else {
            Issue.record("a caught-up phone changes again")
            return
        }

        // A host that serves a damaged shard: nothing is installed, the failure is recorded.
        let damagedGroup = publication.dir.file("damaged")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: damagedGroup)
        let damaged = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: damagedGroup) {
            path,
            _,
            _ in
            guard var bytes = publication.file(path) else { return nil }
            if path.hasSuffix(".blk") || path.contains("delta") { bytes[bytes.count / 2] ^= 1 }
            return bytes
        }
        guard case .failed = damaged else {
            Issue.record("a damaged shard was installed: \(damaged)")
            return
        }
        #expect(
            try (InstalledShards.read(in: damagedGroup)).generation == 1 && InstalledShards.isWhole(in: damagedGroup)
        )
        #expect(ExtensionFailures.read(in: damagedGroup).first?.source == "catch-up")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: damagedGroup + "/shards").filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty)
    }

    /// A background refresh that expires cancels its task: the catch-up stops before the next
    /// file, installs nothing, and records no failure (the next one starts over).
    @Test func aCancelledCatchUpStopsBeforeTheNextFile() async throws {
        let publication = try Publication(generations: 3, keep: 1)
        let group = publication.dir.file("group")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
        let fetched = Fetched()
        let task = Task {
            InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) { path, _, _ in
                // The refresh expires once the timestamp arrived.
                if fetched.add(path) == 1 { withUnsafeCurrentTask { $0?.cancel() } }
                return publication.file(path)
            }
        }
        guard case .failed(let error) = await task.value else {
            Issue.record("a cancelled catch-up went on: \(await task.value)")
            return
        }
        #expect(error.message.hasPrefix("The catch-up was cancelled before "), "\(error.message)")
        #expect(fetched.count == 1)
        #expect(try InstalledShards.read(in: group).generation == 1 && InstalledShards.isWhole(in: group))
        #expect(ExtensionFailures.read(in: group).isEmpty)
    }

    /// Found as a real host and a careless developer would (issue 44's field test): a host's
    /// error body where no next root exists is no root, whatever it starts with; a network error
    /// names the file; a catch-up before the shipped set is installed says so in words for
    /// people; a push that lands during a catch-up is no failure.
    @Test func aHostsErrorBodyNetworkErrorsAndNoInstalledSetAreReadAsThey() throws {
        let publication = try Publication(generations: 2, keep: 1)
        let group = publication.dir.file("group")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
        for (index, body) in ["\u{FEFF}<html>Not Found</html>", #"{"error":"NoSuchKey"}"#].enumerated() {
            let hidden = publication.dir.file("hidden-\(index)")
            try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: hidden)
            let caughtUp = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: hidden) {
                path,
                _,
                _ in
                path.hasSuffix(".root.json") ? Array(body.utf8) : publication.file(path)
            }
            guard case .updated(2, _) = caughtUp else {
                Issue.record("a host's \(body) for the next root stopped the catch-up: \(caughtUp)")
                continue
            }
        }
        struct Offline: Error, CustomStringConvertible {
            var description: String { "The Internet connection appears to be offline." }
        }
        let offline = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) { _, _, _ in
            throw Offline()
        }
        guard case .failed(let error) = offline else {
            Issue.record("an offline catch-up did not fail: \(offline)")
            return
        }
        #expect(error.code == .unavailable)
        #expect(error.message == "Fetching 2.root.json failed: The Internet connection appears to be offline..")
        let none = InstalledShards.catchUp(
            trust: publication.trust,
            now: publication.now,
            in: publication.dir.file("empty")
        ) {
            path,
            _,
            _ in publication.file(path)
        }
        guard case .failed(let missing) = none else {
            Issue.record("a catch-up with no installed set did not fail: \(none)")
            return
        }
        #expect(
            missing.message
                == "No set is installed in the App Group yet: the app installs the set it ships first (InstalledShards.installIfNeeded)."
        )
    }

    /// A set shipped under a generation the publication has not reached (too high: every
    /// catch-up would be refused as a rollback) is recorded under the shipped number again when
    /// a later version of the app ships the same shards with the right one; the catch-up then
    /// completes. A set the NSE brought forward is kept.
    @Test func aShippedSetUnderTooHighANumberIsRenumberedByTheNextApp() throws {
        let publication = try Publication(generations: 2)
        let group = publication.dir.file("group")
        try InstalledShards.installIfNeeded(shippedShardsAt: publication.shipped, generation: 5, in: group)
        let refused = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) {
            path,
            _,
            _ in publication.file(path)
        }
        guard case .failed(let error) = refused, error.code == .rollback else {
            Issue.record("a set shipped as generation 5 caught up to 2: \(refused)")
            return
        }
        #expect(error.message.contains("installIfNeeded's generation"), "\(error.message)")
        let fixed = try InstalledShards.installIfNeeded(shippedShardsAt: publication.shipped, generation: 1, in: group)
        #expect(fixed.installedNow && fixed.record.generation == 1)
        guard
            case .updated(2, _) = InstalledShards.catchUp(
                trust: publication.trust,
                now: publication.now,
                in: group,
                fetch: { path, _, _ in publication.file(path) }
            )
        else {
            Issue.record("the renumbered set did not catch up")
            return
        }
        // Generation 2 installed: the shipped set of generation 1 is not the installed one, and stays out.
        let kept = try InstalledShards.installIfNeeded(shippedShardsAt: publication.shipped, generation: 1, in: group)
        #expect(!kept.installedNow && kept.record.generation == 2)
    }

    /// The paths a fetch was asked for, counted across threads.
    final class Fetched: @unchecked Sendable {
        private let lock = NSLock()
        private var paths: [String] = []
        var count: Int { lock.withLock { paths.count } }
        func add(_ path: String) -> Int {
            lock.withLock {
                paths.append(path)
                return paths.count
            }
        }
    }

    /// A kill between an update's renames: the next writer finishes it from the staged files, or
    /// removes them when one is missing, and the set is whole either way.
    @Test func aKillBetweenRenamesIsFinishedOrUndone() async throws {
        let publication = try Publication(generations: 2)
        let updated = publication.dir.file("updated")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: updated)
        let push = try publication.push()
        let outcome = await publication.receive(push, withKey: true, in: updated, fetch: { _, _ in nil })
        guard case .updated(2, let changed) = outcome, let first = changed.first else {
            Issue.record("the push was not applied: \(outcome)")
            return
        }
        let newRecord = try InstalledShards.read(in: updated)
        for (renamed, keepStaged) in [(false, true), (true, true), (false, false)] {
            let group = publication.dir.file("group-\(renamed)-\(keepStaged)")
            let old = try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
            // What a kill leaves: the new record beside its place, the first changed shard renamed
            // already or still beside its place (or lost), the others beside their places.
            for index in changed {
                let name = newRecord.names[index - 1]
                let newShard = InstalledShards.shardPath(name, in: updated)
                if index == first && renamed {
                    try FileManager.default.removeItem(atPath: InstalledShards.shardPath(name, in: group))
                    try FileManager.default.copyItem(
                        atPath: newShard,
                        toPath: InstalledShards.shardPath(name, in: group)
                    )
                } else if index != first || keepStaged {
                    try FileManager.default.copyItem(atPath: newShard, toPath: group + "/shards/." + name + ".new")
                }
            }
            try FileManager.default.copyItem(
                atPath: InstalledShards.recordPath(in: updated),
                toPath: group + "/.installed.json.new"
            )
            #expect(InstalledShards.isWhole(in: group) != renamed)
            try InstalledShards.withLock(in: group) {}
            let record = try InstalledShards.read(in: group)
            #expect(record == (keepStaged ? newRecord : old), "renamed \(renamed), staged \(keepStaged)")
            #expect(InstalledShards.isWhole(in: group), "renamed \(renamed), staged \(keepStaged)")
            let hidden = try FileManager.default.contentsOfDirectory(atPath: group + "/shards").filter {
                $0.hasPrefix(".")
            }
            #expect(hidden.isEmpty && !FileManager.default.fileExists(atPath: group + "/.installed.json.new"))
        }
    }

    /// A rotated root, followed once (by a catch-up or a push), is kept in the App Group: a
    /// publication signed by the retired key is refused from then on, and a push signed by the
    /// new key reaches an app that ships the old root.
    @Test func aRotatedRootIsKeptAndTheRetiredKeyRefused() async throws {
        let publication = try Publication(generations: 2)
        let dir = publication.dir
        // What an attacker holding the retired key keeps: the publication before the rotation.
        try FileManager.default.copyItem(atPath: dir.file("pub"), toPath: dir.file("evil"))
        try Publication.run(["keys", "rotate", "keys", "keys2"], in: dir)
        try Publication.run(["publish", "set", "--key", "keys2/signing.key", "--to", "pub"], in: dir)
        // The retired key cannot make a push for it any more; the new one does, for generation
        // 3, to an app that ships root version 1.
        let refused = try runBlocklist(
            ["push", "payload", "--from", "pub", "--key", "keys/signing.key", "--url", "https://cdn.example/pub"],
            in: dir.path
        )
        #expect(refused.status == 1 && refused.stderr.contains("not one of the keys of root version 2"))
        let push = try publication.push(key: "keys2/signing.key")
        let pushed = dir.file("pushed")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: pushed)
        let received = await publication.receive(push, withKey: false, in: pushed) { url, _ in
            publication.file(String(url.dropFirst("https://cdn.example/pub/".count)))
        }
        guard case .updated(3, _) = received else {
            Issue.record("a push signed by the rotated key was not applied: \(received)")
            return
        }
        #expect(try InstalledShards.trustedRoot(shipped: publication.trust, in: pushed).version == 2)

        let group = dir.file("group")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
        let caughtUp = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) {
            path,
            _,
            _ in publication.file(path)
        }
        guard case .updated(3, _) = caughtUp else {
            Issue.record("the catch-up did not follow the rotation: \(caughtUp)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: AppGroupLayout.root(2, in: group)))
        // The retired key publishes generation 4 without the new root: refused.
        try Publication.run(["publish", "set", "--key", "keys/signing.key", "--to", "evil"], in: dir)
        try Publication.run(["publish", "set", "--key", "keys/signing.key", "--to", "evil"], in: dir)
        let evil = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) { path, _, _ in
            FileManager.default.contents(atPath: dir.file("evil/" + path)).map { [UInt8]($0) }
        }
        guard case .failed(let error) = evil else {
            Issue.record("a publication signed by the retired key was installed: \(evil)")
            return
        }
        #expect(error.code == .badSignature, "\(error)")
        #expect(try InstalledShards.read(in: group).generation == 3)
    }

    /// A push that names a newer generation but gives no way to reach it (an inline update from
    /// another generation and no URL), or whose update file the host hides behind a page, tells
    /// the phone it is behind; an app without the push key ignores an inline field it cannot open.
    @Test func aPushThatCannotBeFollowedSaysBehind() async throws {
        let publication = try Publication(generations: 3)
        let group = publication.dir.file("group")
        try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
        let payload = try Publication.run(
            ["push", "payload", "--from", "pub", "--key", "keys/signing.key"],
            in: publication.dir
        )
        let userInfo = try #require(
            try JSONSerialization.jsonObject(with: Data(payload.split(separator: "\n")[0].utf8)) as? [String: Any]
        )
        let noURL = [UInt8](try JSONSerialization.data(withJSONObject: try #require(userInfo["blocklist"])))
        let behind = await publication.receive(noURL, withKey: true, in: group) { _, _ in nil }
        guard case .behind(3) = behind else {
            Issue.record("a push from generation 2 to a phone at 1, with no URL, is not read as behind: \(behind)")
            return
        }
        let page = await publication.receive(try publication.push(), withKey: false, in: group) { _, _ in
            Array("<!DOCTYPE html><html>Not Found</html>".utf8)
        }
        guard case .behind(3) = page else {
            Issue.record("an update file hidden behind a page is not read as missing: \(page)")
            return
        }
        var fields = try #require(
            try JSONSerialization.jsonObject(with: Data(try publication.push())) as? [String: Any]
        )
        fields["inline"] = "not base64 !"
        let odd = [UInt8](try JSONSerialization.data(withJSONObject: fields))
        let fetched = await publication.receive(odd, withKey: false, in: group) { url, _ in
            publication.file(String(url.dropFirst("https://cdn.example/pub/".count)))
        }
        guard case .updated(3, _) = fetched else {
            Issue.record("an inline field the app cannot open stopped the fetch: \(fetched)")
            return
        }
        #expect(ExtensionFailures.read(in: group).isEmpty)
    }

    /// A set shipped under a lower generation number than it was published as: the update file
    /// from that generation does not fit, and the catch-up takes the snapshot's way, which keeps
    /// every shard whose digest already is the newest.
    @Test func aSetShippedUnderTheWrongGenerationCatchesUpByDigest() throws {
        let publication = try Publication(generations: 3)
        let newest = try FileManager.default.contentsOfDirectory(atPath: publication.dir.file("pub/3"))
            .filter { $0.hasSuffix(".blk") }.sorted().map { publication.dir.file("pub/3/" + $0) }
        let group = publication.dir.file("group")
        try InstalledShards.install(shardsAt: newest, generation: 1, in: group)
        let outcome = InstalledShards.catchUp(trust: publication.trust, now: publication.now, in: group) {
            path,
            _,
            _ in publication.file(path)
        }
        guard case .updated(3, let changed) = outcome else {
            Issue.record("the catch-up did not take the snapshot's way: \(outcome)")
            return
        }
        #expect(changed.isEmpty && InstalledShards.isWhole(in: group))
        #expect(try InstalledShards.read(in: group).generation == 3)
    }

    @Test func theShippedSetIsInstalledOnlyWhenItIsNewer() throws {
        let publication = try Publication(generations: 1)
        let group = publication.dir.file("group")
        let first = try InstalledShards.installIfNeeded(shippedShardsAt: publication.shipped, generation: 3, in: group)
        #expect(first.installedNow && first.record.generation == 3)
        #expect(
            try !(InstalledShards.installIfNeeded(shippedShardsAt: publication.shipped, generation: 3, in: group))
                .installedNow
        )
        // The same shards shipped under another number take it: the installed ones are the
        // shipped ones, so the number was the app's, not an update's (a newer set that updates
        // installed is kept: aShippedSetUnderTooHighANumberIsRenumberedByTheNextApp).
        let renumbered = try InstalledShards.installIfNeeded(
            shippedShardsAt: publication.shipped,
            generation: 2,
            in: group
        )
        #expect(renumbered.installedNow && renumbered.record.generation == 2)
        // A newer app's set does, and so does a set that is no longer whole.
        #expect(
            try InstalledShards.installIfNeeded(shippedShardsAt: publication.shipped, generation: 5, in: group)
                .installedNow
        )
        try Data("damaged".utf8).write(
            to: URL(fileURLWithPath: InstalledShards.shardPath(first.record.names[0], in: group))
        )
        let repaired = try InstalledShards.installIfNeeded(
            shippedShardsAt: publication.shipped,
            generation: 5,
            in: group
        )
        #expect(repaired.installedNow && InstalledShards.isWhole(in: group))
    }

    /// Two writers at once (two Notification Service Extensions with the same push): the lock
    /// makes one apply it and the other find it applied.
    @Test func twoWritersApplyOnePushOnce() async throws {
        let publication = try Publication(generations: 2)
        let push = try publication.push()
        for round in 0..<4 {
            let group = publication.dir.file("group-\(round)")
            try InstalledShards.install(shardsAt: publication.shipped, generation: 1, in: group)
            let trust = publication.trust
            let pushKey = publication.pushKey
            let now = publication.now
            async let one = InstalledShards.receive(
                push: push,
                trust: trust,
                pushKey: pushKey,
                now: now,
                in: group,
                fetch: { _, _ in nil }
            )
            async let two = InstalledShards.receive(
                push: push,
                trust: trust,
                pushKey: pushKey,
                now: now,
                in: group,
                fetch: { _, _ in nil }
            )
            let outcomes = await [one, two]
            let updated = outcomes.filter {
                if case .updated(_, let changed) = $0 { !changed.isEmpty } else { false }
            }
            let failed = outcomes.filter { if case .failed = $0 { true } else { false } }
            #expect(failed.isEmpty, "\(outcomes)")
            #expect(updated.count >= 1)
            #expect(try InstalledShards.isWhole(in: group) && (InstalledShards.read(in: group)).generation == 2)
        }
    }
}
