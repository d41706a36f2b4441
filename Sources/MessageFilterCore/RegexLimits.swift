/// The limits an extension holds every regex of compiled rules to, whatever the file says.
package enum RegexLimits {
    /// The most instructions a compiled pattern may have, counted repetitions expanded.
    package static let maximumStates = 1_000
    /// How many bytes of its target a regex sees, cut back to a whole character: the whole
    /// message, since matching is linear. A regex shipped as a DFA always sees it all.
    package static let window = 64 * 1024
    /// The most instruction steps one regex shipped as its NFA program (its DFA was too large for
    /// the compiler's budget) may take on one text: where its lazy DFA's cache
    /// overflows, each byte costs up to one step per instruction, so the bytes a regex sees are
    /// `maximumSteps / instructions`, at most `window`: a program of 30 instructions sees 8,333
    /// bytes, one at the 1,000 limit its first 250. That bounds every accepted rule's work per
    /// message, whatever the text, to about 2 ms (`blocklist bench`'s worst-case row).
    package static let maximumSteps = 250_000

    /// The bytes of a text that a regex of `instructions` instructions looks at.
    package static func window(instructions: Int) -> Int { min(window, maximumSteps / max(instructions, 1)) }
}
