import ArgumentParser
import BlocklistCore
import BlocklistSystem
import CommandSupport
import ListImport

struct ListFileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-file",
        abstract: "Check list files: JSON patterns, each with an action (block, identify or allow) and a name.",
        discussion: """
            A list file has Saracroche's shape: {"name": …, "version": …, "patterns": [{"pattern": "33162######", \
            "action": "block", "name": "…"}]}. `generate --list FILE` reads it.
            """,
        subcommands: [Check.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read a list file and say what it holds, or what is wrong with it."
        )

        @Argument(help: ArgumentHelp("The list file.", valueName: "file"), completion: .file())
        var file: String

        @Flag(help: "Print what it holds as JSON.")
        var json = false

        struct Report: Encodable {
            var file: String
            var name: String?
            var version: String?
            var patterns: Int
            var block: Int
            var identify: Int
            var allow: Int
        }

        func run() throws {
            let list = try ListFile.read(file)
            let count = { (action: ListFile.Action) in list.entries.filter { $0.action == action }.count }
            if json {
                try printJSON(
                    Report(
                        file: file,
                        name: list.name,
                        version: list.version,
                        patterns: list.entries.count,
                        block: count(.block),
                        identify: count(.identify),
                        allow: count(.allow)
                    )
                )
                return
            }
            let counts = ListFile.Action.allCases.map { action in "\(count(action)) \(action.rawValue)" }
            let title = [list.name.map { "\"\($0)\"" }, list.version.map { "version \($0)" }].compactMap { $0 }.joined(
                separator: ", "
            )
            print(
                "\(file)\(title.isEmpty ? "" : " (\(title))"): \(Figures.counted(list.entries.count, "pattern")): \(counts.joined(separator: ", "))."
            )
        }
    }
}
