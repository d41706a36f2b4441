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

    @Option(name: .shortAndLong, help: ArgumentHelp("The output directory (created if its parent exists).", valueName: "dir"))
    var output = "Output"

    @Flag(help: "Skip fsync (faster on slow disks; a power cut may then lose the new set, never the old one).")
    var noSync = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "Write into a directory that is not empty and not a blocklist set (its files are left untouched).")
    var force = false

    func validate() throws {
        if output.isEmpty { throw ValidationError("--output is empty; give a directory such as Output.") }
    }

    func run() throws {
        var options = spec.options
        options.output = output
        options.noSync = noSync
        options.json = json
        options.force = force
        try GenerateRunner.run(options)
    }
}
