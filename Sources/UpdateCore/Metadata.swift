import Crypto

/// A signed metadata file: canonical JSON bytes (the payload) and Ed25519 signatures over
/// exactly those bytes, in an envelope (docs/FORMAT.md, "Publication metadata"):
///
/// ```
/// {"signatures":[{"keyid":"<hex SHA-256 of the public key>","sig":"<base64>"}],"signed":"<base64 payload>"}
/// ```
///
/// The signature covers the payload's bytes as sent, so no reader has to re-serialize JSON the
/// way the signer did before checking it (the trap of TUF's canonical JSON).
package struct SignedDocument: Sendable {
    /// The payload's bytes.
    public var payload: [UInt8]
    /// Key ID and signature pairs.
    public var signatures: [(keyID: String, signature: [UInt8])]

    /// The most bytes a metadata file may have (4 MiB): a snapshot of 10,000 shards with deltas
    /// fits; a hostile server cannot make a phone read more.
    public static let maximumBytes = 4 << 20

    /// Whether `bytes` read as an envelope at all (a signed document, verified or not): what a
    /// file that may be missing must be to count as present. A host's error body or page where
    /// no next root exists is none; a signed root that fails to verify is refused, not skipped.
    static func isDocument(_ bytes: [UInt8]) -> Bool {
        (try? SignedDocument(parsing: bytes, what: "")) != nil
    }

    /// Reads an envelope.
    ///
    /// - Throws: `UpdateError` `.malformed` naming `what`.
    public init(parsing bytes: [UInt8], what: String) throws(UpdateError) {
        guard bytes.count <= Self.maximumBytes else {
            throw UpdateError(
                .limitExceeded,
                "\(what) is \(bytes.count) bytes; metadata is at most \(Self.maximumBytes)."
            )
        }
        let fields = try JSONFields(try JSONValue(parsing: bytes, what: what), what: what)
        payload = try fields.base64("signed")
        signatures = []
        for (offset, element) in try fields.array("signatures").enumerated() {
            let signature = try JSONFields(element, what: "\(what) signature \(offset + 1)")
            let keyID = try signature.string("keyid")
            let bytes = try signature.base64("sig")
            signatures.append((keyID, bytes))
        }
    }

    /// An envelope of `payload` signed by `keys`.
    package static func sign(_ payload: [UInt8], with keys: [Curve25519.Signing.PrivateKey]) throws(UpdateError)
        -> [UInt8]
    {
        var signatures: [JSONValue] = []
        for key in keys {
            let signature: [UInt8]
            do {
                signature = Array(try key.signature(for: payload))
            } catch {
                throw UpdateError(.badSignature, "Signing failed: \(error).")
            }
            signatures.append(
                .object([
                    "keyid": .string(Keys.keyID(of: key.publicKey)),
                    "sig": .string(TextEncodings.base64(signature)),
                ])
            )
        }
        return JSONValue.object([
            "signed": .string(TextEncodings.base64(payload)),
            "signatures": .array(signatures),
        ]).canonicalBytes + [0x0A]
    }

    /// The payload, once at least `root.threshold` of the root's keys have signed it and the
    /// root has not expired: how every signed role (timestamp, snapshot, push) is read.
    ///
    /// - Throws: `.expired` if `root` has expired at `now`; `.badSignature` naming `what` and
    ///   how many trusted signatures verified.
    public func verifiedPayload(trusting root: Root, now: Int64, what: String) throws(UpdateError) -> [UInt8] {
        try root.checkCurrent(now: now)
        return try verifiedPayload(trusting: root, what: what)
    }

    /// The payload, once at least `root.threshold` of the root's keys have signed it, whatever
    /// the root's expiry: for the chain of roots, where an expired root may still hand over to
    /// the next one.
    ///
    /// - Throws: `.badSignature` naming `what` and how many trusted signatures verified.
    public func verifiedPayload(trusting root: Root, what: String) throws(UpdateError) -> [UInt8] {
        try root.requireSignatures(signatures.map { (Optional($0.keyID), $0.signature) }, over: payload, what: what)
        return payload
    }
}

/// Key IDs and key files.
package enum Keys {
    /// A key's ID: the hex SHA-256 of its raw 32-byte public key.
    package static func keyID(of key: Curve25519.Signing.PublicKey) -> String {
        TextEncodings.hex(SHA256.hash(data: Array(key.rawRepresentation)))
    }
}

