/// A bracket class or a class escape: ranges of scalars and the escapes `\d \w \s` and their
/// negations, the whole optionally negated.
package struct RegexClass: Sendable, Equatable {
    package init(negated: Bool = false, ranges: [ClosedRange<UInt32>] = [], escapes: UInt8 = 0) {
        self.negated = negated
        self.ranges = ranges
        self.escapes = escapes
    }

    package var negated = false
    package var ranges: [ClosedRange<UInt32>] = []
    /// Bits: 1 `\d`, 2 `\D`, 4 `\w`, 8 `\W`, 16 `\s`, 32 `\S`.
    package var escapes: UInt8 = 0

    package static let digit: UInt8 = 1, notDigit: UInt8 = 2, word: UInt8 = 4, notWord: UInt8 = 8, space: UInt8 = 16,
        notSpace: UInt8 = 32

    package static func escape(_ letter: Unicode.Scalar) -> UInt8? {
        switch letter {
        case "d": digit
        case "D": notDigit
        case "w": word
        case "W": notWord
        case "s": space
        case "S": notSpace
        default: nil
        }
    }
}
