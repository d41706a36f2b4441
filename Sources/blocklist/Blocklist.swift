import ArgumentParser
import BlocklistCore
import CommandSupport
import MessageFilterCore
import UpdateCore

@main
struct Blocklist: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocklist",
        abstract: "Block whole phone-number ranges through iOS Call Directory extensions.",
        discussion: """
            Generates the sorted numbers of a block spec once, as small compressed shard files, one per \
            Call Directory extension (each holds fewer than 2,000,000 entries), and proves them correct.
            """,
        version: blocklistVersion,
        subcommands: [
            Generate.self, Verify.self, Inspect.self, Cat.self, Diff.self, Load.self, Enable.self, Disable.self,
            Status.self,
            Lookup.self, ListFileCommand.self, SMS.self, KeysCommand.self, Publish.self, PublicationCommand.self,
            Update.self, UpdatesCommand.self, Push.self, XcodeGen.self,
            Bench.self,
            BenchWorkload.self,
        ]
    )

    /// Hands `generate` to `blocklist-generate` before anything else runs (see Generate), then
    /// runs the command and exits non-zero if standard output lost anything, however the command
    /// ended: help and errors included.
    static func main() {
        beginCommand()
        // Read in place: `CommandLine.arguments` would copy every argument before the hand-over,
        // and the programs handed over check the arguments' UTF-8 themselves, so that 20,000
        // patterns are read once, in the small process.
        let command = commandLineArgument(1)
        if command == "generate" || (command == "help" && commandLineArgument(2) == "generate") {
            if command == "help" { GenerateCommand.main(["--help"]) }
            // Only returns if the exec failed (blocklist-generate is not beside this copy); the
            // same command then runs here, with more memory.
            _ = replaceProcess(
                with: siblingExecutable("blocklist-generate"),
                name: "blocklist-generate",
                passingArgumentsFrom: 2
            )
            if let refusal = argumentNotUTF8() { StandardOutput.exit(64, message: refusal) }
            GenerateCommand.main(CommandLine.arguments.dropFirst(2))
        }
        if command == "help", commandLineArgument(2) == "sms", let subcommand = commandLineArgument(3),
            subcommand == "serve" || subcommand == "simulate"
        {
            // Their help is blocklist-sms's own, the one definition of their options.
            StandardOutput.flush()
            _ = replaceProcess(
                with: siblingExecutable("blocklist-sms"),
                arguments: ["blocklist-sms", subcommand, "--help"]
            )
        }
        if command == "sms", let subcommand = commandLineArgument(2), subcommand == "serve" || subcommand == "simulate"
        {
            // The server and the simulator link SwiftNIO, so they live in blocklist-sms; only
            // returns if the exec failed, and the stub commands then say so.
            _ = replaceProcess(with: siblingExecutable("blocklist-sms"), name: "blocklist-sms", passingArgumentsFrom: 2)
        }
        if command == "updates" || (command == "help" && commandLineArgument(2) == "updates") {
            // `updates serve` is a Hummingbird server: it lives in blocklist-sms with the other one.
            StandardOutput.flush()
            let rest = command == "help" ? ["--help"] : []
            var arguments = ["blocklist-sms", "updates"]
            var index = command == "help" ? 3 : 2
            while let argument = commandLineArgument(index) {
                arguments.append(argument)
                index += 1
            }
            _ = replaceProcess(with: siblingExecutable("blocklist-sms"), arguments: arguments + rest)
        }
        if let refusal = argumentNotUTF8() { StandardOutput.exit(64, message: refusal) }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            // A command that printed its own report before failing threw an ExitCode.
            JSONFailure.exit(
                error,
                status: exitCode(for: error).rawValue,
                message: message(for: error),
                fullMessage: fullMessage(for: error),
                arguments: CommandLine.arguments.dropFirst(),
                reported: error is ExitCode
            )
        }
        StandardOutput.exit(0)
    }
}
