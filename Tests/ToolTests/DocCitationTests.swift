import Foundation
import TestSupport
import Testing

/// What the docs cite exists (issue 47, item 4): every repository path, test suite and test
/// (`SuiteTests.testName`, `SuiteTests.swift`) and `blocklist` command that the README, docs/ and
/// the DocC articles name. A renamed test or command fails here, not in a reader's hands.
@Suite struct DocCitationTests {
    /// The pages read: the README, docs/*.md and the DocC articles.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        let articles = try ["BlocklistCore", "MessageFilterCore", "UpdateCore"].flatMap { module in
            try FileManager.default.contentsOfDirectory(
                atPath: packageRoot.appendingPathComponent("Sources/\(module)/\(module).docc").path
            ).filter { $0.hasSuffix(".md") }.map { "Sources/\(module)/\(module).docc/" + $0 }
        }
        return ["README.md"] + docs.sorted() + articles.sorted()
    }

    /// Every Swift source under Tests/, as one text: where suites and tests are declared.
    static let testSources: String = {
        let tests = packageRoot.appendingPathComponent("Tests")
        var text = ""
        let files = FileManager.default.enumerator(atPath: tests.path)!
        while let relative = files.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            text += (try? String(contentsOf: tests.appendingPathComponent(relative), encoding: .utf8)) ?? ""
        }
        return text
    }()

    /// The commands the README's table lists (CLITableTests holds the table to `--help`).
    static let commands: Set<String> = {
        let readme = (try? String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
        return Set(matches(#"(?m)^\| `blocklist ([a-z][a-z -]*?)` \|"#, in: readme).map { $0[1] })
    }()

    static func matches(_ pattern: String, in text: String) -> [[String]] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (0..<match.numberOfRanges).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
        }
    }

    /// Whether `blocklist WORDS --help` shows the help of that command (for an unknown one it
    /// shows the parent's): a command the table leaves out, a hidden one.
    static func isCommand(_ words: [String]) -> Bool {
        guard let result = try? runBlocklist(words + ["--help"]) else { return false }
        return result.status == 0 && result.stdout.contains("USAGE: blocklist \(words.joined(separator: " ")) ")
    }

    /// What `text` cites that does not exist, one sentence each.
    static func stale(in text: String, page: String) -> [String] {
        var found: [String] = []
        let root = packageRoot.path
        // Paths in the repository; a glob or a placeholder (`*`, `<…>`, `{…}`) is a pattern, not a path.
        for match in matches(
            #"(?<![\w/.-])((?:Sources|Tests|Scripts|docs|Fuzz|Benchmarks|Examples|\.ci)/[\w./+-]*)(\*|<)?"#,
            in: text
        ) where match[2].isEmpty {
            var path = Substring(match[1])
            while let last = path.last, ".-".contains(last) { path = path.dropLast() }
            if !FileManager.default.fileExists(atPath: root + "/" + path) {
                found.append("\(page) cites \(path), which does not exist.")
            }
        }
        // Test files, suites and tests.
        for match in matches(#"\b([A-Z]\w+Tests)\.(\w+)"#, in: text) {
            let (suite, member) = (match[1], match[2])
            if member == "swift" {
                if !FileManager.default.fileExists(atPath: root + "/Tests/ToolTests/" + suite + ".swift"),
                    (FileManager.default.enumerator(atPath: root + "/Tests")?.allObjects as? [String] ?? [])
                        .allSatisfy({ !$0.hasSuffix("/" + suite + ".swift") })
                {
                    found.append("\(page) cites \(suite).swift, which is no test file.")
                }
            } else if testSources.range(of: #"(struct|class|enum) \#(suite)\b"#, options: .regularExpression) == nil {
                found.append("\(page) cites the suite \(suite), which no test declares.")
            } else if testSources.range(of: #"func \#(member)\b"#, options: .regularExpression) == nil {
                found.append("\(page) cites the test \(suite).\(member), which does not exist.")
            }
        }
        // Commands: `blocklist WORD [WORD]` in code, at a prompt or in a table.
        for match in matches(
            #"(?m)(?:`|^\s*\$ |\| )(?:\.build/(?:debug|release)/)?blocklist\s+([a-z][a-z-]*)(?![\w-]|\\n)(?:\s+([a-z][a-z-]*)(?![\w-]|\\n))?"#,
            in: text
        ) {
            let (first, second) = (match[1], match[2])
            if first == "help" || commands.contains(first)
                || (!second.isEmpty && commands.contains(first + " " + second))
            {
                continue
            }
            let group = commands.contains { $0.hasPrefix(first + " ") }
            if group && second.isEmpty { continue }  // the group itself, as in "`blocklist sms`"
            if !isCommand(group ? [first, second] : [first]) {
                found.append("\(page) cites `blocklist \(group ? first + " " + second : first)`, which is no command.")
            }
        }
        return found
    }

    @Test func everyCitationExists() throws {
        #expect(Self.commands.count >= 20, "the README's command table was not found")
        for page in try Self.pages() {
            let text = try String(contentsOf: packageRoot.appendingPathComponent(page), encoding: .utf8)
            let stale = Self.stale(in: text, page: page)
            #expect(stale.isEmpty, "\(stale.joined(separator: "\n"))")
        }
    }

    /// The check finds what it is for: a missing path, file, suite, test and command.
    @Test func staleCitationsAreFound() {
        let text = """
            See `Sources/BlocklistCore/NoSuchFile.swift`, `NoSuchSuiteTests.swift`, `NoSuchTests.aTest`,
            `DocCitationTests.noSuchTest` and `blocklist no-such-command`; but `Sources/*/x.swift`,
            `DocCitationTests.everyCitationExists`, `blocklist sms compile` and `blocklist keys` are fine.
            """
        #expect(
            Self.stale(in: text, page: "page")
                == [
                    "page cites Sources/BlocklistCore/NoSuchFile.swift, which does not exist.",
                    "page cites NoSuchSuiteTests.swift, which is no test file.",
                    "page cites the suite NoSuchTests, which no test declares.",
                    "page cites the test DocCitationTests.noSuchTest, which does not exist.",
                    "page cites `blocklist no-such-command`, which is no command.",
                ]
        )
    }
}
