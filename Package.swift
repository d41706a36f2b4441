// swift-tools-version:6.1
import PackageDescription

// MARK: - Shared settings

/// Linking the command-line tools statically keeps their resident memory close to what an iOS
/// extension gets (about 7 MiB): a dynamically linked Swift binary starts at ~8 MiB because every
/// shared library counts. Only Linux supports `-static-executable`.
let staticExecutable: [LinkerSetting] = [
    .unsafeFlags(["-static-executable"], .when(platforms: [.linux]))
]

/// Links with lld and places the functions `target` runs next to each other, so that it touches a
/// few hundred KiB of its code instead of pieces of every 64 KiB window (Linux maps code around
/// each page fault, and whole large folios of a file that `cp` or `install` wrote). See
/// Sources/<target>/hot-functions.order and Scripts/update-hot-functions.sh.
func hotFunctionsFirst(_ target: String) -> [LinkerSetting] {
    [
        .unsafeFlags(
            [
                "-use-ld=lld",
                "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/\(target)/hot-functions.order",
                "-Xlinker", "--no-warn-symbol-ordering",
            ],
            .when(platforms: [.linux])
        )
    ]
}

/// swift-argument-parser uses FoundationEssentials, whose static archives need these at link time.
let staticFoundationLibraries: [LinkerSetting] = [
    .linkedLibrary("_FoundationCollections", .when(platforms: [.linux])),
    .linkedLibrary("_FoundationCShims", .when(platforms: [.linux])),
    .linkedLibrary("swiftSynchronization", .when(platforms: [.linux])),
]

/// The Notification Service Extension's host: static, with the Foundation archives swift-crypto
/// needs on Linux (its `Data`), and its hot functions first.
let notificationServiceLinking: [LinkerSetting] =
    staticExecutable + staticFoundationLibraries + hotFunctionsFirst("blocklist-notification-service")

/// Optimization in debug builds too, for the modules the tests drive hardest through the tools
/// (the regex compiler, list import, set storage and reading, the simulator, publication and
/// install): `swift test` runs the debug binaries, and these modules at -Onone made it take
/// twice as long. None is in an app's products (BlocklistCore, MessageFilterCore, UpdateCore), so
/// the unsafe flag never reaches a package that depends on blocklist by version.
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

// MARK: - The Tools trait: what only the command-line tools and servers link

/// Whether this manifest is read as a dependency's, as in an app that adds the package, rather
/// than from the clone being worked on: from its checkout (SwiftPM's `.build/checkouts/NAME`,
/// Xcode's `SourcePackages/checkouts/NAME`), or, while versions are resolved, from the repository
/// itself, which SwiftPM mounts at `/`.
let isDependencyCheckout = Context.packageDirectory.contains("/checkouts/") || Context.packageDirectory == "/"

/// The package traits. `Tools` brings swift-argument-parser, Hummingbird, SwiftNIO, swift-log and
/// swift-service-lifecycle, which only the command-line tools and servers link. It is on by
/// default in a clone (the README's commands build the tools), and off by default where the
/// package is a dependency: an app that adds it by URL, in Xcode's package settings, XcodeGen or a
/// manifest, names no traits and resolves swift-crypto and swift-asn1 alone (docs/ARCHITECTURE.md,
/// "Products and the dependency graph"). A package that wants the tools as a dependency names
/// `traits: ["Tools"]`.
let packageTraits: Set<Trait> = [
    .trait(
        name: "Tools",
        description: "The command-line tools and servers: swift-argument-parser, Hummingbird, SwiftNIO."
    ),
    .default(enabledTraits: isDependencyCheckout ? [] : ["Tools"]),
]

/// A product of a package only the tools use: linked only with the `Tools` trait.
func toolsProduct(_ name: String, _ package: String) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: ["Tools"]))
}

// MARK: - Publication: signed, delta-updated sets and the Notification Service Extension

