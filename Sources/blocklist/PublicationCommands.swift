import ArgumentParser
import ArgumentTypes
import BenchWorkloads
import BlocklistCore
import BlocklistSystem
import CommandSupport
import HTTPFetch
internal import LibC
import Publication
import UpdateCore
import UpdateInstall

/// `blocklist keys`: the publisher's keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "The publisher's keys: an Ed25519 signing key, a push key and the trust root an app ships.",
        subcommands: [Create.self, Rotate.self]
    )

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write a new key directory whose root, one version up, the old key signs; publish with it to retire the old key.",
            discussion:
                "NEW/root.json lists a new signing key and is signed by the old key and the new one, so an app that ships the old root follows it. NEW/push.key is the old one (the app holds it). The next publish with NEW/signing.key puts the new root in the publication; updates then refuse anything the old key signs."
        )

        @Argument(help: ArgumentHelp("The current key directory.", valueName: "old"), completion: .directory)
        var old: String

        @Argument(
            help: ArgumentHelp("The new key directory (created if missing).", valueName: "new"),
            completion: .directory
        )
        var new: String

        func run() throws {
            let (id, version) = try KeyFiles.rotate(from: old, to: new, now: Int64(time(nil)))
            print(
                "Wrote \(new)/signing.key (mode 0600), \(new)/push.key (the old one) and \(new)/root.json (root version \(version), signed by the old key and the new)."
            )
            print("Key ID: \(id)")
            print(
                "Publish with \(new)/signing.key; apps follow the rotation at their next update, and refuse the old key from then on."
            )
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new signing key, push key and root.json into a directory; never overwrites a key.",
            discussion:
                "DIR/signing.key and DIR/push.key are written with mode 0600; DIR/root.json is the trust root the app ships (it lists the public key and expires in a year)."
        )

        @Argument(
            help: ArgumentHelp("The key directory (created if missing).", valueName: "dir"),
            completion: .directory
        )
        var directory: String

        func run() throws {
            let id = try KeyFiles.create(in: directory, now: Int64(time(nil)))
            print(
                "Wrote \(directory)/signing.key (mode 0600), \(directory)/push.key (mode 0600) and \(directory)/root.json."
            )
            print("Key ID: \(id)")
            print("Ship root.json (and push.key, for inline pushes) with the app; keep signing.key secret.")
        }
    }
}

