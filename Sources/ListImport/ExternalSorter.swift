import BlocklistCore
import BlocklistSystem

/// Sorts and deduplicates any number of 64-bit keys in fixed memory: keys fill a buffer, which is
/// sorted, deduplicated and written as a run file when full; `finish()` merges the runs.
///
/// Run files go in a directory the caller owns (a generate's staging directory), named
/// `.sort-<tag>-<n>.tmp`, and `SortedKeys.remove()` deletes them. Should the process die, the
/// staging directory goes with its leftovers on the next run.
///
/// - Complexity: O(n log n) time; memory is the buffer plus one 2 KiB buffer per merged run (at
///   most `fanIn` at a time: more runs are first merged into fewer).
package final class ExternalSorter {
    /// The most runs one merge reads at once.
    package static let fanIn = 256
    private let directory: DirectoryHandle
    private let tag: String
    private let buffer: UnsafeMutableBufferPointer<UInt64>
    private var filled = 0
    private var runs: [String] = []
    private var nextRun = 0

    /// - Parameters:
    ///   - directory: where run files go.
    ///   - tag: a name part that keeps this sorter's files apart from another's.
    ///   - capacity: keys held in memory before a run is written.
    package init(directory: DirectoryHandle, tag: String, capacity: Int) {
        self.directory = directory
        self.tag = tag
        buffer = .allocate(capacity: max(capacity, 2))
    }

    deinit { buffer.deallocate() }

    /// Adds a key.
    @inline(__always)
    package func add(_ key: UInt64) throws(BlocklistError) {
        if filled == buffer.count { try spill() }
        buffer[filled] = key
        filled += 1
    }

    private func sortBuffer() -> Int {
        sortInPlace(UnsafeMutableBufferPointer(rebasing: buffer[0..<filled]))
        var unique = 0
        for index in 0..<filled where unique == 0 || buffer[unique - 1] != buffer[index] {
            buffer[unique] = buffer[index]
            unique += 1
        }
        return unique
    }

    private func newRunName() -> String {
        defer { nextRun += 1 }
        return ".sort-\(tag)-\(nextRun).tmp"
    }

    private func spill() throws(BlocklistError) {
        let unique = sortBuffer()
        let name = newRunName()
        let file = try FileDescriptor.createExclusive(directory.path(of: name), mode: 0o600)
        runs.append(name)
        try file.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[0..<unique])), at: 0)
        filled = 0
    }

    /// Ends the input; the keys, sorted and unique, can now be read any number of times.
    ///
    /// Keys that fit the buffer stay in memory; otherwise the last ones are written too, and runs
    /// beyond `fanIn` are merged into fewer first.
    package func finish() throws(BlocklistError) -> SortedKeys {
        if runs.isEmpty {
            let unique = sortBuffer()
            let keys = SortedKeys(directory: directory, runs: [], memory: Array(buffer[0..<unique]))
            filled = 0
            return keys
        }
        if filled > 0 { try spill() }
        while runs.count > Self.fanIn {
            let group = Array(runs.prefix(Self.fanIn))
            let name = newRunName()
            let file = try FileDescriptor.createExclusive(directory.path(of: name), mode: 0o600)
            let merge = try SortedKeys(directory: directory, runs: group, memory: []).makeIterator()
            var offset: Int64 = 0
            var count = 0
            while let key = try merge.next() {
                buffer[count] = key
                count += 1
                if count == buffer.count {
                    try file.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[0..<count])), at: offset)
                    offset += Int64(8 * count)
                    count = 0
                }
            }
            try file.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[0..<count])), at: offset)
            for run in group { try directory.removeRegularFile(run) }
            runs.removeFirst(group.count)
            runs.append(name)
        }
        return SortedKeys(directory: directory, runs: runs, memory: [])
    }
}

/// Sorted, unique keys: in memory or in run files that a merge reads.
package final class SortedKeys {
    private let directory: DirectoryHandle
    private var runs: [String]
    private let memory: [UInt64]

    init(directory: DirectoryHandle, runs: [String], memory: [UInt64]) {
        self.directory = directory
        self.runs = runs
        self.memory = memory
    }

    /// A new pass over the keys, ascending and unique.
    package func makeIterator() throws(BlocklistError) -> KeyMerge {
        try KeyMerge(paths: runs.map { directory.path(of: $0) }, memory: memory)
    }

    /// Deletes the run files.
    package func remove() {
        for run in runs { try? directory.removeRegularFile(run) }
        runs = []
    }
}