/// The publication's modules and the Notification Service Extension's host, together: what lists
/// need to reach a phone.
let publicationTargets: [Target] = [
    /// The update's portable core: what an app's Notification Service Extension links to
    /// verify signed publication metadata, open inline pushes and apply shard deltas.
    /// Standard library, zlib (through BlocklistCore) and Crypto; no Foundation.
    .target(
        name: "UpdateCore",
        dependencies: [
            "LibC", "ByteCodecs", "BlocklistCore", "JSONStream", .product(name: "Crypto", package: "swift-crypto"),
        ]
    ),

    /// The update step around UpdateCore: reads a publication (a directory or a server),
    /// verifies it, and installs its newest generation into an App Group through SetStorage's
    /// atomic commit; applies inline pushes. No Foundation: the NSE host links it.
    .target(
        name: "UpdateInstall",
        dependencies: [
            "LibC",
            "UpdateCore", "BlocklistCore", "SetStorage", "BlocklistSystem", "HTTPFetch",
            .product(name: "Crypto", package: "swift-crypto"),
        ],
        swiftSettings: optimizedInDebug
    ),

    /// The publisher's side: key files, `publish` (the set verified through SetReading, the
    /// key checked against the published roots, signed metadata, shards, deltas, atomic
    /// commit), `publication status` and the push payload. No Foundation of its own.
    .target(
        name: "Publication",
        dependencies: [
            "LibC", "UpdateCore", "BlocklistCore", "SetStorage", "SetReading", "BlocklistSystem",
            .product(name: "Crypto", package: "swift-crypto"),
        ],
        swiftSettings: optimizedInDebug
    ),
    /// Plays an app's Notification Service Extension: opens or fetches the update a push
    /// announces, installs it in the App Group, rewrites the alert; a deadline as iOS gives.
    /// No Foundation, no argument parser, statically linked, to stay small.
    .executableTarget(
        name: "blocklist-notification-service",
        dependencies: [
            "LibC", "UpdateCore", "UpdateInstall", "BlocklistCore", "BlocklistSystem",
            .product(name: "Crypto", package: "swift-crypto"),
        ],
        // Top-level code hands its state to the update thread and reads C's stdout and
        // stderr; Swift 5 mode lets that through, as in CommandSupport.
        exclude: ["hot-functions.order"],
        swiftSettings: [.swiftLanguageMode(.v5)],
        linkerSettings: notificationServiceLinking
    ),
]

// MARK: - The app's project: `blocklist xcodegen`, its handler sources, and the iOS SDK's stand-ins

/// The handler sources an app's extensions compile, as files (Sources/AppProject/Handlers), which
/// `blocklist xcodegen` writes into the project and the docs' listings quote.
let handlerFiles = [
    "ExtensionSettings.swift", "CallDirectoryHandler.swift", "MessageFilterExtension.swift",
    "NotificationService.swift", "CallKitManager.swift",
]

let appProjectTargets: [Target] = [
    /// Writes an iOS app's XcodeGen project for a shard set: the host app, one Call Directory
    /// extension per shard, the Message Filter extension and the NSE, with the handler sources
    /// embedded as bytes. No Foundation.
    .target(
        name: "AppProject",
        dependencies: [
            "BlocklistCore", "BlocklistSystem", "ByteCodecs", "JSONStream", "MessageFilterCore", "SetReading",
            "SetStorage", "UpdateCore",
        ],
        exclude: ["Handlers"],
        resources: handlerFiles.map { .embedInCode("Handlers/" + $0) }
    )
]

/// No iOS SDK is available on Linux: stand-ins with the SDK's signatures for CallKit,
/// IdentityLookup, UserNotifications and os's Logger (LoggerStandIn) (and Foundation's App Group directory) let the handler
/// sources compile and run in the tests as they are. Built on Linux only; on Apple platforms the
/// names would be the SDK's own.
#if os(Linux)
    let sdkStandIns: [Target] = [
        .target(name: "AppGroupContainers", path: "Tests/SDKStandIns/AppGroupContainers"),
        .target(name: "CallKit", dependencies: ["AppGroupContainers"], path: "Tests/SDKStandIns/CallKit"),
        .target(name: "IdentityLookup", dependencies: ["AppGroupContainers"], path: "Tests/SDKStandIns/IdentityLookup"),
        .target(
            name: "UserNotifications",
            dependencies: ["AppGroupContainers"],
            path: "Tests/SDKStandIns/UserNotifications"
        ),
        // Not named `os`: a module of that name makes `canImport(os)` true for every package
        // built beside it (swift-argument-parser then calls os_unfair_lock on Linux).
        .target(name: "LoggerStandIn", path: "Tests/SDKStandIns/LoggerStandIn"),
        /// The handler sources, compiled as an app's extension compiles them (the Swift 6
        /// language mode, as the project's SWIFT_VERSION), against the stand-ins.
        .target(
            name: "ExtensionHandlers",
            dependencies: [
                "BlocklistCore", "MessageFilterCore", "UpdateCore", "CallKit", "IdentityLookup", "UserNotifications",
                "LoggerStandIn",
            ],
            path: "Sources/AppProject/Handlers",
            // Outside the package, as in an app: the handlers see the products' public API
            // alone, and their conformances of its errors are retroactive, as an app's are.
            packageAccess: false
        ),
    ]
    /// What the tests (AppProjectTests) add on Linux: the handlers and the stand-ins they run on.
    let standInTestDependencies: [Target.Dependency] = [
        "ExtensionHandlers", "AppGroupContainers", "CallKit", "IdentityLookup", "UserNotifications", "LoggerStandIn",
    ]
