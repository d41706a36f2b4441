import ArgumentParser

/// A list of extensions as `enable`, `disable` and `--only` take it: `3`, `1,4-6` or `all`.
/// Repeats and overlaps merge; an empty list or item, an open or backward range, 0, a negative
/// number or one above `maximum` is refused before anything is allocated.
package struct ExtensionList: Equatable, Sendable {
    /// The indexes, ascending, each once; `nil` for all.
    package let indexes: [Int]?

    /// - Throws: `ValidationError` (exit 64) naming what is wrong with `text`.
    package init(parsing text: String, maximum: Int) throws {
        if text == "all" {
            indexes = nil
            return
        }
        func refuse(_ why: String) -> ValidationError {
            ValidationError(
                "\"\(text)\" is not a list of extensions (\(why)); give numbers from 1 to \(maximum) such as 3, 1,4-6, or all."
            )
        }
        guard !text.isEmpty else { throw refuse("it is empty") }
        var chosen = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !part.isEmpty else { throw refuse("it has an empty item") }
            let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.allSatisfy({ !$0.isEmpty }) else { throw refuse("\"\(part)\" is open at one end") }
            let numbers = bounds.compactMap { Int($0) }.filter { (1...maximum).contains($0) }
            guard numbers.count == bounds.count, let low = numbers.first, let high = numbers.last else {
                throw refuse("\"\(part)\" is not a number from 1 to \(maximum)")
            }
            guard low <= high else { throw refuse("\"\(part)\" runs backwards") }
            for index in low...high { chosen.insert(index) }
        }
        indexes = chosen.sorted()
    }
}

/// A memory size as `--memory-budget` takes it: `7MiB`, `4096KiB`, `512K`, `7M`; from 1 KiB to
/// 1 TiB.
package struct MemorySize: Equatable, Sendable {
    package let kib: Int

    /// - Throws: `ValidationError` (exit 64) naming `text`.
    package init(parsing text: String) throws {
        let units: [(String, Int)] = [("MiB", 1024), ("KiB", 1), ("M", 1024), ("K", 1)]
        let limit = 1 << 30
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Int(text.dropLast(suffix.count)) else { break }
            let (kib, overflow) = value.multipliedReportingOverflow(by: scale)
            guard value > 0, !overflow, kib <= limit else {
                throw ValidationError(
                    "\"\(text)\" is not a memory size from 1KiB to 1024GiB; give it as 7MiB or 4096KiB."
                )
            }
            self.kib = kib
            return
        }
        throw ValidationError("\"\(text)\" is not a memory size: give it as 7MiB or 4096KiB.")
    }
}
