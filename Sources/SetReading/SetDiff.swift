import BlocklistCore
import BlocklistSystem
import SetStorage

/// What changed between two shard sets, shard by shard, as each Call Directory extension would
/// reload it: the numbers blocked and the identification entries (numbers with a label) added
/// and removed. A number that moves to another shard is removed from one extension and added to
/// the other; a label that changes is one entry removed and one added.
///
/// Each side is a set directory (its manifest, its generation held against removal while read)
/// or a directory of shard files, such as a publication's generation (`PUBDIR/N`). Shards are
/// paired by index; a shard one side lacks counts as empty there. Streamed: one shard pair at a
/// time, through fixed buffers.
package struct SetDiff {
    /// One shard pair's changes.
    package struct ShardChanges: Sendable, Equatable {
        package var index: Int
        package var counts = ShardChangeCounts()
    }

    /// One change, for `--numbers`: a run of numbers blocked or unblocked, or identified (with
    /// its label) or no longer identified.
    package enum Change {
        case blocked(NumberRun)
        case unblocked(NumberRun)
        case identified(NumberRun, label: [UInt8])
        case unidentified(NumberRun)
    }

    /// A side of the comparison: its shard files in index order (nil where it has no shard of
    /// that index).
    package struct Side {
        package let name: String
        package let shards: [Int: String]
        /// Holds a set's generation until the comparison ends.
        private let holding: ReadingSet?

        /// The generations a publication directory holds (directories named by a number), or
        /// `nil` if `directory` is not a publication (no `timestamp.json`).
        static func heldGenerations(_ directory: String) -> [UInt64]? {
            guard (try? FileSystem.kind(directory + "/timestamp.json")) == .file,
                let handle = try? DirectoryHandle(path: directory), let names = try? handle.entries()
            else { return nil }
            return names.compactMap { name in
                UInt64(name).flatMap { (try? handle.kind(of: name)) == .directory ? $0 : nil }
            }.sorted()
        }

        /// Reads `directory`: a set (it has `manifest.json`), or a directory of shard files.
        package init(_ directory: String) throws(BlocklistError) {
            name = directory
            guard !directory.isEmpty else {
                throw BlocklistError(.invalidInput, "An empty path names no set; give a set's output directory.")
            }
            switch try FileSystem.kind(directory) {
            case .directory: break
            case .missing:
                // PUBDIR/N of a generation the publication no longer holds: name those it holds.
                var parent = directory
                while parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
                let last = parent.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
                parent = String(parent.dropLast(last.count))
                if parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
                if let asked = UInt64(last), let held = Self.heldGenerations(parent.isEmpty ? "." : parent) {
                    let newest = held.last ?? 0
                    let why = asked > newest ? "it was never published" : "publish removes generations past --keep"
                    throw BlocklistError(
                        .io,
                        "\(directory) does not exist: the publication \(parent.isEmpty ? "." : parent) holds \(held.isEmpty ? "no generation" : "generation\(held.count == 1 ? "" : "s") " + held.map(String.init).joined(separator: ", ")) (\(why))."
                    )
                }
                throw BlocklistError(.io, "\(directory) does not exist.")
            default:
                throw BlocklistError(
                    .invalidInput,
                    "\(directory) is not a directory; give a set's output directory or a publication's generation (PUBDIR/N)."
                )
            }
            if try FileSystem.kind(directory + "/" + Manifest.fileName) != .missing {
                let reading = try ReadingSet(directory: directory)
                holding = reading
                var shards: [Int: String] = [:]
                for shard in reading.manifest.shards {
                    shards[shard.index] = reading.manifest.path(of: shard, in: directory)
                }
                self.shards = shards
                return
            }
            holding = nil
            var shards: [Int: String] = [:]
            for name in try FileSystem.list(directory) where name.hasSuffix(".blk") {
                let path = directory + "/" + name
                let index = Int(try ShardHeader.read(path: path).shardIndex)
                if let other = shards[index] {
                    throw BlocklistError(
                        .invalidInput,
                        "\(other) and \(path) are both shard \(index); a set has one file per shard."
                    )
                }
                shards[index] = path
            }
            guard !shards.isEmpty else {
                throw BlocklistError(
                    .invalidInput,
                    "\(directory) holds no manifest.json and no shard files (.blk); give a set's output directory or a publication's generation (PUBDIR/N)."
                )
            }
            self.shards = shards
        }
    }

    /// Compares `old` with `new`, shard by shard, handing each change to `change` (ascending
    /// within a shard, blocking entries first) when it is given.
    ///
    /// - Returns: the changes of every shard index either side has, ascending.
    package static func compare(
        _ old: Side,
        _ new: Side,
        changes change: ((Change) throws -> Void)? = nil
    ) throws -> [ShardChanges] {
        let indices = Set(old.shards.keys).union(new.shards.keys).sorted()
        var result: [ShardChanges] = []
        for index in indices {
            var shard = ShardChanges(index: index)
            let oldReader = try old.shards[index].map { path throws(BlocklistError) in try ShardReader(path: path) }
            let newReader = try new.shards[index].map { path throws(BlocklistError) in try ShardReader(path: path) }
            // A missing shard reads as empty: its side's runs end at once.
            let oldRuns = oldReader.map(ShardRuns.init)
            let newRuns = newReader.map(ShardRuns.init)
            var diff = RunDiff(old: OptionalRuns(oldRuns), new: OptionalRuns(newRuns))
            while let next = diff.next() {
                switch next {
                case .remove(let run):
                    shard.counts.removed += run.count
                    try change?(.unblocked(run))
                case .add(let run):
                    shard.counts.added += run.count
                    try change?(.blocked(run))
                }
            }
            if let error = oldRuns?.error ?? newRuns?.error { throw error }
            switch (oldReader, newReader) {
            case (let o?, let n?):
                var labels = try IdentificationDiff(old: o, new: n)
                let table = change == nil ? [] : try n.readLabels()
                while let next = try labels.next() {
                    switch next {
                    case .remove(let run):
                        shard.counts.labelsRemoved += run.count
                        try change?(.unidentified(run))
                    case .add(let run, let label):
                        shard.counts.labelsAdded += run.count
                        try change?(.identified(run, label: table.isEmpty ? [] : table[label]))
                    }
                }
            case (let o?, nil):
                while let (run, _) = try o.nextIdentificationRun() {
                    shard.counts.labelsRemoved += run.count
                    try change?(.unidentified(run))
                }
            case (nil, let n?):
                let table = try n.readLabels()
                while let (run, label) = try n.nextIdentificationRun() {
                    shard.counts.labelsAdded += run.count
                    try change?(.identified(run, label: table[label]))
                }
            case (nil, nil):
                break
            }
            result.append(shard)
        }
        return result
    }
}

/// A shard's runs, or none when the side lacks the shard.
private struct OptionalRuns: IteratorProtocol {
    let runs: ShardRuns?
    init(_ runs: ShardRuns?) { self.runs = runs }
    mutating func next() -> NumberRun? { runs?.next() }
}
