import ArgumentParser

/// `blocklist sms serve` and `blocklist sms simulate`, which `blocklist` execs here so that
/// SwiftNIO and Hummingbird stay out of `blocklist` and `blocklist-generate`.
@main
struct SMSTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocklist sms",
        abstract: "The deferral server and the Messages app simulator for SMS rules.",
        subcommands: [Serve.self, Simulate.self]
    )
}
