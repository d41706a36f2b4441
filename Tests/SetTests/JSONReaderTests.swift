import Foundation
import JSONStream
import TestSupport
import Testing

@testable import BlocklistCore
@testable import ListImport

/// The streaming JSON reader, against Python's `json` module on random and mutated documents, and
/// list files read through it: duplicate keys and deep nesting named, memory flat.
@Suite struct JSONReaderTests {
    /// The tokens of `bytes` as strings ("{", "k:name", "s:text", "n:12", "t", "f", "z", …), or
    /// nil if the reader refuses the document.
    static func tokens(_ bytes: [UInt8]) -> [String]? {
        let reader = JSONReader(bytes: bytes)
        var out: [String] = []
        do {
            while let token = try reader.next() {
                switch token {
                case .objectStart: out.append("{")
                case .objectEnd: out.append("}")
                case .arrayStart: out.append("[")
                case .arrayEnd: out.append("]")
                case .key: out.append("k:" + reader.string)
                case .string: out.append("s:" + reader.string)
                case .number: out.append("n:" + reader.string)
                case .bool(let value): out.append(value ? "t" : "f")
                case .null: out.append("z")
                }
            }
        } catch {
            return nil
        }
        return out
    }

    /// Python's reading of each document, as the same tokens or `null`: strict strings, no NaN or
    /// Infinity, duplicate keys refused, at most 64 deep, no lone surrogates (Python keeps them in
    /// its strings; UTF-8 cannot hold them), a UTF-8 byte-order mark skipped.
    static let python = """
        import json, sys, base64
        class Refused(Exception): pass
        def pairs(items):
            keys = [k for k, _ in items]
            if len(set(keys)) != len(keys): raise Refused()
            return ("obj", items)
        def reject(_): raise Refused()
        def walk(value, depth, out):
            if isinstance(value, tuple):
                if depth >= 64: raise Refused()
                out.append("{")
                for k, v in value[1]:
                    k.encode("utf-8"); out.append("k:" + k); walk(v, depth + 1, out)
                out.append("}")
            elif isinstance(value, list):
                if depth >= 64: raise Refused()
                out.append("[")
                for v in value: walk(v, depth + 1, out)
                out.append("]")
            elif isinstance(value, Num): out.append("n:" + value)
            elif isinstance(value, str):
                value.encode("utf-8"); out.append("s:" + value)
            elif value is True: out.append("t")
            elif value is False: out.append("f")
            elif value is None: out.append("z")
        class Num(str): pass
        for line in sys.stdin:
            data = base64.b64decode(line)
            try:
                text = data.decode("utf-8-sig" if data.startswith(b"\\xef\\xbb\\xbf") else "utf-8")
                value = json.loads(text, object_pairs_hook=pairs, parse_constant=reject, parse_int=Num, parse_float=Num)
                out = []
                walk(value, 0, out)
                print(json.dumps(out))
            except (ValueError, Refused, RecursionError, UnicodeError):
                print("null")
        """

