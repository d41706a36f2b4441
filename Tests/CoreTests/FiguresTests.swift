import Testing

@testable import BlocklistCore

/// The one way a figure is written for people (issue 30: "22460 bytes written" and "1 patterns"
/// mixed formats).
@Suite struct FiguresTests {
    @Test(arguments: [
        (0, "0"), (7, "7"), (999, "999"), (1_000, "1,000"), (22_460, "22,460"), (98_552_781, "98,552,781"),
        (-1_234_567, "-1,234,567"), (Int.max, "9,223,372,036,854,775,807"), (Int.min, "-9,223,372,036,854,775,808"),
    ])
    func digitsAreGroupedByThousands(value: Int, text: String) {
        #expect(Figures.grouped(value) == text)
        #expect(Figures.grouped(Int64(value)) == text)
    }

    @Test func countsTakeTheSingularOnlyForOne() {
        #expect(Figures.counted(1, "pattern") == "1 pattern")
        #expect(Figures.counted(0, "pattern") == "0 patterns")
        #expect(Figures.counted(22_460, "byte") == "22,460 bytes")
        #expect(Figures.counted(1, "entry", plural: "entries") == "1 entry")
        #expect(Figures.counted(2_000_000, "entry", plural: "entries") == "2,000,000 entries")
        #expect(Figures.counted(UInt8(1), "shard") == "1 shard")
    }
}
