internal import ByteCodecs
import Crypto

/// A small update carried inside the push itself, for the Notification Service Extension to
/// decrypt (the seed's "decrypt in the extension" case): the shard deltas from one generation to
/// the next, signed by the publisher's key, deflated, then sealed with ChaChaPoly under a
/// symmetric key the app holds (docs/FORMAT.md, "Inline push").
///
/// The signed body: `BLKPUSH2`, from and to generation (u64), expiry (i64), the resulting
/// set's digest (32 bytes, `Snapshot.setDigest`), the shard count (u32), the spec (a varint
/// length, 0 if unchanged, then its canonical JSON), the delta count (varint) and each delta
/// payload (varint length, bytes). Then the signature count (u8) and 64-byte Ed25519 signatures
/// over the body. Sealed: ChaChaPoly's combined form (12-byte nonce, ciphertext, 16-byte tag) of
/// the body's length (u32) and its zlib stream. Little-endian.
public struct InlinePush: Sendable {
    package static let magic = Array("BLKPUSH2".utf8)
    /// The most bytes an opened push may inflate to (64 KiB): APNs carries 4 KB.
    public static let maximumBodyBytes = 64 * 1024
    /// The largest update file (`from-M.push`) publish writes and a phone reads (512 KiB): a
    /// change of about 200,000 random numbers. A larger one goes by the snapshot and its deltas.
    public static let maximumFileBytes = 512 * 1024

    /// The update file that leads from generation `from` to the newest one.
    public static func fileName(from: UInt64) -> String { "from-\(from).push" }

    public var from: UInt64
    public var to: UInt64
    public var expires: Int64
    public var setDigest: [UInt8]
    public var shardCount: Int
    /// The new spec's canonical JSON, if it changed.
    public var spec: [UInt8]?
    /// `ShardDelta` payloads, each naming its shard.
    public var deltas: [[UInt8]]

    package init(
        from: UInt64,
        to: UInt64,
        expires: Int64,
        setDigest: [UInt8],
        shardCount: Int,
        spec: [UInt8]?,
        deltas: [[UInt8]]
    ) {
        self.from = from
        self.to = to
        self.expires = expires
        self.setDigest = setDigest
        self.shardCount = shardCount
        self.spec = spec
        self.deltas = deltas
    }

    private var body: [UInt8] {
        var writer = BitWriter()
        writer.putBytes(Self.magic)
        for value in [from, to, UInt64(bitPattern: expires)] { writer.putBytes(Self.littleEndian(value, 8)) }
        writer.putBytes(setDigest)
        writer.putBytes(Self.littleEndian(UInt64(shardCount), 4))
        writer.putVarint(UInt64(spec?.count ?? 0))
        if let spec { writer.putBytes(spec) }
        writer.putVarint(UInt64(deltas.count))
        for delta in deltas {
            writer.putVarint(UInt64(delta.count))
            writer.putBytes(delta)
        }
        return writer.bytes
    }

    /// The body and its signatures, as an update file holds them (`from-M.push`).
    package func signed(with keys: [Curve25519.Signing.PrivateKey]) throws(UpdateError) -> [UInt8] {
        let body = self.body
        var plain = body
        plain.append(UInt8(keys.count))
        for key in keys {
            do {
                plain.append(contentsOf: Array(try key.signature(for: body)))
            } catch {
                throw UpdateError(.badSignature, "Signing the push failed: \(error).")
            }
        }
        return plain
    }

    /// Signs, compresses and seals this push.
    package func sealed(signingWith keys: [Curve25519.Signing.PrivateKey], pushKey: SymmetricKey) throws(UpdateError)
        -> [UInt8]
    {
        let plain = try signed(with: keys)
        let compressed = try Compression.deflate(plain, what: "the push")
        do {
            let box = try ChaChaPoly.seal(Self.littleEndian(UInt64(plain.count), 4) + compressed, using: pushKey)
            return Array(box.combined)
        } catch {
            throw UpdateError(.decryption, "Sealing the push failed: \(error).")
        }
    }

