#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlocklistCore
import BlocklistLists

/// A list file in the shape of Saracroche's: a name, a version, and patterns each with an action.
///
/// ```json
/// {"name": "FR telemarketing", "version": 12,
///  "patterns": [{"pattern": "33162######", "action": "block", "name": "Telemarketing"}]}
/// ```
///
/// `pattern` is digits and `#` (any digit), with or without `+`, country code first. `action` is
/// `block`, `identify` (the `name` is the label, so it is needed) or `allow`. Other fields are
/// ignored; `version` may be a string or a number.
public struct ListFile: Sendable, Equatable {
    public enum Action: String, Sendable, CaseIterable {
        case block, identify, allow
    }

    public struct Entry: Sendable, Equatable {
        /// The pattern as `+` then digits and `#`.
        public var pattern: String
        public var action: Action
        /// The label, for `identify`.
        public var label: String?

        public init(pattern: String, action: Action, label: String?) {
            self.pattern = pattern
            self.action = action
            self.label = label
        }
    }

    public var name: String?
    public var version: String?
    public var entries: [Entry]

    /// The largest list file read: 16 MiB.
    public static let maximumBytes = 16 << 20
    /// The most patterns one list file holds.
    public static let maximumPatterns = 10_000

    /// Reads and checks a list file's bytes.
    ///
    /// - Throws: `.invalidInput` with a sentence naming `source`, the pattern (by number) and the
    ///   field.
    public static func decode(_ bytes: [UInt8], source: String) throws(BlocklistError) -> ListFile {
        guard bytes.count <= maximumBytes else {
            throw BlocklistError(.limitExceeded, "\(source) is \(bytes.count) bytes; a list file is at most \(maximumBytes) bytes.")
        }
        let raw: RawList
        do {
            raw = try JSONDecoder().decode(RawList.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw BlocklistError(.invalidInput, sentence(for: error, source: source))
        } catch {
            throw BlocklistError(.invalidInput, "\(source) is not a list file: \(error).")
        }
        guard raw.patterns.count <= maximumPatterns else {
            throw BlocklistError(
                .limitExceeded, "\(source) has \(raw.patterns.count) patterns; a list file holds at most \(maximumPatterns). Put single numbers in a --numbers file.")
        }
        var entries: [Entry] = []
        for (index, item) in raw.patterns.enumerated() {
            func fail(_ field: String, _ what: String) -> BlocklistError {
                BlocklistError(.invalidInput, "\(source): pattern \(index + 1), field \"\(field)\": \(what).")
            }
            let pattern: BlockPattern
            do {
                pattern = try BlockPattern(parsing: item.pattern)
            } catch {
                throw fail("pattern", error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message)
            }
            guard let action = Action(rawValue: item.action) else {
                throw fail("action", "\"\(item.action)\" is not an action; give block, identify or allow")
            }
            var label: String?
            if action == .identify {
                guard let name = item.name else { throw fail("name", "an identify pattern needs a name, which is its label") }
                do {
                    _ = try ListLine.validLabel(Array(name.utf8))
                } catch {
                    throw fail("name", error.reason)
                }
                label = name
            }
            entries.append(Entry(pattern: pattern.description, action: action, label: label))
        }
        return ListFile(name: raw.name, version: raw.version?.text, entries: entries)
    }

    /// The entries as the records `generate` reads from `blocklist list-file decode`: one line
    /// each, `block<TAB>+pattern`, `allow<TAB>+pattern` or `identify<TAB>+pattern<TAB>label`
    /// (labels hold no control characters, so no tab or newline).
    public var records: String {
        entries.map { entry in
            "\(entry.action.rawValue)\t\(entry.pattern)" + (entry.label.map { "\t" + $0 } ?? "") + "\n"
        }.joined()
    }

    /// One sentence for a decoding error, naming the pattern and field.
    static func sentence(for error: DecodingError, source: String) -> String {
        // "pattern 3, field "action"": a key followed by an index is the array itself.
        func place(_ path: [any CodingKey]) -> String {
            var parts: [String] = []
            for (position, key) in path.enumerated() {
                if let index = key.intValue {
                    parts.append("pattern \(index + 1)")
                } else if position + 1 == path.count || path[position + 1].intValue == nil {
                    parts.append("field \"\(key.stringValue)\"")
                }
            }
            return parts.isEmpty ? "" : ": " + parts.joined(separator: ", ")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let what = context.codingPath.isEmpty ? "which a list file needs (an array of patterns)" : "which every pattern needs"
            return "\(source)\(place(context.codingPath)) has no field \"\(key.stringValue)\", \(what)."
        case .typeMismatch(let type, let context):
            let what = type == String.self ? "a string" : "\(type)".hasPrefix("Array") ? "an array" : "a JSON object"
            return "\(source)\(place(context.codingPath)) should be \(what)."
        case .valueNotFound(_, let context):
            return "\(source)\(place(context.codingPath)) is null."
        case .dataCorrupted(let context):
            var detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            if detail.hasSuffix(".") { detail.removeLast() }
            if context.codingPath.isEmpty {
                return "\(source) is not valid JSON: \(detail)."
            }
            return "\(source)\(place(context.codingPath)): \(detail)."
        @unknown default:
            return "\(source) is not a list file: \(error)."
        }
    }
}

private struct RawList: Decodable {
    var name: String?
    var version: Version?
    var patterns: [RawPattern]
}

private struct RawPattern: Decodable {
    var pattern: String
    var action: String
    var name: String?
}

/// A version given as a string or a number; anything else counts as none.
private struct Version: Decodable {
    var text: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            text = string
        } else if let integer = try? container.decode(Int64.self) {
            text = String(integer)
        } else if let number = try? container.decode(Double.self) {
            text = String(number)
        }
    }
}