/// `blocklist publish`.
struct Publish: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Publish the current generation of a set as signed static files, with deltas from earlier generations.",
        discussion:
            "Any static HTTP server or CDN can serve PUBDIR (docs/USAGE.md, Publishing). The set is verified first, and the key checked against the roots PUBDIR publishes; a refusal writes nothing. Publishing again with an unchanged set re-signs timestamp.json (valid for --timestamp-lifetime), and writes a new generation with the same shards once the snapshot has less than half of --snapshot-lifetime left, or if the current generation no longer verifies. Run it daily (docs/USAGE.md has the cron line) and an unchanged list stays installable."
    )

    @Argument(
        help: ArgumentHelp("The set's output directory (holding manifest.json).", valueName: "setdir"),
        completion: .directory
    )
    var setDirectory = "Output"

    @Option(help: ArgumentHelp("The signing key (keys create's signing.key).", valueName: "file"), completion: .file())
    var key: String

    @Option(help: ArgumentHelp("The publication directory.", valueName: "pubdir"), completion: .directory)
    var to: String

    @Option(help: ArgumentHelp("Earlier generations to make deltas from, and keep published.", valueName: "N"))
    var keep: WholeNumber = 5

    @Option(
        help: ArgumentHelp("Seconds timestamp.json stays valid (re-signed by every publish).", valueName: "seconds")
    )
    var timestampLifetime: WholeNumber = 86_400

    @Option(
        help: ArgumentHelp(
            "Seconds a generation's snapshot stays valid; re-signed once less than half is left.",
            valueName: "seconds"
        )
    )
    var snapshotLifetime: WholeNumber = 2_592_000

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        try keep.check("--keep", 0...1_000)
        try timestampLifetime.check("--timestamp-lifetime", 60...31_536_000, unit: " seconds")
        try snapshotLifetime.check("--snapshot-lifetime", 120...31_536_000, unit: " seconds")
        guard timestampLifetime.value <= snapshotLifetime.value else {
            throw ValidationError(
                "--timestamp-lifetime \(Figures.grouped(timestampLifetime.value)) is longer than --snapshot-lifetime \(Figures.grouped(snapshotLifetime.value)): a timestamp cannot outlive the snapshot it names, which phones refuse once it expires."
            )
        }
    }

    func run() throws {
        let signing = try KeyFiles.signingKey(at: key)
        // The push key beside it is as private (push payload reads it).
        let pushPath = siblingFile(of: key, named: "push.key")
        if try FileSystem.kind(pushPath) != .missing { try KeyFiles.checkPrivate(pushPath, what: "push key") }
        let rootPath = siblingFile(of: key, named: "root.json")
        let root = try FileSystem.kind(rootPath) == .missing ? nil : try FileSystem.readFile(rootPath, limit: 4 << 20)
        let outcome = try Publisher.publish(
            setDirectory: setDirectory,
            signingKey: signing,
            root: root,
            rootPath: rootPath,
            generationRecord: siblingFile(of: key, named: Publisher.generationRecordName),
            to: to,
            keep: Int(keep.value),
            now: Int64(time(nil)),
            timestampLifetime: Int64(timestampLifetime.value),
            snapshotLifetime: Int64(snapshotLifetime.value)
        )
        if json {
            struct Report: Encodable {
                var generation: UInt64
                var published: Bool
                var changedShards: [Int]
                var deltas: Int
                var deltaBytes: Int64
                var bytesWritten: Int64
                var removedGenerations: [UInt64]
                var resigned: [String]
                var updateFiles: [UInt64]
                var page: String?
                var pageProblem: String?
            }
            try printJSON(
                Report(
                    generation: outcome.generation,
                    published: outcome.published,
                    changedShards: outcome.changedShards,
                    deltas: outcome.deltas,
                    deltaBytes: outcome.deltaBytes,
                    bytesWritten: outcome.bytesWritten,
                    removedGenerations: outcome.removedGenerations,
                    resigned: outcome.resigned,
                    updateFiles: outcome.updateFiles,
                    page: outcome.pageProblem == nil ? to + "/" + PublicationPage.fileName : nil,
                    pageProblem: outcome.pageProblem
                )
            )
            if let problem = outcome.pageProblem { Terminal.error("warning: \(problem).\n") }
            return
        }
        if outcome.changedShards.isEmpty {
            for reason in outcome.resigned { print("Writing a new generation with the same list: \(reason).") }
        }
        if outcome.published, outcome.first {
            print(
                "Published generation \(outcome.generation) to \(to), its first: \(Figures.counted(outcome.changedShards.count, "shard")), \(Figures.counted(outcome.bytesWritten, "byte")) written."
            )
        } else if outcome.published {
            print(
                "Published generation \(outcome.generation) to \(to): \(Figures.counted(outcome.changedShards.count, "shard")) changed, \(Figures.counted(outcome.deltas, "delta")) from the previous generation (\(Figures.counted(outcome.deltaBytes, "byte"))), \(Figures.counted(outcome.bytesWritten, "byte")) written."
            )
        } else {
            print(
                "The set is unchanged: generation \(outcome.generation) stays; timestamp.json\(outcome.updateFiles.isEmpty ? "" : " and the update files") re-signed."
            )
        }
        if outcome.published, !outcome.updateFiles.isEmpty {
            let names = outcome.updateFiles.map { InlinePush.fileName(from: $0) }
            print(
                "Update file\(names.count == 1 ? "" : "s") \(names.joined(separator: ", ")): a phone at \(names.count == 1 ? "that generation" : "those generations") downloads one file."
            )
        }
        if !outcome.removedGenerations.isEmpty {
            print(
                "Removed generation\(outcome.removedGenerations.count == 1 ? "" : "s") \(outcome.removedGenerations.map(String.init).joined(separator: ", ")) (past --keep)."
            )
        }
        if let problem = outcome.pageProblem {
            Terminal.error("warning: \(problem).\n")
        } else {
            print("The publication's page for people: \(to)/\(PublicationPage.fileName).")
        }
    }
}

