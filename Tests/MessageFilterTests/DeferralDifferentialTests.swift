import BenchWorkloads
import BlocklistCore
import DeferralProtocol
import Foundation
import MessageFilterCore
import TestSupport
import Testing

/// The deferral request reader (`DeferralQuery`, the server's) and response reader
/// (`DeferralResponse`, the extension's) against Python's `json` module
/// (Scripts/deferral-oracle.py), on seeded random documents: valid ones, then each mutated.
/// Both sides must agree on accepting or refusing and on every decoded field.
@Suite struct DeferralDifferentialTests {
    static let seeds: [UInt64] = SeededRuns.long ? [17, 2026] : [17]
    static let casesPerKind = 4000

    @Test(arguments: seeds)
    func agreesWithPythonsJSON(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        var cases: [(kind: String, bytes: [UInt8])] = []
        for _ in 0..<Self.casesPerKind {
            let query = Array(Documents.query(&random).utf8)
            cases.append(("query", random.next() % 2 == 0 ? query : Documents.mutate(query, &random)))
            let response = Array(Documents.response(&random).utf8)
            cases.append(("response", random.next() % 2 == 0 ? response : Documents.mutate(response, &random)))
        }
        cases += Documents.edgeCases
        let verdicts = try Oracle.run(cases)
        try #require(verdicts.count == cases.count)
        var accepted = (query: 0, response: 0)
        var disagreements: [String] = []
        for (index, (kind, bytes)) in cases.enumerated() {
            let python = verdicts[index]
            let swift: Verdict = kind == "query" ? Verdict(query: bytes) : Verdict(response: bytes)
            if swift.ok { if kind == "query" { accepted.query += 1 } else { accepted.response += 1 } }
            if swift != python, disagreements.count < 10 {
                disagreements.append(
                    "\(kind) \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription): Swift \(swift), Python \(python)"
                )
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
        // The generators reach both outcomes often enough for the comparison to mean something.
        #expect(accepted.query > Self.casesPerKind / 10 && accepted.query < Self.casesPerKind * 9 / 10, "\(accepted)")
        #expect(
            accepted.response > Self.casesPerKind / 10 && accepted.response < Self.casesPerKind * 9 / 10,
            "\(accepted)"
        )
    }
}

/// One reader's outcome: refused, or the fields it decoded (compared scalar by scalar, since
/// Swift's `==` on strings treats canonically equivalent text as equal).
struct Verdict: Decodable, Equatable, CustomStringConvertible {
    var ok: Bool
    var action: String?
    var subAction: String?
    var version: Int?
    var app: String?
    var sender: String?
    var text: String?

    enum CodingKeys: String, CodingKey { case ok, action, subAction, version, app, sender, text }

    init(query bytes: [UInt8]) {
        if let query = try? DeferralQuery.decode(Data(bytes)) {
            ok = true
            version = query._version
            app = query.app.version
            sender = query.query.sender
            text = query.query.message.text
        } else {
            ok = false
        }
    }

    init(response bytes: [UInt8]) {
        if let response = try? bytes.withUnsafeBytes({ try DeferralResponse.parse($0) }) {
            ok = true
            action = response.action.description
            subAction = response.subAction
        } else {
            ok = false
        }
    }

    static func == (a: Verdict, b: Verdict) -> Bool {
        func same(_ x: String?, _ y: String?) -> Bool {
            x.map { Array($0.unicodeScalars) } == y.map { Array($0.unicodeScalars) }
        }
        return a.ok == b.ok && same(a.action, b.action) && same(a.subAction, b.subAction) && a.version == b.version
            && same(a.app, b.app)
            && same(a.sender, b.sender) && same(a.text, b.text)
    }

