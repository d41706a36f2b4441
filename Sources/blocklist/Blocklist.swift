import ArgumentParser

@main
struct Blocklist: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocklist",
        abstract: "Block whole phone-number ranges through iOS Call Directory extensions.",
        discussion: """
            Generates the sorted numbers of a block spec once, as small compressed shard files, one per \
            Call Directory extension (each holds fewer than 2,000,000 entries), and proves them correct.
            """,
        version: "0.1.0",
        subcommands: [
            Generate.self, Verify.self, Inspect.self, Cat.self, Load.self, Enable.self, Disable.self, Status.self,
            Lookup.self, Bench.self, BenchWorkload.self,
        ]
    )
}
