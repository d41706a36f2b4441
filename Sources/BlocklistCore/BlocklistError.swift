/// An error from the blocklist core: a bad spec, a shard that fails validation, or a failed
/// system call.
///
/// Every error carries one sentence that names the file, shard, entry or byte offset concerned
/// and what was expected there, so a user can act on it without a debugger.
public struct BlocklistError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Codes can grow without breaking exhaustive switches.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: Hashable, Sendable {
            case invalidSpec
            case capacityExceeded
            case limitExceeded
            case notAShard
            case unsupportedVersion
            case corruptShard
            case invalidInput
            case io
            case compression
            case busy
            case manifestMismatch
        }

        let base: Base

        /// A pattern, exclusion or size in a block spec is malformed.
        public static let invalidSpec = Code(base: .invalidSpec)
        /// A shard would hold more entries than one Call Directory extension accepts.
        public static let capacityExceeded = Code(base: .capacityExceeded)
        /// A spec or file asks for more than the format or this tool can hold.
        public static let limitExceeded = Code(base: .limitExceeded)
        /// The file is not a shard file at all (wrong magic, too short, a directory).
        public static let notAShard = Code(base: .notAShard)
        /// The shard was written by a newer format version than this reader knows.
        public static let unsupportedVersion = Code(base: .unsupportedVersion)
        /// The shard is damaged: a checksum, count, order or encoding check failed.
        public static let corruptShard = Code(base: .corruptShard)
        /// A caller handed the writer or a context numbers that break its rules.
        public static let invalidInput = Code(base: .invalidInput)
        /// A file system call failed.
        public static let io = Code(base: .io)
        /// zlib reported an error.
        public static let compression = Code(base: .compression)
        /// Another process holds the lock this operation needs.
        public static let busy = Code(base: .busy)
        /// A shard set disagrees with its manifest or with the spec that made it.
        public static let manifestMismatch = Code(base: .manifestMismatch)

        public var description: String {
            switch base {
            case .invalidSpec: "invalid spec"
            case .capacityExceeded: "capacity exceeded"
            case .limitExceeded: "limit exceeded"
            case .notAShard: "not a shard"
            case .unsupportedVersion: "unsupported version"
            case .corruptShard: "corrupt shard"
            case .invalidInput: "invalid input"
            case .io: "I/O error"
            case .compression: "compression error"
            case .busy: "busy"
            case .manifestMismatch: "manifest mismatch"
            }
        }
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

    public var description: String { message }
}

/// An `errno` value with the C library's text for it.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    public var errno: Int32
    public init(errno: Int32) { self.errno = errno }
    public var description: String { _errnoText(errno) }
}
