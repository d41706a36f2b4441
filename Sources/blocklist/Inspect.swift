import ArgumentParser
import BlocklistCore
import CommandSupport

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the header and statistics of one shard file.")

    @Argument(help: ArgumentHelp("A shard file.", valueName: "file"), completion: .file(extensions: ["blk"]))
    var file: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    struct Report: Encodable {
        var file: String
        var version: UInt16
        var shardIndex: UInt32
        var entries: Int64
        var runs: UInt32
        var first: Int64
        var last: Int64
        var bytes: Int64
        var payloadBytes: Int64
        var payloadCRC: String
        var checksum: String
        var longestRun: Int64
        var shortestRun: Int64
        var bitsPerEntry: Double
        var headerBytes: Int
        var identificationEntries: Int64
        var labels: Int
    }

    func run() throws {
        let reader = try ShardReader(path: file)
        let header = reader.header
        var longest: Int64 = 0
        var shortest = Int64.max
        while let run = try reader.nextRun() {
            longest = max(longest, run.count)
            shortest = min(shortest, run.count)
        }
        let labels = try reader.readLabels()
        while try reader.nextIdentificationRun() != nil {}
        let bytes = header.fileSize
        let report = Report(
            file: file,
            version: header.version,
            shardIndex: header.shardIndex,
            entries: header.entryCount,
            runs: header.runCount,
            first: header.first,
            last: header.last,
            bytes: bytes,
            payloadBytes: header.payloadLength,
            payloadCRC: String(header.payloadCRC, radix: 16),
            checksum: header.checksum,
            longestRun: longest,
            shortestRun: header.runCount == 0 ? 0 : shortest,
            bitsPerEntry: header.totalEntries == 0 ? 0 : Double(bytes * 8) / Double(header.totalEntries),
            headerBytes: header.byteCount,
            identificationEntries: header.identificationCount,
            labels: labels.count
        )
        if json { return try printJSON(report) }
        print(
            """
            \(file): shard format version \(report.version), verified
              shard index   \(report.shardIndex)
              entries       \(Figures.grouped(report.entries)) in \(Figures.grouped(Int64(report.runs))) runs (longest \(Figures.grouped(report.longestRun)), shortest \(Figures.grouped(report.shortestRun)))
              first         \(report.first)
              last          \(report.last)
              size          \(Figures.grouped(report.bytes)) bytes (\(report.headerBytes) header + \(Figures.grouped(report.payloadBytes)) zlib payload), \(Terminal.fixed(report.bitsPerEntry, 4)) bits per entry
              checksum      \(report.checksum) (payload CRC-32 \(report.payloadCRC))
            """
        )
        if header.version >= 2 {
            print(
                "  identified    \(Figures.grouped(report.identificationEntries)) numbers with \(report.labels) distinct labels"
            )
        }
    }
}
