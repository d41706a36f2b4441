internal import ByteCodecs
import JSONStream
import SetStorage

extension AppProject {
    /// The XcodeGen spec. Every string is written double-quoted with JSON's escapes, which YAML
    /// reads the same way.
    static func spec(_ manifest: Manifest, _ options: Options) -> String {
        var yaml = YAMLWriter()
        yaml.line("# Written by blocklist xcodegen. Run `xcodegen generate` here to make the Xcode project.")
        yaml.pair("name", options.name)
        yaml.open("options")
        yaml.pair("bundleIdPrefix", options.bundleIdentifier)
        yaml.open("deploymentTarget")
        // iOS 16: the sub-actions of the promotion and transaction actions (those are iOS 14).
        yaml.pair("iOS", "16.0")
        yaml.close()
        yaml.close()
        yaml.open("settings")
        yaml.open("base")
        yaml.pair("SWIFT_VERSION", "6.0")
        // One version and build for the app and every extension (the App Store requires them equal):
        // each Info.plist reads them from these settings.
        yaml.pair("MARKETING_VERSION", "1.0")
        yaml.pair("CURRENT_PROJECT_VERSION", "1")
        if let team = options.team { yaml.pair("DEVELOPMENT_TEAM", team) }
        yaml.close()
        yaml.close()
        yaml.open("packages")
        yaml.open("blocklist")
        yaml.pair("url", options.packageURL)
        yaml.pair("from", options.packageVersion)
        yaml.close()
        yaml.close()

        let count = manifest.shards.count
        let callDirectories = manifest.shards.map { callDirectoryTarget($0.index, of: count) }
        // The system posts deferred messages only to a domain the app and the extension are
        // associated with (`messagefilter:`).
        let deferralHost = options.deferralURL.flatMap { try? WebURL(parsing: $0, schemes: ["https"]).host }
        let associated =
            deferralHost.map { [("com.apple.developer.associated-domains", ["messagefilter:" + $0])] } ?? []
        // The app and the Notification Service Extension reload the Call Directory extensions.
        let callDirectoryList = (
            "BlocklistCallDirectoryExtensions",
            callDirectories.map { options.bundleIdentifier + "." + $0 }.joined(separator: ",")
        )
        var extensions = callDirectories + ["MessageFilter"]
        if options.root != nil { extensions.append("NotificationService") }

        yaml.open("targets")
        // The host app: installs the shipped set at first launch.
        yaml.open(options.name)
        yaml.pair("type", "application")
        yaml.pair("platform", "iOS")
        yaml.list(
            "sources",
            [
                ["path": "App"], ["path": "Set", "type": "folder"],
                ["path": "Extensions/ExtensionSettings.swift"],
                ["path": "Extensions/CallKitManager.swift"],
            ]
        )
        target(
            &yaml,
            options,
            identifier: options.bundleIdentifier,
            displayName: options.name,
            info: [("BlocklistAppGroup", options.group), callDirectoryList]
                + (options.publicationURL.map { [("BlocklistPublication", $0)] } ?? []),
            // The catch-up when pushes were missed runs as a background app refresh task.
            infoLists: options.publicationURL == nil
                ? []
                : [
                    ("BGTaskSchedulerPermittedIdentifiers", [options.bundleIdentifier + ".catch-up"]),
                    ("UIBackgroundModes", ["fetch"]),
                ],
            launchScreen: true,
            entitlements: associated,
            // Pushes reach the Notification Service Extension only in an app entitled to them.
            pushes: options.root != nil
        )
        yaml.list(
            "dependencies",
            extensions.map { ["target": $0] } + [
                ["package": "blocklist", "product": "UpdateCore"],
                ["package": "blocklist", "product": "BlocklistCore"],
            ]
        )
        yaml.close()

        for (shard, name) in zip(manifest.shards, callDirectories) {
            extensionTarget(
                &yaml,
                options,
                name,
                // Settings lists the extensions by name: each says which of the lists it is.
                displayName: "\(options.name) \(name.dropFirst("CallDirectory".count))",
                sources: ["CallDirectoryHandler.swift", "ExtensionSettings.swift"],
                point: "com.apple.callkit.call-directory",
                principal: "CallDirectoryHandler",
                info: [("BlocklistAppGroup", options.group), ("BlocklistShard", baseName(shard.file))],
                products: ["BlocklistCore"]
            )
        }
        extensionTarget(
            &yaml,
            options,
            "MessageFilter",
            displayName: "\(options.name) SMS",
            sources: ["MessageFilterExtension.swift", "ExtensionSettings.swift"],
            point: "com.apple.identitylookup.message-filter",
            principal: "MessageFilterExtension",
            info: [("BlocklistAppGroup", options.group)],
            attributes: options.deferralURL.map { [("ILMessageFilterExtensionNetworkURL", $0)] } ?? [],
            entitlements: associated,
            // ExtensionSettings records failures and finds files through BlocklistCore.
            products: ["MessageFilterCore", "BlocklistCore"]
        )
        if options.root != nil {
            extensionTarget(
                &yaml,
                options,
                "NotificationService",
                displayName: options.name,
                sources: ["NotificationService.swift", "ExtensionSettings.swift", "CallKitManager.swift"],
                resources: "NotificationService",
                point: "com.apple.usernotifications.service",
                principal: "NotificationService",
                info: [("BlocklistAppGroup", options.group), callDirectoryList],
                products: ["UpdateCore", "BlocklistCore"]
            )
        }
        yaml.close()
        return yaml.text
    }

