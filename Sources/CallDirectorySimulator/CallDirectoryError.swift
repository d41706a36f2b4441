/// An error from the simulated CallKit, with the codes of `CXErrorCodeCallDirectoryManagerError`.
public struct CallDirectoryError: Error, Sendable, CustomStringConvertible {
    /// A CallKit Call Directory error code; `rawValue` is CallKit's.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public let name: String

        public static let unknown = Code(rawValue: 0, name: "unknown")
        public static let noExtensionFound = Code(rawValue: 1, name: "noExtensionFound")
        public static let loadingInterrupted = Code(rawValue: 2, name: "loadingInterrupted")
        public static let entriesOutOfOrder = Code(rawValue: 3, name: "entriesOutOfOrder")
        public static let duplicateEntries = Code(rawValue: 4, name: "duplicateEntries")
        public static let maximumEntriesExceeded = Code(rawValue: 5, name: "maximumEntriesExceeded")
        public static let extensionDisabled = Code(rawValue: 6, name: "extensionDisabled")
        public static let currentlyLoading = Code(rawValue: 7, name: "currentlyLoading")
        public static let unexpectedIncrementalRemoval = Code(rawValue: 8, name: "unexpectedIncrementalRemoval")

        /// Every code, by raw value.
        public static let all: [Code] = [
            .unknown, .noExtensionFound, .loadingInterrupted, .entriesOutOfOrder, .duplicateEntries,
            .maximumEntriesExceeded, .extensionDisabled, .currentlyLoading, .unexpectedIncrementalRemoval,
        ]

        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        /// "entriesOutOfOrder (3)".
        public var description: String { "\(name) (\(rawValue))" }
    }

    public var code: Code
    /// One sentence: which extension, which entry, what was expected.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// "entriesOutOfOrder (3): extension-02: …".
    public var description: String { "\(code): \(message)" }
}
