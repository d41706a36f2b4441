import Foundation
import TestSupport
import Testing

/// The portable modules are what an iOS extension links: BlocklistCore (the Call Directory
/// extension), MessageFilterCore (the Message Filter extension) and UpdateCore (the Notification
/// Service Extension). They must build for Darwin
/// too, at the iOS version Package.swift declares. This machine has no iOS SDK, so the test reads
/// their sources and refuses what would not build there: an unconditional Glibc import,
/// Foundation, calls or paths that exist only on Linux, and standard-library API newer than the
/// declared floor. The tools' own system calls (locks, /proc, child processes) live in
/// BlocklistSystem instead.
@Suite struct PortableModuleTests {

    static let portableModules = ["BlocklistCore", "MessageFilterCore", "UpdateCore"]
    /// Every module an app's extensions link through the three products: those and the small
    /// modules under them.
    static let extensionModules = portableModules + ["ByteCodecs", "JSONStream"]

    /// Every Swift file of `module`, with its text.
    static func sources(of module: String, path: String? = nil, excluding excluded: [String] = []) throws -> [(
        name: String, text: String
    )] {
        let directory = packageRoot.appendingPathComponent(path ?? "Sources/\(module)")
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
        var files: [(String, String)] = []
        while let name = enumerator.nextObject() as? String {
            guard name.hasSuffix(".swift"), !excluded.contains(where: { name.hasPrefix($0 + "/") }) else { continue }
            files.append((name, try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)))
        }
        return files
    }

    /// A source's lines without `//` comments and without the text of multi-line string literals
    /// (a template's `import` line is not the module's), so that prose naming an API does not
    /// count as a use. A line that opens or closes a literal keeps what is outside it.
    static func code(_ text: String) -> [String] {
        var inLiteral = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let pieces = line.components(separatedBy: "\"\"\"")
            var kept = ""
            for (index, piece) in pieces.enumerated() {
                if index > 0 { inLiteral.toggle() }
                if !inLiteral { kept += piece }
            }
            guard let comment = kept.range(of: "//") else { return kept }
            return String(kept[..<comment.lowerBound])
        }
    }

    /// The module a line imports, whatever its attributes and access level (`@_exported`,
    /// `internal`, `package`, `public`, `@preconcurrency`), indented (inside `#if`) or not; nil
    /// for any other line.
    static func importedModule(_ line: String) -> (module: String, reexported: Bool)? {
        let words = line.split(separator: " ")
        guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
            words[..<index].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) })
        else { return nil }
        // `import var Module.name` imports one declaration of Module.
        let kinds: Set<Substring> = ["var", "let", "func", "struct", "class", "enum", "protocol", "typealias"]
        let name = kinds.contains(words[index + 1]) && index + 2 < words.count ? words[index + 2] : words[index + 1]
        return (String(name.split(separator: ".")[0]), words[..<index].contains("@_exported"))
    }

    @Test(arguments: extensionModules)
    func importsOnlyWhatAnExtensionHas(module: String) throws {
        let files = try Self.sources(of: module)
        #expect(files.count >= (Self.portableModules.contains(module) ? 8 : 2), "found \(files.map(\.name))")
        for (name, text) in files {
            for (number, line) in Self.code(text).enumerated() {
                guard let (imported, reexported) = Self.importedModule(line) else { continue }
                #expect(
                    // LibC is the C library under one name; ByteCodecs and JSONStream are
                    // portable (stdlib and zlib); CWindowScan is compiler intrinsics (the
                    // message filter's byte shuffle); UpdateCore (the NSE's) also has
                    // BlocklistCore and Crypto (CryptoKit's API on Apple platforms).
                    ["LibC", "CZlib", "ByteCodecs", "BlocklistCore", "JSONStream", "Crypto", "CWindowScan"]
                        .contains(imported),
                    "\(module)/\(name):\(number + 1) imports \(imported)"
                )
                #expect(!reexported, "\(module)/\(name):\(number + 1) re-exports \(imported) to the app")
            }
        }
    }

    /// The C library has one name in the package (LibC, with a branch for each platform), and no
    /// module re-exports it: every module that calls C imports LibC itself.
    @Test func theCLibraryIsImportedInOnePlaceAndNeverReexported() throws {
        let shim = try String(
            contentsOf: packageRoot.appendingPathComponent("Sources/LibC/LibC.swift"),
            encoding: .utf8
        )
        for platform in ["Glibc", "Musl", "Darwin"] {
            #expect(shim.contains("canImport(\(platform))\n    @_exported import \(platform)\n"), "\(platform)")
        }
        let modules = try FileManager.default.contentsOfDirectory(
            atPath: packageRoot.appendingPathComponent("Sources").path
        )
        #expect(modules.count >= 20)
        for module in modules where !["LibC", "CZlib", "CSQLite"].contains(module) {
            for (name, text) in try Self.sources(of: module) {
                for (number, line) in Self.code(text).enumerated() {
                    guard let (imported, reexported) = Self.importedModule(line) else { continue }
                    #expect(
                        !["Glibc", "Musl", "Darwin"].contains(imported),
                        "\(module)/\(name):\(number + 1) imports \(imported); import LibC"
                    )
                    #expect(
                        !(reexported && imported == "LibC"),
                        "\(module)/\(name):\(number + 1) re-exports the C library"
                    )
                    if imported == "LibC" {
                        #expect(
                            line.contains("internal import") || line.contains("package import"),
                            "\(module)/\(name):\(number + 1) imports LibC without internal or package"
                        )
                    }
                }
            }
        }
    }

    @Test(arguments: extensionModules)
    func callsNothingLinuxOnly(module: String) throws {
        // Each of these builds on Linux only, or is a tool's business rather than an extension's.
        // (`flock`, BlocklistCore's FileLock, is Darwin's too: the App Group's writers take it,
        // never across a suspension; docs/PLATFORM.md.)
        let forbidden = [
            "/proc/", "Glibc.", "epoll", "inotify", "O_DIRECT", "sendfile", "prctl", "posix_spawn", "SOCK_",
            "memfd", "pipe2",
            "ProcessMemory", "DirectoryHandle", "RequestWire",
        ]
        for (name, text) in try Self.sources(of: module) {
            for word in forbidden {
                #expect(!text.contains(word), "\(module)/\(name) uses \(word)")
            }
        }
    }

    /// Standard-library API that arrived after iOS 15, with the iOS version that brought it. Swift
    /// marks these `@available`, and a use below the deployment target does not compile on Darwin;
    /// Linux has no deployment target, so only this list catches it here.
    static let newerAPI: [(use: String, iOS: Int)] = [
        ("Regex<", 16), ("try Regex(", 16), ("#/", 16), ("firstMatch(of:", 16), ("wholeMatch(of:", 16),
        ("ContinuousClock", 16), ("SuspendingClock", 16), ("Duration", 16),
        ("String(validating:", 18), ("Mutex<", 18), ("Atomic<", 18), ("Int128", 18), ("UInt128", 18),
        ("InlineArray", 26), ("Span<", 26), ("RawSpan", 26), ("UTF8Span", 26),
    ]

    /// The iOS version in Package.swift's `platforms:`.
    static func declaredIOSFloor() throws -> Int {
        let manifest = try String(
            contentsOf: packageRoot.appendingPathComponent("Package.swift"),
            encoding: .utf8
        )
        let match = try #require(manifest.firstMatch(of: /\.iOS\(\.v(\d+)\)/), "Package.swift declares no iOS floor")
        return try #require(Int(match.1))
    }

    @Test(arguments: extensionModules)
    func usesNoAPINewerThanTheDeclaredIOSFloor(module: String) throws {
        let floor = try Self.declaredIOSFloor()
        #expect((15...26).contains(floor))
        for (name, text) in try Self.sources(of: module) {
            let lines = Self.code(text)
            for (number, line) in lines.enumerated() {
                for (use, version) in Self.newerAPI where version > floor && line.contains(use) {
                    Issue.record(
                        "\(module)/\(name):\(number + 1) uses \(use), which needs iOS \(version); the floor is \(floor)"
                    )
                }
                #expect(!line.contains("@available"), "\(module)/\(name):\(number + 1) narrows availability")
            }
        }
    }

    /// MessageFilterCore's one C target is compiler intrinsics: its sources include only the
    /// compiler's own headers (and its own), and call no C library function, so that an app's
    /// extension links nothing more through it.
    @Test func theWindowScanIncludesOnlyTheCompilersHeaders() throws {
        let directory = packageRoot.appendingPathComponent("Sources/CWindowScan")
        let compilers: Set<String> = [
            "stddef.h", "stdint.h", "cpuid.h", "immintrin.h", "arm_neon.h", "CWindowScan.h", "WindowScanBody.h",
        ]
        var included: [String] = []
        let names = try #require(FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String])
            .filter { $0.hasSuffix(".c") || $0.hasSuffix(".h") }
        #expect(names.count >= 3, "found \(names)")
        for name in names {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("#include") {
                let header = line.split(separator: " ").last!.trimmingCharacters(in: CharacterSet(charactersIn: "<>\""))
                included.append(header)
                #expect(compilers.contains(header), "\(name) includes \(header)")
            }
            for call in ["memcpy", "memset", "malloc", "printf", "__builtin_cpu_supports"] {
                #expect(!text.contains(call + "("), "\(name) calls \(call)")
            }
        }
        #expect(included.contains("immintrin.h") && included.contains("arm_neon.h"))
    }

    /// A template's lines inside a multi-line string literal are not imports; the lines around it are.
    @Test func importsInsideAMultiLineStringAreNotTheModules() {
        let source = "import A\nlet t = \"\"\"\n    import B\n    \"\"\"\nimport C // import D\n"
        let imported = Self.code(source).compactMap { Self.importedModule($0)?.module }
        #expect(imported == ["A", "C"])
    }

    /// The list above must catch what it lists: a line that uses each API is found, and one that
    /// only names it in a comment is not.
    @Test func theAvailabilityCheckFindsWhatItLists() {
        for (use, _) in Self.newerAPI {
            #expect(Self.code("let x = \(use)").joined().contains(use))
            #expect(!Self.code("let x = 1  // \(use)").joined().contains(use))
        }
    }
}
