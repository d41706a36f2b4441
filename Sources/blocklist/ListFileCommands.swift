#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import BlocklistCore
import BlocklistListFile
import BlocklistSystem
import CommandSupport

struct ListFileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-file",
        abstract: "Check list files: JSON patterns, each with an action (block, identify or allow) and a name.",
        discussion: """
            A list file has Saracroche's shape: {"name": …, "version": …, "patterns": [{"pattern": "33162######", \
            "action": "block", "name": "…"}]}. `generate --list FILE` reads it.
            """,
        subcommands: [Check.self, Decode.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read a list file and say what it holds, or what is wrong with it.")

        @Argument(help: ArgumentHelp("The list file.", valueName: "file"))
        var file: String

        func run() throws {
            let list = try ListFile.decode(try FileSystem.readFile(file, limit: ListFile.maximumBytes + 1), source: file)
            let counts = ListFile.Action.allCases.map { action in "\(list.entries.filter { $0.action == action }.count) \(action.rawValue)" }
            let title = [list.name.map { "\"\($0)\"" }, list.version.map { "version \($0)" }].compactMap { $0 }.joined(separator: ", ")
            print("\(file)\(title.isEmpty ? "" : " (\(title))"): \(list.entries.count) patterns: \(counts.joined(separator: ", ")).")
        }
    }

    /// What `generate --list` runs: Foundation's JSONDecoder stays out of `generate`'s process.
    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read a list file on standard input and write its patterns as records (for generate).", shouldDisplay: false)

        @Option(help: ArgumentHelp("How sentences name the file.", valueName: "name"))
        var source = "standard input"

        func run() throws {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while bytes.count <= ListFile.maximumBytes {
                let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { throw BlocklistError(.io, "Reading \(source) failed: \(String(cString: strerror(errno))).") }
                if n == 0 { break }
                bytes += chunk[0..<n]
            }
            do {
                print(try ListFile.decode(bytes, source: source).records, terminator: "")
            } catch {
                // One record the reader turns into the error it reports.
                print("error\t\(error.message)")
                throw ExitCode(1)
            }
        }
    }
}
