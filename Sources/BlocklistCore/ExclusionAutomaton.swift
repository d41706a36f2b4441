/// A deterministic automaton over digits that tells whether a digit string contains any of a set
/// of exclusion strings (Aho–Corasick, compiled to a full transition table).
///
/// State 0 is the start. Once an exclusion has been seen the automaton sits in an absorbing dead
/// state, so "this number is excluded" is one comparison.
package final class ExclusionAutomaton: @unchecked Sendable {
    /// `transitions[state * 10 + digit]` is the next state; allocated once, never changed.
    package let transitions: UnsafeMutableBufferPointer<Int32>
    /// Whether a state means an exclusion was seen.
    package let isDead: UnsafeMutableBufferPointer<Bool>

    package var stateCount: Int { isDead.count }

    package init(exclusions: [String]) {
        // The trie: children[node * 10 + digit], -1 where absent.
        var children: [Int32] = Array(repeating: -1, count: 10)
        var terminal: [Bool] = [false]
        for exclusion in exclusions {
            var node = 0
            for byte in exclusion.utf8 {
                let digit = Int(byte) - 48
                if children[node * 10 + digit] < 0 {
                    children[node * 10 + digit] = Int32(terminal.count)
                    terminal.append(false)
                    children.append(contentsOf: repeatElement(-1, count: 10))
                }
                node = Int(children[node * 10 + digit])
            }
            terminal[node] = true
        }

        // Breadth-first: failure links, and the full transition table from them.
        let count = terminal.count
        var transitions = [Int32](repeating: 0, count: count * 10)
        var failure = [Int32](repeating: 0, count: count)
        var dead = terminal
        var queue: [Int] = []
        for digit in 0..<10 {
            let child = children[digit]
            if child >= 0 {
                transitions[digit] = child
                queue.append(Int(child))
            }
        }
        var head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            dead[node] = dead[node] || dead[Int(failure[node])]
            for digit in 0..<10 {
                let child = children[node * 10 + digit]
                let fallback = transitions[Int(failure[node]) * 10 + digit]
                if child >= 0 {
                    failure[Int(child)] = fallback
                    transitions[node * 10 + digit] = child
                    queue.append(Int(child))
                } else {
                    transitions[node * 10 + digit] = fallback
                }
            }
        }
        // Dead states absorb: nothing after an exclusion can bring the number back.
        for state in 0..<count where dead[state] {
            for digit in 0..<10 { transitions[state * 10 + digit] = Int32(state) }
        }
        self.transitions = .allocate(capacity: transitions.count)
        _ = self.transitions.initialize(from: transitions)
        self.isDead = .allocate(capacity: dead.count)
        _ = self.isDead.initialize(from: dead)
    }

    deinit {
        transitions.deallocate()
        isDead.deallocate()
    }

    @inlinable
    package func next(_ state: Int, _ digit: Int) -> Int { Int(transitions[state &* 10 &+ digit]) }
}
