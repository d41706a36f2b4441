/// An error from the simulated CallKit, with the codes of `CXErrorCodeCallDirectoryManagerError`.
package struct CallDirectoryError: Error, Sendable, CustomStringConvertible {
    /// A CallKit Call Directory error code; `rawValue` is CallKit's.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: Int
        package let name: String

        package static let unknown = Code(rawValue: 0, name: "unknown")
        package static let noExtensionFound = Code(rawValue: 1, name: "noExtensionFound")
        package static let loadingInterrupted = Code(rawValue: 2, name: "loadingInterrupted")
        package static let entriesOutOfOrder = Code(rawValue: 3, name: "entriesOutOfOrder")
        package static let duplicateEntries = Code(rawValue: 4, name: "duplicateEntries")
        package static let maximumEntriesExceeded = Code(rawValue: 5, name: "maximumEntriesExceeded")
        package static let extensionDisabled = Code(rawValue: 6, name: "extensionDisabled")
        package static let currentlyLoading = Code(rawValue: 7, name: "currentlyLoading")
        package static let unexpectedIncrementalRemoval = Code(rawValue: 8, name: "unexpectedIncrementalRemoval")

        /// Every code, by raw value.
        package static let all: [Code] = [
            .unknown, .noExtensionFound, .loadingInterrupted, .entriesOutOfOrder, .duplicateEntries,
            .maximumEntriesExceeded, .extensionDisabled, .currentlyLoading, .unexpectedIncrementalRemoval,
        ]

        package static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        package func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        /// "entriesOutOfOrder (3)".
        package var description: String { "\(name) (\(rawValue))" }
    }

    package var code: Code
    /// One sentence: which extension, which entry, what was expected.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// "entriesOutOfOrder (3): extension-02: …".
    package var description: String { "\(code): \(message)" }
}
