import ArgumentParser
import CommandSupport

/// `blocklist sms serve` and `blocklist sms simulate`, which `blocklist` execs here so that
/// SwiftNIO and Hummingbird stay out of `blocklist` and `blocklist-generate`.
@main
struct SMSTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocklist sms",
        abstract: "The deferral server and the Messages app simulator for SMS rules.",
        version: blocklistVersion,
        subcommands: [Serve.self, Simulate.self]
    )

    /// Runs the command and exits non-zero if standard output lost anything, however the command
    /// ended: help and errors included (as `blocklist` does).
    static func main() async {
        beginCommand()
        // `blocklist updates serve` comes here too.
        let program =
            CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "updates" ? "blocklist" : "blocklist sms"
        if let refusal = argumentNotUTF8(program: program) { StandardOutput.exit(64, message: refusal) }
        // `blocklist updates serve`: the publication server shares this program's HTTP stack.
        if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "updates" {
            do {
                var command = try UpdatesTool.parseAsRoot(Array(CommandLine.arguments.dropFirst(2)))
                if var command = command as? AsyncParsableCommand {
                    try await command.run()
                } else {
                    try command.run()
                }
            } catch {
                // A command that printed its own report before failing threw an ExitCode.
                JSONFailure.exit(
                    error,
                    status: UpdatesTool.exitCode(for: error).rawValue,
                    message: UpdatesTool.message(for: error),
                    fullMessage: UpdatesTool.fullMessage(for: error),
                    arguments: CommandLine.arguments.dropFirst(2),
                    reported: error is ExitCode
                )
            }
            StandardOutput.exit(0)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
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
