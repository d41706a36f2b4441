import Foundation
import TestSupport
import Testing

/// Shell completion as bash runs it (issue 30's field test: `generate`, whose options its own
/// parser reads, completed none of them).
@Suite struct CompletionTests {
    /// What bash's completion offers for `line` (the word being completed last), in `directory`.
    static func bashOffers(_ words: [String], in directory: String) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let script = """
            cd '\(directory)' && PATH='\(productsDirectory)':"$PATH"
            source <(blocklist --generate-completion-script bash)
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
            _blocklist
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runProcess("/bin/bash", ["-c", script])
        #expect(result.status == 0)
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func generateCompletesItsOptionsAndThenPaths() throws {
        let directory = try TemporaryDirectory()
        try writeBytes([], to: directory.file("labels.csv"))
        try writeBytes([], to: directory.file("lists.json"))
        try FileManager.default.createDirectory(atPath: directory.file("lists"), withIntermediateDirectories: false)
        #expect(
            try Self.bashOffers(["blocklist", "generate", "--la"], in: directory.path) == ["--labels", "--layout"]
        )
        #expect(
            try Self.bashOffers(["blocklist", "generate", "--no"], in: directory.path) == [
                "--no-exclusions", "--no-sync",
            ]
        )
        #expect(
            try Self.bashOffers(["blocklist", "generate", "--labels", "l"], in: directory.path) == [
                "labels.csv", "lists/", "lists.json",
            ]
        )
        #expect(try Self.bashOffers(["blocklist", "generate", "-o", "lists/"], in: directory.path) == [])
        #expect(try Self.bashOffers(["blocklist", "generate", "--layout", "p"], in: directory.path) == ["packed"])
    }
}
