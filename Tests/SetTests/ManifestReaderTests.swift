import BlocklistCore
import Foundation
import SetStorage
import TestSupport
import Testing

/// manifest.json's one reader (`Manifest.decode`, JSONStream's tokens, no Foundation) against an
/// independent one, Foundation's JSONDecoder over the same `Codable` model: seeded random
/// manifests, written by JSONEncoder, read the same by both; then each mutation a damaged or
/// hand-edited file shows (a key removed, a value of the wrong type, a key unknown to this
/// version, a pattern that does not parse) accepted or refused by both alike.
@Suite struct ManifestReaderTests {
    static func randomManifest(_ generator: inout SplitMix64) -> Manifest {
        func number(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &generator) }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &generator) ? value() : nil }
        let shardCount = Int(number(0...6))
        let shards = (0..<shardCount).map { index in
            Manifest.Shard(
                file: String(format: "shard-%02d.blk", index + 1),
                index: index + 1,
                count: number(0...1_999_999),
                first: number(1...Int64.max / 2),
                last: number(1...Int64.max),
                bytes: number(48...9_000_000),
                checksum: String(number(0...Int64.max), radix: 16),
                identified: maybe(number(0...1_000)),
                lowerBound: maybe(number(0...Int64.max))
            )
        }
        let patterns = try! (0..<Int(number(1...3))).map { _ in
            try BlockPattern(parsing: "+" + String(number(1...99)) + String(repeating: "#", count: Int(number(1...9))))
        }
        let inputs = maybe(
            (0..<Int(number(0...2))).map { _ in
                Manifest.Input(
                    kind: ["numbers", "labels", "list"][Int(number(0...2))],
                    path: "lists/ä \(number(0...9)).txt",
                    bytes: number(0...1 << 40),
                    lines: number(0...1 << 30),
                    skipped: number(0...10),
                    sha256: maybe(String(repeating: "ab", count: 32))
                )
            }
        )
        let spec = Manifest.Spec(
            patterns: patterns,
            exclusions: maybe(["000"]) ?? [],
            rangeSize: number(1...2_000_000),
            capacity: number(1...1_999_999),
            layout: maybe(Bool.random(using: &generator) ? .range : .packed),
            allowPatterns: maybe(patterns),
            inputs: inputs,
            defaultCountry: maybe(number(1...999)),
            skipInvalid: maybe(Bool.random(using: &generator))
        )
        let json = """
            {"format":"blocklist-shard-set","version":2,"generation":"g\(number(0...999))","directory":"set-x",
            "createdAt":\(number(0...2_000_000_000)),"spec":{},"totalEntries":\(number(0...Int64.max)),
            "totalBytes":\(number(0...1 << 40)),"shards":[]}
            """
        var manifest = try! JSONDecoder().decode(
            Manifest.self,
            from: Data(
                json.replacingOccurrences(
                    of: "\"spec\":{}",
                    with: "\"spec\":{\"patterns\":[],\"exclusions\":[],\"rangeSize\":1,\"capacity\":1}"
                ).utf8
            )
        )
        manifest.spec = spec
        manifest.shards = shards
        return manifest
    }

    /// Both readers' verdicts on `bytes`: the manifest, or nil if refused.
    static func verdicts(_ bytes: [UInt8]) -> (foundation: Manifest?, ours: Manifest?) {
        (try? JSONDecoder().decode(Manifest.self, from: Data(bytes)), try? Manifest.decode(bytes, path: "m.json"))
    }

    @Test func readsWhatJSONDecoderReads() throws {
        var generator = SplitMix64(state: 2026)
        for _ in 0..<300 {
            let manifest = Self.randomManifest(&generator)
            let bytes = Array(try JSONEncoder().encode(manifest))
            let (foundation, ours) = Self.verdicts(bytes)
            #expect(foundation == manifest)
            #expect(ours == manifest)
        }
    }

    @Test func refusesWhatJSONDecoderRefuses() throws {
        var generator = SplitMix64(state: 7)
        var refused = 0
        for round in 0..<300 {
            let manifest = Self.randomManifest(&generator)
            var object = try #require(
                try JSONSerialization.jsonObject(with: try JSONEncoder().encode(manifest)) as? [String: Any]
            )
            // One mutation at a random place: the top level, the spec, or a shard.
            var spec = object["spec"] as! [String: Any]
            var shards = object["shards"] as! [[String: Any]]
            let target = Int.random(in: 0...2, using: &generator)
            func mutate(_ dictionary: inout [String: Any]) {
                guard let key = dictionary.keys.sorted().randomElement(using: &generator) else { return }
                switch round % 4 {
                case 0: dictionary[key] = nil
                case 1: dictionary[key] = dictionary[key] is String ? 7 : "seven"
                case 2: dictionary["addedByANewerVersion"] = ["x": [1, 2]]
                default: dictionary[key] = dictionary[key] is [Any] ? ["+12#x"] : dictionary[key]
                }
            }
            if target == 1 || shards.isEmpty && target == 2 {
                mutate(&spec)
            } else if target == 2 {
                let index = Int.random(in: 0..<shards.count, using: &generator)
                mutate(&shards[index])
            } else {
                mutate(&object)
            }
            object["spec"] = spec
            object["shards"] = shards
            let bytes = Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            let (foundation, ours) = Self.verdicts(bytes)
            #expect(
                foundation == ours,
                "round \(round): JSONDecoder \(foundation == nil ? "refuses" : "reads"), Manifest.decode \(ours == nil ? "refuses" : "reads") \(String(decoding: bytes, as: UTF8.self))"
            )
            if foundation == nil { refused += 1 }
        }
        #expect(refused >= 100, "only \(refused) of 300 mutations were refused")
    }

    @Test func refusalsNameThePlace() throws {
        func message(_ text: String) -> String {
            do {
                _ = try Manifest.decode(Array(text.utf8), path: "set/manifest.json")
                return "read"
            } catch {
                return error.message
            }
        }
        let spec = #""spec":{"patterns":["+82##"],"exclusions":[],"rangeSize":10,"capacity":10}"#
        let head =
            #"{"format":"blocklist-shard-set","version":2,"generation":"g","directory":"d","createdAt":1,"totalEntries":1,"totalBytes":1,"#
        let shard = #"{"file":"s.blk","index":1,"first":1,"last":1,"bytes":1,"checksum":"c"}"#
        #expect(
            message(head + spec + #","shards":[\#(shard)]}"#)
                == "set/manifest.json is not a valid manifest: shards[0].count is missing."
        )
        #expect(
            message(head + spec.replacingOccurrences(of: "\"+82##\"", with: "\"+82#x\"") + #","shards":[]}"#)
                .hasPrefix("set/manifest.json is not a valid manifest: spec.patterns[0] is not a pattern:")
        )
        #expect(message(head + spec + #","shards":[],"shards":[]}"#).contains("\"shards\" appears twice"))
        #expect(message("{").hasPrefix("set/manifest.json is not a valid manifest:"))
    }
}