/// `blocklist publication`.
struct PublicationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publication",
        abstract: "Look at a publication: what expires when.",
        subcommands: [Status.self]
    )

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say when the publication's root, snapshot and timestamp expire; exit 3 if one expires soon.",
            discussion:
                "Exits 0 when neither the root nor the snapshot expires within --warn-days and the timestamp (which every publish renews) not within --warn-hours; 3 when one does, or has (phones then refuse the publication); 1 on an error. For a cron job or a monitor; docs/USAGE.md has the daily cron line."
        )

        @Argument(help: ArgumentHelp("The publication directory.", valueName: "pubdir"), completion: .directory)
        var publication: String

        @Option(
            help: ArgumentHelp("Warn when the root or the snapshot expires within this many days.", valueName: "days")
        )
        var warnDays: WholeNumber = 7

        @Option(help: ArgumentHelp("Warn when the timestamp expires within this many hours.", valueName: "hours"))
        var warnHours: WholeNumber = 6

        @Flag(help: "Print the status as JSON.")
        var json = false

        func validate() throws {
            try warnDays.check("--warn-days", 0...3_650, unit: " days")
            try warnHours.check("--warn-hours", 0...8_760, unit: " hours")
        }

        func run() throws {
            let status = try PublicationStatus.read(publication)
            let now = Int64(time(nil))
            let expiring = status.expiring(
                now: now,
                within: Int64(warnDays.value) * 86_400,
                timestampWithin: Int64(warnHours.value) * 3_600
            )
            if json {
                struct Role: Encodable {
                    var role: String
                    var version: UInt64
                    var expires: Int64
                    var expiresAt: String
                    var secondsLeft: Int64
                    var expiringSoon: Bool
                    var fix: String
                }
                struct Generation: Encodable {
                    var generation: UInt64
                    var shards: Int
                    var numbers: Int64
                    var labels: Int64
                    var bytes: Int64
                    var expires: Int64
                    var previous: UInt64?
                    var changedShards: [Int]
                    var added: Int64
                    var removed: Int64
                    var labelsAdded: Int64
                    var labelsRemoved: Int64
                    var deltas: Int
                    var deltaBytes: Int64
                }
                struct Report: Encodable {
                    var publication: String
                    var generation: UInt64
                    var shards: Int
                    var entries: Int64
                    var warnDays: Int
                    var roles: [Role]
                    var generations: [Generation]
                }
                try printJSON(
                    Report(
                        publication: publication,
                        generation: status.generation,
                        shards: status.shards,
                        entries: status.entries,
                        warnDays: warnDays.value,
                        roles: status.roles.map { role in
                            Role(
                                role: role.name,
                                version: role.version,
                                expires: role.expires,
                                expiresAt: PublicationStatus.formatTime(role.expires),
                                secondsLeft: role.expires - now,
                                expiringSoon: expiring.contains { $0.name == role.name },
                                fix: role.fix
                            )
                        },
                        generations: status.generations.map { held in
                            Generation(
                                generation: held.generation,
                                shards: held.shards,
                                numbers: held.numbers,
                                labels: held.labels,
                                bytes: held.bytes,
                                expires: held.expires,
                                previous: held.previous,
                                changedShards: held.changedShards,
                                added: held.changes.added,
                                removed: held.changes.removed,
                                labelsAdded: held.changes.labelsAdded,
                                labelsRemoved: held.changes.labelsRemoved,
                                deltas: held.deltas,
                                deltaBytes: held.deltaBytes
                            )
                        }
                    )
                )
            } else {
                print(
                    "Publication \(publication): generation \(status.generation), \(Figures.counted(status.shards, "shard")), \(Figures.counted(status.entries, "entry", plural: "entries"))"
                )
                for role in status.roles {
                    let what = role.name == "root" ? "version \(role.version)" : "generation \(role.version)"
                    let name = role.name + String(repeating: " ", count: max(1, 10 - role.name.count))
                    let version = what + String(repeating: " ", count: max(1, 15 - what.count))
                    print(
                        "  \(name)\(version)expires \(PublicationStatus.formatTime(role.expires)) (\(PublicationStatus.formatDuration(role.expires - now)))"
                    )
                }
                if expiring.isEmpty {
                    print(
                        "Nothing expires soon (the root and the snapshot within \(warnDays.value) days, the timestamp within \(warnHours.value) hours)."
                    )
                }
            }
            for role in expiring {
                Terminal.error(
                    "\(role.name) \(role.expires <= now ? "has expired" : "expires soon") (\(PublicationStatus.formatTime(role.expires)), \(PublicationStatus.formatDuration(role.expires - now))): run \(role.fix)\n"
                )
            }
            if !expiring.isEmpty { throw ExitCode(3) }
        }
    }
}

