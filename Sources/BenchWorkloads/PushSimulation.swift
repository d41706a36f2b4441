import BlocklistCore
import BlocklistSystem
internal import LibC
import Publication
import UpdateCore
import UpdateInstall

/// `blocklist push simulate`: a publication from start to reloaded extensions on loopback. A list
/// is generated, published, served (`updates serve`) and installed; then `change` numbers are
/// added, the new generation is published, its push is made and delivered to the Notification
/// Service Extension's host, which applies it, and `load --strategy delta` reloads the changed
/// extensions. The programs come from the caller.
package enum PushSimulation {
    package struct Programs: Sendable {
        package var blocklist: String
        package var server: String
        package var notificationService: String
        package init(blocklist: String, server: String, notificationService: String) {
            self.blocklist = blocklist
            self.server = server
            self.notificationService = notificationService
        }
    }

    package struct Report: Sendable, Encodable {
        package var numbers: Int
        package var change: Int
        package var generation: UInt64
        package var inline: Bool
        package var pushBytes: Int
        package var bytesDownloaded: Int64
        /// Push payload plus what the extension downloaded.
        package var bytesOnTheWire: Int64
        package var publishMilliseconds: Double
        package var deliverMilliseconds: Double
        package var reloadMilliseconds: Double
        /// From the start of `publish` to the last changed extension reloaded.
        package var publicationToReloadedMilliseconds: Double
        package var changedShards: [Int]
        package var notification: String
        package var notificationServicePeakKiB: Int
        package var serverPeakKiB: Int
        package var extensionHostPeakKiB: Int
    }

    /// Runs the simulation in `directory` (which must be empty or missing).
    ///
    /// - Parameter inline: put the update in the push (else the push carries the URL).
    package static func run(
        programs: Programs,
        directory: String,
        numbers: Int,
        change: Int,
        inline: Bool,
        seed: UInt64 = 1,
        progress: (String) -> Void = { _ in }
    ) throws -> Report {
        if try FileSystem.kind(directory) == .missing { _ = try FileSystem.makeDirectory(directory) }
        let path = { (name: String) in directory + "/" + name }
        var generator = SplitMix64(state: seed)
        var list = Set<Int64>()
        while list.count < numbers { list.insert(Int64.random(in: 0..<100_000_000, using: &generator)) }
        func writeList() throws {
            try? FileSystem.removeFile(path("numbers.txt"))
            var text: [UInt8] = []
            text.reserveCapacity(list.count * 14)
            for number in list.sorted() {
                text += Array("+8270".utf8)
                let digits = String(number)
                text += Array(String(repeating: "0", count: 8 - digits.count).utf8) + Array(digits.utf8)
                text.append(0x0A)
            }
            try FileSystem.writeNewFile(path("numbers.txt"), text, sync: false)
        }
        func blocklist(_ arguments: [String], what: String) throws -> ChildRun {
            try ChildProcess.run(programs.blocklist, arguments, what: what)
        }
        progress("generating \(numbers) numbers and publishing generation 1")
        _ = try KeyFiles.create(in: path("keys"), now: Int64(time(nil)))
        try writeList()
        _ = try blocklist(
            ["generate", "--numbers", path("numbers.txt"), "--layout", "packed", "--output", path("set"), "--no-sync"],
            what: "generate"
        )
        let signing = try KeyFiles.signingKey(at: path("keys/signing.key"))
        let pushKey = try KeyFiles.pushKey(at: path("keys/push.key"))
        let root = try FileSystem.readFile(path("keys/root.json"))
        _ = try Publisher.publish(
            setDirectory: path("set"),
            signingKey: signing,
            root: root,
            to: path("pub"),
            keep: 3,
            now: Int64(time(nil))
        )

        progress("serving the publication and installing generation 1")
        let server = try ChildProcess(
            path: programs.server,
            arguments: ["updates", "serve", path("pub"), "--port", "0"]
        )
        defer {
            kill(server.pid, SIGTERM)
            _ = try? server.wait()
        }
        var announced: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while !announced.contains(0x0A) {
            guard server.waitForOutput(milliseconds: 10_000) else {
                throw UpdateError(.shard, "The update server did not say where it listens within 10 s.")
            }
            let count = try server.read(into: buffer)
            if count == 0 { throw UpdateError(.shard, "The update server ended before it listened.") }
            announced += buffer[0..<count]
        }
        let line = String(decoding: announced.prefix { $0 != 0x0A }, as: UTF8.self)
        guard line.hasPrefix("listening on ") else { throw UpdateError(.shard, "The update server said \(line).") }
        let url = String(line.dropFirst("listening on ".count))
        _ = try blocklist(
            ["update", "--from", url, "--trust", path("keys/root.json"), "--app-group", path("app")],
            what: "update"
        )
        _ = try blocklist(["enable", "all", path("app"), "--store", path("store.sqlite")], what: "enable")
        _ = try blocklist(["load", path("app"), "--store", path("store.sqlite")], what: "load")

        progress("adding \(change) numbers: generating, then publishing generation 2")
        var added = 0
        while added < change {
            if list.insert(Int64.random(in: 0..<100_000_000, using: &generator)).inserted { added += 1 }
        }
        try writeList()
        _ = try blocklist(
            ["generate", "--numbers", path("numbers.txt"), "--layout", "packed", "--output", path("set"), "--no-sync"],
            what: "generate"
        )

        let clock = ContinuousClock()
        let started = clock.now
        let published = try Publisher.publish(
            setDirectory: path("set"),
            signingKey: signing,
            root: root,
            to: path("pub"),
            keep: 3,
            now: Int64(time(nil))
        )
        let made = try PushPayload.make(
            publication: path("pub"),
            signingKey: signing,
            pushKey: inline ? pushKey : nil,
            url: url,
            now: Int64(time(nil))
        )
        try FileSystem.writeNewFile(path("push-\(published.generation).json"), made.json, sync: false)
        let afterPublish = clock.now
        progress("delivering the push (\(made.json.count) bytes, \(made.inline ? "inline" : "URL"))")
        let delivered = try ChildProcess.run(
            programs.notificationService,
            [path("push-\(published.generation).json"), "--app-group", path("app"), "--trust", path("keys/root.json")],
            what: "blocklist-notification-service"
        )
        let afterDeliver = clock.now
        let result = try JSONValue(parsing: delivered.output, what: "the extension's answer")
        guard case .object(let fields) = result, fields["result"] == .string("updated") else {
            throw UpdateError(
                .shard,
                "The Notification Service Extension did not update: \(String(decoding: delivered.output, as: UTF8.self))"
            )
        }
        // A new generation may have more shards than the last: their extensions are enabled too.
        _ = try blocklist(["enable", "all", path("app"), "--store", path("store.sqlite")], what: "enable")
        let reload = try blocklist(
            ["load", path("app"), "--store", path("store.sqlite"), "--strategy", "delta", "--json"],
            what: "load --strategy delta"
        )
        let finished = clock.now
        let serverPeak = ProcessMemory.read(pid: server.pid)?.peakResident ?? 0
        let reloadJSON = try JSONValue(parsing: reload.output, what: "load's report")
        var hostPeak = 0
        if case .object(let report) = reloadJSON, case .array(let results)? = report["extensions"] {
            for case .object(let entry) in results {
                if case .number(let text)? = entry["peakResidentKiB"], let value = Int(text) {
                    hostPeak = max(hostPeak, value)
                }
            }
        }
        var downloaded: Int64 = 0
        if case .number(let text)? = fields["bytesDownloaded"] { downloaded = Int64(text) ?? 0 }
        var changed: [Int] = []
        if case .array(let list)? = fields["changedShards"] {
            for case .number(let text) in list { if let value = Int(text) { changed.append(value) } }
        }
        var body = ""
        if case .object(let notification)? = fields["notification"], case .object(let aps)? = notification["aps"],
            case .object(let alert)? = aps["alert"], case .string(let text)? = alert["body"]
        {
            body = text
        }
        let milliseconds = { (duration: Duration) in
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }
        return Report(
            numbers: numbers,
            change: change,
            generation: published.generation,
            inline: made.inline,
            pushBytes: made.json.count,
            bytesDownloaded: downloaded,
            bytesOnTheWire: Int64(made.json.count) + downloaded,
            publishMilliseconds: milliseconds(afterPublish - started),
            deliverMilliseconds: milliseconds(afterDeliver - afterPublish),
            reloadMilliseconds: milliseconds(finished - afterDeliver),
            publicationToReloadedMilliseconds: milliseconds(finished - started),
            changedShards: changed,
            notification: body,
            notificationServicePeakKiB: delivered.peakKiB,
            serverPeakKiB: serverPeak,
            extensionHostPeakKiB: hostPeak
        )
    }
}
