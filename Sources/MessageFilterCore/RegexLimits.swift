/// The limits an extension holds every regex of compiled rules to, whatever the file says.
package enum RegexLimits {
    /// The most instructions a compiled pattern may have, counted repetitions expanded.
    package static let maximumStates = 1_000
    /// The instruction steps a regex shipped as its NFA program (its DFA was too large for the
    /// compiler's budget) may spend computing its lazy DFA's transitions on one text, each
    /// costing up to one step per instruction. Past it the NFA simulation reads the rest of the
    /// text, one step per thread and scalar: every regex reads the whole message, in time linear
    /// in it, and the lazy DFA's one table lookup per scalar stays for texts whose states stay in
    /// its cache.
    package static let maximumSteps = 62_500

    /// The transitions the lazy DFA of a program of `instructions` instructions computes on one
    /// text before it hands over to the NFA simulation.
    package static func transitionBudget(instructions: Int) -> Int { max(16, maximumSteps / max(instructions, 1)) }
}
