/// The compiled rules file, shared by the compiler and the reader. docs/FORMAT.md specifies it
/// byte by byte; all integers are little-endian.
///
/// - A 32-byte header: magic, version, rule count, section count, file length, header CRC.
/// - A section table, 16 bytes per section: kind, offset, length, CRC-32 of the section.
/// - Sections: the rules table (16 bytes per rule), the strings (names and values, UTF-8), the
///   regex rules that have no required literal, every regex rule compiled, and one automaton per
///   target and text view that some rule uses.
package enum CompiledRulesFormat {
    package static let magic: [UInt8] = Array("BLSMSRUL".utf8)
    /// 2: regexes ship compiled (the regexes section); 1 had their patterns only.
    package static let version: UInt16 = 2
    package static let headerSize = 32
    package static let sectionEntrySize = 16
    package static let ruleEntrySize = 16
    package static let stateEntrySize = 8
    package static let outputEntrySize = 12
    package static let automatonHeaderSize = 16
    /// At most this many sections: the four required, the combined rules, and an automaton per
    /// target and view (at most 13) fit.
    package static let maximumSections = 32
    /// The largest file the reader accepts: 64 MiB, far above 1,000,000 rules.
    package static let maximumFileSize = 64 << 20
    /// At most this many rules, so that a rule index fits the 24 bits of a precedence key.
    package static let maximumRules = 1_000_000
    /// A rule's name and value, in UTF-8 bytes.
    package static let maximumNameBytes = 200
    package static let maximumValueBytes = 1_000
    /// Marks that frame a text in the automata, so that prefix and suffix rules are keywords
    /// too. Neither byte occurs in UTF-8.
    package static let startMarker: UInt8 = 0xFE
    package static let endMarker: UInt8 = 0xFF
    /// "No rule" in a state's best key.
    package static let noRule: UInt32 = 0x7FFF_FFFF
    /// Bit 31 of a state's first-edge field: the state has an entry in the output table (it names
    /// a rule or triggers regexes).
    package static let outputFlag: UInt32 = 0x8000_0000

    /// Section kinds.
    package enum Section {
        package static let rules: UInt32 = 1
        package static let strings: UInt32 = 2
        package static let unfilteredRegexes: UInt32 = 3
        /// Every regex rule compiled: a DFA, or the NFA program where the DFA would be too large.
        package static let regexes: UInt32 = 4
        /// The rules that combine conditions: per rule, its number, its first condition's entry,
        /// and how many must hold and how many must not (`combinedEntrySize` bytes each).
        package static let combined: UInt32 = 5
        /// 16 + target × 4 + view index, for target 0 (sender), 1 (body) and 3 (links, whose only
        /// view is 3: ignoring case, normalized); through confusables, 32 + target × 2 + 1 when
        /// ignoring case, for targets 0 and 1.
        package static func automaton(target: RuleTarget, view: TextView) -> UInt32 {
            view.confusables
                ? 32 + UInt32(target.rawValue) * 2 + (view.caseInsensitive ? 1 : 0)
                : 16 + UInt32(target.rawValue) * 4 + UInt32(view.index)
        }
    }

    /// The regexes section: its header, a regex's table entry (rule, offset, length), and the
    /// kinds of compiled regex.
    package static let regexesHeaderSize = 16
    package static let regexEntrySize = 12
    package static let combinedEntrySize = 12
    /// At most this many conditions in one rule.
    package static let maximumConditions = 64
    package static let regexAutomatonKind: UInt8 = 1
    package static let regexProgramKind: UInt8 = 2

    /// Rule flags.
    package static let caseInsensitiveFlag: UInt8 = 1
    package static let normalizedFlag: UInt8 = 2
    /// Through confusables (`TextView.confusables`): keyword rules that are normalized only.
    package static let confusablesFlag: UInt8 = 4

    /// The precedence key of a rule: lower wins. Action rank in the high byte, then file order.
    @inline(__always)
    package static func key(action: MessageAction, rule: Int) -> UInt32 {
        action.rank << 24 | UInt32(rule)
    }
}
