/// An error from the blocklist core: a bad spec, a shard that fails validation, or a failed
/// system call.
///
/// Every error carries one sentence that names the file, shard, entry or byte offset concerned
/// and what was expected there, so a user can act on it without a debugger.
internal import LibC

public struct BlocklistError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Codes can grow without breaking exhaustive switches.
    ///
    /// The core declares only what a Call Directory extension can meet: a bad spec, a shard that
    /// is damaged, newer, too full or not the one it was given, and failed system calls. The
    /// tools' layers declare their own beside their code (`busy` in BlocklistSystem, where locks
    /// are; `manifestMismatch` in SetStorage, where manifests are), through `init(named:)`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name as users read it, e.g. "corrupt shard"; codes are equal when names are.
        public let description: String

        /// A code of this package's own; a layer declares each of its codes once, as a static.
        package init(named name: String) { description = name }

        /// A pattern, exclusion or size in a block spec is malformed.
        public static let invalidSpec = Code(named: "invalid spec")
        /// A shard would hold more entries than one Call Directory extension accepts.
        public static let capacityExceeded = Code(named: "capacity exceeded")
        /// A spec or file asks for more than the format or this tool can hold.
        public static let limitExceeded = Code(named: "limit exceeded")
        /// The file is not a shard file at all (wrong magic, too short, a directory).
        public static let notAShard = Code(named: "not a shard")
        /// The shard was written by a newer format version than this reader knows.
        public static let unsupportedVersion = Code(named: "unsupported version")
        /// The shard is damaged: a checksum, count, order or encoding check failed.
        public static let corruptShard = Code(named: "corrupt shard")
        /// The shard is sound but not the one expected: another extension's index, or other runs
        /// than its spec gives.
        public static let wrongShard = Code(named: "wrong shard")
        /// A caller handed the writer or a context numbers that break its rules.
        public static let invalidInput = Code(named: "invalid input")
        /// A file system call failed.
        public static let io = Code(named: "I/O error")
        /// zlib reported an error.
        public static let compression = Code(named: "compression error")
        /// Another process holds the lock this operation needs (the App Group's installed set, a
        /// set directory, a store, a staging directory).
        public static let busy = Code(named: "busy")
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
