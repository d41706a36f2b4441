import ArgumentParser
import BlocklistCore
import CommandSupport
import SetReading
import SetStorage

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Check a shard set completely: checksums, order, counts, capacity, and that it equals its spec (or its unchanged inputs).",
        discussion:
            "Exits 0 only when everything holds; otherwise prints one line per problem, each naming its file, and exits 1."
    )

    @Argument(
        help: ArgumentHelp("The output directory holding manifest.json.", valueName: "dir"),
        completion: .directory
    )
    var directory = "Output"

    @Flag(help: "Print the result as JSON.")
    var json = false

    struct Report: Encodable {
        var directory: String
        var valid: Bool
        var shards: Int
        var entries: Int64
        var bytes: Int64
        var problems: [String]
        /// Packed sets: whether the set equals what its unchanged inputs make.
        var equalsInputs: Bool?
        var notes: [String]
    }

    func run() throws {
        let clock = ContinuousClock()
        let started = clock.now
        let result = ShardSet.verify(directory)
        let packed = result.manifest?.spec.layout == .packed
        let elapsed = (clock.now - started).seconds
        if json {
            try printJSON(
                Report(
                    directory: directory,
                    valid: result.isValid,
                    shards: result.shardsVerified,
                    entries: result.entriesVerified,
                    bytes: result.bytesVerified,
                    problems: result.problems.map(\.message),
                    equalsInputs: packed ? result.equalsInputs : nil,
                    notes: result.notes
                )
            )
            if !result.isValid { throw ExitCode.failure }
            return
        }
        for note in result.notes { Terminal.error("note: \(note)\n") }
        if result.isValid {
            let inputs =
                result.equalsInputs
                ? "; equal to what its \(result.inputsUnchanged) unchanged input\(result.inputsUnchanged == 1 ? " makes" : "s make")"
                : ""
            print(
                "OK: \(result.shardsVerified) shard\(result.shardsVerified == 1 ? "" : "s"), \(Figures.grouped(result.entriesVerified)) entries, "
                    + "\(Figures.grouped(result.bytesVerified)) bytes verified in \(Terminal.fixed(elapsed * 1000, 1)) ms\(inputs)"
            )
        } else {
            for problem in result.problems { Terminal.error("Error: \(problem.message)\n") }
            Terminal.error("\(result.problems.count) problem\(result.problems.count == 1 ? "" : "s") in \(directory)\n")
        }
        if !result.isValid { throw ExitCode.failure }
    }
}
