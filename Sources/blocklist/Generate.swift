import ArgumentParser
import BlocklistCore
import CommandSupport

/// The options as swift-argument-parser reads them. `blocklist` hands `generate` to the small
/// `blocklist-generate` executable, which reads the documented forms itself and runs the same
/// `GenerateRunner`; this parser runs for help and for anything that executable hands back (a
/// typo, a bad value), so every error reads like every other command's.
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate the shard files and manifest for a block spec.",
        discussion: """
            Writes one compressed shard per Call Directory extension and a manifest.json into the output \
            directory. The new set is written aside and committed by renaming the manifest, so a failed or \
            interrupted run leaves the previous set intact. blocklist only ever removes what it wrote: it \
            refuses /, a manifest.json another program wrote, and (without --force) a directory that is \
            neither empty nor a blocklist set.
            """)

    @OptionGroup var spec: SpecOptions

    @Option(name: .customLong("numbers"), help: ArgumentHelp(
        "A file of numbers to block, one per line or CSV (first column); - for standard input; gzip is read too. Repeat for more.",
        valueName: "file"))
    var numbers: [String] = []

    @Option(name: .customLong("allow"), help: ArgumentHelp("A file of numbers never to block or identify (allow wins). Repeat for more.", valueName: "file"))
    var allow: [String] = []

    @Option(name: .customLong("allow-pattern"), help: ArgumentHelp("A pattern of numbers never to block or identify, e.g. +3316212####. Repeat for more.", valueName: "pattern"))
    var allowPatterns: [String] = []

    @Option(name: .customLong("labels"), help: ArgumentHelp("A CSV file of number,label: identification entries. Repeat for more.", valueName: "file"))
    var labels: [String] = []

    @Option(name: .customLong("list"), help: ArgumentHelp(
        "A list file: JSON patterns, each with an action (block, identify, allow) and a name (the label), as Saracroche's. Repeat for more.",
        valueName: "file.json"))
    var lists: [String] = []

    @Flag(help: "Skip lines that are not numbers, and report them, instead of refusing the run.")
    var skipInvalid = false

    @Option(help: ArgumentHelp("The country code for numbers written nationally (0 1 62 …), e.g. 33.", valueName: "code"))
    var defaultCountry: Int64?

    @Option(help: ArgumentHelp("range: shard i holds pattern ranks [(i-1)·N, i·N) (default for patterns alone); packed: shards filled with consecutive numbers (default with lists).", valueName: "layout"))
    var layout: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The output directory (created if its parent exists).", valueName: "dir"))
    var output = "Output"

    @Flag(help: "Skip fsync (faster on slow disks; a power cut may then lose the new set, never the old one).")
    var noSync = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "Write into a directory that is not empty and not a blocklist set (its files are left untouched).")
    var force = false

    /// Checked here rather than in `run`, so that a refusal prints `generate`'s own usage line.
    func validate() throws {
        if output.isEmpty { throw ValidationError("--output is empty; give a directory such as Output.") }
        if (numbers + allow + labels + lists).filter({ $0 == "-" }).count > 1 {
            throw ValidationError("Standard input (-) can be read once; give at most one list as -.")
        }
        do {
            _ = try options().spec()
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        try GenerateRunner.run(try options())
    }

    private func options() throws(BlocklistError) -> GenerateOptions {
        var options = try spec.options()
        options.output = output
        options.noSync = noSync
        options.json = json
        options.force = force
        options.numbers = numbers
        options.allow = allow
        for pattern in allowPatterns { try options.addAllowPattern(pattern) }
        options.labels = labels
        options.lists = lists
        options.skipInvalid = skipInvalid
        options.defaultCountry = defaultCountry
        options.layout = layout
        return options
    }
}
