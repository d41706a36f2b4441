import BenchWorkloads
import ByteCodecs
import Foundation
import TestSupport
import Testing

@testable import BlocklistCore

@Suite struct ShardFormatTests {
    /// A small shard with single numbers, long runs and wide gaps.
    static let sampleRuns = [
        NumberRun(start: 827_001_001_001, count: 1),
        NumberRun(start: 827_001_001_003, count: 998),
        NumberRun(start: 827_001_002_010, count: 1),
        NumberRun(start: 827_099_999_990, count: 10),
    ]

    @Test func roundTripsNumbersAndRuns() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.blk")
        let header = try writeShard(Self.sampleRuns, index: 7, to: path)
        #expect(header.shardIndex == 7)
        #expect(header.entryCount == 1010)
        #expect(header.runCount == 4)
        #expect(header.first == 827_001_001_001)
        #expect(header.last == 827_099_999_999)

        let expected = Self.sampleRuns.flatMap { Array($0.start...$0.last) }
        #expect(try readNumbers(path) == expected)

        let reader = try ShardReader(path: path)
        #expect(reader.header == header)
        var runs: [NumberRun] = []
        while let run = try reader.nextRun() { runs.append(run) }
        #expect(runs == Self.sampleRuns)

        // The batch interface yields the same numbers across buffer boundaries.
        let batchReader = try ShardReader(path: path)
        let buffer = UnsafeMutableBufferPointer<Int64>.allocate(capacity: 7)
        defer { buffer.deallocate() }
        var batched: [Int64] = []
        while case let count = try batchReader.read(into: buffer), count > 0 { batched += buffer[0..<count] }
        #expect(batched == expected)
    }

    @Test func writerMergesAdjacentRunsAndRefusesDisorder() throws {
        let directory = try TemporaryDirectory()
        let writer = try ShardWriter(path: directory.file("a.blk"), shardIndex: 1)
        try writer.append(100)
        try writer.append(101)
        try writer.append(NumberRun(start: 102, count: 3))
        let error = #expect(throws: BlocklistError.self) { try writer.append(104) }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains("strictly ascending") == true)
        let header = try writer.finish(sync: false)
        #expect(header.runCount == 1)
        #expect(try readNumbers(directory.file("a.blk")) == [100, 101, 102, 103, 104])
    }

    @Test func emptyShardRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let header = try writeShard([], to: directory.file("e.blk"))
        #expect(header.entryCount == 0 && header.first == 0 && header.last == 0)
        #expect(try readNumbers(directory.file("e.blk")).isEmpty)
        #expect(try ShardVerifier.verify(directory.file("e.blk")).header.entryCount == 0)
    }

    @Test func randomShardsRoundTrip() throws {
        var random = SplitMix64(state: 42)
        let directory = try TemporaryDirectory()
        for trial in 0..<SeededRuns.count(40, short: 10) {
            var runs: [NumberRun] = []
            var next = Int64.random(in: 1...1_000_000_000_000, using: &random)
            for _ in 0..<Int.random(in: 0...3000, using: &random) {
                let run = NumberRun(start: next, count: Int64.random(in: 1...500, using: &random))
                runs.append(run)
                next = run.last + 1 + Int64.random(in: 1...100_000, using: &random)
            }
            let path = directory.file("r\(trial).blk")
            try writeShard(runs, to: path)
            let reader = try ShardReader(path: path)
            var read: [NumberRun] = []
            while let run = try reader.nextRun() { read.append(run) }
            // Runs that happened to touch were merged by the writer.
            #expect(read.flatMap { Array($0.start...$0.last) } == runs.flatMap { Array($0.start...$0.last) })
        }
    }

    /// `append(contentsOf:)` writes the bytes `append(_:)` writes run by run, and `nextRuns(into:)`
    /// reads the runs `nextRun()` reads, for runs that take the fast loops (small gaps) and runs
    /// that leave them (a Rice parameter above 32, escapes, touching runs, payloads across many
    /// buffers), whatever the batch sizes. With the fast loops' checks removed this fails.
    @Test func batchWritingAndReadingMatchRunByRun() throws {
        var random = SplitMix64(state: 27)
        let directory = try TemporaryDirectory()
        for trial in 0..<SeededRuns.count(24, short: 6) {
            var runs: [NumberRun] = []
            var next = Int64.random(in: 1...1_000_000, using: &random)
            let count = trial % 4 == 0 ? 40_000 : Int.random(in: 0...3000, using: &random)
            for _ in 0..<count {
                let length: Int64 =
                    Int.random(in: 0..<10, using: &random) == 0 ? .random(in: 2...5000, using: &random) : 1
                guard next <= Int64.max - length else { break }
                let run = NumberRun(start: next, count: length)
                runs.append(run)
                let gap: Int64 =
                    switch Int.random(in: 0..<100, using: &random) {
                    case 0: Int64.random(in: 1...(1 << 45), using: &random)  // a parameter above 32, or an escape
                    case 1: 0  // touching: the writer merges it
                    default: Int64.random(in: 1...(trial % 3 == 0 ? 100 : 1_000_000), using: &random)
                    }
                guard run.last < Int64.max - gap - 1 else { break }
                next = run.last + 1 + gap
            }
            let single = directory.file("single\(trial).blk")
            try writeShard(runs, to: single)
            let batched = directory.file("batched\(trial).blk")
            let writer = try ShardWriter(path: batched, shardIndex: 1)
            var offset = 0
            while offset < runs.count {
                let take = min(runs.count - offset, Int.random(in: 1...5000, using: &random))
                try runs[offset..<(offset + take)].withUnsafeBufferPointer { try writer.append(contentsOf: $0) }
                offset += take
            }
            _ = try writer.finish(sync: false)
            #expect(try readBytes(batched) == readBytes(single), "trial \(trial): the files differ")

            let oneByOne = try ShardReader(path: single)
            var expected: [NumberRun] = []
            while let run = try oneByOne.nextRun() { expected.append(run) }
            let reader = try ShardReader(path: single)
            var read: [NumberRun] = []
            while true {
                let buffer = UnsafeMutableBufferPointer<NumberRun>.allocate(
                    capacity: Int.random(in: 1...5000, using: &random)
                )
                defer { buffer.deallocate() }
                let got = try reader.nextRuns(into: buffer)
                guard got > 0 else { break }
                read += buffer[0..<got]
            }
            #expect(read == expected, "trial \(trial)")
            #expect(read.reduce(0) { $0 + $1.count } == runs.reduce(0) { $0 + $1.count })
        }
    }

    /// Over every shard of the fuzz corpus (damaged ones included), `nextRuns(into:)` yields the
    /// runs `nextRun()` yields and fails where it fails, with the same sentence.
    @Test func batchReadingAgreesWithRunByRunOnTheFuzzCorpus() throws {
        let corpus = packageRoot.appendingPathComponent("Fuzz/corpus").path
        var random = SplitMix64(state: 5)
        var opened = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus).sorted() {
            let path = corpus + "/" + name
            guard let single = try? ShardReader(path: path), let batch = try? ShardReader(path: path) else { continue }
            opened += 1
            var expected: [NumberRun] = []
            var expectedError: String?
            do {
                while let run = try single.nextRun() { expected.append(run) }
            } catch { expectedError = error.message }
            var read: [NumberRun] = []
            var readError: String?
            let buffer = UnsafeMutableBufferPointer<NumberRun>.allocate(
                capacity: Int.random(in: 1...64, using: &random)
            )
            defer { buffer.deallocate() }
            do {
                while case let got = try batch.nextRuns(into: buffer), got > 0 { read += buffer[0..<got] }
            } catch { readError = error.message }
            #expect(read == expected, "\(name)")
            #expect(readError == expectedError, "\(name)")
        }
        #expect(opened >= 6, "only \(opened) shards of the corpus opened")
    }

    /// The batch writer refuses what `append(_:)` refuses, with the same sentence, having written
    /// the runs before the fault.
    @Test func batchWritingRefusesDisorderAsRunByRunDoes() throws {
        let directory = try TemporaryDirectory()
        let runs = [NumberRun(start: 10, count: 5), NumberRun(start: 20, count: 1), NumberRun(start: 18, count: 1)]
        let single = try ShardWriter(path: directory.file("a.blk"), shardIndex: 1)
        let singleError = #expect(throws: BlocklistError.self) { for run in runs { try single.append(run) } }
        let batch = try ShardWriter(path: directory.file("b.blk"), shardIndex: 1)
        let batchError = #expect(throws: BlocklistError.self) {
            try runs.withUnsafeBufferPointer { try batch.append(contentsOf: $0) }
        }
        #expect(batchError?.message.replacingOccurrences(of: "b.blk", with: "a.blk") == singleError?.message)
        #expect(batch.entriesWritten == single.entriesWritten)
    }

    /// Every single-byte change anywhere in the file, to every other value of that byte, is refused.
    @Test func everySingleByteChangeIsDetected() throws {
        let directory = try TemporaryDirectory()
        let original = directory.file("o.blk")
        try writeShard(Self.sampleRuns, to: original)
        let bytes = try readBytes(original)
        let damaged = directory.file("d.blk")
        var undetected: [String] = []
        // Every byte under .ci/run; the header's first 32 and every eleventh after them for
        // `swift test` alone.
        for offset in bytes.indices where SeededRuns.long || offset < 32 || offset % 11 == 0 {
            for value in 0...255 where value != Int(bytes[offset]) {
                var copy = bytes
                copy[offset] = UInt8(value)
                try writeBytes(copy, to: damaged)
                do {
                    _ = try ShardVerifier.verify(damaged)
                    undetected.append("byte \(offset) = \(value)")
                } catch {
                    #expect(error.message.contains(damaged), "the sentence names the file: \(error.message)")
                }
            }
        }
        #expect(undetected.isEmpty, "undetected changes: \(undetected.prefix(10))")
    }

    @Test func everyTruncationIsDetected() throws {
        let directory = try TemporaryDirectory()
        let original = directory.file("o.blk")
        try writeShard(Self.sampleRuns, to: original)
        let bytes = try readBytes(original)
        for length in 0..<bytes.count {
            let path = directory.file("t.blk")
            try writeBytes(Array(bytes[0..<length]), to: path)
            let error = #expect(throws: BlocklistError.self, "truncated to \(length) bytes") {
                try ShardVerifier.verify(path)
            }
            if length >= 8 { #expect(error?.code == .corruptShard) }
        }
        // And a byte appended.
        try writeBytes(bytes + [0], to: directory.file("long.blk"))
        let error = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file("long.blk")) }
        #expect(error?.message.contains("after the end") == true)
    }

    @Test func wrongMagicAndFutureVersionAreNamed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.blk")
        try writeShard(Self.sampleRuns, to: path)
        var bytes = try readBytes(path)

        var other = bytes
        other[0] = UInt8(ascii: "X")
        try writeBytes(other, to: directory.file("magic.blk"))
        let magic = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file("magic.blk")) }
        #expect(magic?.code == .notAShard)

        // A future version with a correct header checksum: refused as unsupported, not as damage.
        bytes[8] = 3
        var header = bytes
        header.withUnsafeMutableBytes { raw in
            let crc = crc32Update(0, UnsafeRawBufferPointer(rebasing: raw[0..<60]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 60, as: UInt32.self)
        }
        try writeBytes(header, to: directory.file("v3.blk"))
        let version = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file("v3.blk")) }
        #expect(version?.code == .unsupportedVersion)
        #expect(version?.message.contains("version 3") == true)
    }

    @Test func wrongFilesGetASentenceNamingThem() throws {
        let directory = try TemporaryDirectory()
        try writeBytes([], to: directory.file("empty"))
        try writeBytes(Array("827012345678\n".utf8), to: directory.file("text"))
        var random = SplitMix64(state: 7)
        try writeBytes((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }, to: directory.file("noise"))
        for (name, code) in [
            ("empty", BlocklistError.Code.notAShard), ("text", .notAShard), ("noise", .notAShard), ("missing", .io),
        ] {
            let error = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file(name)) }
            #expect(error?.code == code, "\(name)")
            #expect(error?.message.contains(directory.file(name)) == true)
        }
        let error = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.path) }
        #expect(error?.message.contains("is a directory") == true)

        // A symlink loop, a gzip file and an SQLite database: each refused with its path.
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("loop-a"),
            withDestinationPath: directory.file("loop-b")
        )
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("loop-b"),
            withDestinationPath: directory.file("loop-a")
        )
        let loop = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file("loop-a")) }
        #expect(
            loop?.message.contains(directory.file("loop-a")) == true
                && loop?.message.contains("symbolic links") == true,
            "\(loop?.message ?? "")"
        )
        try writeBytes(
            [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3] + Array(repeating: 0, count: 60),
            to: directory.file("gzip")
        )
        try writeBytes(Array("SQLite format 3\0".utf8) + Array(repeating: 0, count: 84), to: directory.file("sqlite"))
        for name in ["gzip", "sqlite"] {
            let other = #expect(throws: BlocklistError.self) { try ShardReader(path: directory.file(name)) }
            #expect(other?.code == .notAShard && other?.message.contains(directory.file(name)) == true, "\(name)")
        }
    }

    @Test func aShardPromisingMoreThanACapacityIsRefusedBeforeAnyEntry() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("big.blk")
        _ = try writeShard([NumberRun(start: 827_000_000_000, count: 2_000_000)], to: path)
        final class Counting: CallDirectoryContext {
            var isIncremental = false
            var added = 0
            func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: Int64) { added += 1 }
            func removeBlockingEntry(withPhoneNumber phoneNumber: Int64) {}
            func removeAllBlockingEntries() {}
            func addIdentificationEntry(withNextSequentialPhoneNumber phoneNumber: Int64, label: String) { added += 1 }
            func removeIdentificationEntry(withPhoneNumber phoneNumber: Int64) {}
            func removeAllIdentificationEntries() {}
            func completeRequest(completionHandler: (@Sendable (Bool) -> Void)?) {}
        }
        let context = Counting()
        let error = #expect(throws: BlocklistError.self) { try ShardLoader.load(shardAt: path, into: context) }
        #expect(error?.code == .capacityExceeded)
        #expect(
            error?.message.contains("holds 2000000 entries, more than the 1999999") == true,
            "\(error?.message ?? "")"
        )
        #expect(context.added == 0)
    }

    @Test func verifierComparesAgainstTheSpec() throws {
        let spec = try BlockSpec(patterns: ["+1####"], exclusions: ["99"], rangeSize: 1000)
        let compiled = CompiledSpec(spec)
        let directory = try TemporaryDirectory()
        let path = directory.file("s.blk")
        try writeShard(Array(compiled.runs(shard: 3)), index: 3, to: path)
        #expect(
            try ShardVerifier.verify(path, expectedIndex: 3, capacity: 1000, expected: compiled.runs(shard: 3)).header
                .entryCount == compiled.count(shard: 3)
        )

        let wrongIndex = #expect(throws: BlocklistError.self) { try ShardVerifier.verify(path, expectedIndex: 4) }
        #expect(wrongIndex?.code == .wrongShard)
        let otherShard = #expect(throws: BlocklistError.self) {
            try ShardVerifier.verify(path, expected: compiled.runs(shard: 4))
        }
        #expect(otherShard?.code == .wrongShard)
        let capacity = #expect(throws: BlocklistError.self) { try ShardVerifier.verify(path, capacity: 10) }
        #expect(capacity?.code == .capacityExceeded)
    }

    @Test func loaderStreamsIntoAContext() throws {
        final class RecordingContext: CallDirectoryContext {
            var isIncremental: Bool
            var added: [Int64] = []
            var removedAll = 0
            var completed = 0
            init(isIncremental: Bool) { self.isIncremental = isIncremental }
            func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: Int64) { added.append(phoneNumber) }
            var removed: [Int64] = []
            func removeBlockingEntry(withPhoneNumber phoneNumber: Int64) { removed.append(phoneNumber) }
            func removeAllBlockingEntries() { removedAll += 1 }
            func addIdentificationEntry(withNextSequentialPhoneNumber phoneNumber: Int64, label: String) {
                identified.append((phoneNumber, label))
            }
            func removeIdentificationEntry(withPhoneNumber phoneNumber: Int64) {}
            func removeAllIdentificationEntries() {}
            func completeRequest(completionHandler: (@Sendable (Bool) -> Void)?) { completed += 1 }
            var identified: [(Int64, String)] = []
        }
        let directory = try TemporaryDirectory()
        try writeShard(Self.sampleRuns, to: directory.file("s.blk"))
        for incremental in [false, true] {
            let context = RecordingContext(isIncremental: incremental)
            let count = try ShardLoader.load(shardAt: directory.file("s.blk"), into: context)
            #expect(count == 1010)
            #expect(context.added == Self.sampleRuns.flatMap { Array($0.start...$0.last) })
            #expect(context.removedAll == (incremental ? 1 : 0))
            #expect(context.completed == 1)
        }
        // Given the shard loaded last time, an incremental request sends only the differences
        // (set arithmetic); a full request ignores it.
        let numbers = Set(Self.sampleRuns.flatMap { Array($0.start...$0.last) })
        var previous = Set(numbers.sorted().enumerated().filter { $0.offset % 7 != 3 }.map(\.element))
        for extra in [Int64(5), 123_456, numbers.max()! + 2] where !numbers.contains(extra) { previous.insert(extra) }
        try writeShard(previous.sorted().map { NumberRun(start: $0, count: 1) }, to: directory.file("previous.blk"))
        let incremental = RecordingContext(isIncremental: true)
        let added = try ShardLoader.load(
            shardAt: directory.file("s.blk"),
            previousShardAt: directory.file("previous.blk"),
            into: incremental
        )
        #expect(incremental.added == numbers.subtracting(previous).sorted())
        #expect(incremental.removed == previous.subtracting(numbers).sorted())
        #expect(added == Int64(incremental.added.count) && incremental.removedAll == 0 && incremental.completed == 1)
        // Another extension's shard as the previous one: refused before any call.
        try writeShard(Self.sampleRuns, index: 2, to: directory.file("other.blk"))
        let wrong = RecordingContext(isIncremental: true)
        let refusal = #expect(throws: BlocklistError.self) {
            try ShardLoader.load(
                shardAt: directory.file("s.blk"),
                previousShardAt: directory.file("other.blk"),
                into: wrong
            )
        }
        #expect(refusal?.code == .wrongShard)
        #expect(wrong.added.isEmpty && wrong.removed.isEmpty && wrong.removedAll == 0 && wrong.completed == 0)
        let full = RecordingContext(isIncremental: false)
        try ShardLoader.load(
            shardAt: directory.file("s.blk"),
            previousShardAt: directory.file("previous.blk"),
            into: full
        )
        #expect(full.added == numbers.sorted() && full.removed.isEmpty)

        // A damaged shard adds nothing and completes nothing.
        var bytes = try readBytes(directory.file("s.blk"))
        bytes[bytes.count - 1] ^= 1
        try writeBytes(bytes, to: directory.file("bad.blk"))
        let context = RecordingContext(isIncremental: false)
        #expect(throws: BlocklistError.self) { try ShardLoader.load(shardAt: directory.file("bad.blk"), into: context) }
        #expect(context.added.isEmpty && context.completed == 0)
    }
}