    private static func extensionTarget(
        _ yaml: inout YAMLWriter,
        _ options: Options,
        _ name: String,
        displayName: String,
        sources: [String],
        resources: String? = nil,
        point: String,
        principal: String,
        info: [(String, String)],
        attributes: [(String, String)] = [],
        entitlements: [(String, [String])] = [],
        products: [String]
    ) {
        yaml.open(name)
        yaml.pair("type", "app-extension")
        yaml.pair("platform", "iOS")
        yaml.list("sources", sources.map { ["path": "Extensions/" + $0] } + (resources.map { [["path": $0]] } ?? []))
        target(
            &yaml,
            options,
            identifier: options.bundleIdentifier + "." + name,
            displayName: displayName,
            info: info,
            extension: (point, "$(PRODUCT_MODULE_NAME)." + principal, attributes),
            entitlements: entitlements
        )
        yaml.list("dependencies", products.map { ["package": "blocklist", "product": $0] })
        yaml.close()
    }

    /// A target's bundle identifier, Info.plist, App Group entitlement and `entitlements`.
    private static func target(
        _ yaml: inout YAMLWriter,
        _ options: Options,
        identifier: String,
        displayName: String,
        info: [(String, String)],
        infoLists: [(String, [String])] = [],
        launchScreen: Bool = false,
        extension point: (String, String, [(String, String)])? = nil,
        entitlements: [(String, [String])] = [],
        pushes: Bool = false
    ) {
        let directory =
            "Supporting/"
            + (identifier == options.bundleIdentifier ? options.name : String(identifier.split(separator: ".").last!))
        yaml.open("settings")
        yaml.open("base")
        yaml.pair("PRODUCT_BUNDLE_IDENTIFIER", identifier)
        yaml.close()
        yaml.close()
        yaml.open("info")
        yaml.pair("path", directory + "/Info.plist")
        yaml.open("properties")
        yaml.pair("CFBundleDisplayName", displayName)
        yaml.pair("CFBundleShortVersionString", "$(MARKETING_VERSION)")
        yaml.pair("CFBundleVersion", "$(CURRENT_PROJECT_VERSION)")
        for (key, value) in info { yaml.pair(key, value) }
        for (key, values) in infoLists { yaml.list(key, values) }
        // An app without a launch screen runs letterboxed.
        if launchScreen { yaml.emptyMapping("UILaunchScreen") }
        if let (point, principal, attributes) = point {
            yaml.open("NSExtension")
            yaml.pair("NSExtensionPointIdentifier", point)
            yaml.pair("NSExtensionPrincipalClass", principal)
            if !attributes.isEmpty {
                yaml.open("NSExtensionAttributes")
                for (key, value) in attributes { yaml.pair(key, value) }
                yaml.close()
            }
            yaml.close()
        }
        yaml.close()
        yaml.close()
        yaml.open("entitlements")
        yaml.pair(
            "path",
            directory + "/" + (directory.split(separator: "/").last.map(String.init) ?? "") + ".entitlements"
        )
        yaml.open("properties")
        yaml.list("com.apple.security.application-groups", [options.group])
        for (key, values) in entitlements { yaml.list(key, values) }
        if pushes { yaml.pair("aps-environment", "development") }
        yaml.close()
        yaml.close()
    }
}

/// Block-style YAML, two spaces a level; every scalar double-quoted.
struct YAMLWriter {
    private(set) var text = ""
    private var depth = 0

    mutating func line(_ content: String) {
        text += String(repeating: "  ", count: depth) + content + "\n"
    }

    mutating func pair(_ key: String, _ value: String) { line(JSONText.string(key) + ": " + JSONText.string(value)) }

    mutating func open(_ key: String) {
        line(JSONText.string(key) + ":")
        depth += 1
    }

    mutating func close() { depth -= 1 }

    /// `key: {}`.
    mutating func emptyMapping(_ key: String) { line(JSONText.string(key) + ": {}") }

    mutating func list(_ key: String, _ items: [String]) {
        line(JSONText.string(key) + ":")
        for item in items { line("  - " + JSONText.string(item)) }
    }

    /// A list of mappings, each key in the order given by sorting.
    mutating func list(_ key: String, _ items: [[String: String]]) {
        line(JSONText.string(key) + ":")
        for item in items {
            for (offset, member) in item.sorted(by: { $0.key < $1.key }).enumerated() {
                line(
                    (offset == 0 ? "  - " : "    ") + JSONText.string(member.key) + ": " + JSONText.string(member.value)
                )
            }
        }
    }
}