/// `blocklist update`.
struct Update: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "The app's update step: verify a publication and install its newest generation into an App Group directory.",
        discussion:
            "Refuses, with nothing written, a rollback, an expired timestamp, a file that does not match the signed snapshot, a wrong key, a truncated or tampered file. Then `load --strategy delta` reloads only the changed extensions."
    )

    @Option(
        help: ArgumentHelp("The publication: a directory (or an http:// URL).", valueName: "url|pubdir"),
        completion: .directory
    )
    var from: String

    @Option(
        help: ArgumentHelp("The trust root the app ships (keys create's root.json).", valueName: "root.json"),
        completion: .file()
    )
    var trust: String

    @Option(
        help: ArgumentHelp("The App Group directory holding the installed set.", valueName: "dir"),
        completion: .directory
    )
    var appGroup: String

    @Option(
        help: ArgumentHelp(
            "Over HTTP: stop when no byte has arrived for this many seconds (what arrived is kept, and resumed next time).",
            valueName: "seconds"
        )
    )
    var stallTimeout: WholeNumber = 30

    @Option(
        help: ArgumentHelp(
            "Over HTTP: stop the whole update after this many seconds (default: no limit).",
            valueName: "seconds"
        )
    )
    var deadline: WholeNumber?

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        try stallTimeout.check("--stall-timeout", 1...86_400, unit: " seconds")
        try deadline?.check("--deadline", 1...604_800, unit: " seconds")
    }

    func run() throws {
        let trustBytes: [UInt8]
        do {
            trustBytes = try FileSystem.readFile(trust, limit: 4 << 20)
        } catch {
            throw BlocklistError(
                error.code,
                "The trust root (--trust) cannot be read: \(error.message) Give the root.json that blocklist keys create wrote, as the app ships it."
            )
        }
        // Checked here too, so that a wrong file (a key, a snapshot) is named as the option it came from.
        do throws(UpdateError) {
            _ = try Root.trusted(trustBytes, what: "the trust root \(trust) (--trust)")
        } catch {
            throw UpdateError(
                error.code,
                "\(error.message.dropLast(error.message.hasSuffix(".") ? 1 : 0)); give the root.json that blocklist keys create wrote, as the app ships it."
            )
        }
        let reader = try publicationReader(
            from,
            deadline: deadline.map { HTTPFetch.now() + UInt64($0.value) * 1_000_000_000 } ?? .max,
            stallTimeout: UInt64(stallTimeout.value) * 1_000_000_000
        )
        let outcome: UpdateInstaller.Outcome
        do {
            outcome = try UpdateInstaller.update(
                from: reader,
                trust: trustBytes,
                appGroup: appGroup,
                now: Int64(time(nil))
            )
        } catch let error as HTTPFetchError where [.timeout, .connect, .io, .protocolViolation].contains(error.code) {
            // What arrived stays in the App Group's download cache: say so, and how to go on (when
            // anything arrived at all).
            if (try? FileSystem.kind(appGroup + "/.blocklist-downloads")) == .directory {
                Terminal.error(
                    "note: what arrived is kept in \(appGroup)/.blocklist-downloads; run the same update again to resume it.\n"
                )
            }
            throw error
        }
        if json {
            struct Report: Encodable {
                var fromGeneration: UInt64
                var generation: UInt64
                var changedShards: [Int]
                var added: Int64
                var removed: Int64
                var labelsAdded: Int64
                var labelsRemoved: Int64
                var totalEntries: Int64
                var bytesDownloaded: Int64
                var deltas: Int
                var fullShards: Int
                var updateFileRefusal: String?
                var deltaRefusal: String?
            }
            try printJSON(
                Report(
                    fromGeneration: outcome.fromGeneration,
                    generation: outcome.generation,
                    changedShards: outcome.changedShards,
                    added: outcome.added,
                    removed: outcome.removed,
                    labelsAdded: outcome.labelsAdded,
                    labelsRemoved: outcome.labelsRemoved,
                    totalEntries: outcome.totalEntries,
                    bytesDownloaded: outcome.bytesDownloaded,
                    deltas: outcome.deltas,
                    fullShards: outcome.fullShards,
                    updateFileRefusal: outcome.updateFileRefusal,
                    deltaRefusal: outcome.deltaRefusal
                )
            )
            return
        }
        if let refusal = outcome.updateFileRefusal {
            // The snapshot's way installed the generation; the publisher may want to know why.
            Terminal.error(
                "note: the update file from generation \(outcome.fromGeneration) was refused (\(refusal)); every shard was checked against the signed snapshot instead.\n"
            )
        }
        if let refusal = outcome.deltaRefusal {
            // The changed shards came whole; an installed shard did not fit its delta.
            Terminal.error(
                "note: the deltas did not apply to the installed shards (\(refusal)); the changed shards were downloaded whole instead.\n"
            )
        }
        if outcome.upToDate {
            print(
                "Up to date: generation \(outcome.generation), \(Figures.grouped(outcome.totalEntries)) entries (\(Figures.counted(outcome.bytesDownloaded, "byte")) read)."
            )
            return
        }
        let grouped: (Int64) -> String = Figures.grouped
        let shards = outcome.changedShards.count == 1 ? "shard" : "shards"
        let changed =
            outcome.changedShards.isEmpty
            ? "no shard changed"
            : "\(shards) \(outcome.changedShards.map(String.init).joined(separator: ", ")) changed"
        let what =
            outcome.fromGeneration == 0
            ? "\(grouped(outcome.totalEntries)) entries in \(outcome.changedShards.count) \(shards)"
            : "\(changed), +\(grouped(outcome.added)) −\(grouped(outcome.removed)) entries, \(grouped(outcome.totalEntries)) in all"
        let from = outcome.fromGeneration == 0 ? "" : " (from \(outcome.fromGeneration))"
        print(
            "Installed generation \(outcome.generation)\(from) in \(appGroup): \(what); \(Figures.counted(outcome.bytesDownloaded, "byte")) downloaded (\(outcome.deltas) delta\(outcome.deltas == 1 ? "" : "s"), \(outcome.fullShards) full shard\(outcome.fullShards == 1 ? "" : "s"))."
        )
    }
}