    var description: String {
        ok
            ? "accepted \([action, subAction, version.map(String.init), app, sender, text].compactMap { $0?.debugDescription })"
            : "refused"
    }
}

/// Runs Scripts/deferral-oracle.py once over a whole batch.
enum Oracle {
    static func run(_ cases: [(kind: String, bytes: [UInt8])]) throws -> [Verdict] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Scripts/deferral-oracle.py"
        ).standardized
        let input = FileManager.default.temporaryDirectory.appendingPathComponent(
            "deferral-oracle-\(UUID().uuidString).jsonl"
        )
        defer { try? FileManager.default.removeItem(at: input) }
        let hex = Array("0123456789abcdef".utf8)
        var lines: [UInt8] = []
        for (kind, bytes) in cases {
            lines += Array(#"{"kind":"\#(kind)","hex":""#.utf8)
            for byte in bytes { lines += [hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
            lines += Array("\"}\n".utf8)
        }
        try Data(lines).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        process.standardInput = try FileHandle(forReadingFrom: input)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 \(script.path) failed")
        let decoder = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(Verdict.self, from: Data($0)) }
    }
}

/// Seeded generators of deferral documents and of mutations of them.
enum Documents {
    static let pieces = [
        "a", "Z", "0", " ", "é", "e\u{301}", "€", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\u0000",
        "\\ud83d\\ude00",
        "\u{7F}", "+33612345678", "see you", "BANK", "\u{FEFF}", "\u{200B}",
    ]
    /// Pieces that make a string invalid, rarely: a lone surrogate, an unknown escape, raw control characters.
    static let badPieces = ["\\ud800", "\\udc00x", "\\x", "\u{1F}", "\t", "\\u12"]
    static let actions = ["allow", "junk", "filter", "promotion", "transaction", "none", "block", "Junk", ""]
    static let subActions =
        DeferralResponse.subActions.values.flatMap { $0 } + [
            "promotionalOthers", "transactionalFinance", "other", "promotional",
        ]

    static func string(_ random: inout SplitMix64) -> String {
        var text = ""
        for _ in 0..<(random.next() % 6) {
            text +=
                random.next() % 40 == 0
                ? badPieces[Int(random.next() % UInt64(badPieces.count))]
                : pieces[Int(random.next() % UInt64(pieces.count))]
        }
        return "\"" + text + "\""
    }

    static func space(_ random: inout SplitMix64) -> String {
        ["", "", "", " ", "\n", "\t", "\r\n  "][Int(random.next() % 7)]
    }

    /// A JSON value of any kind, nested up to `depth` more levels.
    static func value(_ random: inout SplitMix64, depth: Int) -> String {
        switch random.next() % (depth > 0 ? 9 : 7) {
        case 0: return string(&random)
        case 1:
            return ["0", "-1", "1.5", "1e3", "-0.0", "123456789012345678901234567890", "1E-2"][Int(random.next() % 7)]
        case 2: return ["true", "false", "null"][Int(random.next() % 3)]
        case 3: return string(&random)
        case 4: return "1"
        case 5: return "\"x\""
        case 6: return "[]"
        case 7:
            return "["
                + (0..<Int(random.next() % 3)).map { _ in value(&random, depth: depth - 1) }.joined(separator: ",")
                + "]"
        default:
            return object(
                (0..<Int(random.next() % 3)).map { _ in (string(&random), value(&random, depth: depth - 1)) },
                &random
            )
        }
    }

    static func object(_ members: [(String, String)], _ random: inout SplitMix64) -> String {
        "{" + space(&random)
            + members.map { "\($0.0)\(space(&random)):\(space(&random))\($0.1)" }.joined(
                separator: "," + space(&random)
            )
            + space(&random) + "}"
    }

    static func shuffled(_ members: [(String, String)], _ random: inout SplitMix64) -> [(String, String)] {
        var members = members
        for index in members.indices.reversed() where index > 0 {
            members.swapAt(index, Int(random.next() % UInt64(index + 1)))
        }
        return members
    }

    static func extras(_ random: inout SplitMix64) -> [(String, String)] {
        (0..<Int(random.next() % 3)).map { _ in (string(&random), value(&random, depth: 3)) }
    }

    static func query(_ random: inout SplitMix64) -> String {
        let version = [
            "1", "1", "2", "0", "-7", "1.0", "1e0", "1.5", "\"1\"", "true", "null", "9223372036854775807",
            "9223372036854775808",
        ][
            Int(random.next() % 13)
        ]
        let message = object(shuffled([("\"text\"", string(&random))] + extras(&random), &random), &random)
        let query = object(
            shuffled([("\"sender\"", string(&random)), ("\"message\"", message)] + extras(&random), &random),
            &random
        )
        let app = object(
            shuffled([("\"version\"", random.next() % 8 == 0 ? "1" : string(&random))] + extras(&random), &random),
            &random
        )
        var members = [("\"_version\"", version), ("\"app\"", app), ("\"query\"", query)]
        if random.next() % 6 == 0 { members.remove(at: Int(random.next() % 3)) }
        return space(&random) + object(shuffled(members + extras(&random), &random), &random) + space(&random)
    }

