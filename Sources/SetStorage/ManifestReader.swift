import BlocklistCore
import JSONStream

extension Manifest {
    /// The one reader of manifest.json: the strict JSON reader's tokens (JSONStream) into a
    /// `Manifest`, without Foundation. Keys it does not know are skipped, as a newer writer may
    /// add some; a key given twice, a missing key, a value of the wrong type, a number that is not
    /// a whole number in Int64, or a pattern that does not parse is refused with a sentence that
    /// names `path` and the value's place (`shards[2].count is missing`).
    ///
    /// It reads only; `validate(path:)` then checks the format, version and names.
    package static func decode(_ bytes: [UInt8], path: String) throws(BlocklistError) -> Manifest {
        let decoder = ManifestDecoder(bytes, path: path)
        let manifest = try decoder.manifest()
        try decoder.end()
        return manifest
    }

    /// Reads a spec alone, by the rules `decode` reads a manifest's `spec` with: an update checks
    /// the spec it carries before it writes it into a manifest, so that no update installs a
    /// manifest the phone cannot read back. `path` names the spec in errors.
    package static func decodeSpec(_ bytes: [UInt8], path: String) throws(BlocklistError) -> Spec {
        let decoder = ManifestDecoder(bytes, path: path, kind: "spec")
        let spec = try decoder.specAlone()
        try decoder.end()
        return spec
    }
}

/// Reads the manifest's values token by token, naming each value's place in its errors.
private final class ManifestDecoder {
    private let reader: JSONReader
    private let path: String
    /// What the input is, in errors: "manifest", or "spec" for a spec alone.
    private let kind: String
    /// A token read ahead (an array's next element, a value checked for null).
    private var pending: JSONReader.Token?

    init(_ bytes: [UInt8], path: String, kind: String = "manifest") {
        reader = JSONReader(bytes: bytes, maximumDepth: 16, maximumStringBytes: 1 << 20, maximumKeys: 64)
        self.path = path
        self.kind = kind
    }

    private func fail(_ place: String, _ problem: String) -> BlocklistError {
        BlocklistError(
            .manifestMismatch,
            "\(path) is not a valid \(kind): \(place.isEmpty ? "the top level" : place) \(problem)."
        )
    }

    private func reading(_ error: JSONError) -> BlocklistError {
        BlocklistError(.manifestMismatch, "\(path) is not a valid \(kind): \(error.message)", underlying: error)
    }

    private func take() throws(BlocklistError) -> JSONReader.Token {
        if let token = pending {
            pending = nil
            return token
        }
        let token: JSONReader.Token?
        do { token = try reader.next() } catch { throw reading(error) }
        guard let token else { throw fail("", "ends early") }
        return token
    }

    /// Nothing follows the manifest.
    func end() throws(BlocklistError) {
        let token: JSONReader.Token?
        do { token = try reader.next() } catch { throw reading(error) }
        if token != nil { throw fail("", "has data after the \(kind)") }
    }

    /// An object at `place`. `member` reads the value of each key it knows (given the key and its
    /// place) and returns true; the value of any other key is skipped. Every key of `required`
    /// must be there.
    private func object(
        _ place: String,
        required: Set<String>,
        _ member: (String, String) throws(BlocklistError) -> Bool
    ) throws(BlocklistError) {
        guard try take() == .objectStart else { throw fail(place, "is not an object") }
        var seen: Set<String> = []
        while try take() != .objectEnd {
            let key = reader.string
            let inner = place.isEmpty ? key : place + "." + key
            if try !member(key, inner) {
                do { try reader.skipValue() } catch { throw reading(error) }
            }
            seen.insert(key)
        }
        if let missing = required.subtracting(seen).sorted().first {
            throw fail(place.isEmpty ? missing : place + "." + missing, "is missing")
        }
    }

    private func array<Element>(
        _ place: String,
        _ element: (String) throws(BlocklistError) -> Element
    ) throws(BlocklistError) -> [Element] {
        guard try take() == .arrayStart else { throw fail(place, "is not an array") }
        var elements: [Element] = []
        while true {
            let token = try take()
            if token == .arrayEnd { return elements }
            pending = token
            elements.append(try element("\(place)[\(elements.count)]"))
        }
    }

    private func string(_ place: String) throws(BlocklistError) -> String {
        guard try take() == .string else { throw fail(place, "is not a string") }
        return reader.string
    }

    private func integer(_ place: String) throws(BlocklistError) -> Int64 {
        guard try take() == .number else { throw fail(place, "is not a number") }
        guard let value = Int64(reader.string) else { throw fail(place, "is not a whole number in Int64") }
        return value
    }

    private func int(_ place: String) throws(BlocklistError) -> Int {
        let value = try integer(place)
        guard let narrow = Int(exactly: value) else { throw fail(place, "is out of range") }
        return narrow
    }

    private func bool(_ place: String) throws(BlocklistError) -> Bool {
        guard case .bool(let value) = try take() else { throw fail(place, "is not true or false") }
        return value
    }

    private func pattern(_ place: String) throws(BlocklistError) -> BlockPattern {
        let text = try string(place)
        do {
            return try BlockPattern(parsing: text)
        } catch {
            throw fail(place, "is not a pattern: \(error.message)")
        }
    }