/// `blocklist push`.
struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pushes that announce a publication, and the Notification Service Extension that applies them.",
        subcommands: [Payload.self, Deliver.self, Simulate.self]
    )

    struct Payload: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the APNs payload for a publication's newest generation: the update inline when it fits 4 KB, else a URL."
        )

        @Option(help: ArgumentHelp("The publication directory.", valueName: "pubdir"), completion: .directory)
        var from: String

        @Option(
            help: ArgumentHelp(
                "The signing key (signing.key); push.key beside it seals inline updates.",
                valueName: "file"
            )
        )
        var key: String

        @Option(help: ArgumentHelp("Where phones fetch the update when it is not inline.", valueName: "url"))
        var url: String?

        @Flag(help: "Never put the update inline.")
        var noInline = false

        func run() throws {
            let signing = try KeyFiles.signingKey(at: key)
            let pushPath = siblingFile(of: key, named: "push.key")
            // A push key beside the signing key seals inline updates; one that is there but
            // unreadable or readable by others is an error, not a silent fallback to the URL.
            let hasPushKey = try FileSystem.kind(pushPath) != .missing
            let pushKey = noInline || !hasPushKey ? nil : try KeyFiles.pushKey(at: pushPath)
            let made = try PushPayload.make(
                publication: from,
                signingKey: signing,
                pushKey: pushKey,
                url: url,
                why: noInline ? "--no-inline" : nil,
                now: Int64(time(nil))
            )
            print(String(decoding: made.json, as: UTF8.self))
            Terminal.error(
                "generation \(made.generation): \(Figures.counted(made.json.count, "byte")), \(made.inline ? "update inline" : "URL")\(made.note.map { " (\($0))" } ?? "")\n"
            )
        }
    }

    struct Deliver: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Deliver a push to the Notification Service Extension (blocklist-notification-service) and report what it did.",
            discussion:
                "Runs the extension host as `load` runs the Call Directory host, and samples its peak memory. Prints its result: the notification shown, entries added and removed, bytes downloaded."
        )

        @Argument(
            help: ArgumentHelp("The APNs payload (push payload's output).", valueName: "payload.json"),
            completion: .file()
        )
        var payload: String

        @Option(help: ArgumentHelp("The App Group directory.", valueName: "dir"), completion: .directory)
        var appGroup: String

        @Option(help: ArgumentHelp("The trust root the app ships.", valueName: "root.json"), completion: .file())
        var trust: String

        @Option(
            help: ArgumentHelp("The push key (default: push.key beside root.json).", valueName: "file"),
            completion: .file()
        )
        var pushKey: String?

        @Option(help: ArgumentHelp("Seconds before serviceExtensionTimeWillExpire.", valueName: "seconds"))
        var deadline: WholeNumber = 30

        @Option(
            help: ArgumentHelp(
                "The network: wifi or cellular (cellular defers downloads over 1 MiB).",
                valueName: "wifi|cellular"
            )
        )
        var network = "wifi"

        @Option(help: ArgumentHelp("The extension host to run.", valueName: "path"), completion: .file())
        var host: String?

        func validate() throws {
            try deadline.check("--deadline", 1...3_600, unit: " seconds")
            guard network == "wifi" || network == "cellular" else {
                throw ValidationError("--network must be wifi or cellular, not \"\(network)\".")
            }
        }

        func run() throws {
            if host == nil, let missing = missingHelper("blocklist-notification-service") {
                throw UpdateError(.malformed, missing)
            }
            let path = host ?? siblingExecutable("blocklist-notification-service")
            var arguments = [
                payload, "--app-group", appGroup, "--trust", trust, "--deadline", String(deadline.value), "--network",
                network,
            ]
            if let pushKey { arguments += ["--push-key", pushKey] }
            // Run and sampled as the bench runs its workloads; the host's answer is printed even when
            // it exits non-zero.
            let run = try ChildProcess.run(
                path,
                arguments,
                what: "blocklist-notification-service",
                acceptingFailure: true
            )
            print(String(decoding: run.output, as: UTF8.self).trimmingSuffixNewline)
            // A host that ends within the first 5 ms is gone before its memory is sampled.
            let memory =
                run.peakKiB >= 64
                ? "peak memory \(Figures.grouped(run.peakKiB)) KiB" : "ended before its memory was sampled"
            Terminal.error("blocklist-notification-service: exit \(run.exitStatus), \(memory)\n")
            if run.exitStatus != 0 { throw ExitCode(run.exitStatus) }
        }
    }
}

