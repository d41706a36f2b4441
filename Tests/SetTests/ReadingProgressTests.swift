import Foundation
import TestSupport
import Testing

@testable import CommandSupport
@testable import ListImport

/// Issue 30, item 4: a long import shows lines read, numbers kept, a rate, and for a file whose
/// size is known a share and the time left; on a terminal only.
@Suite struct ReadingProgressTests {
    static func progress(lines: Int64, bytes: Int64, size: Int64?, finished: Bool = false) -> ReadingProgress {
        ReadingProgress(
            name: "numbers.txt",
            kind: "numbers",
            lines: lines,
            bytesRead: bytes,
            size: size,
            totalLines: lines,
            kept: lines - 2,
            finished: finished
        )
    }

    @Test func aFileOfKnownSizeGetsABarAShareAndTheTimeLeft() {
        // A quarter read in 2 s: 6 s left at that rate.
        let line = Terminal.readingLine(
            Self.progress(lines: 1_000_000, bytes: 25_000_000, size: 100_000_000),
            fileSeconds: 2,
            runSeconds: 2
        )
        #expect(
            line
                == "[#####---------------] reading numbers.txt: 1,000,000 lines, 999,998 numbers kept, 500,000 lines/s, 25%, ~6 s left"
        )
        let done = Terminal.readingLine(
            Self.progress(lines: 4_000_000, bytes: 99_000_000, size: 100_000_000, finished: true),
            fileSeconds: 8,
            runSeconds: 8
        )
        #expect(done.hasSuffix("500,000 lines/s, 100%"), "\(done)")
    }

    @Test func aPipeGetsCountsAndARateButNoShare() {
        let line = Terminal.readingLine(Self.progress(lines: 3, bytes: 42, size: nil), fileSeconds: 0, runSeconds: 0)
        #expect(line == "reading numbers.txt: 3 lines, 1 number kept")
        let later = Terminal.readingLine(
            Self.progress(lines: 300_000, bytes: 4_200_000, size: nil),
            fileSeconds: 3,
            runSeconds: 3
        )
        #expect(later == "reading numbers.txt: 300,000 lines, 299,998 numbers kept, 100,000 lines/s")
    }

    /// Through the built program: on a terminal (`script` gives it one) the reading line is
    /// drawn and ends at the file's last line; through a pipe, and with --json, nothing is.
    @Test func onlyATerminalSeesIt() throws {
        let directory = try TemporaryDirectory()
        let lines = (0..<40_000).map { "+8210\(String(10_000_000 + $0 * 7).dropFirst())\n" }.joined()
        try writeBytes(Array(lines.utf8), to: directory.file("numbers.txt"))
        let blocklist = productsDirectory + "/blocklist"
        func underTerminal(_ arguments: String) throws -> String {
            let result = try runProcess(
                "/usr/bin/script",
                [
                    "-qec",
                    "cd \(directory.path) && \(blocklist) generate --numbers numbers.txt --no-sync \(arguments)",
                    "/dev/null",
                ]
            )
            #expect(result.status == 0)
            return String(decoding: result.stdout, as: UTF8.self)
        }
        let shown = try underTerminal("-o a")
        #expect(shown.contains("reading numbers.txt: 40,000 lines, 40,000 numbers kept, "), "\(shown)")
        #expect(shown.contains("100%"), "\(shown)")
        let json = try underTerminal("-o b --json")
        #expect(!json.contains("reading"), "\(json)")
        let piped = try runBlocklist(
            ["generate", "--numbers", "numbers.txt", "--no-sync", "-o", "c"],
            in: directory.path
        )
        #expect(piped.status == 0 && !piped.stderr.contains("reading"), "\(piped.stderr)")
    }
}
