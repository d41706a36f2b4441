import MessageFilterCore

extension RegexProgram {
    /// Compiles a parsed pattern into its Thompson NFA.
    ///
    /// - Parameter caseInsensitive: whether literals and classes ignore case.
    package init(_ node: RegexNode, caseInsensitive: Bool) {
        var builder = Builder(caseInsensitive: caseInsensitive)
        builder.emit(node)
        builder.instructions.append((Op.match.rawValue, 0, 0))
        self.init(
            instructions: builder.instructions,
            classes: builder.classes,
            anchoredAtStart: Self.startsWithStart(node)
        )!
    }

    /// Parses and compiles `pattern`.
    ///
    /// - Throws: `RegexSubsetError` for a pattern outside the subset.
    package init(pattern: String, caseInsensitive: Bool) throws(RegexSubsetError) {
        self.init(try RegexSubset.parse(pattern, caseInsensitive: caseInsensitive), caseInsensitive: caseInsensitive)
    }

    private static func startsWithStart(_ node: RegexNode) -> Bool {
        switch node {
        case .assertion(.start): true
        case .concatenation(let nodes): nodes.first.map(startsWithStart) ?? false
        case .alternation(let nodes): nodes.allSatisfy(startsWithStart)
        default: false
        }
    }

    private struct Builder {
        /// The rule's case, or an inline flag's within its literals and classes.
        var caseInsensitive: Bool
        var instructions: [(op: UInt8, x: Int32, y: Int32)] = []
        var classes: [RegexClass] = []

        mutating func append(_ op: Op, _ x: Int32 = 0, _ y: Int32 = 0) { instructions.append((op.rawValue, x, y)) }

        mutating func emit(_ node: RegexNode) {
            switch node {
            case .empty:
                break
            case .scalar(let value):
                if caseInsensitive, RegexProgram.hasOtherCase(value) {
                    append(.foldedScalar, Int32(bitPattern: RegexProgram.fold(value)))
                } else {
                    append(.scalar, Int32(bitPattern: value))
                }
            case .any:
                append(.any)
            case .flagged(let node, let ignoresCase):
                let rule = caseInsensitive
                caseInsensitive = ignoresCase
                emit(node)
                caseInsensitive = rule
            case .set(var set):
                // Ignoring case, a class holds every scalar that folds as one of its members does,
                // so that matching never looks at case.
                if caseInsensitive { set.ranges = UnicodeTables.shared.caseClosure(of: set.ranges) }
                // Copies of a repeated class share one entry, so a transition tests each once.
                if let index = classes.firstIndex(of: set) {
                    append(.set, Int32(index))
                } else {
                    append(.set, Int32(classes.count))
                    classes.append(set)
                }
            case .assertion(let kind):
                switch kind {
                case .start: append(.start)
                case .end: append(.end)
                case .wordBoundary: append(.wordBoundary)
                case .notWordBoundary: append(.notWordBoundary)
                }
            case .concatenation(let nodes):
                for node in nodes { emit(node) }
            case .alternation(let nodes):
                var jumps: [Int] = []
                for (index, branch) in nodes.enumerated() {
                    if index == nodes.count - 1 {
                        emit(branch)
                    } else {
                        let split = instructions.count
                        append(.split, Int32(split + 1))
                        emit(branch)
                        jumps.append(instructions.count)
                        append(.jump)
                        instructions[split].y = Int32(instructions.count)
                    }
                }
                for jump in jumps { instructions[jump].x = Int32(instructions.count) }
            case .repetition(let body, let low, let high):
                for _ in 0..<low { emit(body) }
                if let high {
                    // `x?x?…` in a row, each copy's split skipping only that copy: the thread
                    // that has read fewer copies reaches the others, so a lazy DFA keeps just
                    // it (`RegexDFA`'s pruning), where skips to the end would keep them all.
                    for _ in low..<high {
                        let split = instructions.count
                        append(.split, Int32(split + 1))
                        emit(body)
                        instructions[split].y = Int32(instructions.count)
                    }
                } else {
                    let split = instructions.count
                    append(.split, Int32(split + 1))
                    emit(body)
                    append(.jump, Int32(split))
                    instructions[split].y = Int32(instructions.count)
                }
            }
        }
    }
}