extension String {
    fileprivate var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}

/// `updates serve` runs in `blocklist-sms` (Hummingbird), which `blocklist` execs before it parses
/// anything (see Blocklist.main). This entry lists it in help, and execs it too if reached some other way.
struct UpdatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "updates",
        abstract: "Serve a publication to phones over HTTP (blocklist updates serve PUBDIR --port N).",
        subcommands: [Serve.self]
    )

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a publication over HTTP, with ETags, and every update in one request."
        )

        @Argument(parsing: .captureForPassthrough, help: "See blocklist updates serve --help.")
        var arguments: [String] = []

        func run() throws { try handOver(["updates", "serve"] + arguments) }
    }
}

extension Push {
    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a publication end to end on loopback: publish, serve, push, apply in the extension, reload.",
            discussion: """
                Generates a list of random +82 70 numbers, publishes and serves it (updates serve), installs it in an \
                App Group and loads it; then adds --change numbers, publishes generation 2, makes its push, delivers it \
                to blocklist-notification-service and reloads the changed extensions with load --strategy delta. \
                Prints the bytes on the wire, the time from publication to the last extension reloaded, and each \
                process's peak memory.
                """
        )

        @Option(help: ArgumentHelp("Numbers in the list.", valueName: "N"))
        var numbers: WholeNumber = 1_000_000

        @Option(help: ArgumentHelp("Numbers the new generation adds.", valueName: "N"))
        var change: WholeNumber = 100

        @Flag(help: "Send the URL in the push instead of the update itself.")
        var noInline = false

        @Option(
            help: ArgumentHelp(
                "A new directory for the run's files (default: a temporary one, removed after).",
                valueName: "dir"
            )
        )
        var work: String?

        @Flag(help: "Print the result as JSON.")
        var json = false

        func validate() throws {
            try numbers.check("--numbers", 1_000...10_000_000)
            try change.check("--change", 1...1_000_000)
        }

        func run() throws {
            // The round trip runs every helper: a missing one is named before any work.
            for helper in ["blocklist-sms", "blocklist-notification-service", "blocklist-extension"] {
                if let missing = missingHelper(helper) { throw UpdateError(.malformed, missing) }
            }
            let directory = try work ?? FileSystem.makeTemporaryDirectory(prefix: "blocklist-push-simulate")
            defer { if work == nil { removeTree(directory) } }
            let report = try PushSimulation.run(
                programs: PushSimulation.Programs(
                    blocklist: siblingExecutable("blocklist"),
                    server: siblingExecutable("blocklist-sms"),
                    notificationService: siblingExecutable("blocklist-notification-service")
                ),
                directory: directory,
                numbers: numbers.value,
                change: change.value,
                inline: !noInline
            ) { Terminal.error("push simulate: \($0)\n") }
            if json {
                try printJSON(report)
                return
            }
            let ms = { (value: Double) in String(Int(value.rounded())) }
            print(
                "generation \(report.generation): +\(Figures.counted(report.change, "number")) into \(Figures.grouped(report.numbers)); shards changed: \(report.changedShards.map(String.init).joined(separator: ", "))"
            )
            print(
                "push: \(Figures.counted(report.pushBytes, "byte")) (\(report.inline ? "update inline" : "URL")); downloaded by the extension: \(Figures.counted(report.bytesDownloaded, "byte")); on the wire: \(Figures.counted(report.bytesOnTheWire, "byte"))"
            )
            print(
                "publish \(ms(report.publishMilliseconds)) ms, deliver \(ms(report.deliverMilliseconds)) ms, reload \(ms(report.reloadMilliseconds)) ms; publication to reloaded: \(ms(report.publicationToReloadedMilliseconds)) ms"
            )
            print(
                "peak memory: notification service \(Figures.grouped(report.notificationServicePeakKiB)) KiB, update server \(Figures.grouped(report.serverPeakKiB)) KiB, extension host \(Figures.grouped(report.extensionHostPeakKiB)) KiB"
            )
            print("notification: \(report.notification)")
        }
    }
}
