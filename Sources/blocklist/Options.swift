import ArgumentParser
import BlocklistCore

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

    @Option(help: ArgumentHelp("Candidates per shard: shard i covers ranks [(i-1)·N, i·N).", valueName: "N"))
    var rangeSize: Int64 = BlockSpec.defaultRangeSize

    @Option(help: ArgumentHelp("The most entries a shard may hold (devices refuse 2,000,000).", valueName: "N"))
    var capacity: Int64 = BlockSpec.defaultCapacity

    func validate() throws {
        if noExclusions && !exclusions.isEmpty {
            throw ValidationError("--no-exclusions and --exclude contradict each other; give one.")
        }
        _ = try spec()
    }

    /// The validated spec; a bad value becomes a usage error naming it.
    func spec() throws -> BlockSpec {
        do {
            return try BlockSpec(
                patterns: patterns.isEmpty ? BlockSpec.defaultPatterns : patterns,
                exclusions: noExclusions ? [] : (exclusions.isEmpty ? BlockSpec.defaultExclusions : exclusions),
                rangeSize: rangeSize, capacity: capacity)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
