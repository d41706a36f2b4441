// swift-tools-version:6.1
import PackageDescription

// The benchmarks live in their own package so that the root stays light: only this package
// depends on ordo-one/benchmark. Run them with
//     swift package --package-path Benchmarks benchmark
let package = Package(
    name: "BlocklistBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "blocklist", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "BlocklistBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BlocklistCore", package: "blocklist"),
                .product(name: "SetStorage", package: "blocklist"),
                .product(name: "ListImport", package: "blocklist"),
                .product(name: "SetReading", package: "blocklist"),
                .product(name: "CallDirectorySimulator", package: "blocklist"),
                .product(name: "MessageFilterCore", package: "blocklist"),
                .product(name: "MessageFilterCompiler", package: "blocklist"),
                .product(name: "BenchWorkloads", package: "blocklist"),
            ],
            path: "Benchmarks/BlocklistBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