/// A k-way merge of sorted run files (and an in-memory run) that drops repeats.
package final class KeyMerge {
    private static let bufferKeys = 128
    private struct Cursor {
        var position = 0
        var count = 0
        var offset: Int64 = 0
        var ended = false
    }
    private final class RunFile {
        let descriptor: FileDescriptor
        init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }
    private var files: [RunFile] = []
    private var cursors: [Cursor]
    private let buffers: UnsafeMutableBufferPointer<UInt64>
    private let memory: [UInt64]
    private var memoryPosition = 0
    /// Run indexes and their current keys, ordered as a binary min-heap by key.
    private let heapRuns: UnsafeMutableBufferPointer<Int>
    private let heapKeys: UnsafeMutableBufferPointer<UInt64>
    private var heapCount = 0
    private var last: UInt64?

    init(paths: [String], memory: [UInt64]) throws(BlocklistError) {
        for path in paths { files.append(RunFile(try FileDescriptor.openForReading(path))) }
        cursors = Array(repeating: Cursor(), count: paths.count)
        buffers = .allocate(capacity: max(1, paths.count) * Self.bufferKeys)
        heapRuns = .allocate(capacity: max(1, paths.count))
        heapKeys = .allocate(capacity: max(1, paths.count))
        self.memory = memory
        for run in 0..<paths.count where try refill(run) { push(run) }
    }

    deinit {
        buffers.deallocate()
        heapRuns.deallocate()
        heapKeys.deallocate()
    }

    @inline(__always)
    private func key(_ run: Int) -> UInt64 { buffers[run * Self.bufferKeys + cursors[run].position] }

    private func refill(_ run: Int) throws(BlocklistError) -> Bool {
        let start = run * Self.bufferKeys
        let bytes = UnsafeMutableRawBufferPointer(
            UnsafeMutableBufferPointer(rebasing: buffers[start..<(start + Self.bufferKeys)])
        )
        var read = 0
        while read < bytes.count {
            let n = try files[run].descriptor.read(
                into: UnsafeMutableRawBufferPointer(rebasing: bytes[read...]),
                at: cursors[run].offset + Int64(read)
            )
            if n == 0 { break }
            read += n
        }
        guard read % 8 == 0 else {
            throw BlocklistError(
                .io,
                "\(files[run].descriptor.path) ends inside a key; a temporary sort file was changed while it was read."
            )
        }
        cursors[run].offset += Int64(read)
        cursors[run].position = 0
        cursors[run].count = read / 8
        return read > 0
    }

    private func push(_ run: Int) {
        var child = heapCount
        heapCount += 1
        let value = key(run)
        while child > 0 {
            let parent = (child - 1) / 2
            guard value < heapKeys[parent] else { break }
            heapKeys[child] = heapKeys[parent]
            heapRuns[child] = heapRuns[parent]
            child = parent
        }
        heapKeys[child] = value
        heapRuns[child] = run
    }

    /// Moves the root down to its place.
    @inline(__always)
    private func siftDown() {
        let value = heapKeys[0]
        let run = heapRuns[0]
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heapCount else { break }
            var smallest = left
            if left + 1 < heapCount, heapKeys[left + 1] < heapKeys[left] { smallest = left + 1 }
            guard heapKeys[smallest] < value else { break }
            heapKeys[parent] = heapKeys[smallest]
            heapRuns[parent] = heapRuns[smallest]
            parent = smallest
        }
        heapKeys[parent] = value
        heapRuns[parent] = run
    }

    /// The next key, ascending, each once; `nil` at the end.
    package func next() throws(BlocklistError) -> UInt64? {
        while true {
            var candidate: UInt64?
            let fromMemory = memoryPosition < memory.count
            if heapCount > 0 {
                let value = heapKeys[0]
                if fromMemory, memory[memoryPosition] <= value {
                    candidate = memory[memoryPosition]
                    memoryPosition += 1
                } else {
                    candidate = value
                    let top = heapRuns[0]
                    cursors[top].position += 1
                    var more = cursors[top].position < cursors[top].count
                    if !more { more = try refill(top) }
                    if more {
                        heapKeys[0] = key(top)
                    } else {
                        heapCount -= 1
                        heapKeys[0] = heapKeys[heapCount]
                        heapRuns[0] = heapRuns[heapCount]
                    }
                    if heapCount > 0 { siftDown() }
                }
            } else if fromMemory {
                candidate = memory[memoryPosition]
                memoryPosition += 1
            }
            guard let value = candidate else { return nil }
            if value != last {
                last = value
                return value
            }
        }
    }
}
