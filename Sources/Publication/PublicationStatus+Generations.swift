import BlocklistCore
import BlocklistSystem
import UpdateCore

extension PublicationStatus {
    /// One generation the publication still holds, as its publisher's files give it.
    package struct Generation: Sendable, Equatable {
        package var generation: UInt64
        package var shards: Int
        /// Blocking entries, from the shard headers.
        package var numbers: Int64
        /// Identification entries (numbers with a label), from the shard headers.
        package var labels: Int64
        /// The shard files' bytes, as the snapshot lists them.
        package var bytes: Int64
        /// When its snapshot expires: phones refuse it after.
        package var expires: Int64
        /// The generation its changes are counted from: the one before it that the publication
        /// still holds (`nil` for the oldest held).
        package var previous: UInt64?
        /// The shards that differ from `previous`'s (by content digest).
        package var changedShards: [Int] = []
        /// Numbers and labels added and removed since `previous`, over the changed shards.
        package var changes = ShardChangeCounts()
        /// The deltas from `previous`: how many, and their bytes (what a phone holding
        /// `previous` downloads for the shards that have one).
        package var deltas: Int = 0
        package var deltaBytes: Int64 = 0
    }

    /// The generations `directory` holds (a directory `N` with a readable `snapshot.json`),
    /// oldest first, each with what changed since the one before it: the changed shards are
    /// compared run by run (`ShardChangeCounts`), the others by their digest alone.
    ///
    /// - Complexity: reads every shard's header, and the changed shards of each pair in full,
    ///   through the shard reader's fixed buffers.
    static func generations(_ directory: DirectoryHandle) throws -> [Generation] {
        let held = try directory.entries().compactMap { name -> UInt64? in
            guard let generation = UInt64(name), String(generation) == name,
                (try? directory.kind(of: name + "/snapshot.json")) == .file
            else { return nil }
            return generation
        }.sorted()
        var result: [Generation] = []
        var before: Snapshot?
        for number in held {
            guard let snapshot = try? Publisher.snapshot(directory, generation: number) else { continue }
            var generation = Generation(
                generation: number,
                shards: snapshot.shards.count,
                numbers: 0,
                labels: 0,
                bytes: snapshot.shards.reduce(0) { $0 + $1.file.length },
                expires: snapshot.expires,
                previous: before?.generation
            )
            for shard in snapshot.shards {
                let header = try ShardReader(path: directory.path(of: shard.file.path)).header
                generation.numbers += header.entryCount
                generation.labels += header.identificationCount
            }
            if let before {
                let old = Dictionary(before.shards.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
                let new = Dictionary(snapshot.shards.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
                for index in Set(old.keys).union(new.keys).sorted() where old[index]?.digest != new[index]?.digest {
                    generation.changedShards.append(index)
                    let counts = try Self.changes(directory, from: old[index], to: new[index])
                    generation.changes.added += counts.added
                    generation.changes.removed += counts.removed
                    generation.changes.labelsAdded += counts.labelsAdded
                    generation.changes.labelsRemoved += counts.labelsRemoved
                }
                let deltas = snapshot.deltas.filter { $0.from == before.generation }
                generation.deltas = deltas.count
                generation.deltaBytes = deltas.reduce(0) { $0 + $1.file.length }
            }
            result.append(generation)
            before = snapshot
        }
        return result
    }

    /// What changed in one shard between two generations; a shard one side lacks counts as empty there.
    private static func changes(
        _ directory: DirectoryHandle,
        from old: Snapshot.Shard?,
        to new: Snapshot.Shard?
    ) throws -> ShardChangeCounts {
        switch (old, new) {
        case (let old?, let new?):
            return try ShardChangeCounts(
                from: directory.path(of: old.file.path),
                to: directory.path(of: new.file.path)
            )
        case (let only?, nil), (nil, let only?):
            let header = try ShardReader(path: directory.path(of: only.file.path)).header
            var counts = ShardChangeCounts()
            if new == nil {
                counts.removed = header.entryCount
                counts.labelsRemoved = header.identificationCount
            } else {
                counts.added = header.entryCount
                counts.labelsAdded = header.identificationCount
            }
            return counts
        case (nil, nil):
            return ShardChangeCounts()
        }
    }
}
