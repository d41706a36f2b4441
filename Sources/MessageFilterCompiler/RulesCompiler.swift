internal import ByteCodecs
import MessageFilterCore

/// Compiles checked rules into the compiled rules format (docs/FORMAT.md): keyword rules become
/// Aho–Corasick automata, one per target and text view, and each regex rule is hung on its
/// required literal in the same automata.
package enum RulesCompiler {
    /// Compiles `rules`, which `RulesFile.check` accepted.
    ///
    /// - Complexity: O(total length of the values × log alphabet) time and memory.
    /// The keywords a keyword rule puts in its automaton, framed by the markers as its match
    /// kind needs: a prefix after 0xFE, a suffix before 0xFF; a domain of the links text
    /// (`LinkExtractor`) between both, and for `*.example.com` also `.example.com` before 0xFF,
    /// which every host under it ends with.
    static func keywords(_ rule: MessageRule) -> [[UInt8]] {
        let start = CompiledRulesFormat.startMarker
        let end = CompiledRulesFormat.endMarker
        let folded = rule.view.fold(rule.value)
        switch rule.match {
        case .prefix: return [[start] + folded]
        case .suffix: return [folded + [end]]
        case .domain:
            guard folded.starts(with: Array("*.".utf8)) else { return [[start] + folded + [end]] }
            let base = Array(folded.dropFirst(2))
            return [[start] + base + [end], [UInt8(ascii: ".")] + base + [end]]
        default: return [folded]
        }
    }

    /// What a combined rule's entry says for its value: its conditions, in words.
    static func summary(_ rule: MessageRule) -> String {
        func words(_ condition: MessageRule) -> String {
            "\(condition.target) \(condition.match) \(condition.value)"
        }
        var text = rule.all.map(words).joined(separator: " and ")
        if !rule.none.isEmpty { text += " but not " + rule.none.map(words).joined(separator: " or ") }
        // The format's limit for a value, cut at a scalar.
        var cut = text.unicodeScalars.startIndex
        var bytes = 0
        for scalar in text.unicodeScalars {
            bytes += UTF8.width(scalar)
            if bytes > CompiledRulesFormat.maximumValueBytes { return String(text.unicodeScalars[..<cut]) }
            cut = text.unicodeScalars.index(after: cut)
        }
        return text
    }

    package static func compile(_ rules: [MessageRule]) -> [UInt8] {
        var tries: [Int: Trie] = [:]  // by automaton section kind
        var unfiltered: [UInt32] = []
        var programs: [(rule: Int, program: RegexProgram)] = []
        // The entries: the rules in file order, then each combined rule's conditions (its `all`,
        // then its `none`), named as their rule, with the action none; a record per combined rule.
        var entries = rules
        var combined: [UInt8] = []
        for (index, rule) in rules.enumerated() where rule.match == .all {
            combined.appendLE(UInt32(index))
            combined.appendLE(UInt32(entries.count))
            combined.appendLE(UInt16(rule.all.count))
            combined.appendLE(UInt16(rule.none.count))
            for var condition in rule.all + rule.none {
                condition.name = rule.name
                condition.action = .none
                condition.subAction = nil
                entries.append(condition)
            }
            entries[index].value = summary(rule)
        }
        for (index, rule) in entries.enumerated() where rule.match != .all {
            let view = rule.view
            let targets: [RuleTarget] = rule.target == .any ? [.sender, .body] : [rule.target]
            if rule.match == .regex {
                guard let program = try? RegexProgram(pattern: rule.pattern, caseInsensitive: view.caseInsensitive)
                else {
                    preconditionFailure("rule \(index + 1)'s regex is outside the subset: RulesFile.check refuses it")
                }
                programs.append((index, program))
                // RulesFile.check accepted the pattern.
                let literals =
                    (try? RegexSubset.analyze(rule.pattern, caseInsensitive: view.caseInsensitive))?.requiredLiterals
                    ?? []
                if literals.isEmpty {
                    unfiltered.append(UInt32(index))
                    continue
                }
                // The literals are as the rule's view holds them (folded already when the rule
                // ignores case); any of them triggers the regex.
                for target in targets {
                    let kind = Int(CompiledRulesFormat.Section.automaton(target: target, view: view))
                    for literal in literals { tries[kind, default: Trie()].insert(literal, trigger: UInt32(index)) }
                }
                continue
            }
            // A rule's keyword names it; a condition's triggers it, as a regex's literal does.
            let key = CompiledRulesFormat.key(action: rule.action, rule: index)
            for keyword in Self.keywords(rule) {
                for target in targets {
                    let kind = Int(CompiledRulesFormat.Section.automaton(target: target, view: view))
                    if rule.action == .none {
                        tries[kind, default: Trie()].insert(keyword, trigger: UInt32(index))
                    } else {
                        tries[kind, default: Trie()].insert(keyword, key: key)
                    }
                }
            }
        }

        // Sections in kind order: rules, strings, unfiltered regexes, automata.
        var strings: [UInt8] = []
        var ruleTable: [UInt8] = []
        for rule in entries {
            // The sub-action's place in its action's list, plus one, in the high four bits.
            let sub = rule.subAction.flatMap { DeferralResponse.subActions[rule.action]?.firstIndex(of: $0) }
            ruleTable.append(rule.action.rawValue | UInt8(sub.map { $0 + 1 } ?? 0) << 4)
            ruleTable.append(rule.target.rawValue)
            ruleTable.append(rule.match.rawValue)
            ruleTable.append(
                rule.match == .all
                    ? 0
                    : (rule.caseSensitive ? 0 : CompiledRulesFormat.caseInsensitiveFlag)
                        | (rule.normalize ? CompiledRulesFormat.normalizedFlag : 0)
                        | (rule.view.confusables ? CompiledRulesFormat.confusablesFlag : 0)
            )
            let name = Array(rule.name.utf8)
            let value = Array(rule.value.utf8)
            ruleTable.appendLE(UInt32(strings.count))
            strings += name
            ruleTable.appendLE(UInt32(strings.count))
            strings += value
            ruleTable.appendLE(UInt16(name.count))
            ruleTable.appendLE(UInt16(value.count))
        }
        var unfilteredBytes: [UInt8] = []
        for rule in unfiltered { unfilteredBytes.appendLE(rule) }
        var sections: [(UInt32, [UInt8])] = [
            (CompiledRulesFormat.Section.rules, ruleTable),
            (CompiledRulesFormat.Section.strings, strings),
            (CompiledRulesFormat.Section.unfilteredRegexes, unfilteredBytes),
            (CompiledRulesFormat.Section.regexes, RegexSection.serialized(programs).bytes),
        ]
        if !combined.isEmpty { sections.append((CompiledRulesFormat.Section.combined, combined)) }
        for kind in tries.keys.sorted() {
            sections.append((UInt32(kind), tries[kind]!.serialized()))
        }

        let format = CompiledRulesFormat.self
        var offset = format.headerSize + sections.count * format.sectionEntrySize
        var table: [UInt8] = []
        var body: [UInt8] = []
        for (kind, bytes) in sections {
            table.appendLE(kind)
            table.appendLE(UInt32(offset))
            table.appendLE(UInt32(bytes.count))
            table.appendLE(bytes.withUnsafeBytes { crc32Update(0, $0) })
            body += bytes
            let padding = (4 - bytes.count % 4) % 4
            body += [UInt8](repeating: 0, count: padding)
            offset += bytes.count + padding
        }
        // The file ends at the last section's last byte; its padding is not written.
        let lastPadding = (4 - (sections.last!.1.count % 4)) % 4
        body.removeLast(lastPadding)
        var header: [UInt8] = format.magic
        header.appendLE(format.version)
        header.appendLE(UInt16(0))
        header.appendLE(UInt32(entries.count))
        header.appendLE(UInt32(sections.count))
        header.appendLE(UInt32(format.headerSize + table.count + body.count))
        var crc = header.withUnsafeBytes { crc32Update(0, $0) }
        crc = table.withUnsafeBytes { crc32Update(crc, $0) }
        header.appendLE(crc)
        header.appendLE(UInt32(0))
        return header + table + body
    }
}

