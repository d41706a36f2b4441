import Foundation
import TestSupport
import Testing

/// The README's command table is made from the built CLI's `--help` (Scripts/cli-table.py): it
/// must be what the script makes now, and the check must fail when a row is not.
@Suite struct CLITableTests {
    static let script = packageRoot.appendingPathComponent("Scripts/cli-table.py").path
    static let readme = packageRoot.appendingPathComponent("README.md").path

    func check(_ readme: String) throws -> CommandResult {
        try RunningBlocklist(
            ["python3", Self.script, "--check", "--binary", productsDirectory + "/blocklist", "--readme", readme],
            executable: "/usr/bin/env"
        ).wait()
    }

    @Test func theREADMEsCommandTableIsWhatHelpSays() throws {
        let result = try check(Self.readme)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func aStaleTableIsCaught() throws {
        let directory = try TemporaryDirectory()
        let text = try String(contentsOfFile: Self.readme, encoding: .utf8)
        #expect(text.contains("| `blocklist load` |"))
        let stale = text.replacingOccurrences(of: "`--capacity-scope`, ", with: "")
        #expect(stale != text)
        try stale.write(toFile: directory.file("README.md"), atomically: false, encoding: .utf8)
        let result = try check(directory.file("README.md"))
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("+| `blocklist load` |"), "\(result.stdout)")
    }
}
