#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BlocklistCore
import CommandSupport

// `blocklist generate`, in a process of its own: no swift-argument-parser and no Foundation,
// whose code alone costs most of the 7 MiB budget (see README, "Memory"). `blocklist` execs this
// before it parses anything. The forms the help documents are read here; anything else (help, a
// typo, a bad value) goes back to `blocklist generate` in process, whose swift-argument-parser
// says what is wrong exactly as for every other command.

// Each argument is read from `argv` as the parser reaches it, never kept as a whole array:
// 20,000 `--pattern`s would cost 1 MiB of Strings before anything else ran.
let arguments = (1..<Int(CommandLine.argc)).lazy.map { String(cString: CommandLine.unsafeArgv[$0]!) }
guard let options = GenerateOptions.parseStrictly(arguments) else {
    setenv(inProcessVariable, "1", 1)
    let cli = siblingExecutable("blocklist")
    let problem = replaceProcess(with: cli, arguments: ["blocklist", "generate"] + Array(arguments))
    Terminal.error("Error: cannot run \(cli) to parse these arguments: \(problem).\n")
    StandardOutput.exit(1)
}
releaseCommandLineArguments()
do {
    try GenerateRunner.run(options)
} catch {
    Terminal.error("Error: \(error.message)\n")
    StandardOutput.exit(1)
}
StandardOutput.exit(0)
