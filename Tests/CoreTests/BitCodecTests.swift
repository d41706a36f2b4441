import BenchWorkloads
import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import UpdateCore

/// The one bit codec (BlocklistCore's `BitPacker` and `BitUnpacker`, through UpdateCore's
/// `BitWriter` and `BitReader`) against an independent one: the Python writer in
/// Scripts/fuzz-update-seeds.py, which computes the Rice parameter by division and writes a bit
/// at a time. Seeded random streams of raw bits, explicit values and Rice values on four
/// interleaved coders, with values from 0 to 2^64 − 1, escapes, and byte alignments between.
struct BitCodecTests {
    private enum Operation: Encodable {
        case put(UInt64, Int)
        case explicit(UInt64)
        case rice(UInt64, Int)
        case align

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            switch self {
            case .put(let value, let width):
                try container.encode("put")
                try container.encode(value)
                try container.encode(width)
            case .explicit(let value):
                try container.encode("explicit")
                try container.encode(value)
            case .rice(let value, let coder):
                try container.encode("rice")
                try container.encode(value)
                try container.encode(coder)
            case .align: try container.encode("align")
            }
        }
    }

    private static let python = #"""
        import importlib.util, json, sys
        spec = importlib.util.spec_from_file_location("seeds", sys.argv[1])
        seeds = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(seeds)
        out = []
        for stream in json.load(sys.stdin):
            bits, states = seeds.Bits(), [[1024, 1] for _ in range(4)]
            for op in stream:
                if op[0] == "put":
                    bits.put(op[1], op[2])
                elif op[0] == "explicit":
                    bits.explicit(op[1])
                elif op[0] == "rice":
                    bits.rice(op[1], states[op[2]])
                elif bits.count:
                    bits.out.append(bits.acc & 0xFF)
                    bits.acc, bits.count = 0, 0
            out.append(bits.bytes().hex())
        print(json.dumps(out))
        """#

    /// A value of a random scale: mostly small, as gaps are, sometimes any 64-bit value.
    private static func value(_ generator: inout SplitMix64) -> UInt64 {
        switch UInt64.random(in: 0..<10, using: &generator) {
        case 0: return 0
        case 1: return UInt64.random(in: 0...UInt64.max, using: &generator)
        default:
            let bits = Int.random(in: 0...62, using: &generator)
            return UInt64.random(in: 0...(UInt64(1) << UInt64(bits)), using: &generator)
        }
    }

    private static func streams(_ count: Int, seed: UInt64) -> [[Operation]] {
        var generator = SplitMix64(state: seed)
        return (0..<count).map { _ in
            // Each stream keeps to one scale for a while, so the Rice parameters settle and move.
            (0..<Int.random(in: 0...400, using: &generator)).map { _ in
                switch Int.random(in: 0..<20, using: &generator) {
                case 0:
                    let width = Int.random(in: 0...64, using: &generator)
                    let value = UInt64.random(in: 0...UInt64.max, using: &generator)
                    return .put(width == 64 ? value : value & ((1 << UInt64(width)) - 1), width)
                case 1: return .explicit(value(&generator))
                case 2: return .align
                default: return .rice(value(&generator), Int.random(in: 0..<4, using: &generator))
                }
            }
        }
    }

    /// The stream's bytes through `BitWriter`, and how many Rice values took the escape.
    private static func write(_ stream: [Operation]) -> (bytes: [UInt8], escapes: Int) {
        var writer = BitWriter()
        var states = [RiceState](repeating: RiceState(), count: 4)
        var escapes = 0
        for operation in stream {
            switch operation {
            case .put(let value, let width): writer.put(value, width)
            case .explicit(let value): writer.putExplicit(value)
            case .rice(let value, let coder):
                if value >> UInt64(states[coder].parameter) >= RiceState.escapeQuotient { escapes += 1 }
                writer.putRice(value, &states[coder])
            case .align: writer.align()
            }
        }
        writer.align()
        return (writer.bytes, escapes)
    }

    @Test func agreesWithAnIndependentWriterAndReadsItsBytes() throws {
        let streams = Self.streams(SeededRuns.count(300, short: 60), seed: 0xB17C_0DEC)
        let script = packageRoot.appendingPathComponent("Scripts/fuzz-update-seeds.py").path
        let python = try runProcess(
            "/usr/bin/env",
            ["python3", "-c", Self.python, script],
            input: try JSONEncoder().encode(streams)
        )
        try #require(python.status == 0)
        let expected = try JSONDecoder().decode([String].self, from: python.stdout)
        try #require(expected.count == streams.count)
        var escapes = 0
        for (index, (stream, hex)) in zip(streams, expected).enumerated() {
            let (bytes, escaped) = Self.write(stream)
            escapes += escaped
            let ours = bytes.map { String(format: "%02x", $0) }.joined()
            #expect(ours == hex, "stream \(index): the bytes differ from Python's")

            // Read Python's bytes back.
            let python = stride(from: 0, to: hex.count, by: 2).map {
                UInt8(hex.dropFirst($0).prefix(2), radix: 16)!
            }
            var reader = BitReader(python, what: "stream \(index)")
            var states = [RiceState](repeating: RiceState(), count: 4)
            for (position, operation) in stream.enumerated() {
                switch operation {
                case .put(let value, let width): #expect(try reader.bits(width, "") == value, "\(index)/\(position)")
                case .explicit(let value): #expect(try reader.explicit("") == value, "\(index)/\(position)")
                case .rice(let value, let coder):
                    #expect(try reader.rice(&states[coder], "") == value, "\(index)/\(position)")
                case .align: try reader.align("")
                }
            }
            try reader.align("the end")
            #expect(reader.atCleanEnd, "stream \(index) has bytes left")
        }
        #expect(escapes > streams.count / 3, "only \(escapes) escaped Rice values in \(streams.count) streams")
    }

    /// A stream cut anywhere fails with a sentence, never a trap or a value from past its end.
    @Test func everyTruncationIsRefused() throws {
        for (index, stream) in Self.streams(40, seed: 7).enumerated() where stream.count > 3 {
            let bytes = Self.write(stream).bytes
            for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 16)) {
                var reader = BitReader(Array(bytes[0..<cut]), what: "stream \(index) cut at \(cut)")
                var states = [RiceState](repeating: RiceState(), count: 4)
                let completed: Bool
                do throws(UpdateError) {
                    for operation in stream {
                        switch operation {
                        case .put(_, let width): _ = try reader.bits(width, "a value")
                        case .explicit: _ = try reader.explicit("a value")
                        case .rice(_, let coder): _ = try reader.rice(&states[coder], "a value")
                        case .align: try reader.align("a value")
                        }
                    }
                    completed = true
                } catch {
                    #expect(error.description.contains("cut at \(cut)"))
                    completed = false
                }
                // Every byte holds bits of some value, so no cut stream reads to its end.
                #expect(!completed, "stream \(index) cut at \(cut) read to its end")
            }
        }
    }
}
