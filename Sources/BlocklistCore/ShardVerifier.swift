/// Checks one shard file completely: header, both checksums, every run's order and encoding,
/// the counts, and optionally its index, its capacity and that it holds exactly a spec's numbers.
package enum ShardVerifier {
    /// What a verified shard holds.
    package struct Summary: Hashable, Sendable {
        package var path: String
        package var header: ShardHeader
        /// The file's size in bytes.
        package var bytes: Int64
    }

    /// Verifies `path`.
    ///
    /// - Parameters:
    ///   - path: the shard file.
    ///   - expectedIndex: the index it must carry, or `nil` to accept any.
    ///   - capacity: the most entries it may hold, or `nil` for no limit.
    ///   - expected: the runs it must hold, exactly, or `nil` to skip that check.
    ///   - expectedIdentification: the identification runs and labels it must hold, exactly, or
    ///     `nil` to skip that check.
    /// - Returns: its header and size.
    /// - Throws: the first problem found, as a `BlocklistError` naming the file and where.
    /// - Complexity: O(runs); memory is the reader's fixed buffers.
    package static func verify(
        _ path: String,
        expectedIndex: Int? = nil,
        capacity: Int64? = nil,
        expected: RunGenerator? = nil,
        expectedIdentification: (any LabelledRunSource)? = nil
    ) throws(BlocklistError) -> Summary {
        let reader = try ShardReader(path: path)
        let header = reader.header
        if let expectedIndex, Int(header.shardIndex) != expectedIndex {
            throw BlocklistError(
                .wrongShard,
                "\(path) carries shard index \(header.shardIndex), expected \(expectedIndex)."
            )
        }
        if let capacity, max(header.entryCount, header.identificationCount) > capacity {
            throw BlocklistError(
                .capacityExceeded,
                "\(path) holds \(header.entryCount) blocking and \(header.identificationCount) identification entries, more than the capacity of \(capacity) per kind one extension accepts."
            )
        }
        var previous: NumberRun?
        var entries: Int64 = 0
        while let run = try reader.nextRun() {
            // The encoding cannot express these, but the verifier states them anyway.
            if let previous, previous.last >= run.start - 1 {
                throw BlocklistError(
                    .corruptShard,
                    "\(path): entry \(entries) (\(run.start)) does not follow \(previous.last) in strictly ascending order."
                )
            }
            if let expected {
                let want = expected.next()
                guard want == run else {
                    throw BlocklistError(
                        .wrongShard,
                        "\(path): entry \(entries) starts run \(run), but the spec generates \(want.map { "\($0)" } ?? "nothing more") there."
                    )
                }
            }
            entries += run.count
            previous = run
        }
        if let expected, let want = expected.next() {
            throw BlocklistError(
                .wrongShard,
                "\(path) ends after \(entries) entries, but the spec also generates \(want)."
            )
        }
        let labels = try reader.readLabels()
        var identified: Int64 = 0
        while let (run, label) = try reader.nextIdentificationRun() {
            if let expectedIdentification {
                let want = try expectedIdentification.nextLabelledRun()
                guard let want, want.run == run, want.label.elementsEqual(labels[label]) else {
                    let wanted =
                        want.map { "\($0.run) as \"\(String(decoding: $0.label, as: UTF8.self))\"" } ?? "nothing more"
                    throw BlocklistError(
                        .wrongShard,
                        "\(path): identification entry \(identified) is \(run) as \"\(String(decoding: labels[label], as: UTF8.self))\", but the inputs give \(wanted) there."
                    )
                }
            }
            identified += run.count
        }
        if let expectedIdentification, let want = try expectedIdentification.nextLabelledRun() {
            throw BlocklistError(
                .wrongShard,
                "\(path) ends after \(identified) identification entries, but the inputs also give \(want.run)."
            )
        }
        // The reader checked that the file is exactly this long when it opened it.
        return Summary(path: path, header: header, bytes: header.fileSize)
    }
}

/// Ascending identification runs, each with its label's UTF-8 bytes, for `ShardVerifier`.
package protocol LabelledRunSource: AnyObject {
    /// The next run and its label, or `nil` after the last.
    func nextLabelledRun() throws(BlocklistError) -> (run: NumberRun, label: [UInt8])?
}
