import ArgumentParser
import BlocklistCore
import CommandSupport

/// The block spec, shared by the commands that generate.
struct SpecOptions: ParsableArguments {
    @Option(
        name: .customLong("pattern"),
        help: ArgumentHelp(
            "A number pattern: + then digits, # for any digit. Repeat for more. (default: \(BlockSpec.defaultPatterns[0]))",
            valueName: "pattern"))
    var patterns: [String] = []

    @Option(
        name: .customLong("exclude"),
        help: ArgumentHelp(
            "Skip numbers whose digits (country code included) contain this string. Repeat for more. (default: \(BlockSpec.defaultExclusions[0]))",
            valueName: "digits"))
    var exclusions: [String] = []

    @Flag(help: "Exclude nothing (instead of the default exclusion).")
    var noExclusions = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Candidates per shard: shard i covers ranks [(i-1)·N, i·N).", valueName: "N"))
    var rangeSize: WholeNumber = WholeNumber(BlockSpec.defaultRangeSize)

    @Option(parsing: .unconditional, help: ArgumentHelp("The most entries a shard may hold (devices refuse 2,000,000).", valueName: "N"))
    var capacity: WholeNumber = WholeNumber(BlockSpec.defaultCapacity)

    func options() throws(BlocklistError) -> GenerateOptions {
        var options = GenerateOptions()
        for pattern in patterns { try options.addPattern(pattern) }
        options.exclusions = exclusions
        options.noExclusions = noExclusions
        options.rangeSize = rangeSize.value
        options.capacity = capacity.value
        return options
    }

    func validate() throws {
        do {
            _ = try options().spec()
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// A whole number argument, read with the tool's own sentence for anything else; taken with
/// `.unconditional` parsing so that `--capacity -5` reaches validation instead of being read as
/// an option named `-5`.
struct WholeNumber: ExpressibleByArgument, Sendable, CustomStringConvertible {
    var value: Int64
    init(_ value: Int64) { self.value = value }
    init?(argument: String) {
        guard let value = Int64(argument) else { return nil }
        self.value = value
    }
    var description: String { String(value) }
    static var defaultCompletionKind: CompletionKind { .default }
}
