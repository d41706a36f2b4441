// swift-tools-version:6.1
import PackageDescription

// An app's three extensions, as an iOS developer links blocklist into them: each handler target
// is what one extension's principal class calls, and `app-check` runs the three on files the
// blocklist tools made (Scripts/app-package.sh). It names no traits, as Xcode's package settings
// and XcodeGen cannot: as a dependency, blocklist leaves out the tools' dependencies
// (swift-argument-parser, Hummingbird, SwiftNIO) by default, and the app resolves swift-crypto and
// swift-asn1 alone.
//
// Point BLOCKLIST_URL at another copy of blocklist (a file:// URL of a clone with a version tag).
let blocklistURL = Context.environment["BLOCKLIST_URL"] ?? "https://github.com/blocklist/blocklist"

let package = Package(
    name: "ExtensionApp",
    platforms: [.iOS(.v15), .macOS(.v15)],
    dependencies: [
        .package(url: blocklistURL, from: "1.0.0")
    ],
    targets: [
        /// The Call Directory extension's handler: streams a shard into `addBlockingEntry`.
        .target(
            name: "CallDirectoryHandler",
            dependencies: [.product(name: "BlocklistCore", package: "blocklist")]
        ),
        /// The Message Filter extension's handler: classifies a message offline.
        .target(
            name: "MessageFilterHandler",
            dependencies: [.product(name: "MessageFilterCore", package: "blocklist")]
        ),
        /// The Notification Service Extension's handler: applies an update file or an opened push.
        .target(
            name: "NotificationServiceHandler",
            dependencies: [.product(name: "UpdateCore", package: "blocklist")]
        ),
        .executableTarget(
            name: "app-check",
            dependencies: ["CallDirectoryHandler", "MessageFilterHandler", "NotificationServiceHandler"]
        ),
    ]
)