    /// Opens a sealed push: decrypts, inflates, then reads it as ``init(signed:trusting:now:what:)`` does.
    ///
    /// - Throws: `.decryption` for the wrong key or damaged bytes, `.expired` (the root or the
    ///   push), `.badSignature`, `.malformed`.
    public init(opening sealed: [UInt8], pushKey: SymmetricKey, trusting root: Root, now: Int64) throws(UpdateError) {
        try root.checkCurrent(now: now)
        guard pushKey.bitCount == 256 else {
            throw UpdateError(
                .malformed,
                "The push key is \(pushKey.bitCount / 8) bytes; a push key is 32 bytes (ChaChaPoly), as blocklist keys create writes it."
            )
        }
        let opened: [UInt8]
        do {
            opened = Array(try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: sealed), using: pushKey))
        } catch {
            throw UpdateError(
                .decryption,
                "The push's update does not decrypt with the app's push key; it is damaged or sealed with another key."
            )
        }
        guard opened.count >= 4 else {
            throw UpdateError(.malformed, "The push's update is \(opened.count) bytes; too short.")
        }
        let length = Int(opened[0]) | Int(opened[1]) << 8 | Int(opened[2]) << 16 | Int(opened[3]) << 24
        guard length <= Self.maximumBodyBytes else {
            throw UpdateError(
                .limitExceeded,
                "The push's update says it is \(length) bytes; a push holds at most \(Self.maximumBodyBytes)."
            )
        }
        let plain = try Compression.inflate(Array(opened[4...]), expectedLength: length, what: "The push's update")
        try self.init(signed: plain, trusting: root, now: now, what: "The push's update")
    }

    /// Reads a signed body (an opened push, or an update file): checks the signatures against
    /// `root` as every signed role is checked (an expired root signs nothing), then the push's
    /// own expiry and its fields against the format.
    ///
    /// - Throws: `.expired` (the root or the push), `.badSignature`, `.malformed`, each naming `what`.
    public init(signed plain: [UInt8], trusting root: Root, now: Int64, what: String) throws(UpdateError) {
        try root.checkCurrent(now: now)
        var reader = BitReader(plain, what: what)
        guard plain.starts(with: Self.magic) else {
            throw UpdateError(
                .malformed,
                "\(what) does not start with \(String(decoding: Self.magic, as: UTF8.self)) (another blocklist version made it, or it is not a push)."
            )
        }
        _ = try reader.bytes(8, "its magic")
        func u64(_ field: String) throws(UpdateError) -> UInt64 {
            let bytes = try reader.bytes(8, field)
            return bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        from = try u64("its base generation")
        to = try u64("its generation")
        expires = Int64(bitPattern: try u64("its expiry"))
        setDigest = try reader.bytes(32, "its set digest")
        let count = try reader.bytes(4, "its shard count")
        shardCount = count.enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        let specLength = try reader.varint("its spec length")
        guard specLength <= UInt64(plain.count) else {
            throw UpdateError(.malformed, "\(what): its spec is longer than the whole.")
        }
        spec = specLength == 0 ? nil : try reader.bytes(Int(specLength), "its spec")
        let deltaCount = try reader.varint("its delta count")
        guard deltaCount <= UInt64(plain.count) else {
            throw UpdateError(.malformed, "\(what) claims \(deltaCount) deltas.")
        }
        deltas = []
        for index in 0..<Int(deltaCount) {
            let deltaLength = try reader.varint("the length of delta \(index + 1)")
            guard deltaLength <= UInt64(plain.count) else {
                throw UpdateError(.malformed, "\(what): delta \(index + 1) is too long.")
            }
            deltas.append(try reader.bytes(Int(deltaLength), "delta \(index + 1)"))
        }
        let bodyEnd = reader.position
        let signatureCount = Int(try reader.bytes(1, "its signature count")[0])
        var signatures: [[UInt8]] = []
        for index in 0..<signatureCount { signatures.append(try reader.bytes(64, "signature \(index + 1)")) }
        guard reader.atCleanEnd else {
            throw UpdateError(.malformed, "\(what) has bytes after its signatures.")
        }
        try root.requireSignatures(signatures.map { (nil, $0) }, over: Array(plain[0..<bodyEnd]), what: what)
        guard expires > now else {
            throw UpdateError(
                .expired,
                "\(what) expired at \(TextEncodings.utcTime(expires)) (it is now \(TextEncodings.utcTime(now))); nothing was installed."
            )
        }
        guard to > from, to <= UInt64(Int64.max) else {
            throw UpdateError(.malformed, "\(what) leads from generation \(from) to \(to), not forward.")
        }
        for (offset, delta) in deltas.enumerated() {
            let target = try ShardDelta.target(of: delta, what: "\(what), delta \(offset + 1)")
            guard target.index <= shardCount else {
                throw UpdateError(
                    .malformed,
                    "\(what): delta \(offset + 1) is for shard \(target.index) of \(shardCount)."
                )
            }
        }
    }

    static func littleEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

/// The push key file `keys create` writes and the app holds: `{"key":"<base64 of 32 bytes>","type":"chachapoly-key"}`.
package enum PushKeyFile {
    /// The key a push key file holds.
    ///
    /// - Throws: `.malformed` naming `what` if it is not such a file.
    package static func key(_ bytes: [UInt8], what: String) throws(UpdateError) -> SymmetricKey {
        guard case .object(let members) = try JSONValue(parsing: bytes, what: what),
            members["type"] == .string("chachapoly-key"), case .string(let text)? = members["key"],
            let raw = TextEncodings.base64Decode(Array(text.utf8))
        else {
            throw UpdateError(
                .malformed,
                "\(what) is not a push key written by blocklist keys create: a JSON object with \"type\": \"chachapoly-key\" and the key in base64 under \"key\"."
            )
        }
        guard raw.count == 32 else {
            throw UpdateError(.malformed, "\(what) holds a \(raw.count)-byte key; a push key is 32 bytes (ChaChaPoly).")
        }
        return SymmetricKey(data: raw)
    }
}

/// What every push says in its signed part (`blocklist.announcement` in the APNs payload): the
/// generation it announces, until when the announcement holds, and where a phone fetches the
/// update when it cannot apply one inline. A phone reads the URL only from here, after the
/// signature checked against its root, never from the push's unsigned fields.
///
/// The payload is canonical JSON, `{"expires":E,"generation":G,"type":"push","url":"http…"}`
/// (`url` absent when the push has none), in a `SignedDocument` envelope.
package struct PushAnnouncement: Hashable, Sendable {
    public var generation: UInt64
    public var expires: Int64
    public var url: String?

    package init(generation: UInt64, expires: Int64, url: String?) {
        self.generation = generation
        self.expires = expires
        self.url = url
    }

    package var payload: [UInt8] {
        var members: [String: JSONValue] = [
            "type": .string("push"), "generation": .number(String(generation)), "expires": .number(String(expires)),
        ]
        if let url { members["url"] = .string(url) }
        return JSONValue.object(members).canonicalBytes
    }

    /// Reads a verified payload; the URL is checked as `checkURL` checks it.
    public init(payload: [UInt8], what: String) throws(UpdateError) {
        let fields = try JSONFields(try JSONValue(parsing: payload, what: what), what: what)
        try fields.expectType("push")
        generation = UInt64(try fields.integer("generation", in: 1...Int64.max))
        expires = try fields.integer("expires")
        if case .string(let text)? = try? fields.value("url") {
            try Self.checkURL(text)
            url = text
        } else {
            url = nil
        }
    }

    /// The announcement in `envelope` (a `SignedDocument`), once `root` (current at `now`)
    /// signed it and it has not expired.
    ///
    /// - Throws: `.expired`, `.badSignature`, `.malformed`.
    public static func verified(_ envelope: [UInt8], trusting root: Root, now: Int64) throws(UpdateError)
        -> PushAnnouncement
    {
        let what = "the push's announcement"
        let document = try SignedDocument(parsing: envelope, what: what)
        let announcement = try PushAnnouncement(
            payload: try document.verifiedPayload(trusting: root, now: now, what: what),
            what: what
        )
        guard announcement.expires > now else {
            throw UpdateError(
                .expired,
                "The push's announcement expired at \(TextEncodings.utcTime(announcement.expires)) (it is now \(TextEncodings.utcTime(now))); nothing was fetched."
            )
        }
        return announcement
    }

    /// The most bytes a push URL may have.
    package static let maximumURLBytes = 1024

    /// Refuses anything but an absolute `http://` or `https://` URL with a host, read by ByteCodecs'
    /// `WebURL` (the package's one URL parser): a push never names a local path, another scheme,
    /// credentials, a query or fragment, white space or control characters.
    ///
    /// - Throws: `.malformed`, naming the URL and what is wrong with it.
    package static func checkURL(_ url: String) throws(UpdateError) {
        let count = url.utf8.count
        guard count <= maximumURLBytes else {
            throw UpdateError(.malformed, "The push URL is \(count) bytes; at most \(maximumURLBytes).")
        }
        let parsed: WebURL
        do {
            parsed = try WebURL(parsing: url, schemes: ["http", "https"])
        } catch {
            let reason =
                error.reason.hasPrefix("is not an")
                ? error.reason + "; a push never names a local path or another scheme" : error.reason
            throw UpdateError(.malformed, "The push URL \"\(url.prefix(80))\" \(reason).")
        }
        guard !parsed.hasQuery, parsed.fragment == nil else {
            throw UpdateError(
                .malformed,
                "The push URL \"\(url.prefix(80))\" has a query or a fragment; a publication's URL is a directory (each file's name is added to it)."
            )
        }
    }
}
