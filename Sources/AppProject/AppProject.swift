import BlocklistCore
import BlocklistSystem
internal import ByteCodecs
import JSONStream
import MessageFilterCore
import SetReading
import SetStorage
import UpdateCore

/// Writes an iOS app's project for a shard set: an XcodeGen spec (`project.yml`) with the host
/// app, one Call Directory extension per shard, a Message Filter extension and a Notification
/// Service Extension, their Info.plists and App Group entitlements (as XcodeGen `info` and
/// `entitlements` properties), and the handler sources that call the library, which are the
/// files in Handlers/ that the tests compile and run against stand-ins for the iOS SDK.
package enum AppProject {
    /// What the project is made from, besides the set.
    package struct Options: Sendable {
        /// The project's and the app target's name.
        package var name = "Blocklist"
        /// The app's bundle identifier; each extension's is this, a dot and the target's name.
        package var bundleIdentifier: String
        /// The App Group the app and its extensions share; "group." and the bundle identifier
        /// when not given.
        package var appGroup: String?
        /// The Apple developer team, for signing; left to Xcode when nil.
        package var team: String?
        /// Where Xcode fetches blocklist, and the lowest version it takes.
        package var packageURL = "https://github.com/blocklist/blocklist"
        package var packageVersion = "1.0.0"
        /// The generation of the shipped set in the publication, for the updates that follow it;
        /// required with `root` (a wrong one would make every phone refuse the publication's
        /// updates as rollbacks, or fetch the wrong ones).
        package var generation: UInt64?
        /// The publication's URL, which the app reads to catch up when pushes were missed (in a
        /// background refresh, and when it opens).
        package var publicationURL: String?
        /// The app's root.json and push key (`blocklist keys create`), shipped in the
        /// Notification Service Extension; the extension is left out without a root.
        package var root: String?
        package var pushKey: String?
        /// The compiled SMS rules (`blocklist sms compile`), shipped in the app.
        package var rules: String?
        /// The Message Filter extension's deferral server (`ILMessageFilterExtensionNetworkURL`).
        package var deferralURL: String?

        package init(bundleIdentifier: String) { self.bundleIdentifier = bundleIdentifier }

        var group: String { appGroup ?? "group." + bundleIdentifier }
    }

    /// What was written.
    package struct Summary: Sendable, Equatable {
        package var callDirectoryExtensions: Int
        package var files: Int
    }

    /// The handler sources, by the name they get in the project: the files in Handlers/.
    package static let handlerSources: [(name: String, bytes: [UInt8])] = [
        ("ExtensionSettings.swift", PackageResources.ExtensionSettings_swift),
        ("CallDirectoryHandler.swift", PackageResources.CallDirectoryHandler_swift),
        ("MessageFilterExtension.swift", PackageResources.MessageFilterExtension_swift),
        ("NotificationService.swift", PackageResources.NotificationService_swift),
        ("CallKitManager.swift", PackageResources.CallKitManager_swift),
    ]

    /// Writes the project for the set in `setDirectory` into `output`, a directory that must not
    /// exist yet: everything goes into a directory beside it first, renamed into place whole, so
    /// that a failure leaves nothing.
    ///
    /// - Throws: `BlocklistError` for the set, the options and the files; the error of the
    ///   reader that refused `--rules` (`MessageFilterError`), `--trust` or `--push-key`
    ///   (`UpdateError`), before anything is written.
    package static func write(
        set setDirectory: String,
        _ options: Options,
        to output: String
    ) throws -> Summary {
        try check(options)
        // What the app will ship is read as the app will read it: nothing is copied that its
        // extensions would refuse.
        if let rules = options.rules { _ = try CompiledRules(contentsOf: rules) }
        if let root = options.root {
            let bytes = try FileSystem.readFile(root)
            do {
                _ = try Root.trusted(bytes, what: root)
            } catch {
                throw UpdateError(
                    error.code,
                    "--trust \(root) is not a root.json as blocklist keys create writes it: \(error.message)"
                )
            }
        }
        if let key = options.pushKey {
            let bytes = try FileSystem.readFile(key)
            // The publisher's signing key must never ship: anyone with the app could sign updates.
            if case .object(let members)? = try? JSONValue(parsing: bytes, what: key),
                members["type"] == .string("ed25519-private")
            {
                throw BlocklistError(
                    .invalidInput,
                    "\(key) is the publisher's secret signing key, which must never ship in an app (anyone with the app could sign updates); give the push key, push.key, that blocklist keys create wrote beside it."
                )
            }
            _ = try PushKeyFile.key(bytes, what: key)
        }
        guard !output.isEmpty else {
            throw BlocklistError(.invalidSpec, "The output directory is empty; name a new directory with -o.")
        }
        let manifest = try Manifest.load(from: setDirectory)
        guard !manifest.shards.isEmpty else {
            throw BlocklistError(
                .invalidSpec,
                "The set in \(setDirectory) has no shards; there is no extension to make."
            )
        }
        guard try FileSystem.kind(output, followingSymlinks: false) == .missing else {
            throw BlocklistError(
                .io,
                "\(output) already exists; xcodegen writes a new directory and never writes into or over one (remove it, or name another)."
            )
        }
        let trimmed = output.count > 1 && output.hasSuffix("/") ? String(output.dropLast()) : output
        let parent = trimmed.lastIndex(of: "/").map { String(trimmed[..<$0]) } ?? "."
        // Inside the set, the project would be a file the set does not list: verify would refuse
        // the set, and generate would keep the generation it is in.
        let set = try FileSystem.resolvedPath(setDirectory)
        if let within = try? FileSystem.resolvedPath(parent.isEmpty ? "/" : parent),
            within == set || within.hasPrefix(set + "/")
        {
            throw BlocklistError(
                .invalidSpec,
                "\(output) is inside the set \(setDirectory); write the project beside the set, not in it."
            )
        }
        let staging = parent + "/." + baseName(trimmed) + ".xcodegen-tmp"
        guard try FileSystem.makeDirectory(staging) else {
            throw BlocklistError(
                .busy,
                "\(staging) exists: another xcodegen is writing \(output), or one was killed (remove it)."
            )
        }
        var written = 0
        do throws(BlocklistError) {
            for directory in ["App", "Set", "Extensions"] + (options.root == nil ? [] : ["NotificationService"]) {
                try FileSystem.makeDirectory(staging + "/" + directory)
            }
            func file(_ name: String, _ bytes: [UInt8]) throws(BlocklistError) {
                try FileSystem.writeNewFile(staging + "/" + name, bytes, sync: true)
                written += 1
            }
            for source in handlerSources { try file("Extensions/" + source.name, source.bytes) }
            for shard in manifest.shards {
                try file(
                    "Set/" + baseName(shard.file),
                    try FileSystem.readFile(manifest.path(of: shard, in: setDirectory))
                )
            }
            if let rules = options.rules { try file("Set/rules.blsms", try FileSystem.readFile(rules)) }
            if let root = options.root {
                // The extension checks pushes against it; the app, what it fetches to catch up.
                try file("NotificationService/root.json", try FileSystem.readFile(root))
                try file("Set/root.json", try FileSystem.readFile(root))
            }
            if let key = options.pushKey { try file("NotificationService/push.key", try FileSystem.readFile(key)) }
            try file("App/\(options.name)App.swift", Array(appSource(manifest, options).utf8))
            try file("project.yml", Array(spec(manifest, options).utf8))
            try FileSystem.rename(staging, to: output)
        } catch {
            removeStaging(staging)
            throw error
        }
        return Summary(callDirectoryExtensions: manifest.shards.count, files: written)
    }

    /// The targets' names: `CallDirectory01`…, zero-padded to the widest index (two digits at least).
    package static func callDirectoryTarget(_ index: Int, of count: Int) -> String {
        let digits = max(2, String(count).count)
        let text = String(index)
        return "CallDirectory" + String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// Refuses options no app could be made with, each with a sentence.
    package static func check(_ options: Options) throws(BlocklistError) {
        func identifier(_ text: String, _ what: String) throws(BlocklistError) {
            let allowed = text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D
                    || byte == 0x2E
            }
            guard allowed, text.contains("."), !text.hasPrefix("."), !text.hasSuffix("."), !text.contains("..") else {
                throw BlocklistError(
                    .invalidSpec,
                    "\(what) \(text.debugDescription) is not a reverse-DNS identifier: letters, digits, hyphens and dots, as com.example.blocklist."
                )
            }
        }
        try identifier(options.bundleIdentifier, "The bundle identifier")
        try identifier(options.group, "The App Group")
        guard options.group.hasPrefix("group.") else {
            throw BlocklistError(
                .invalidSpec,
                "The App Group \"\(options.group)\" does not start with group., as iOS requires."
            )
        }
        guard options.name.utf8.first.map({ $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A }) == true,
            options.name.utf8.allSatisfy({ ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) })
        else {
            throw BlocklistError(
                .invalidSpec,
                "The name \"\(options.name)\" is not a Swift type name: ASCII letters and digits, a letter first."
            )
        }
        // Compared regardless of case: the targets' Supporting/NAME directories would collide on a
        // Mac's case-insensitive disk.
        let lowered = options.name.lowercased()
        guard !["messagefilter", "notificationservice"].contains(lowered), !lowered.hasPrefix("calldirectory") else {
            throw BlocklistError(
                .invalidSpec,
                "The name \"\(options.name)\" is an extension's target name (CallDirectory01…, MessageFilter, NotificationService); give the app another."
            )
        }
        if let team = options.team {
            guard team.utf8.count == 10,
                team.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) })
            else {
                throw BlocklistError(
                    .invalidSpec,
                    "The team \(team.debugDescription) is not an Apple team ID: ten capital letters and digits, as in the developer account's Membership page."
                )
            }
        }
        guard options.generation.map({ $0 >= 1 }) ?? true else {
            throw BlocklistError(.invalidSpec, "The generation is 0; a publication's generations start at 1.")
        }
        if options.root != nil && options.generation == nil {
            throw BlocklistError(
                .invalidSpec,
                "--trust ships the set as a generation of the publication, and no --generation was given: give the generation the set was published as (blocklist publication status PUBDIR shows the newest)."
            )
        }
        if let url = options.publicationURL {
            guard options.root != nil else {
                throw BlocklistError(
                    .invalidSpec,
                    "--publication-url needs --trust: the app checks what it fetches against the root it ships."
                )
            }
            do {
                _ = try WebURL(parsing: url, schemes: ["https"])
            } catch {
                throw BlocklistError(
                    .invalidSpec,
                    "The publication URL \(url.debugDescription) \(error.reason); the app fetches updates over https://."
                )
            }
        }
        guard options.packageURL.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !options.packageURL.isEmpty else {
            throw BlocklistError(
                .invalidSpec,
                "The package URL \(options.packageURL.debugDescription) holds white space, control or non-ASCII characters."
            )
        }
        if let url = options.deferralURL {
            // iOS posts deferred queries over HTTPS only (ILMessageFilterExtensionNetworkURL).
            let parsed: WebURL
            do {
                parsed = try WebURL(parsing: url, schemes: ["https"])
            } catch {
                throw BlocklistError(
                    .invalidSpec,
                    "The deferral URL \(url.debugDescription) \(error.reason); iOS sends deferred messages to an https:// URL."
                )
            }
            // The system defers only to a domain associated with the app (messagefilter:HOST,
            // checked through the domain's apple-app-site-association file): a name, not an address.
            let labels = parsed.host.split(separator: ".", omittingEmptySubsequences: false)
            guard !parsed.host.contains(":"), labels.count >= 2, !labels.contains(where: \.isEmpty),
                !labels.allSatisfy({ $0.allSatisfy(\.isNumber) })
            else {
                throw BlocklistError(
                    .invalidSpec,
                    "The deferral URL \(url.debugDescription) names the host \(parsed.host), which is not a domain name; iOS defers only to a domain associated with the app (messagefilter:DOMAIN)."
                )
            }
            guard parsed.fragment == nil else {
                throw BlocklistError(
                    .invalidSpec,
                    "The deferral URL \(url.debugDescription) has a fragment (#…), which no request carries; remove it."
                )
            }
        }
        if options.pushKey != nil && options.root == nil {
            throw BlocklistError(
                .invalidSpec,
                "--push-key needs --trust: the extension opens pushes only under the app's root."
            )
        }
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }

    private static func removeStaging(_ staging: String) {
        // Only what this run made: the files it wrote and its directories, deepest first.
        for directory in ["Set", "App", "Extensions", "NotificationService", ""] {
            let path = directory.isEmpty ? staging : staging + "/" + directory
            for name in (try? FileSystem.list(path)) ?? [] {
                if (try? FileSystem.kind(path + "/" + name, followingSymlinks: false)) == .file {
                    try? FileSystem.removeFile(path + "/" + name)
                }
            }
            try? FileSystem.removeEmptyDirectory(path)
        }
    }
}
