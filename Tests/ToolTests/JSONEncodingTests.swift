import Foundation
import TestSupport
import Testing

/// JSON inputs named by what they are (issue 46, item 5): a list file, a rules file, a messages
/// file or a root.json in UTF-16 or UTF-32, with or without a byte-order mark, is refused with a
/// sentence that names its encoding and the iconv line that converts it; run, that line makes
/// the file one the command reads.
@Suite struct JSONEncodingTests {
    static let encodings: [(iconv: String, words: String)] = [
        ("UTF-16", "UTF-16LE text (it starts with a byte-order mark)"),
        ("UTF-16LE", "UTF-16LE text (every other byte is 0)"),
        ("UTF-16BE", "UTF-16BE text (every other byte is 0)"),
        ("UTF-32", "UTF-32LE text (it starts with a byte-order mark)"),
        ("UTF-32LE", "UTF-32LE text (every character is four bytes, three of them 0)"),
        ("UTF-32BE", "UTF-32BE text (every character is four bytes, three of them 0)"),
    ]

    @Test(arguments: encodings)
    func everyJSONInputNamesItsEncodingAndTheFix(iconv: String, words: String) throws {
        let dir = try TemporaryDirectory()
        _ = try runBlocklist(["keys", "create", "keys"], in: dir.path)
        let inputs: [(name: String, text: String, command: (String) -> [String])] = [
            (
                "list.json", #"{"name":"fr","patterns":[{"pattern":"+3316312####","action":"block"}]}"#,
                { ["generate", "--list", $0, "-o", "set-" + $0, "--no-sync"] }
            ),
            (
                "rules.json", #"[{"name":"prize","target":"body","match":"contains","value":"prize","action":"junk"}]"#,
                { ["sms", "compile", $0, "-o", "out-" + $0] }
            ),
            (
                "root.json", try String(contentsOfFile: dir.file("keys/root.json"), encoding: .utf8),
                {
                    [
                        "xcodegen", "set", "--bundle-id", "com.example.b", "--trust", $0, "--generation", "1", "-o",
                        "p-" + $0,
                    ]
                }
            ),
        ]
        _ = try runBlocklist(["generate", "--pattern", "+8270123#####", "-o", "set", "--no-sync"], in: dir.path)
        for input in inputs {
            let converted = try runProcess(
                "/usr/bin/env",
                ["iconv", "-f", "UTF-8", "-t", iconv],
                input: Data(input.text.utf8)
            )
            try #require(converted.status == 0)
            try writeBytes(Array(converted.stdout), to: dir.file(input.name))
            let refused = try runBlocklist(input.command(input.name), in: dir.path)
            #expect(refused.status != 0, "\(input.name) in \(iconv) was read")
            #expect(refused.stderr.contains("\(input.name) is \(words)"), "\(input.name): \(refused.stderr)")
            let fix = "iconv -f \(iconv) -t UTF-8 \(input.name) > \(input.name).txt"
            #expect(refused.stderr.contains(fix), "\(input.name): \(refused.stderr)")
            // The line it gives, run, makes a file the command reads.
            let ran = try runProcess("/bin/sh", ["-c", "cd \"$0\" && " + fix, dir.path])
            try #require(ran.status == 0, "\(fix)")
            let read = try runBlocklist(input.command(input.name + ".txt"), in: dir.path)
            #expect(read.status == 0, "\(input.name).txt: \(read.stderr)")
        }
    }
}
