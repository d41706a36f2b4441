import ArgumentParser
import BlocklistCore

/// A numeric option kept as the text given, so that `validate()` can refuse a negative, absurd or
/// non-numeric value in the tool's own sentence. Parsed as `Int`, `-5` would read as an option
/// name and `99999999999999999999` would get the parser's generic text; declare such options with
/// `parsing: .unconditional` so that a leading `-` is taken as the value.
package struct WholeNumber: ExpressibleByArgument, ExpressibleByIntegerLiteral, Sendable, CustomStringConvertible {
    package let text: String

    package init?(argument: String) { text = argument }
    package init(integerLiteral value: Int) { text = String(value) }

    package var defaultValueDescription: String { text }
    package var description: String { text }

    /// The value, once `check` has accepted it.
    package var value: Int { Int(text) ?? 0 }

    /// Refuses a value that is not a whole number within `range`, naming `option` and `unit`.
    ///
    /// - Throws: `ValidationError` (exit 64) such as "--per-round must be a whole number
    ///   1…100,000,000, not \"-1\"." (the bounds grouped as the tool's other figures are)
    package func check(_ option: String, _ range: ClosedRange<Int>, unit: String = "") throws {
        guard let number = Int(text), range.contains(number) else {
            throw ValidationError(
                "\(option) must be a whole number \(Figures.grouped(range.lowerBound))…\(Figures.grouped(range.upperBound))\(unit), not \"\(text)\"."
            )
        }
    }
}
