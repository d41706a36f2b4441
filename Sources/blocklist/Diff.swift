import ArgumentParser
import BlocklistCore
import CommandSupport
import SetReading

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what changed between two shard sets, or two generations of a publication.",
        discussion: """
            Each side is a set's output directory (holding manifest.json) or a directory of shard files, such as a \
            publication's generation (PUBDIR/N). Shards are compared by index, as each Call Directory extension \
            would reload its own: a number that moves to another shard is removed from one and added to the other, \
            and a changed label is one identification entry removed and one added. Prints each changed shard's \
            counts and the totals; with --numbers, every changed number instead, one per line, shard by \
            shard (its blocking entries, then its identification entries, each ascending): +N blocked, -N \
            unblocked, +N<TAB>label identified, -N<TAB> no longer identified (the counts then go to standard \
            error). Reads one shard pair at a time. Exits 0 whether or not the sets \
            differ.
            """
    )

    @Argument(help: ArgumentHelp("The older set or generation.", valueName: "old"), completion: .directory)
    var old: String

    @Argument(help: ArgumentHelp("The newer set or generation.", valueName: "new"), completion: .directory)
    var new: String

    @Flag(help: "Print every changed number, one per line.")
    var numbers = false

    @Flag(help: "Print the counts as JSON.")
    var json = false

    struct Report: Encodable {
        struct Shard: Encodable {
            var index: Int
            var added: Int64
            var removed: Int64
            var labelsAdded: Int64
            var labelsRemoved: Int64
        }
        var old: String
        var new: String
        var added: Int64
        var removed: Int64
        var labelsAdded: Int64
        var labelsRemoved: Int64
        /// The shards that changed.
        var shards: [Shard]
    }

    func validate() throws {
        if numbers && json {
            throw ValidationError("--numbers prints lines and --json one object; give one of them.")
        }
    }

    func run() throws {
        let old = try SetDiff.Side(self.old)
        let new = try SetDiff.Side(self.new)
        let output = LineWriter(fd: 1)
        let shards: [SetDiff.ShardChanges]
        do {
            shards = try SetDiff.compare(old, new, changes: numbers ? { try Self.write($0, to: output) } : nil)
            try output.flush()
        } catch {
            // What was printed before the error stays: never a silent cut.
            try output.flush()
            throw error
        }
        let changed = shards.filter { $0.counts != ShardChangeCounts() }
        let total = changed.reduce(into: ShardChangeCounts()) {
            $0.added += $1.counts.added
            $0.removed += $1.counts.removed
            $0.labelsAdded += $1.counts.labelsAdded
            $0.labelsRemoved += $1.counts.labelsRemoved
        }
        if json {
            try printJSON(
                Report(
                    old: self.old,
                    new: self.new,
                    added: total.added,
                    removed: total.removed,
                    labelsAdded: total.labelsAdded,
                    labelsRemoved: total.labelsRemoved,
                    shards: changed.map {
                        .init(
                            index: $0.index,
                            added: $0.counts.added,
                            removed: $0.counts.removed,
                            labelsAdded: $0.counts.labelsAdded,
                            labelsRemoved: $0.counts.labelsRemoved
                        )
                    }
                )
            )
            return
        }
        var lines: [String] = []
        let width = String(shards.last?.index ?? 1).count
        for shard in changed {
            let index = String(shard.index)
            lines.append(
                "shard \(String(repeating: "0", count: max(0, width - index.count)) + index): \(Self.counts(shard.counts))"
            )
        }
        lines.append(
            changed.isEmpty
                ? "No change: \(shards.count) shard\(shards.count == 1 ? "" : "s") compared."
                : "In all, \(changed.count) of \(shards.count) shard\(shards.count == 1 ? "" : "s") changed: \(Self.counts(total))"
        )
        for line in lines {
            if numbers { Terminal.error(line + "\n") } else { print(line) }
        }
    }

    /// "+25 −7 numbers, +0 −0 labeled".
    static func counts(_ counts: ShardChangeCounts) -> String {
        "+\(Figures.grouped(counts.added)) −\(Figures.grouped(counts.removed)) numbers blocked, "
            + "+\(Figures.grouped(counts.labelsAdded)) −\(Figures.grouped(counts.labelsRemoved)) identified"
    }

    /// One change's numbers, a line each.
    static func write(_ change: SetDiff.Change, to output: LineWriter) throws {
        switch change {
        case .blocked(let run):
            for number in run.start...run.last { try output.write(number, prefix: UInt8(ascii: "+")) }
        case .unblocked(let run):
            for number in run.start...run.last { try output.write(number, prefix: UInt8(ascii: "-")) }
        case .identified(let run, let label):
            for number in run.start...run.last { try output.write(number, prefix: UInt8(ascii: "+"), label: label) }
        case .unidentified(let run):
            for number in run.start...run.last { try output.write(number, prefix: UInt8(ascii: "-"), label: []) }
        }
    }
}
