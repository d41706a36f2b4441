import BlocklistCore
internal import ByteCodecs
import JSONStream
internal import LibC
import SetStorage

/// A list file in the shape of Saracroche's: a name, a version, and patterns each with an action.
///
/// ```json
/// {"name": "FR telemarketing", "version": 12,
///  "patterns": [{"pattern": "33162######", "action": "block", "name": "Telemarketing"}]}
/// ```
///
/// `pattern` is digits and `#` (any digit), with or without `+`, country code first. `action` is
/// `block`, `identify` (the `name` is the label, so it is needed) or `allow`. Other fields are
/// ignored; `version` may be a string, a number or null.
///
/// The file is read as a stream of JSON tokens (`JSONReader`), in this process and without
/// Foundation: memory is a 32 KiB buffer and the patterns themselves, whatever the file's size.
/// The JSON is read strictly: a key given twice in one object, or nesting deeper than 64, is
/// refused with a sentence naming it.
package struct ListFile: Sendable, Equatable {
    package enum Action: String, Sendable, CaseIterable {
        case block, identify, allow
    }

    package struct Entry: Sendable, Equatable {
        package var pattern: BlockPattern
        package var action: Action
        /// The label's bytes (UTF-8), for `identify`.
        package var label: [UInt8]?

        package init(pattern: BlockPattern, action: Action, label: [UInt8]?) {
            self.pattern = pattern
            self.action = action
            self.label = label
        }
    }

    package var name: String?
    package var version: String?
    package var entries: [Entry] = []
    /// What the manifest records of the file: its path, size, patterns (as lines) and SHA-256.
    package var input: Manifest.Input

    /// The largest list file read: 16 MiB.
    package static let maximumBytes = 16 << 20
    /// The most patterns one list file holds.
    package static let maximumPatterns = 10_000

    /// Reads and checks the list file at `path` (`-` for standard input), hashing its bytes as it
    /// reads them.
    ///
    /// - Throws: `BlocklistError` with a sentence naming the file, the pattern (by number) and the
    ///   field, or the line and column of broken JSON.
    package static func read(_ path: String) throws(BlocklistError) -> ListFile {
        let (descriptor, name) = try InputLines.open(path)
        defer { if path != "-" { close(descriptor) } }
        var hasher = PortableSHA256()
        var total: Int64 = 0
        var failure: BlocklistError?
        let reader = JSONReader { (buffer: UnsafeMutableRawBufferPointer) throws(JSONError) -> Int in
            let n = InputLines.read(descriptor, into: buffer)
            guard n >= 0 else {
                failure = BlocklistError(.io, "Reading \(name) failed: \(String(cString: strerror(errno))).")
                throw JSONError(kind: .io, offset: total, line: 0, column: 0, message: "")
            }
            if total == 0,
                let sentence = TextFormat.notUTF8JSON(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), name: name)
            {
                failure = BlocklistError(.invalidInput, sentence)
                throw JSONError(kind: .io, offset: 0, line: 0, column: 0, message: "")
            }
            total += Int64(n)
            guard total <= Int64(maximumBytes) else {
                failure = BlocklistError(
                    .limitExceeded,
                    "\(name) is larger than \(maximumBytes) bytes; a list file holds patterns, and single numbers go in a --numbers file."
                )
                throw JSONError(kind: .limit, offset: total, line: 0, column: 0, message: "")
            }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            return n
        }
        var file: ListFile
        do {
            file = try parse(reader, source: name)
        } catch {
            // A read that failed says why itself; the reader only saw that it stopped.
            throw failure ?? error
        }
        file.input = Manifest.Input(
            kind: "list",
            path: absolutePath(path),
            bytes: total,
            lines: Int64(file.entries.count),
            skipped: 0,
            sha256: hasher.finish()
        )
        return file
    }

    /// Reads and checks a list file's bytes; `source` names it in sentences.
    package static func decode(_ bytes: [UInt8], source: String) throws(BlocklistError) -> ListFile {
        guard bytes.count <= maximumBytes else {
            throw BlocklistError(
                .limitExceeded,
                "\(source) is \(bytes.count) bytes; a list file is at most \(maximumBytes) bytes."
            )
        }
        if let sentence = TextFormat.notUTF8JSON(bytes, name: source) {
            throw BlocklistError(.invalidInput, sentence)
        }
        var file = try parse(JSONReader(bytes: bytes), source: source)
        file.input = Manifest.Input(
            kind: "list",
            path: source,
            bytes: Int64(bytes.count),
            lines: Int64(file.entries.count),
            skipped: 0,
            sha256: PortableSHA256.hex(bytes)
        )
        return file
    }

    /// The patterns of each action: what `generate` combines.
    package var block: [BlockPattern] { entries.filter { $0.action == .block }.map(\.pattern) }
    package var allow: [BlockPattern] { entries.filter { $0.action == .allow }.map(\.pattern) }
    package var identify: [(pattern: BlockPattern, label: [UInt8])] {
        entries.compactMap { entry in entry.label.map { (entry.pattern, $0) } }
    }

    // MARK: - Reading

    /// The JSON reader with its errors as sentences naming the file.
    struct Tokens {
        let reader: JSONReader
        let source: String

        func next() throws(BlocklistError) -> JSONReader.Token? {
            do { return try reader.next() } catch { throw sentence(error) }
        }

        func skip(openedBy token: JSONReader.Token? = nil) throws(BlocklistError) {
            do { try reader.skipValue(openedBy: token) } catch { throw sentence(error) }
        }

        func sentence(_ error: JSONError) -> BlocklistError {
            switch error.kind {
            case .tooDeep: return BlocklistError(.limitExceeded, "\(source) is nested too deep: \(error.description).")
            case .duplicateKey:
                return BlocklistError(
                    .invalidInput,
                    "\(source) gives a key twice: \(error.description); give each key once."
                )
            case .limit: return BlocklistError(.limitExceeded, "\(source) is too large: \(error.description).")
            case .syntax, .io:
                return BlocklistError(.invalidInput, "\(source) is not valid JSON: \(error.description).")
            }
        }
    }

    /// Walks the document: an object whose `patterns` is an array of objects.
    static func parse(_ reader: JSONReader, source: String) throws(BlocklistError) -> ListFile {
        var file = ListFile(
            input: Manifest.Input(kind: "list", path: source, bytes: 0, lines: 0, skipped: 0, sha256: "")
        )
        let tokens = Tokens(reader: reader, source: source)
        let first = try tokens.next()
        guard first == .objectStart else {
            throw BlocklistError(
                .invalidInput,
                "\(source) should be a JSON object with a \"patterns\" array, not \(describe(first))."
            )
        }
        var sawPatterns = false
        while let token = try tokens.next(), token == .key {
            switch reader.string {
            case "patterns":
                sawPatterns = true
                let value = try tokens.next()
                guard value == .arrayStart else {
                    throw BlocklistError(
                        .invalidInput,
                        "\(source): field \"patterns\" should be an array, not \(describe(value))."
                    )
                }
                while let item = try tokens.next(), item != .arrayEnd {
                    guard file.entries.count < maximumPatterns else {
                        throw BlocklistError(
                            .limitExceeded,
                            "\(source) has more than \(maximumPatterns) patterns; a list file holds at most \(maximumPatterns). Put single numbers in a --numbers file."
                        )
                    }
                    file.entries.append(try entry(tokens, item, number: file.entries.count + 1))
                }
            case "name":
                let value = try tokens.next()
                switch value {
                case .string: file.name = reader.string
                case .null: file.name = nil
                default:
                    throw BlocklistError(
                        .invalidInput,
                        "\(source): field \"name\" should be a string, not \(describe(value))."
                    )
                }
            case "version":
                let value = try tokens.next()
                switch value {
                case .string, .number: file.version = reader.string
                case .null: file.version = nil
                default:
                    throw BlocklistError(
                        .invalidInput,
                        "\(source): field \"version\" should be a string or a number, not \(describe(value))."
                    )
                }
            default:
                try tokens.skip()
            }
        }
        // The loop ended at the object's end; nothing but white space may follow it.
        _ = try tokens.next()
        guard sawPatterns else {
            throw BlocklistError(
                .invalidInput,
                "\(source) has no field \"patterns\", which a list file needs (an array of patterns)."
            )
        }
        return file
    }

    /// One pattern object, whose first token `first` was just read.
    private static func entry(_ tokens: Tokens, _ first: JSONReader.Token, number: Int) throws(BlocklistError) -> Entry
    {
        let source = tokens.source
        func fail(_ field: String, _ what: String) -> BlocklistError {
            BlocklistError(.invalidInput, "\(source): pattern \(number), field \"\(field)\": \(what).")
        }
        guard first == .objectStart else {
            if first == .null { throw BlocklistError(.invalidInput, "\(source): pattern \(number) is null.") }
            throw BlocklistError(
                .invalidInput,
                "\(source): pattern \(number) should be a JSON object, not \(describe(first))."
            )
        }
        var patternText: String?
        var actionText: String?
        var name: [UInt8]?
        while let token = try tokens.next(), token == .key {
            let key = tokens.reader.string
            guard key == "pattern" || key == "action" || key == "name" else {
                try tokens.skip()
                continue
            }
            let value = try tokens.next()
            guard value == .string else {
                if key == "name" && value == .null { continue }
                throw BlocklistError(
                    .invalidInput,
                    "\(source): pattern \(number), field \"\(key)\" should be a string, not \(describe(value))."
                )
            }
            switch key {
            case "pattern": patternText = tokens.reader.string
            case "action": actionText = tokens.reader.string
            default: name = tokens.reader.text
            }
        }
        guard let patternText else {
            throw BlocklistError(
                .invalidInput,
                "\(source): pattern \(number) has no field \"pattern\", which every pattern needs."
            )
        }
        guard let actionText else {
            throw BlocklistError(
                .invalidInput,
                "\(source): pattern \(number) has no field \"action\", which every pattern needs."
            )
        }
        let pattern: BlockPattern
        do {
            pattern = try BlockPattern(parsing: patternText)
        } catch {
            throw fail("pattern", error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message)
        }
        guard let action = Action(rawValue: actionText) else {
            throw fail(
                "action",
                "\"\(JSONError.printable(Array(actionText.utf8)))\" is not an action; give block, identify or allow"
            )
        }
        var label: [UInt8]?
        if action == .identify {
            guard let name else { throw fail("name", "an identify pattern needs a name, which is its label") }
            do {
                label = try ListLine.validLabel(name)
            } catch {
                throw fail("name", error.reason)
            }
        }
        return Entry(pattern: pattern, action: action, label: label)
    }

    private static func describe(_ token: JSONReader.Token?) -> String {
        switch token {
        case nil: return "nothing"
        case .objectStart: return "an object"
        case .arrayStart: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "true or false"
        case .null: return "null"
        case .key, .objectEnd, .arrayEnd: return "the end of a container"
        }
    }
}

/// `path` made absolute against the working directory, without resolving symlinks; `-` stays.
package func absolutePath(_ path: String) -> String {
    guard path != "-", !path.hasPrefix("/") else { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let directory = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    return directory == "/" ? "/" + relative : directory + "/" + relative
}
