/// An error from the message filter: a rules file or compiled rules file that fails its checks,
/// a message the filter refuses, or a server response it cannot read.
///
/// Every error carries one sentence naming the file, rule, field or byte offset concerned.
public struct MessageFilterError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Codes can grow without breaking exhaustive switches.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: Hashable, Sendable {
            case invalidRules, notCompiledRules, unsupportedVersion, corruptRules, invalidMessage,
                invalidResponse, io
        }

        let base: Base

        /// A rules file is malformed: a field is missing or has a value the filter does not know.
        public static let invalidRules = Code(base: .invalidRules)
        /// The file is not a compiled rules file at all.
        public static let notCompiledRules = Code(base: .notCompiledRules)
        /// The compiled rules were written by a newer format version.
        public static let unsupportedVersion = Code(base: .unsupportedVersion)
        /// The compiled rules are damaged: a checksum, offset or structure check failed.
        public static let corruptRules = Code(base: .corruptRules)
        /// A message breaks the filter's limits (empty sender, invalid UTF-8, too long).
        public static let invalidMessage = Code(base: .invalidMessage)
        /// A deferral server's response is not the JSON object the filter expects.
        public static let invalidResponse = Code(base: .invalidResponse)
        /// A file system call failed.
        public static let io = Code(base: .io)

        public var description: String {
            switch base {
            case .invalidRules: "invalid rules"
            case .notCompiledRules: "not compiled rules"
            case .unsupportedVersion: "unsupported version"
            case .corruptRules: "corrupt rules"
            case .invalidMessage: "invalid message"
            case .invalidResponse: "invalid response"
            case .io: "I/O error"
            }
        }
    }

    public let code: Code
    /// One sentence saying what went wrong and where.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
