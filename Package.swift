// swift-tools-version:6.1
import PackageDescription

// MARK: - Shared settings

/// Linking the command-line tools statically keeps their resident memory close to what an iOS
/// extension gets (about 7 MiB): a dynamically linked Swift binary starts at ~8 MiB because every
/// shared library counts. Only Linux supports `-static-executable`.
let staticExecutable: [LinkerSetting] = [
    .unsafeFlags(["-static-executable"], .when(platforms: [.linux]))
]

/// Links with lld and places the functions the CLI runs next to each other, so that it touches a
/// few hundred KiB of its 10 MiB of code instead of pieces of every 64 KiB window (Linux maps
/// code around each page fault). See Sources/blocklist/hot-functions.order and
/// Scripts/update-hot-functions.sh.
let hotFunctionsFirst: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=lld",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/blocklist/hot-functions.order",
            "-Xlinker", "--no-warn-symbol-ordering",
        ],
        .when(platforms: [.linux]))
]

/// swift-argument-parser uses FoundationEssentials, whose static archives need these at link time.
let staticFoundationLibraries: [LinkerSetting] = [
    .linkedLibrary("_FoundationCollections", .when(platforms: [.linux])),
    .linkedLibrary("_FoundationCShims", .when(platforms: [.linux])),
    .linkedLibrary("swiftSynchronization", .when(platforms: [.linux])),
]

let package = Package(
    name: "blocklist",
    products: [
        .library(name: "BlocklistCore", targets: ["BlocklistCore"]),
        .library(name: "BlocklistSet", targets: ["BlocklistSet"]),
        .library(name: "CallDirectorySimulator", targets: ["CallDirectorySimulator"]),
        .executable(name: "blocklist", targets: ["blocklist"]),
        .executable(name: "blocklist-extension", targets: ["blocklist-extension"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        // MARK: - C libraries

        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),

        // MARK: - Libraries

        /// The portable core: block specs, the run generator, the shard planner and the shard format.
        /// Swift standard library and zlib only, so it can run inside an iOS Call Directory extension.
        .target(
            name: "BlocklistCore",
            dependencies: ["CZlib"]
        ),
        /// Shard sets on disk: the manifest, the atomic commit of a generation, the set verifier.
        .target(
            name: "BlocklistSet",
            dependencies: ["BlocklistCore"]
        ),

        /// The Call Directory simulator: a SQLite store, one reload at a time, CallKit's rules and
        /// error codes, enforced on requests streamed from an extension-host process.
        .target(
            name: "CallDirectorySimulator",
            dependencies: ["BlocklistCore", "BlocklistSet", "CSQLite"]
        ),

        // MARK: - Executables

        /// Plays the app extension: streams one shard into a context whose calls go to the
        /// simulator over a pipe. Standard library and zlib only, statically linked, to stay small.
        .executableTarget(
            name: "blocklist-extension",
            dependencies: ["BlocklistCore"],
            linkerSettings: staticExecutable
        ),
        .executableTarget(
            name: "blocklist",
            dependencies: [
                "BlocklistCore",
                "BlocklistSet",
                "CallDirectorySimulator",
                "blocklist-extension",  // built with it: `load` spawns it from the same directory
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["hot-functions.order"],
            linkerSettings: staticExecutable + staticFoundationLibraries + hotFunctionsFirst
        ),

        // MARK: - Tests

        // End-to-end tests run the built `blocklist` binary, which `swift test` builds first.
        .testTarget(name: "BlocklistTests", dependencies: ["BlocklistCore", "BlocklistSet", "CallDirectorySimulator"]),
    ],
    swiftLanguageModes: [.v6]
)
