import Crypto

/// A small update carried inside the push itself, for the Notification Service Extension to
/// decrypt (the seed's "decrypt in the extension" case): the shard deltas from one generation to
/// the next, signed by the publisher's key, deflated, then sealed with ChaChaPoly under a
/// symmetric key the app holds (docs/FORMAT.md, "Inline push").
///
/// The signed body: `BLKPUSH1`, from and to generation (u64), expiry (i64), the resulting
/// set's digest (32 bytes, `Snapshot.setDigest`), the shard count (u32), the spec (a varint
/// length, 0 if unchanged, then its canonical JSON), the delta count (varint) and each delta
/// payload (varint length, bytes). Then the signature count (u8) and 64-byte Ed25519 signatures
/// over the body. Sealed: ChaChaPoly's combined form (12-byte nonce, ciphertext, 16-byte tag) of
/// the body's length (u32) and its zlib stream. Little-endian.
public struct InlinePush: Sendable {
    public static let magic = Array("BLKPUSH1".utf8)
    /// The most bytes an opened push may inflate to (64 KiB): APNs carries 4 KB.
    public static let maximumBodyBytes = 64 * 1024

    public var from: UInt64
    public var to: UInt64
    public var expires: Int64
    public var setDigest: [UInt8]
    public var shardCount: Int
    /// The new spec's canonical JSON, if it changed.
    public var spec: [UInt8]?
    /// `ShardDelta` payloads, each naming its shard.
    public var deltas: [[UInt8]]

    public init(
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

    /// Signs, compresses and seals this push.
    public func sealed(signingWith keys: [Curve25519.Signing.PrivateKey], pushKey: SymmetricKey) throws(UpdateError)
        -> [UInt8]
    {
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
        let compressed = try Compression.deflate(plain, what: "the push")
        do {
            let box = try ChaChaPoly.seal(Self.littleEndian(UInt64(plain.count), 4) + compressed, using: pushKey)
            return Array(box.combined)
        } catch {
            throw UpdateError(.decryption, "Sealing the push failed: \(error).")
        }
    }

    /// Opens a sealed push: decrypts, inflates, checks the signatures against `root` and the
    /// fields against the format.
    ///
    /// - Throws: `.decryption` for the wrong key or damaged bytes, `.badSignature`, `.malformed`.
    public init(opening sealed: [UInt8], pushKey: SymmetricKey, trusting root: Root) throws(UpdateError) {
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
        var reader = BitReader(plain, what: "The push's update")
        guard try reader.bytes(8, "its magic") == Self.magic else {
            throw UpdateError(.malformed, "The push's update does not start with BLKPUSH1.")
        }
        func u64(_ what: String) throws(UpdateError) -> UInt64 {
            let bytes = try reader.bytes(8, what)
            return bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        from = try u64("its base generation")
        to = try u64("its generation")
        expires = Int64(bitPattern: try u64("its expiry"))
        setDigest = try reader.bytes(32, "its set digest")
        let count = try reader.bytes(4, "its shard count")
        shardCount = count.enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        let specLength = try reader.varint("its spec length")
        guard specLength <= UInt64(Self.maximumBodyBytes) else {
            throw UpdateError(.malformed, "The push's spec is too long.")
        }
        spec = specLength == 0 ? nil : try reader.bytes(Int(specLength), "its spec")
        let deltaCount = try reader.varint("its delta count")
        guard deltaCount <= UInt64(plain.count) else {
            throw UpdateError(.malformed, "The push claims \(deltaCount) deltas.")
        }
        deltas = []
        for index in 0..<Int(deltaCount) {
            let deltaLength = try reader.varint("the length of delta \(index + 1)")
            guard deltaLength <= UInt64(plain.count) else {
                throw UpdateError(.malformed, "The push's delta \(index + 1) is too long.")
            }
            deltas.append(try reader.bytes(Int(deltaLength), "delta \(index + 1)"))
        }
        let bodyEnd = reader.position
        let signatureCount = Int(try reader.bytes(1, "its signature count")[0])
        var signatures: [[UInt8]] = []
        for index in 0..<signatureCount { signatures.append(try reader.bytes(64, "signature \(index + 1)")) }
        guard reader.atCleanEnd else {
            throw UpdateError(.malformed, "The push's update has bytes after its signatures.")
        }
        let body = Array(plain[0..<bodyEnd])
        var verified: Set<String> = []
        for signature in signatures {
            for (id, key) in root.keys where !verified.contains(id) && key.isValidSignature(signature, for: body) {
                verified.insert(id)
            }
        }
        guard verified.count >= root.threshold else {
            throw UpdateError(
                .badSignature,
                "The push's update has \(verified.count) valid signatures by trusted keys; root version \(root.version) needs \(root.threshold)."
            )
        }
        guard to > from, to <= UInt64(Int64.max) else {
            throw UpdateError(.malformed, "The push leads from generation \(from) to \(to), not forward.")
        }
        for (offset, delta) in deltas.enumerated() {
            let target = try ShardDelta.target(of: delta, what: "The push's delta \(offset + 1)")
            guard target.index <= shardCount else {
                throw UpdateError(
                    .malformed,
                    "The push's delta \(offset + 1) is for shard \(target.index) of \(shardCount)."
                )
            }
        }
    }

    static func littleEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

/// The push key file `keys create` writes and the app holds: `{"key":"<base64 of 32 bytes>","type":"chachapoly-key"}`.
public enum PushKeyFile {
    /// The key a push key file holds.
    ///
    /// - Throws: `.malformed` naming `what` if it is not such a file.
    public static func key(_ bytes: [UInt8], what: String) throws(UpdateError) -> SymmetricKey {
        guard case .object(let members) = try JSONValue(parsing: bytes, what: what),
            members["type"] == .string("chachapoly-key"), case .string(let text)? = members["key"],
            let raw = TextEncodings.base64Decode(Array(text.utf8)), raw.count == 32
        else {
            throw UpdateError(.malformed, "\(what) is not a push key written by blocklist keys create.")
        }
        return SymmetricKey(data: raw)
    }
}