    /// The value at `place` read by `read`, or nil if it is null.
    private func optional<Value>(
        _ place: String,
        _ read: (String) throws(BlocklistError) -> Value
    ) throws(BlocklistError) -> Value? {
        let token = try take()
        if token == .null { return nil }
        pending = token
        return try read(place)
    }

    func manifest() throws(BlocklistError) -> Manifest {
        var format = ""
        var version = 0
        var generation = ""
        var directory = ""
        var createdAt: Int64 = 0
        var spec: Manifest.Spec?
        var totalEntries: Int64 = 0
        var totalBytes: Int64 = 0
        var shards: [Manifest.Shard] = []
        try object(
            "",
            required: [
                "format", "version", "generation", "directory", "createdAt", "spec", "totalEntries", "totalBytes",
                "shards",
            ]
        ) { (key, place) throws(BlocklistError) in
            switch key {
            case "format": format = try string(place)
            case "version": version = try int(place)
            case "generation": generation = try string(place)
            case "directory": directory = try string(place)
            case "createdAt": createdAt = try integer(place)
            case "spec": spec = try self.spec(place)
            case "totalEntries": totalEntries = try integer(place)
            case "totalBytes": totalBytes = try integer(place)
            case "shards": shards = try array(place) { (place) throws(BlocklistError) in try shard(place) }
            default: return false
            }
            return true
        }
        return Manifest(
            format: format,
            version: version,
            generation: generation,
            directory: directory,
            createdAt: createdAt,
            spec: spec!,
            totalEntries: totalEntries,
            totalBytes: totalBytes,
            shards: shards
        )
    }

    /// A spec as the whole input (`Manifest.decodeSpec`).
    func specAlone() throws(BlocklistError) -> Manifest.Spec {
        try spec("")
    }

    private func spec(_ place: String) throws(BlocklistError) -> Manifest.Spec {
        var spec = Manifest.Spec.empty
        try object(place, required: ["patterns", "exclusions", "rangeSize", "capacity"]) {
            (key, place) throws(BlocklistError) in
            switch key {
            case "patterns": spec.patterns = try array(place) { (place) throws(BlocklistError) in try pattern(place) }
            case "exclusions":
                spec.exclusions = try array(place) { (place) throws(BlocklistError) in try string(place) }
            case "rangeSize": spec.rangeSize = try integer(place)
            case "capacity": spec.capacity = try integer(place)
            case "layout":
                spec.layout = try optional(place) { (place) throws(BlocklistError) in
                    let text = try string(place)
                    guard let layout = Manifest.Layout(rawValue: text) else {
                        throw fail(place, "is \"\(text)\", not range or packed")
                    }
                    return layout
                }
            case "allowPatterns":
                spec.allowPatterns = try optional(place) { (place) throws(BlocklistError) in
                    try array(place) { (place) throws(BlocklistError) in try pattern(place) }
                }
            case "inputs":
                spec.inputs = try optional(place) { (place) throws(BlocklistError) in
                    try array(place) { (place) throws(BlocklistError) in try input(place) }
                }
            case "defaultCountry":
                spec.defaultCountry = try optional(place) { (place) throws(BlocklistError) in try integer(place) }
            case "skipInvalid":
                spec.skipInvalid = try optional(place) { (place) throws(BlocklistError) in try bool(place) }
            default: return false
            }
            return true
        }
        return spec
    }

    private func input(_ place: String) throws(BlocklistError) -> Manifest.Input {
        var input = Manifest.Input(kind: "", path: "", bytes: 0, lines: 0, skipped: 0)
        try object(place, required: ["kind", "path", "bytes", "lines", "skipped"]) {
            (key, place) throws(BlocklistError) in
            switch key {
            case "kind": input.kind = try string(place)
            case "path": input.path = try string(place)
            case "bytes": input.bytes = try integer(place)
            case "lines": input.lines = try integer(place)
            case "skipped": input.skipped = try integer(place)
            case "sha256": input.sha256 = try optional(place) { (place) throws(BlocklistError) in try string(place) }
            default: return false
            }
            return true
        }
        return input
    }

    private func shard(_ place: String) throws(BlocklistError) -> Manifest.Shard {
        var shard = Manifest.Shard(file: "", index: 0, count: 0, first: 0, last: 0, bytes: 0, checksum: "")
        try object(place, required: ["file", "index", "count", "first", "last", "bytes", "checksum"]) {
            (key, place) throws(BlocklistError) in
            switch key {
            case "file": shard.file = try string(place)
            case "index": shard.index = try int(place)
            case "count": shard.count = try integer(place)
            case "first": shard.first = try integer(place)
            case "last": shard.last = try integer(place)
            case "bytes": shard.bytes = try integer(place)
            case "checksum": shard.checksum = try string(place)
            case "identified":
                shard.identified = try optional(place) { (place) throws(BlocklistError) in try integer(place) }
            case "lowerBound":
                shard.lowerBound = try optional(place) { (place) throws(BlocklistError) in try integer(place) }
            default: return false
            }
            return true
        }
        return shard
    }
}
