import ArgumentParser
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

    @Argument(parsing: .captureForPassthrough, help: "generate's options: see blocklist generate --help.")
    var arguments: [String] = []

    func run() throws {
        GenerateCommand.main(arguments)
    }
}
