import BlocklistCore
import BlocklistSystem
import CommandSupport
internal import LibC

/// The import against GNU sort, side by side: `lines` unsorted numbers (10% repeated) imported
/// by `generate --numbers` in a process of its own, and the same file sorted by
/// `LC_ALL=C sort -u -S 6M --parallel=1` (only if GNU sort is there). The import also parses,
/// deduplicates, packs and writes shards, which sort does not.
package enum ImportBench {
    package static func run(
        directory: String,
        lines: Int,
        generate: String,
        progress: (String) -> Void
    ) throws(BlocklistError) -> [BenchRow] {
        progress("writing \(Figures.grouped(Int64(lines))) unsorted numbers…")
        let list = directory + "/numbers.txt"
        let bytes = try writeUnsortedNumbers(lines, to: list)
        progress("running import of \(Figures.grouped(Int64(lines))) numbers…")
        let imported = try ChildProcess.run(
            generate,
            ["--numbers", list, "--no-sync", "--json", "-o", directory + "/import"],
            what: "import"
        )
        func row(_ label: String, _ run: ChildRun) -> BenchRow {
            BenchRow(
                workload: label,
                entries: Int64(lines),
                seconds: run.seconds,
                bytesOnDisk: bytes,
                peakResidentKiB: run.peakKiB,
                peakAnonymousKiB: run.anonymousKiB,
                ruMaxRSSKiB: run.ruMaxRSSKiB
            )
        }
        var rows = [row("import \(Figures.grouped(Int64(lines))) unsorted numbers", imported)]
        if access("/usr/bin/sort", X_OK) == 0 {
            progress("running GNU sort of the same lines…")
            let sorted = try ChildProcess.run(
                "/usr/bin/env",
                ["LC_ALL=C", "/usr/bin/sort", "-u", "-S", "6M", "--parallel=1", "-o", "/dev/null", list],
                what: "GNU sort"
            )
            rows.append(row("  GNU sort -u -S 6M of the same lines", sorted))
        }
        return rows
    }

    /// Writes `count` lines `+336XXXXXXXX`, one in ten a repeat of a recent one, through a fixed
    /// buffer; returns the file's size.
    package static func writeUnsortedNumbers(_ count: Int, to path: String) throws(BlocklistError) -> Int64 {
        let file = try FileDescriptor.createExclusive(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
        defer { buffer.deallocate() }
        var recent = [Int64](repeating: 33_600_000_000, count: 4096)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var filled = 0
        var offset: Int64 = 0
        for line in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let random = state >> 16
            let number: Int64
            if line > 0 && random % 10 == 0 {
                number = recent[Int(random >> 8) % recent.count]
            } else {
                number = 33_600_000_000 + Int64(random % 100_000_000)
                recent[line % recent.count] = number
            }
            if filled + 16 > buffer.count {
                try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]), at: offset)
                offset += Int64(filled)
                filled = 0
            }
            buffer[filled] = UInt8(ascii: "+")
            var value = number
            for position in stride(from: 11, through: 1, by: -1) {
                buffer[filled + position] = UInt8(48 + value % 10)
                value /= 10
            }
            buffer[filled + 12] = 10
            filled += 13
        }
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]), at: offset)
        return offset + Int64(filled)
    }
}
