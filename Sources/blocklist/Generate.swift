import ArgumentParser
import BlocklistSystem
import CommandSupport

/// `generate` as `blocklist --help` lists it. The command itself is `GenerateCommand` (options,
/// help, parser), which `Blocklist.main` runs, in `blocklist-generate` or in this process, before
/// swift-argument-parser sees the arguments; this type only names it, so that no option of
/// generate is declared twice.
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: GenerateCommand.abstract,
        discussion: GenerateCommand.discussion
    )

    @Argument(
        parsing: .captureForPassthrough,
        help: "generate's options: see blocklist generate --help.",
        completion: .custom { words, index, prefix in Generate.complete(words, index, prefix) }
    )
    var arguments: [String] = []

    /// Completion for generate's arguments: after an option that takes a path, the files and
    /// directories that start with the word; otherwise generate's options.
    static func complete(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let previous = index > 0 && index - 1 < words.count ? words[index - 1] : ""
        if previous == "--layout" { return ["range", "packed"].filter { $0.hasPrefix(prefix) } }
        guard !prefix.hasPrefix("-"), GenerateCommand.takesPath(previous) else {
            return GenerateCommand.optionNames.filter { $0.hasPrefix(prefix) }
        }
        let slash = prefix.lastIndex(of: "/")
        let directory = slash.map { String(prefix[...$0]) } ?? ""
        let start = slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix
        guard let handle = try? DirectoryHandle(path: directory.isEmpty ? "." : directory),
            let names = try? handle.entries()
        else { return [] }
        return names.filter { $0.hasPrefix(start) && (start.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted().map {
            directory + $0 + ((try? handle.kind(of: $0)) == .directory ? "/" : "")
        }
    }

    func run() throws {
        GenerateCommand.main(arguments)
    }
}
