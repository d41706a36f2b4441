import Foundation
import Testing

/// BlocklistCore is what an iOS Call Directory extension links, so it must build for Darwin too.
/// This machine has no iOS SDK, so the test reads the core's sources and refuses what would not:
/// an unconditional Glibc import, Foundation, and calls or paths that exist only on Linux. The
/// tools' own system calls (locks, /proc, child processes) live in BlocklistSystem instead.
@Suite struct PortableCoreTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every Swift file of BlocklistCore, with its text.
    func coreSources() throws -> [(name: String, text: String)] {
        let directory = Self.packageRoot.appendingPathComponent("Sources/BlocklistCore")
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
        var files: [(String, String)] = []
        while let name = enumerator.nextObject() as? String {
            guard name.hasSuffix(".swift") else { continue }
            files.append((name, try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)))
        }
        return files
    }

    @Test func theCoreImportsOnlyWhatAnExtensionHas() throws {
        let files = try coreSources()
        #expect(files.count >= 10, "found \(files.map(\.name))")
        for (name, text) in files {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (number, line) in lines.enumerated()
            where line.hasPrefix("import ") || line.hasPrefix("@_exported import ") {
                let module = line.split(separator: " ").last.map(String.init) ?? ""
                #expect(
                    ["Glibc", "Musl", "Darwin", "CZlib"].contains(module),
                    "\(name):\(number + 1) imports \(module)"
                )
                if ["Glibc", "Musl", "Darwin"].contains(module) {
                    // Inside `#if canImport(...)`, with a Darwin branch in the same file.
                    let previous = number > 0 ? lines[number - 1] : ""
                    #expect(
                        previous.contains("canImport(\(module))"),
                        "\(name):\(number + 1) imports \(module) outside #if canImport(\(module))"
                    )
                    #expect(text.contains("canImport(Darwin)"), "\(name) has no Darwin branch")
                }
            }
        }
    }

    @Test func theCoreCallsNothingLinuxOnly() throws {
        // Each of these builds on Linux only, or is a tool's business rather than an extension's.
        let forbidden = [
            "/proc/", "Glibc.", "epoll", "inotify", "O_DIRECT", "sendfile", "prctl", "posix_spawn", "flock(", "SOCK_",
            "memfd", "pipe2",
            "ProcessMemory", "FileLock", "DirectoryHandle", "RequestWire",
        ]
        for (name, text) in try coreSources() {
            for word in forbidden {
                #expect(!text.contains(word), "\(name) uses \(word)")
            }
        }
    }
}
