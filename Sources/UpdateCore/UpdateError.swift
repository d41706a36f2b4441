import BlocklistCore

/// An error from verifying or applying a publication: a signature, length or hash that does not
/// match, metadata that is stale or rolls back, a delta that is damaged or made for another shard.
///
/// Every error carries one sentence that names the file, shard or field concerned, and what was
/// expected there. Nothing has been written when one is thrown by verification; an apply that
/// fails leaves only its own new files, which the caller removes.
public struct UpdateError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Codes can grow without breaking exhaustive switches.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name as users read it, e.g. "bad signature".
        public let description: String

        package init(named name: String) { description = name }

        /// Not metadata, a delta or a push of this format: bad JSON, a field missing or out of range.
        public static let malformed = Code(named: "malformed")
        /// A newer format version than this reader knows.
        public static let unsupportedVersion = Code(named: "unsupported version")
        /// No trusted key signed it, or a signature does not verify.
        public static let badSignature = Code(named: "bad signature")
        /// Its expiry has passed (a freeze attack, or a publisher that stopped publishing).
        public static let expired = Code(named: "expired")
        /// A generation lower than the one installed (a rollback attack).
        public static let rollback = Code(named: "rollback")
        /// A file's length or SHA-256 differs from what the signed metadata says (mix-and-match,
        /// truncation, tampering), or a result's digest differs from the published one.
        public static let mismatch = Code(named: "mismatch")
        /// The delta or push was made for another installed generation or shard.
        public static let wrongBase = Code(named: "wrong base")
        /// More than a limit allows (a file, a label table, a payload).
        public static let limitExceeded = Code(named: "limit exceeded")
        /// Decryption failed: the wrong key, or a damaged push.
        public static let decryption = Code(named: "decryption failed")
        /// Reading or writing a shard failed (the underlying `BlocklistError` says which).
        public static let shard = Code(named: "shard error")
        /// The publication's host refused a file (``HostAnswer/refused(_:)``).
        public static let unavailable = Code(named: "unavailable")
    }

    /// The kind of failure.
    public var code: Code
    /// One sentence naming what failed, where, and what was expected.
    public var message: String
    /// The lower-level error this one wraps, if any.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// Carries a shard reader's or writer's error over, in its own words.
    package init(_ error: BlocklistError) {
        self.init(.shard, error.message, underlying: error)
    }

    public var description: String { message }
}
