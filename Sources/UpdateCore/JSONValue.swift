import JSONStream

/// A small JSON document held in memory: publication metadata, push payloads and the state an
/// App Group keeps. Read through `JSONReader` (strict RFC 8259, duplicate keys refused) and written
/// canonically: keys sorted by their UTF-8 bytes, no white space, strings escaped minimally,
/// numbers as written. Signatures cover bytes, never a re-serialization, so canonical writing is
/// for stable files, not for security.
public indirect enum JSONValue: Hashable, Sendable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    /// A number as written (JSON's grammar, checked by the reader).
    case number(String)
    case bool(Bool)
    case null

    /// Reads `bytes` as one JSON document.
    ///
    /// - Parameters:
    ///   - bytes: the document.
    ///   - what: names the document in errors, e.g. "timestamp.json".
    /// - Throws: `UpdateError` `.malformed` naming the line and column.
    public init(parsing bytes: [UInt8], what: String) throws(UpdateError) {
        if let sentence = TextFormat.notUTF8JSON(bytes, name: what) { throw UpdateError(.malformed, sentence) }
        // A string is bounded by the document, which its reader bounds (a signed envelope's
        // payload, base64 in one string, is most of it: a 10,000-shard snapshot's is 3 MB).
        let reader = JSONReader(
            bytes: bytes,
            maximumDepth: 16,
            maximumStringBytes: bytes.count + 1,
            maximumKeys: 1 << 16
        )
        do throws(JSONError) {
            guard let first = try reader.next() else {
                throw reader.error(.syntax, "the document is empty")
            }
            self = try Self.value(first, reader)
            guard try reader.next() == nil else { throw reader.error(.syntax, "text follows the value") }
        } catch {
            throw UpdateError(.malformed, "\(what) is not valid JSON: \(error.description).")
        }
    }

    private static func value(_ token: JSONReader.Token, _ reader: JSONReader) throws(JSONError) -> JSONValue {
        switch token {
        case .objectStart:
            var members: [String: JSONValue] = [:]
            while let next = try reader.next(), next != .objectEnd {
                let key = reader.string
                guard let valueToken = try reader.next() else { throw reader.error(.syntax, "the document ends early") }
                members[key] = try value(valueToken, reader)
            }
            return .object(members)
        case .arrayStart:
            var elements: [JSONValue] = []
            while let next = try reader.next(), next != .arrayEnd {
                elements.append(try value(next, reader))
            }
            return .array(elements)
        case .string: return .string(reader.string)
        case .number: return .number(reader.string)
        case .bool(let flag): return .bool(flag)
        case .null: return .null
        case .key, .objectEnd, .arrayEnd: throw reader.error(.syntax, "a value was expected")
        }
    }

    /// The canonical bytes of this value.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (offset, key) in members.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
                .enumerated()
            {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                element.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let text): Self.writeString(text, into: &out)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        }
    }

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        JSONText.appendString(text, to: &out)
    }
}

/// Typed reading of a JSON object's fields, each failure a sentence naming the document and field.
package struct JSONFields {
    package let members: [String: JSONValue]
    package let what: String

    package init(_ value: JSONValue, what: String) throws(UpdateError) {
        guard case .object(let members) = value else {
            throw UpdateError(.malformed, "\(what) is not a JSON object.")
        }
        self.members = members
        self.what = what
    }

    package func value(_ key: String) throws(UpdateError) -> JSONValue {
        guard let value = members[key] else { throw UpdateError(.malformed, "\(what) has no \"\(key)\".") }
        return value
    }

    package func string(_ key: String) throws(UpdateError) -> String {
        guard case .string(let text) = try value(key) else {
            throw UpdateError(.malformed, "\(what): \"\(key)\" is not a string.")
        }
        return text
    }

    /// A whole number in `range`, written without a fraction or exponent.
    package func integer(_ key: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(UpdateError) -> Int64 {
        guard case .number(let text) = try value(key), let number = Int64(text), range.contains(number) else {
            throw UpdateError(
                .malformed,
                "\(what): \"\(key)\" is not a whole number in \(range.lowerBound)...\(range.upperBound)."
            )
        }
        return number
    }

    package func array(_ key: String) throws(UpdateError) -> [JSONValue] {
        guard case .array(let elements) = try value(key) else {
            throw UpdateError(.malformed, "\(what): \"\(key)\" is not an array.")
        }
        return elements
    }

    package func object(_ key: String) throws(UpdateError) -> JSONFields {
        try JSONFields(try value(key), what: "\(what) \"\(key)\"")
    }

    /// Bytes written as hex of exactly `count` bytes.
    package func hex(_ key: String, count: Int) throws(UpdateError) -> [UInt8] {
        guard let bytes = TextEncodings.hexDecode(Array(try string(key).utf8)), bytes.count == count else {
            throw UpdateError(.malformed, "\(what): \"\(key)\" is not \(count * 2) lowercase hex digits.")
        }
        return bytes
    }

    /// Bytes written as base64.
    package func base64(_ key: String) throws(UpdateError) -> [UInt8] {
        guard let bytes = TextEncodings.base64Decode(Array(try string(key).utf8)) else {
            throw UpdateError(.malformed, "\(what): \"\(key)\" is not canonical base64.")
        }
        return bytes
    }

    /// Refuses a `type` field other than `expected`.
    package func expectType(_ expected: String) throws(UpdateError) {
        let type = try string("type")
        guard type == expected else {
            throw UpdateError(.malformed, "\(what) is \"\(type)\" metadata, not \"\(expected)\".")
        }
    }
}