#else
    let sdkStandIns: [Target] = []
    let standInTestDependencies: [Target.Dependency] = []
#endif

// MARK: - The benchmarks: in the manifest only with BLOCKLIST_BENCHMARKS=1

/// Whether the benchmarks are asked for: `BLOCKLIST_BENCHMARKS=1 swift package benchmark`
/// (docs/PERFORMANCE.md). They measure modules that are not products (SetStorage, ListImport,
/// the simulator's store), which only a target of this package may import, so they live here;
/// behind the switch, so that neither `swift build` in a clone nor an app that adds the package
/// resolves ordo-one/benchmark and its malloc interposer.
let benchmarksEnabled = Context.environment["BLOCKLIST_BENCHMARKS"] == "1"

/// ordo-one/benchmark, when the benchmarks are asked for.
let benchmarkDependencies: [Package.Dependency] =
    benchmarksEnabled
    ? [.package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"])] : []

/// The benchmarks (Benchmarks/BlocklistBenchmarks; thresholds in Benchmarks/Thresholds), when asked for.
let benchmarkTargets: [Target] =
    benchmarksEnabled
    ? [
        .executableTarget(
            name: "BlocklistBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BlocklistCore", "SetStorage", "ListImport", "SetReading", "CallDirectorySimulator",
                "MessageFilterCore", "MessageFilterCompiler", "BenchWorkloads",
            ],
            path: "Benchmarks/BlocklistBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ] : []

let package = Package(
    name: "blocklist",
    // iOS 15: what the extensions' portable modules (BlocklistCore, MessageFilterCore) need; no
    // Swift `Regex`, clocks or newer API there (PortableModuleTests holds them to this floor). macOS: the
    // publisher's tools, which use the Swift 6 standard library's `String(validating:as:)`.
    platforms: [.iOS(.v15), .macOS(.v15)],
    products: [
        // What an app imports: the three extension-facing libraries. Everything else is the
        // tools' (package access), and the benchmarks are a target of this package.
        .library(name: "BlocklistCore", targets: ["BlocklistCore"]),
        .executable(name: "blocklist", targets: ["blocklist"]),
        .executable(name: "blocklist-extension", targets: ["blocklist-extension"]),
        .executable(name: "blocklist-generate", targets: ["blocklist-generate"]),
        .library(name: "MessageFilterCore", targets: ["MessageFilterCore"]),
        .library(name: "UpdateCore", targets: ["UpdateCore"]),
        .executable(name: "blocklist-message-filter", targets: ["blocklist-message-filter"]),
        .executable(name: "blocklist-sms", targets: ["blocklist-sms"]),
        .executable(name: "blocklist-notification-service", targets: ["blocklist-notification-service"]),
    ],
    traits: packageTraits,
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Only `blocklist-sms` (the deferral server and the Messages simulator) links these.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        // Ed25519 signatures, SHA-256 and ChaChaPoly for publication (CryptoKit's API on Apple platforms).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `swift package generate-documentation` for the DocC catalogs of the extension-facing
        // modules (.ci/run builds them with --warnings-as-errors). No target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ] + benchmarkDependencies,
    targets: [
        // MARK: - C libraries

        /// The C library (Glibc, Musl or Darwin) under one name, imported `internal import LibC`,
        /// never re-exported by a module that imports it.
        .target(name: "LibC"),

        /// The small codecs every side shares, one of each: hex, base64, zlib's CRC-32 and the
        /// syntax of an http(s) URL. Standard library and zlib, so the three extensions link it.
        .target(name: "ByteCodecs", dependencies: ["CZlib"]),

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

        // MARK: - The Call Directory extension: its portable core, its host's wire, the CallKit stand-in

        /// The portable core: block specs, the run generator, the shard planner and the shard format.
        /// Swift standard library and zlib only, so it can run inside an iOS Call Directory extension.
        .target(
            name: "BlocklistCore",
            dependencies: ["LibC", "ByteCodecs", "CZlib"]
        ),
        /// The records a Call Directory extension's host streams to the simulator: the host's
        /// side of the CallKit stand-in, as MessageFilterHosting is the message filter's.
        .target(name: "CallDirectoryHosting"),
        /// The Call Directory simulator: a SQLite store, one reload at a time, CallKit's rules and
        /// error codes, enforced on requests streamed from an extension-host process.
        .target(
            name: "CallDirectorySimulator",
            dependencies: [
                "LibC",
                "BlocklistCore", "SetStorage", "SetReading", "BlocklistSystem", "CallDirectoryHosting", "CSQLite",
            ],
            swiftSettings: optimizedInDebug
        ),

        // MARK: - Set storage: shard sets on disk and the lists they are made from

        /// Shard sets on disk: the manifest model, its streaming writer and its one reader, the atomic commit of a
        /// generation, and what blocklist may touch in an output directory. No Foundation, so the
        /// generate executable stays small.
        .target(
            name: "SetStorage",
            dependencies: ["LibC", "ByteCodecs", "BlocklistCore", "BlocklistSystem", "JSONStream"],
            swiftSettings: optimizedInDebug
        ),
        /// A strict, streaming JSON reader (RFC 8259) over a fixed buffer: duplicate keys and deep
        /// nesting refused by name. Standard library only.
        .target(name: "JSONStream", dependencies: ["ByteCodecs"]),
        /// Lists of any shape for a packed set: number, allow and label files read through fixed
        /// buffers (gzip too), list files (JSON) read as a token stream, sorted by an external
        /// merge sort in the staging directory, cut into shards at stable boundaries. No
        /// Foundation: its memory stays flat in the size of the lists.
        .target(
            name: "ListImport",
            dependencies: ["LibC", "ByteCodecs", "BlocklistCore", "SetStorage", "BlocklistSystem", "JSONStream"],
            swiftSettings: optimizedInDebug
        ),
        /// Reading sets: the manifest through `Manifest.decode`, generations held against removal while
        /// they are read, and the set verifier.
        .target(
            name: "SetReading",
            dependencies: ["LibC", "BlocklistCore", "SetStorage", "BlocklistSystem", "ListImport"],
            swiftSettings: optimizedInDebug
        ),

        // MARK: - The Message Filter extension: its portable core, its host's wire, the compiler, the deferral request

        /// The message filter's portable core: compiled rules (format, reader, automata), the
        /// classifier, and the deferral response reader. Standard library and zlib only, so it
        /// can run inside an iOS Message Filter extension.
        .target(
            name: "MessageFilterCore",
            dependencies: ["LibC", "ByteCodecs", "JSONStream", "CWindowScan"]
        ),
        /// The message filter's window scan: a byte shuffle (SSSE3, NEON) over 16 bytes at a time
        /// that tells where a keyword may start, as Hyperscan's Teddy does. Compiler intrinsics
        /// only, no C library call: Swift's portable SIMD has no byte shuffle.
        .target(name: "CWindowScan"),
        /// The Messages simulator's side: the frames between it and the message filter extension's host,
        /// and contacts matched as Messages matches them.
        .target(
            name: "MessageFilterHosting",
            dependencies: ["LibC", "MessageFilterCore"]
        ),
        /// Rules files (JSON, through Codable) and the compiler that turns them into compiled rules.
        .target(
            name: "MessageFilterCompiler",
            dependencies: [
                "LibC", "ByteCodecs", "MessageFilterCore", "BlocklistCore", "BlocklistSystem", "JSONStream",
            ],
            swiftSettings: optimizedInDebug
        ),
        /// The deferral request the system posts to a Message Filter extension's server, checked
        /// by MessageFilterCore's StrictJSON (JSONStream's reader), read through JSONDecoder; the server's, and the
        /// differential tests'. Foundation, no network.
        .target(
            name: "DeferralProtocol",
            dependencies: ["MessageFilterCore"]
        ),

        // MARK: - The tools: system calls, what the CLIs share, argument types

        /// What the tools need of the system and an extension never does: directory handles that
        /// never follow symlinks, file locks, /proc memory figures, child processes.
        .target(
            name: "BlocklistSystem",
            dependencies: ["LibC", "BlocklistCore"]
        ),
        /// Terminal output, standard output's fate at exit, and `generate`'s work: no Foundation and
        /// no argument parser, shared by the CLI and `blocklist-generate`.
        .target(
            name: "CommandSupport",
            dependencies: ["LibC", "BlocklistCore", "SetStorage", "ListImport", "BlocklistSystem", "JSONStream"],
            // Swift 6 refuses any read of C's `stdout` (a global `var`), which checking standard
            // output at exit needs; Swift 5 mode lets the one read in StandardOutput.swift through.
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        /// Argument types the commands share through swift-argument-parser (`WholeNumber`,
        /// `ExtensionList`, `MemorySize`), each with the tool's own sentence for a bad value.
        .target(
            name: "ArgumentTypes",
            dependencies: ["BlocklistCore", toolsProduct("ArgumentParser", "swift-argument-parser")]
        ),

        /// A small, strict HTTP/1.1 GET client on the C library's sockets, for the notification
        /// service's host and `blocklist update --from http://…`: plain `http://` only (an app
        /// fetches over TLS with URLSession), bodies streamed through a fixed buffer, a deadline and
        /// a size limit. Standard library only: no Foundation, no SwiftNIO.
        .target(name: "HTTPFetch", dependencies: ["LibC", "ByteCodecs"]),

        /// The bench's workloads, each run in a child process, its harness (memory sampled by
        /// process id, "key value" reports), the seed's approach, the import against GNU sort,
        /// and the message filter's synthetic corpus and linear-scan baseline. For `blocklist
        /// bench`, the benchmarks and the tests; the programs it starts come from its caller.
        .target(
            name: "BenchWorkloads",
            dependencies: [
                "LibC",
                "BlocklistCore", "BlocklistSystem", "CallDirectorySimulator", "CommandSupport", "MessageFilterCompiler",
                "MessageFilterCore", "MessageFilterHosting", "SetReading", "SetStorage", "Publication", "UpdateCore",
                "UpdateInstall",
            ]
        ),

        // MARK: - Executables

        /// Plays the app extension: streams one shard into a context whose calls go to the
        /// simulator over a pipe. Standard library and zlib only, statically linked, to stay small.
        .executableTarget(
            name: "blocklist-extension",
            dependencies: ["LibC", "BlocklistCore", "CallDirectoryHosting"],
            exclude: ["hot-functions.order"],
            linkerSettings: staticExecutable + hotFunctionsFirst("blocklist-extension")
        ),
        /// `blocklist generate` in a process of its own, which `blocklist` execs before it parses
        /// anything: no Foundation and no argument parser, whose code alone costs most of the 7 MiB
        /// budget. Statically linked (a function order bought nothing measurable here: docs/PERFORMANCE.md, Memory).
        .executableTarget(
            name: "blocklist-generate",
            dependencies: ["LibC", "BlocklistCore", "SetStorage", "CommandSupport"],
            linkerSettings: staticExecutable
        ),
        /// Plays the Message Filter extension: loads compiled rules and answers queries and server
        /// responses over a pipe. No sockets, no Foundation, statically linked, to stay small.
        .executableTarget(
            name: "blocklist-message-filter",
            dependencies: ["BlocklistCore", "LibC", "MessageFilterCore", "MessageFilterHosting"],
            exclude: ["hot-functions.order"],
            linkerSettings: staticExecutable + hotFunctionsFirst("blocklist-message-filter")
        ),
        /// `blocklist sms serve` and `blocklist sms simulate`: the deferral server (Hummingbird)
        /// and the Messages app that posts to it. A program of its own, so that SwiftNIO stays out
        /// of `blocklist` and `blocklist-generate`.
        .executableTarget(
            name: "blocklist-sms",
            dependencies: [
                "LibC",
                "BlocklistCore",  // Figures
                "MessageFilterCore",
                "MessageFilterCompiler",
                "MessageFilterHosting",
                "DeferralProtocol",
                "BlocklistSystem",  // ChildProcess
                "CommandSupport",
                "blocklist-message-filter",  // built with it: `simulate` spawns it from the same directory
                "ArgumentTypes",
                "Publication",  // `updates serve`
                "UpdateCore",
                toolsProduct("ArgumentParser", "swift-argument-parser"),
                toolsProduct("Hummingbird", "hummingbird"),
                toolsProduct("HummingbirdCore", "hummingbird"),
                toolsProduct("NIOHTTPTypes", "swift-nio-extras"),
                toolsProduct("NIOCore", "swift-nio"),
                toolsProduct("NIOPosix", "swift-nio"),
                toolsProduct("NIOHTTP1", "swift-nio"),
                toolsProduct("Logging", "swift-log"),
                toolsProduct("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "blocklist",
            dependencies: [
                "LibC",
                "BlocklistCore",
                "SetStorage",
                "SetReading",
                "BlocklistSystem",
                "ListImport",
                "CallDirectorySimulator",
                "CommandSupport",
                "AppProject",
                "MessageFilterCore",
                "MessageFilterCompiler",
                "MessageFilterHosting",
                "blocklist-extension",  // built with it: `load` spawns it from the same directory
                "blocklist-generate",  // built with it: `generate` execs it from the same directory
                "blocklist-notification-service",  // built with it: `push deliver` runs it from the same directory
                "Publication",
                "UpdateCore",
                "UpdateInstall",
                "HTTPFetch",
                "ArgumentTypes",
                "BenchWorkloads",
                "JSONStream",
                toolsProduct("ArgumentParser", "swift-argument-parser"),
            ],
            exclude: ["hot-functions.order"],
            linkerSettings: staticExecutable + staticFoundationLibraries + hotFunctionsFirst("blocklist")
        ),

        // MARK: - Tests

        // End-to-end tests run the built `blocklist` binary, which `swift test` builds first.
        // MARK: - Tests, one target per area, so that a failure names its module

        /// What the test targets share: temporary directories, the built products, processes,
        /// seeded generators and the seeded-run sizes (`SeededRuns`). Not a product.
        .target(name: "TestSupport", dependencies: ["BlocklistCore", "SetStorage"], path: "Tests/TestSupport"),
        /// BlocklistCore and ByteCodecs: the shard format, the bit codec, the generator.
        .testTarget(
            name: "CoreTests",
            dependencies: ["TestSupport", "ByteCodecs", "BlocklistCore", "UpdateCore", "BenchWorkloads"]
        ),
        /// Sets: JSONStream, ListImport, SetStorage, SetReading and generate's command.
        .testTarget(
            name: "SetTests",
            dependencies: [
                "TestSupport", "ByteCodecs", "BlocklistCore", "BlocklistSystem", "JSONStream", "ListImport",
                "SetStorage",
                "SetReading", "CommandSupport", "CallDirectorySimulator", "UpdateCore", "BenchWorkloads",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        /// The CallKit stand-in: loads, reloads, faults and the store.
        .testTarget(
            name: "CallDirectoryTests",
            dependencies: [
                "TestSupport", "BlocklistCore", "BlocklistSystem", "SetStorage", "SetReading", "CallDirectorySimulator",
                "BenchWorkloads",
            ]
        ),
        /// Updates: UpdateCore, UpdateInstall, Publication, HTTPFetch and the publication's commands.
        .testTarget(
            name: "UpdateTests",
            dependencies: [
                "TestSupport", "BlocklistCore", "BlocklistSystem", "SetStorage", "UpdateCore", "UpdateInstall",
                "Publication", "HTTPFetch", "BenchWorkloads", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        /// The tools as a whole: the command line, the servers, the architecture checks, the app
        /// project and its handlers.
        .testTarget(
            name: "ToolTests",
            dependencies: [
                "TestSupport", "BlocklistCore", "SetStorage", "SetReading", "ArgumentTypes", "BenchWorkloads",
                "AppProject", "MessageFilterCore",
            ] + standInTestDependencies
        ),
        .testTarget(
            name: "MessageFilterTests",
            dependencies: [
                "TestSupport", "BlocklistCore", "ByteCodecs", "MessageFilterCore", "MessageFilterCompiler", "MessageFilterHosting",
                "CWindowScan", "DeferralProtocol", "BenchWorkloads",
            ]
        ),
    ] + publicationTargets + appProjectTargets + sdkStandIns + benchmarkTargets,
    swiftLanguageModes: [.v6]
)
