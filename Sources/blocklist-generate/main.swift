import CommandSupport

// `blocklist generate` in a process of its own, which `blocklist` execs before it parses
// anything: no swift-argument-parser and no Foundation, whose code alone costs megabytes (see
// docs/PERFORMANCE.md, "Memory"). The command's one definition is `GenerateCommand`, which `blocklist` also
// runs in process when this executable is not beside it.
//
// Each argument is read from `argv` as the parser reaches it, never kept as a whole array:
// 20,000 `--pattern`s would cost 1 MiB of Strings before anything else ran. Once they are parsed,
// their pages go back to the kernel.
beginCommand()
if let refusal = argumentNotUTF8(program: "blocklist generate") { StandardOutput.exit(64, message: refusal) }
let arguments = (1..<Int(CommandLine.argc)).lazy.map { String(cString: CommandLine.unsafeArgv[$0]!) }
GenerateCommand.main(arguments, beforeRun: releaseCommandLineArguments)
