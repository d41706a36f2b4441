import BenchWorkloads
import BlocklistCore
import Foundation
import TestSupport
import Testing

/// The bench's logic, out of the CLI: what a workload child reports and how the parent reads it,
/// the seed's approach, the import's input, and the shard reader's order check.
@Suite struct BenchWorkloadTests {
    @Test func aReportIsReadOverWhatTheParentMeasured() {
        var measured = Measured(peakKiB: 5_000, anonymousKiB: 900, ruMaxRSSKiB: 8_000)
        measured.read(
            report: "entries 98552781\nseconds 0.25\npeak 4000\nanonymous 1200\nbytes 6769\nhost-peak 5680\n"
                + "noise\nunknown 12\n\nentries-ish 3\n"
        )
        #expect(measured.entries == 98_552_781)
        #expect(measured.seconds == 0.25)
        #expect(measured.bytes == 6_769)
        #expect(measured.peakKiB == 5_000)  // the parent's sample was higher
        #expect(measured.anonymousKiB == 1_200)  // the child's own figure was higher
        #expect(measured.hostPeakKiB == 5_680)
        #expect(measured.ruMaxRSSKiB == 8_000)

        var empty = Measured()
        empty.read(report: "")
        #expect(empty == Measured())
    }

    /// The seed's loop counts what a plain filter over the same candidates counts.
    @Test(arguments: [1, 2, 1_000, 5_000])
    func theSeedsApproachCountsWhatAFilterCounts(candidates: Int64) {
        let expected = (1..<max(candidates, 1)).filter { !("+8270" + String(50_000_000 + $0)).contains("000") }.count
        #expect(Workload.seedApproach(candidates: candidates) == Int64(expected))
    }

    @Test func theImportsInputIsThirteenByteLinesWithATenthRepeated() throws {
        let directory = try TemporaryDirectory()
        let count = 20_000
        let size = try ImportBench.writeUnsortedNumbers(count, to: directory.file("numbers.txt"))
        let bytes = try readBytes(directory.file("numbers.txt"))
        #expect(size == Int64(13 * count) && bytes.count == 13 * count)
        var numbers = Set<Int64>()
        for line in 0..<count {
            let record = bytes[(line * 13)..<(line * 13 + 13)]
            #expect(record.first == UInt8(ascii: "+") && record.last == 10, "line \(line + 1)")
            var value: Int64 = 0
            for digit in record.dropFirst().dropLast() {
                #expect((48...57).contains(digit), "line \(line + 1)")
                value = value * 10 + Int64(digit) - 48
            }
            #expect((33_600_000_000..<33_700_000_000).contains(value), "line \(line + 1): \(value)")
            numbers.insert(value)
        }
        #expect((17_000...19_000).contains(numbers.count), "\(numbers.count) distinct numbers")
        // A file already there is never overwritten.
        #expect(throws: BlocklistError.self) {
            try ImportBench.writeUnsortedNumbers(1, to: directory.file("numbers.txt"))
        }
    }

    @Test func theOrderCheckCountsAscendingShardsAndRefusesOthers() throws {
        let directory = try TemporaryDirectory()
        try writeShard(
            [NumberRun(start: 100, count: 5), NumberRun(start: 200, count: 3)],
            index: 1,
            to: directory.file("a")
        )
        try writeShard([NumberRun(start: 300, count: 4)], index: 2, to: directory.file("b"))
        #expect(try Workload.readInOrder([directory.file("a"), directory.file("b")]) == 12)
        #expect(throws: BlocklistError.self) {
            try Workload.readInOrder([directory.file("b"), directory.file("a")])
        }
    }

    @Test func eachSizeDoesMoreThanTheOneBelow() {
        let sizes: [BenchSize] = [.smoke, .quick, .full]
        for (smaller, larger) in zip(sizes, sizes.dropFirst()) {
            #expect(smaller.seedCandidates < larger.seedCandidates)
            #expect(smaller.importLines < larger.importLines)
            #expect(smaller.loadShards <= larger.loadShards)
            #expect(smaller.compiledMessages < larger.compiledMessages)
            #expect(smaller.linearMessages < larger.linearMessages)
            #expect(smaller.extensionMessages < larger.extensionMessages)
            #expect(smaller.deferredMessages <= larger.deferredMessages)
        }
    }

    @Test func anUnknownWorkloadIsNamed() {
        #expect {
            try Workload.run("sort", directory: "/nonexistent", count: 0, extensionHost: "/bin/false")
        } throws: { error in
            "\(error)".contains("Unknown bench workload sort")
        }
    }
}