/// A keyword trie that becomes an Aho–Corasick automaton.
struct Trie {
    private var children: [[UInt8: Int]] = [[:]]
    private var keys: [UInt32] = [CompiledRulesFormat.noRule]
    private var triggers: [[UInt32]] = [[]]

    private mutating func node(for keyword: [UInt8]) -> Int {
        var state = 0
        for byte in keyword {
            if let next = children[state][byte] {
                state = next
            } else {
                children.append([:])
                keys.append(CompiledRulesFormat.noRule)
                triggers.append([])
                children[state][byte] = children.count - 1
                state = children.count - 1
            }
        }
        return state
    }

    mutating func insert(_ keyword: [UInt8], key: UInt32) {
        let state = node(for: keyword)
        keys[state] = min(keys[state], key)
    }

    mutating func insert(_ keyword: [UInt8], trigger rule: UInt32) {
        let state = node(for: keyword)
        if !triggers[state].contains(rule) { triggers[state].append(rule) }
    }

    /// Numbers the states breadth-first (so failure links point to lower numbers and edges to
    /// higher ones), computes failure links, and folds each state's failure chain into its best
    /// key and trigger list.
    func serialized() -> [UInt8] {
        var order: [Int] = [0]
        var number = [Int](repeating: 0, count: children.count)
        var fail = [Int](repeating: 0, count: children.count)
        var best = keys
        var merged = triggers
        var head = 0
        while head < order.count {
            let state = order[head]
            head += 1
            for (byte, child) in children[state].sorted(by: { $0.key < $1.key }) {
                number[child] = order.count
                order.append(child)
                if state != 0 {
                    var f = fail[state]
                    while f != 0 && children[f][byte] == nil { f = fail[f] }
                    fail[child] = children[f][byte] ?? 0
                }
                best[child] = min(best[child], best[fail[child]])
                for rule in merged[fail[child]] where !merged[child].contains(rule) { merged[child].append(rule) }
            }
        }
        var states: [UInt8] = []
        var labels: [UInt8] = []
        var outputs: [UInt8] = []
        var triggerBytes: [UInt8] = []
        var edgeCount = 0
        var triggerCount = 0
        var outputCount = 0
        for (position, state) in order.enumerated() {
            let list = merged[state].sorted()
            let hasOutputs = best[state] != CompiledRulesFormat.noRule || !list.isEmpty
            states.appendLE(UInt32(edgeCount) | (hasOutputs ? CompiledRulesFormat.outputFlag : 0))
            states.appendLE(UInt32(number[fail[state]]))
            for (byte, child) in children[state].sorted(by: { $0.key < $1.key }) {
                // Breadth-first numbering in edge order: edge e leads to state e + 1.
                precondition(number[child] == edgeCount + 1)
                labels.append(byte)
                edgeCount += 1
            }
            if hasOutputs {
                outputs.appendLE(UInt32(position))
                outputs.appendLE(best[state])
                outputs.appendLE(UInt32(triggerCount))
                outputCount += 1
                for rule in list {
                    triggerBytes.appendLE(rule)
                    triggerCount += 1
                }
            }
        }
        states.appendLE(UInt32(edgeCount))
        states.appendLE(UInt32(0))
        outputs.appendLE(UInt32(order.count))
        outputs.appendLE(CompiledRulesFormat.noRule)
        outputs.appendLE(UInt32(triggerCount))
        labels += [UInt8](repeating: 0, count: (4 - labels.count % 4) % 4)
        var bytes: [UInt8] = []
        bytes.appendLE(UInt32(order.count))
        bytes.appendLE(UInt32(edgeCount))
        bytes.appendLE(UInt32(triggerCount))
        bytes.appendLE(UInt32(outputCount))
        return bytes + states + labels + outputs + triggerBytes
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