    /// A random document: mostly valid, with duplicate keys, deep nesting, odd numbers, escapes,
    /// raw UTF-8 and control bytes thrown in.
    static func document(_ random: inout SplitMix64, depth: Int = 0) -> String {
        let strings = [
            "a", "", "é", "한국", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00x", "\\\"", "\\\\", "\\/", "\\x",
            "\u{1}", "tab\\t", "😀", "\\u12",
        ]
        let numbers = [
            "0", "-0", "12", "1e5", "0.5e-3", "-1.25E+2", "01", "1.", "-", "+1", ".5", "1e", "NaN", "Infinity",
            "-Infinity", "123456789012345678901234567890",
        ]
        func string() -> String {
            "\""
                + (0..<Int.random(in: 0...3, using: &random)).map { _ in strings.randomElement(using: &random)! }
                .joined() + "\""
        }
        let choice = depth > 5 ? Int.random(in: 2...6, using: &random) : Int.random(in: 0...7, using: &random)
        switch choice {
        case 0:
            var keys = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                ["\"k\"", "\"name\"", "\"é\"", string()].randomElement(using: &random)!
            }
            if Int.random(in: 0..<5, using: &random) == 0, let first = keys.first { keys.append(first) }
            return "{" + keys.map { $0 + ":" + document(&random, depth: depth + 1) }.joined(separator: ",") + "}"
        case 1:
            return "["
                + (0..<Int.random(in: 0...4, using: &random)).map { _ in document(&random, depth: depth + 1) }.joined(
                    separator: ", "
                ) + "]"
        case 2: return string()
        case 3: return numbers.randomElement(using: &random)!
        case 4: return ["true", "false", "null", "nul", "True"].randomElement(using: &random)!
        case 5: return String(repeating: "[", count: 62) + "1" + String(repeating: "]", count: 62)
        case 6:
            return String(repeating: "[", count: Int.random(in: 63...66, using: &random))
                + String(repeating: "]", count: 65)
        default: return " \t\r\n" + string()
        }
    }

    @Test func tokensMatchPythonsJSONModule() throws {
        var random = SplitMix64(state: 8259)
        var documents: [[UInt8]] = []
        for index in 0..<4_000 {
            var bytes = Array(Self.document(&random).utf8)
            switch index % 4 {
            case 1 where !bytes.isEmpty:
                // One byte changed, removed or added.
                let at = Int.random(in: 0..<bytes.count, using: &random)
                let byte = Array("{}[]:,\"\\ 0e-.x\u{7f}".utf8).randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = byte
                case 1: bytes.remove(at: at)
                default: bytes.insert(byte, at: at)
                }
            case 2: bytes = [0xEF, 0xBB, 0xBF] + bytes
            case 3 where Int.random(in: 0..<4, using: &random) == 0:
                bytes += Array([" 1", "x", "{}", "\u{0}", "\u{FF}"].randomElement(using: &random)!.utf8)
            default: break
            }
            if Int.random(in: 0..<50, using: &random) == 0 {
                bytes.insert(UInt8.random(in: 0x80...0xFF, using: &random), at: bytes.count / 2)
            }
            documents.append(bytes)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.python]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        ignoreSIGPIPE()
        try process.run()
        let all = documents
        let writer = Thread {
            for document in all {
                try? input.fileHandleForWriting.write(
                    contentsOf: Data(Data(document).base64EncodedString().utf8) + Data("\n".utf8)
                )
            }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(
            separator: "\n"
        )
        process.waitUntilExit()
        try #require(lines.count == documents.count)
        var disagreements: [String] = []
        var accepted = 0
        for (document, line) in zip(documents, lines) {
            let theirs = try JSONDecoder().decode([String]?.self, from: Data(line.utf8))
            let ours = Self.tokens(document)
            if ours != nil { accepted += 1 }
            if ours != theirs {
                disagreements.append(
                    "\(String(decoding: document, as: UTF8.self).debugDescription): ours \(String(describing: ours)), Python's \(String(describing: theirs))"
                )
            }
        }
        #expect(
            disagreements.isEmpty,
            "\(disagreements.count) of \(documents.count):\n\(disagreements.prefix(8).joined(separator: "\n"))"
        )
        #expect(accepted > 1_000 && accepted < 3_500, "\(accepted) accepted: the documents should mix good and bad")
    }

    @Test func errorsNameTheLineColumnAndWhatIsWrong() throws {
        let cases: [(String, JSONError.Kind, String)] = [
            ("{\"a\": 1, \"a\": 2}", .duplicateKey, "line 1, column 10: the key \"a\" appears twice in one object"),
            (
                String(repeating: "[", count: 65), .tooDeep,
                "line 1, column 65: the document nests arrays and objects more than 64 deep"
            ),
            ("{\n  \"a\": [1,]\n}", .syntax, "line 2, column 11: expected a value, found ']'"),
            ("[1 2]", .syntax, "line 1, column 4: expected ',' or ']' in the array, found '2'"),
            ("\"abc", .syntax, "line 1, column 1: the string starting here is never closed"),
            ("[NaN]", .syntax, "NaN, Infinity and unquoted text are not JSON"),
            // A word that starts with the letter of true, false or null is unquoted text.
            ("not json", .syntax, "line 1, column 1: expected a value, found a word (NaN, Infinity"),
            ("[fake]", .syntax, "found a word"),
            ("nul", .syntax, "expected null"),
            ("[tru ]", .syntax, "expected true"),
            ("01", .syntax, "leading zero"),
            ("{} {}", .syntax, "follows the end of the value"),
            ("", .syntax, "the document is empty"),
            ("[\"\\ud800\"]", .syntax, "surrogate pair that is not completed"),
        ]
        for (text, kind, message) in cases {
            let reader = JSONReader(bytes: Array(text.utf8))
            do {
                while try reader.next() != nil {}
                Issue.record("\(text.debugDescription) was accepted")
            } catch {
                #expect(error.kind == kind, "\(text.debugDescription): \(error)")
                #expect(error.description.contains(message), "\(text.debugDescription): \(error.description)")
            }
        }
    }

    /// List files: a key given twice and nesting too deep are named as such, from generate and
    /// from list-file check, and nothing is written.
    @Test func listFilesRefuseDuplicateKeysAndDeepNestingByName() throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, String)] = [
            (
                #"{"patterns": [{"pattern": "33#", "action": "block", "action": "allow"}]}"#,
                "list.json gives a key twice: line 1, column 53: the key \"action\" appears twice in one object; give each key once."
            ),
            (
                #"{"patterns": [], "patterns": [{"pattern": "33#", "action": "block"}]}"#,
                "the key \"patterns\" appears twice"
            ),
            (
                #"{"x": "# + String(repeating: "[", count: 70) + "]}",
                "list.json is nested too deep: line 1, column 70: the document nests arrays and objects more than 64 deep."
            ),
        ]
        for (text, message) in cases {
            try writeBytes(Array(text.utf8), to: directory.file("list.json"))
            let generate = try runBlocklist(
                ["generate", "--list", "list.json", "--no-sync", "-o", "out"],
                in: directory.path
            )
            #expect(generate.status == 1 && generate.stderr.contains(message), "\(generate.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("out")))
            let check = try runBlocklist(["list-file", "check", "list.json"], in: directory.path)
            #expect(check.status == 1 && check.stderr.contains(message), "\(check.stderr)")
        }
    }
}