    static func response(_ random: inout SplitMix64) -> String {
        var members: [(String, String)] = []
        if random.next() % 8 != 0 {
            members.append(("\"action\"", "\"" + actions[Int(random.next() % UInt64(actions.count))] + "\""))
        }
        if random.next() % 2 == 0 {
            members.append(("\"subAction\"", "\"" + subActions[Int(random.next() % UInt64(subActions.count))] + "\""))
        }
        if random.next() % 10 == 0 { members.append(("\"action\"", value(&random, depth: 1))) }
        return space(&random) + object(shuffled(members + extras(&random), &random), &random) + space(&random)
    }

    static let interesting: [UInt8] =
        Array("{}[]\",:\\ \n0-.eEtfnu".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xE2, 0xED, 0xF0, 0xFF]

    /// One to three byte-level changes: deletions, insertions, replacements, truncation, duplication.
    static func mutate(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0...(random.next() % 3) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 5 {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: at)
            case 2: bytes[at] = interesting[Int(random.next() % UInt64(interesting.count))]
            case 3: bytes.removeSubrange(at...)
            default:
                let end = min(bytes.count, at + Int(random.next() % 16) + 1)
                bytes.insert(contentsOf: bytes[at..<end], at: end)
            }
        }
        return bytes
    }

    /// Fixed cases at the edges: nesting at and past the limits, size past 64 KiB, a BOM,
    /// NaN, duplicate members, UTF-8 that is not valid.
    static let edgeCases: [(kind: String, bytes: [UInt8])] = {
        func nested(_ levels: Int) -> String {
            String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        }
        var cases: [(String, String)] = [
            ("response", #"{"action":"junk","x":"# + nested(32) + "}"),
            ("response", #"{"action":"junk","x":"# + nested(33) + "}"),
            ("response", #"{"action":"junk","x":"# + String(repeating: "a", count: 70_000).debugDescription + "}"),
            ("response", "\u{FEFF}" + #"{"action":"junk"}"#),
            ("response", #"{"action":"junk","x":NaN}"#),
            ("response", #"{"action":"junk","action":"allow"}"#),
            ("response", #"{"action":"junk","action":1}"#),
            ("response", #"{"action":"promotion","subAction":"promotionalOffers"}"#),
            ("response", #"{"action":"junk","subAction":"promotionalOffers"}"#),
            ("query", #"{"_version":1,"app":{"version":"1"},"query":{"sender":"+1","message":{"text":"hi"}}}"#),
            ("query", #"{"_version":1,"query":{"sender":"+1","message":{"text":"hi"}}}"#),
            (
                "query",
                #"{"_version":1,"_version":2,"app":{"version":"1"},"query":{"sender":"+1","message":{"text":"hi"}}}"#
            ),
            ("query", #"{"_version":1,"app":{"version":"1"},"query":{"sender":"+1","message":{"text":"\ud800"}}}"#),
            ("query", #"{"_version":Infinity,"app":{"version":"1"},"query":{"sender":"+1","message":{"text":"hi"}}}"#),
        ]
        cases.append(
            (
                "query",
                #"{"_version":1,"app":{"version":"1"},"x":"# + nested(100)
                    + #","query":{"sender":"+1","message":{"text":"hi"}}}"#
            )
        )
        var result = cases.map { ($0.0, Array($0.1.utf8)) }
        result.append(("response", Array(#"{"action":"junk","x":""#.utf8) + [0xC3, 0x28] + Array("\"}".utf8)))
        result.append(
            (
                "query",
                Array(#"{"_version":1,"app":{"version":"1"},"query":{"sender":""#.utf8) + [0xED, 0xA0, 0x80]
                    + Array(#"","message":{"text":"hi"}}}"#.utf8)
            )
        )
        return result
    }()
}
