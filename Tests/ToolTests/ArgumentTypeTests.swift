import ArgumentParser
import ArgumentTypes
import BlocklistCore
import TestSupport
import Testing

/// The argument types the CLI's commands share, read without a process: each value and each
/// refusal, against a linear scan of what the text says.
@Suite struct ArgumentTypeTests {
    @Test(
        arguments: [
            ("all", nil), ("3", [3]), ("1,4-6", [1, 4, 5, 6]), ("2,2,1-3,3", [1, 2, 3]), ("10000", [10_000]),
            ("9999-10000", [9_999, 10_000]),
        ] as [(String, [Int]?)]
    )
    func extensionListsAreRead(text: String, expected: [Int]?) throws {
        #expect(try ExtensionList(parsing: text, maximum: 10_000).indexes == expected)
    }

    @Test(arguments: [
        ("", "it is empty"), ("1,,2", "an empty item"), ("3-", "open at one end"), ("-3", "open at one end"),
        ("0", "not a number from 1"),
        ("10001", "not a number from 1"), ("5-2", "runs backwards"), ("a", "not a number"), ("1-2-3", "not a number"),
        ("99999999999999999999", "not a number"),
    ])
    func badExtensionListsAreNamed(text: String, fragment: String) {
        do {
            _ = try ExtensionList(parsing: text, maximum: 10_000)
            Issue.record("\(text) was accepted")
        } catch {
            #expect("\(error)".contains(fragment), "\(text): \(error)")
        }
    }

    @Test func randomExtensionListsMatchALinearReading() throws {
        var random = SplitMix64(state: 0x115)
        for _ in 0..<2_000 {
            let items = (0..<Int.random(in: 1...4, using: &random)).map { _ -> (Int, Int) in
                let low = Int.random(in: 1...60, using: &random)
                return (low, Bool.random(using: &random) ? low : min(60, low + Int.random(in: 0...5, using: &random)))
            }
            let text = items.map { $0.0 == $0.1 ? "\($0.0)" : "\($0.0)-\($0.1)" }.joined(separator: ",")
            var expected: [Int] = []
            for index in 1...60 where items.contains(where: { $0.0 <= index && index <= $0.1 }) {
                expected.append(index)
            }
            #expect(try ExtensionList(parsing: text, maximum: 60).indexes == expected, "\(text)")
        }
    }

    @Test(
        arguments: [
            ("7MiB", 7_168), ("4096KiB", 4_096), ("512K", 512), ("7M", 7_168), ("1024GiB", nil),
            ("1048576MiB", 1 << 30), ("1048577MiB", nil),
            ("0MiB", nil), ("-1KiB", nil), ("7", nil), ("MiB", nil), ("7 MiB", nil),
        ] as [(String, Int?)]
    )
    func memorySizesAreRead(text: String, kib: Int?) {
        #expect((try? MemorySize(parsing: text))?.kib == kib, "\(text)")
    }
}