/// The one JSON string escaper, against Foundation's reader and JSONStream's: random strings of
/// quotes, backslashes, every control character, non-ASCII and astral scalars come back unchanged.
@Suite struct JSONTextTests {
    @Test func everyStringReadsBackUnchanged() throws {
        var generator = SplitMix64(state: 31)
        let alphabet: [Unicode.Scalar] =
            ["\"", "\\", "/", "a", "é", "한", "\u{2028}", "\u{7F}", "\u{FEFF}", "😀"]
            + (0..<0x20).map { Unicode.Scalar(UInt8($0)) }
        for _ in 0..<500 {
            var text = ""
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                text.unicodeScalars.append(alphabet.randomElement(using: &generator)!)
            }
            let literal = JSONText.string(text)
            // Foundation's reader keeps or drops U+FEFF inside strings (swift-corelibs-foundation), so
            // its scalars are compared without them; JSONStream's reader below keeps every scalar.
            func withoutBOM(_ string: String) -> [Unicode.Scalar] { string.unicodeScalars.filter { $0 != "\u{FEFF}" } }
            let foundation = try JSONSerialization.jsonObject(with: Data("[\(literal)]".utf8)) as? [String]
            #expect(foundation.map { $0.map(withoutBOM) } == [withoutBOM(text)], "\(literal)")
            let reader = JSONReader(bytes: Array(literal.utf8))
            #expect(try reader.next() == .string && reader.string == text)
            #expect(!literal.utf8.dropFirst().dropLast().contains { $0 < 0x20 })
        }
    }
}
