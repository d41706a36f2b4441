import BlocklistCore
import BlocklistSystem
import JSONStream
internal import LibC
import MessageFilterCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Rules from a path that may hold either form: compiled rules (a file, or a directory holding
/// `rules.blsms`) are checked and used as they are; a JSON rules file is checked and compiled in
/// memory.
package struct RulesLoader {
    package var rules: CompiledRules
    /// The rules file's warnings (contradictions); empty for compiled rules.
    package var warnings: [String]
    /// The JSON rules, when the source was JSON.
    package var source: RulesFile?

    package static func load(_ path: String) throws -> RulesLoader {
        let resolved = CompiledRulesFile.resolve(path)
        let bytes = try readInput(resolved, limit: RulesFile.maximumBytes)
        // A directory's rules.blsms, or any *.blsms file, is compiled rules, whatever it holds.
        if resolved != path || resolved.hasSuffix(".blsms") || bytes.starts(with: CompiledRulesFormat.magic) {
            return RulesLoader(rules: try CompiledRules(bytes: bytes, name: resolved), warnings: [], source: nil)
        }
        let file = try RulesFile.load(Data(bytes), source: path)
        let compiled = try CompiledRules(bytes: RulesCompiler.compile(file.rules), name: path)
        return RulesLoader(rules: compiled, warnings: file.warnings, source: file)
    }

    /// Reads a whole regular file, or standard input for `-`, refusing more than `limit` bytes.
    package static func readInput(_ path: String, limit: Int) throws -> [UInt8] {
        guard path == "-" else { return try FileSystem.readFile(path, limit: limit) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MessageFilterError(.io, "Reading standard input failed: \(String(cString: strerror(errno))).")
            }
            if n == 0 { return bytes }
            guard bytes.count + n <= limit else {
                throw MessageFilterError(.io, "Standard input holds more than the \(limit) bytes this command reads.")
            }
            bytes += chunk[0..<n]
        }
    }
}

/// One message of a messages file: a JSON object per line, `{"sender": "…", "body": "…"}`.
package struct TestMessage: Codable, Sendable {
    package var sender: String
    package var body: String

    package init(sender: String, body: String) {
        self.sender = sender
        self.body = body
    }

    /// Reads a JSON Lines file of messages; blank lines and lines starting with `#` are skipped.
    ///
    /// - Throws: a sentence naming the file and line for a line that is not valid UTF-8, not a
    ///   message object, or a message the filter refuses (empty sender, too long).
    package static func load(_ bytes: [UInt8], source: String) throws -> [TestMessage] {
        if let sentence = TextFormat.notUTF8JSON(bytes, name: source) {
            throw MessageFilterError(.invalidMessage, sentence)
        }
        var messages: [TestMessage] = []
        var lineNumber = 0
        let decoder = JSONDecoder()
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var content = line
            if content.last == UInt8(ascii: "\r") { content = content.dropLast() }
            if lineNumber == 1, content.starts(with: [0xEF, 0xBB, 0xBF]) { content = content.dropFirst(3) }
            if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) || content.first == UInt8(ascii: "#") { continue }
            guard String(validating: content, as: UTF8.self) != nil else {
                throw MessageFilterError(.invalidMessage, "\(source), line \(lineNumber): the line is not valid UTF-8.")
            }
            // Strict JSON first, as for rules files: JSONDecoder would keep one of two
            // duplicate keys (the first) without a word, where the server refuses the message.
            let reader = JSONReader(bytes: Array(content))
            do {
                while try reader.next() != nil {}
            } catch  where error.kind != .limit {
                // (A string past the reader's limit is a message too long, which validate() names.)
                let what =
                    error.kind == .duplicateKey
                    ? "it gives a key twice (\(error.description))" : "it is not valid JSON (\(error.description))"
                throw MessageFilterError(.invalidMessage, "\(source), line \(lineNumber): \(what).")
            } catch {}
            let message: TestMessage
            do {
                message = try decoder.decode(TestMessage.self, from: Data(content))
            } catch let error as DecodingError {
                let what: String
                switch error {
                case .keyNotFound(let key, _): what = "it has no \"\(key.stringValue)\" field"
                case .typeMismatch(_, let context) where context.codingPath.isEmpty,
                    .valueNotFound(_, let context) where context.codingPath.isEmpty:
                    // The line itself is no object: an array, a string, a number or null.
                    what = "the line should be a JSON object {\"sender\": …, \"body\": …}"
                case .typeMismatch(_, let context), .valueNotFound(_, let context):
                    what = "the field \"\(context.codingPath.last?.stringValue ?? "?")\" is not a string"
                default: what = "it is not a JSON object {\"sender\": …, \"body\": …}"
                }
                throw MessageFilterError(.invalidMessage, "\(source), line \(lineNumber): \(what).")
            }
            do {
                try message.validate()
            } catch {
                throw MessageFilterError(.invalidMessage, "\(source), line \(lineNumber): \(error.message)")
            }
            messages.append(message)
        }
        return messages
    }

    /// Checks the message against the filter's limits.
    package func validate() throws(MessageFilterError) {
        var sender = self.sender
        var body = self.body
        let result: Result<Void, MessageFilterError> = sender.withUTF8 { s in
            body.withUTF8 { b in
                Result { () throws(MessageFilterError) in try MessageClassifier.validate(sender: s, body: b) }
            }
        }
        try result.get()
    }
}