/// The trust root: which keys may sign, how many must, until when (TUF's root role). An app
/// ships one; a new root is signed by the keys of the one before it, so keys can rotate.
public struct Root: Sendable {
    public var version: Int64
    public var expires: Int64
    public var threshold: Int
    /// Public keys by key ID.
    public var keys: [String: Curve25519.Signing.PublicKey]

    package init(version: Int64, expires: Int64, threshold: Int, keys: [Curve25519.Signing.PublicKey]) {
        self.version = version
        self.expires = expires
        self.threshold = threshold
        self.keys = Dictionary(keys.map { (Keys.keyID(of: $0), $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The payload of this root.
    package var payload: [UInt8] {
        JSONValue.object([
            "type": .string("root"),
            "version": .number(String(version)),
            "expires": .number(String(expires)),
            "threshold": .number(String(threshold)),
            "keys": .array(
                keys.keys.sorted().map { id in
                    .object([
                        "keyid": .string(id),
                        "public": .string(TextEncodings.base64(Array(keys[id]!.rawRepresentation))),
                    ])
                }
            ),
        ]).canonicalBytes
    }

    /// Reads a root payload (already verified, or about to be: see `trusted(_:what:)`).
    public init(payload: [UInt8], what: String) throws(UpdateError) {
        let fields = try JSONFields(try JSONValue(parsing: payload, what: what), what: what)
        try fields.expectType("root")
        version = try fields.integer("version", in: 1...Int64(Int32.max))
        expires = try fields.integer("expires")
        let keyList = try fields.array("keys")
        threshold = Int(try fields.integer("threshold", in: 1...Int64(max(keyList.count, 1))))
        keys = [:]
        for (offset, element) in keyList.enumerated() {
            let entry = try JSONFields(element, what: "\(what) key \(offset + 1)")
            let raw = try entry.base64("public")
            let key: Curve25519.Signing.PublicKey
            do {
                key = try Curve25519.Signing.PublicKey(rawRepresentation: raw)
            } catch {
                throw UpdateError(.malformed, "\(what) key \(offset + 1) is not an Ed25519 public key.")
            }
            let id = try entry.string("keyid")
            guard id == Keys.keyID(of: key) else {
                throw UpdateError(
                    .malformed,
                    "\(what) key \(offset + 1): its keyid is not the SHA-256 of its public key."
                )
            }
            guard keys.updateValue(key, forKey: id) == nil else {
                throw UpdateError(.malformed, "\(what) lists key \(id) twice.")
            }
        }
    }

    /// Refuses an expired root: nothing it signs is trusted once it has expired (updates and
    /// pushes alike), until a newer root that it signed takes over.
    ///
    /// - Throws: `.expired`, naming the version, the time and what fixes it.
    public func checkCurrent(now: Int64) throws(UpdateError) {
        guard expires > now else {
            throw UpdateError(
                .expired,
                "Root version \(version) expired at \(TextEncodings.utcTime(expires)) (it is now \(TextEncodings.utcTime(now))); nothing it signs is trusted. The publisher runs blocklist keys rotate and publishes with the new key, or the app ships a new trust root."
            )
        }
    }

    /// Refuses `body` unless at least `threshold` of this root's keys signed it. A signature
    /// with a key ID is checked against that key; one without, against each key.
    ///
    /// - Throws: `.badSignature` naming `what` and how many trusted signatures verified.
    package func requireSignatures(
        _ signatures: [(keyID: String?, signature: [UInt8])],
        over body: [UInt8],
        what: String
    ) throws(UpdateError) {
        var verified: Set<String> = []
        for (keyID, signature) in signatures {
            let candidates = keyID.map { id in keys[id].map { [(id, $0)] } ?? [] } ?? keys.map { ($0.key, $0.value) }
            for (id, key) in candidates where !verified.contains(id) && key.isValidSignature(signature, for: body) {
                verified.insert(id)
            }
        }
        guard verified.count >= threshold else {
            throw UpdateError(
                .badSignature,
                "\(what) has \(verified.count) valid signature\(verified.count == 1 ? "" : "s") by a trusted key; root version \(version) needs \(threshold). It was signed by another key, or changed after signing."
            )
        }
    }

    /// A root an app ships (`--trust`): it must be signed by its own keys.
    public static func trusted(_ bytes: [UInt8], what: String) throws(UpdateError) -> Root {
        let document = try SignedDocument(parsing: bytes, what: what)
        let root = try Root(payload: document.payload, what: what)
        _ = try document.verifiedPayload(trusting: root, what: what)
        return root
    }

    /// The next root, `N+1.root.json`: signed by this root's keys and by its own, one version up.
    public func next(_ bytes: [UInt8], what: String) throws(UpdateError) -> Root {
        let document = try SignedDocument(parsing: bytes, what: what)
        _ = try document.verifiedPayload(trusting: self, what: "\(what) (by the keys of root version \(version))")
        let root = try Root(payload: document.payload, what: what)
        _ = try document.verifiedPayload(trusting: root, what: "\(what) (by its own keys)")
        guard root.version == version + 1 else {
            throw UpdateError(
                .rollback,
                "\(what) is root version \(root.version); version \(version + 1) was expected."
            )
        }
        return root
    }
}

/// A file the metadata names: where, how long, and its SHA-256.
package struct FileInfo: Hashable, Sendable {
    /// A relative path inside the publication: letters, digits, `.`, `_`, `-` and `/`, no `..`.
    public var path: String
    public var length: Int64
    public var sha256: [UInt8]

    package init(path: String, length: Int64, sha256: [UInt8]) {
        self.path = path
        self.length = length
        self.sha256 = sha256
    }

    var json: JSONValue {
        .object([
            "path": .string(path), "length": .number(String(length)), "sha256": .string(TextEncodings.hex(sha256)),
        ])
    }

    init(_ fields: JSONFields) throws(UpdateError) {
        path = try fields.string("path")
        length = try fields.integer("length", in: 0...Int64(1) << 40)
        sha256 = try fields.hex("sha256", count: 32)
        guard Self.isSafe(path) else {
            throw UpdateError(.malformed, "\(fields.what): path \"\(path)\" is not a plain relative path.")
        }
    }

    /// Whether `path` stays inside the publication: no absolute path, no `..` or `.` component,
    /// no empty component, only `[A-Za-z0-9._-]` and `/`.
    package static func isSafe(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 255 else { return false }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty, component != ".", component != "..", !component.hasPrefix(".") else {
                return false
            }
            for byte in component.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    continue
                default: return false
                }
            }
        }
        return true
    }

    /// Refuses `bytes` unless they are exactly this file.
    public func check(_ bytes: [UInt8], what: String) throws(UpdateError) {
        guard Int64(bytes.count) == length else {
            throw UpdateError(
                .mismatch,
                "\(what) is \(bytes.count) bytes, but the signed metadata says \(length); it was truncated or replaced."
            )
        }
        guard Array(SHA256.hash(data: bytes)) == sha256 else {
            throw UpdateError(
                .mismatch,
                "\(what) does not have the SHA-256 the signed metadata gives; it was changed or mixed with another publication."
            )
        }
    }
}

/// The timestamp: short-lived, re-signed on every publication; names the current snapshot.
package struct Timestamp: Sendable {
    public var generation: UInt64
    public var expires: Int64
    public var snapshot: FileInfo

    package init(generation: UInt64, expires: Int64, snapshot: FileInfo) {
        self.generation = generation
        self.expires = expires
        self.snapshot = snapshot
    }

    package var payload: [UInt8] {
        JSONValue.object([
            "type": .string("timestamp"), "generation": .number(String(generation)),
            "expires": .number(String(expires)), "snapshot": snapshot.json,
        ]).canonicalBytes
    }

    public init(payload: [UInt8], what: String) throws(UpdateError) {
        let fields = try JSONFields(try JSONValue(parsing: payload, what: what), what: what)
        try fields.expectType("timestamp")
        generation = UInt64(try fields.integer("generation", in: 1...Int64.max))
        expires = try fields.integer("expires")
        snapshot = try FileInfo(try fields.object("snapshot"))
    }
}

/// The snapshot: every file of one generation, with lengths and hashes, and each shard's content
/// digest; the deltas that lead to it from earlier generations; the set's spec.
package struct Snapshot: Sendable {
    /// One shard of the generation.
    public struct Shard: Hashable, Sendable {
        public var index: Int
        /// `ShardContent` digest.
        public var digest: [UInt8]
        /// Blocking plus identification entries.
        public var entries: Int64
        public var file: FileInfo
        package init(index: Int, digest: [UInt8], entries: Int64, file: FileInfo) {
            self.index = index
            self.digest = digest
            self.entries = entries
            self.file = file
        }
    }

    /// A delta to shard `index` of this generation from generation `from`, whose shard had
    /// content digest `base`.
    public struct Delta: Hashable, Sendable {
        public var from: UInt64
        public var index: Int
        public var base: [UInt8]
        public var file: FileInfo
        package init(from: UInt64, index: Int, base: [UInt8], file: FileInfo) {
            self.from = from
            self.index = index
            self.base = base
            self.file = file
        }
    }

    public var generation: UInt64
    public var expires: Int64
    /// The set manifest's `spec` object, as the publisher's manifest has it.
    public var spec: JSONValue
    public var shards: [Shard]
    public var deltas: [Delta]

    package init(generation: UInt64, expires: Int64, spec: JSONValue, shards: [Shard], deltas: [Delta]) {
        self.generation = generation
        self.expires = expires
        self.spec = spec
        self.shards = shards
        self.deltas = deltas
    }

    /// The digest of the whole set: SHA-256 of `BLKSET01`, the shard count (u32 LE) and each
    /// shard's content digest in index order. A push names the set it leads to by this.
    public static func setDigest(_ shardDigests: [[UInt8]]) -> [UInt8] {
        var sha = SHA256()
        sha.update(data: Array("BLKSET01".utf8))
        let count = UInt32(shardDigests.count)
        sha.update(data: (0..<4).map { UInt8(truncatingIfNeeded: count >> (8 * $0)) })
        for digest in shardDigests { sha.update(data: digest) }
        return Array(sha.finalize())
    }

    package var payload: [UInt8] {
        JSONValue.object([
            "type": .string("snapshot"), "generation": .number(String(generation)),
            "expires": .number(String(expires)), "spec": spec,
            "shards": .array(
                shards.map {
                    .object([
                        "index": .number(String($0.index)), "digest": .string(TextEncodings.hex($0.digest)),
                        "entries": .number(String($0.entries)), "file": $0.file.json,
                    ])
                }
            ),
            "deltas": .array(
                deltas.map {
                    .object([
                        "from": .number(String($0.from)), "index": .number(String($0.index)),
                        "base": .string(TextEncodings.hex($0.base)), "file": $0.file.json,
                    ])
                }
            ),
        ]).canonicalBytes
    }

    public init(payload: [UInt8], what: String) throws(UpdateError) {
        let fields = try JSONFields(try JSONValue(parsing: payload, what: what), what: what)
        try fields.expectType("snapshot")
        generation = UInt64(try fields.integer("generation", in: 1...Int64.max))
        expires = try fields.integer("expires")
        spec = try fields.value("spec")
        guard case .object = spec else { throw UpdateError(.malformed, "\(what): \"spec\" is not an object.") }
        shards = []
        for (offset, element) in try fields.array("shards").enumerated() {
            let entry = try JSONFields(element, what: "\(what) shard \(offset + 1)")
            let index = Int(try entry.integer("index", in: 1...100_000))
            guard index == offset + 1 else {
                throw UpdateError(
                    .malformed,
                    "\(what) lists shard \(index) in place \(offset + 1); shards are listed 1, 2, 3, …."
                )
            }
            shards.append(
                Shard(
                    index: index,
                    digest: try entry.hex("digest", count: 32),
                    entries: try entry.integer("entries"),
                    file: try FileInfo(try entry.object("file"))
                )
            )
        }
        deltas = []
        for (offset, element) in try fields.array("deltas").enumerated() {
            let entry = try JSONFields(element, what: "\(what) delta \(offset + 1)")
            let from = UInt64(try entry.integer("from", in: 1...Int64.max))
            guard from < generation else {
                throw UpdateError(
                    .malformed,
                    "\(what) delta \(offset + 1) is from generation \(from), not an earlier one."
                )
            }
            let index = Int(try entry.integer("index", in: 1...Int64(shards.count)))
            deltas.append(
                Delta(
                    from: from,
                    index: index,
                    base: try entry.hex("base", count: 32),
                    file: try FileInfo(try entry.object("file"))
                )
            )
        }
    }
}
