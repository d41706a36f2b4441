import BlocklistCore
import BlocklistSystem
import SetStorage

extension ShardSet {
    /// What `verify` found.
    package struct Verification: Sendable {
        /// The manifest, if it could be read.
        package var manifest: Manifest?
        /// Every problem found, each naming its file; empty when the set is sound.
        package var problems: [BlocklistError]
        /// Shards that passed every check.
        package var shardsVerified: Int
        /// Entries in the shards that passed.
        package var entriesVerified: Int64
        /// Bytes of the shards that passed.
        package var bytesVerified: Int64
        /// Sentences about what could not be checked, and why.
        package var notes: [String] = []
        /// A packed set: how many input files were found unchanged, and whether the set was made
        /// again from them and found equal.
        package var inputsUnchanged = 0
        package var equalsInputs = false

        /// Whether everything holds.
        package var isValid: Bool { problems.isEmpty && manifest != nil }
    }

    /// Checks a shard set completely and reports every problem, not just the first. Holds the
    /// generation it reads (`ReadingSet`), so a generate meanwhile cannot remove it.
    ///
    /// Checks: the manifest reads and its spec is valid; the spec plans to the manifest's shards;
    /// every listed shard exists and passes `ShardVerifier` (header, checksums, order, counts,
    /// capacity) and agrees with its manifest entry; shards ascend across boundaries; no unlisted
    /// file sits in the set directory; and every shard holds exactly what the spec generates.
    /// A packed set is checked against its inputs instead: each must be unchanged since generate
    /// (size and SHA-256), and the set made again from them must equal the shards byte for byte.
    ///
    /// - Parameter listDecoder: the `blocklist` executable that reads list files (JSON) for a
    ///   packed set made with `--list`.
    /// - Complexity: O(runs) for a range set, with one reader's fixed buffers; a packed set costs
    ///   what its generate did.
    package static func verify(_ outputDirectory: String) -> Verification {
        var result = Verification(manifest: nil, problems: [], shardsVerified: 0, entriesVerified: 0, bytesVerified: 0)
        let manifest: Manifest
        let plan: ShardPlan?
        let reading: ReadingSet
        do {
            reading = try ReadingSet(directory: outputDirectory)
            manifest = reading.manifest
            result.manifest = manifest
            // A packed set is made from list files: its shards are checked on their own and
            // against each other's bounds here, and against its inputs at the end.
            plan = manifest.spec.layout == .packed ? nil : try ShardPlan(try manifest.spec.blockSpec())
        } catch {
            result.problems.append(error)
            return result
        }
        let manifestPath = outputDirectory + "/" + Manifest.fileName
        func problem(_ message: String) { result.problems.append(BlocklistError(.manifestMismatch, message)) }
        let capacity = plan?.spec.capacity ?? manifest.spec.capacity

        if let plan, plan.shards.count != manifest.shards.count {
            problem("\(manifestPath) lists \(manifest.shards.count) shards, but its spec makes \(plan.shards.count).")
        }
        var previousBound: Int64 = -1
        let setPath = outputDirectory + "/" + manifest.directory
        var previousLast: Int64 = 0
        var previousFile = ""
        var total: Int64 = 0
        for entry in manifest.shards {
            let path = manifest.path(of: entry, in: outputDirectory)
            let expected = plan.flatMap {
                entry.index <= $0.shards.count ? $0.compiled.runs(ranks: $0.shards[entry.index - 1].ranks) : nil
            }
            do {
                let summary = try ShardVerifier.verify(
                    path,
                    expectedIndex: entry.index,
                    capacity: capacity,
                    expected: expected
                )
                let header = summary.header
                if plan == nil {
                    let upper =
                        entry.index < manifest.shards.count
                        ? manifest.shards[entry.index].lowerBound ?? Int64.max : Int64.max
                    let low = min(
                        header.entryCount > 0 ? header.first : Int64.max,
                        header.identificationCount > 0 ? header.identificationFirst : Int64.max
                    )
                    let high = max(header.last, header.identificationLast)
                    if header.version < 2 || header.lowerBound <= previousBound
                        || (low != Int64.max && (low < header.lowerBound || high >= upper))
                    {
                        problem(
                            "\(path) holds numbers \(low)...\(high) outside its bounds \(header.lowerBound)..<\(upper), or its bound does not ascend; a packed shard holds only its interval."
                        )
                    }
                    previousBound = header.lowerBound
                    if entry.identified != header.identificationCount {
                        problem(
                            "\(path) holds \(header.identificationCount) identification entries, but \(manifestPath) says \(entry.identified ?? 0)."
                        )
                    }
                }
                var mismatches: [String] = []
                if header.entryCount != entry.count { mismatches.append("count \(header.entryCount) ≠ \(entry.count)") }
                if header.first != entry.first { mismatches.append("first \(header.first) ≠ \(entry.first)") }
                if header.last != entry.last { mismatches.append("last \(header.last) ≠ \(entry.last)") }
                if summary.bytes != entry.bytes { mismatches.append("size \(summary.bytes) ≠ \(entry.bytes) bytes") }
                if header.checksum != entry.checksum {
                    mismatches.append("checksum \(header.checksum) ≠ \(entry.checksum)")
                }
                if !mismatches.isEmpty {
                    problem(
                        "\(path) disagrees with \(manifestPath) (file vs manifest): \(mismatches.joined(separator: ", "))."
                    )
                    continue
                }
                if header.entryCount > 0 {
                    if header.first <= previousLast {
                        problem(
                            "\(path) starts at \(header.first), not above \(previousFile)'s last number \(previousLast); shards must ascend."
                        )
                    }
                    previousLast = header.last
                    previousFile = path
                }
                total += header.entryCount
                result.shardsVerified += 1
                result.entriesVerified += header.totalEntries
                result.bytesVerified += summary.bytes
            } catch {
                result.problems.append(error)
            }
        }
        if manifest.spec.layout == .packed && result.problems.isEmpty {
            let check = checkInputs(of: manifest, in: outputDirectory)
            result.problems += check.problems
            result.notes += check.notes
            result.equalsInputs = check.rederived && check.problems.isEmpty
            result.inputsUnchanged = check.rederived ? (manifest.spec.inputs ?? []).count : 0
        }
        if result.problems.isEmpty && total != manifest.totalEntries {
            problem("\(manifestPath) says \(manifest.totalEntries) entries in all, but the shards hold \(total).")
        }
        do {
            let listed = Set(manifest.shards.map(\.file))
            for name in try FileSystem.list(setPath)
            where !listed.contains(name) && name != OutputDirectory.markerName && name != ShardSet.publicationStateName
                && name != ShardSet.trustedRootsName
            {
                problem("\(setPath)/\(name) is not listed in \(manifestPath).")
            }
        } catch {
            result.problems.append(error)
        }
        reading.close()
        return result
    }
}
