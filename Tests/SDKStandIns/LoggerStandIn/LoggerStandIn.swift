// A stand-in for the `os` module's Logger, with the iOS SDK's signatures (docs/PLATFORM.md,
// "os"; no iOS SDK is available here). A test reads what was logged in `Logger.standInLogged`.
// Named LoggerStandIn, not os: a module named os would make `canImport(os)` true in every package
// built beside it.

/// The alignment of an interpolated value.
public struct OSLogStringAlignment {
    public static var none: OSLogStringAlignment { OSLogStringAlignment() }
}

/// Whether an interpolated value shows in the log (`.public`) or is redacted.
public struct OSLogPrivacy {
    let isPublic: Bool
    public static var `public`: OSLogPrivacy { OSLogPrivacy(isPublic: true) }
    public static var `private`: OSLogPrivacy { OSLogPrivacy(isPublic: false) }
    public static var sensitive: OSLogPrivacy { OSLogPrivacy(isPublic: false) }
    public static var auto: OSLogPrivacy { OSLogPrivacy(isPublic: false) }
}

/// The text of a log message, built from a string interpolation.
public struct OSLogInterpolation: StringInterpolationProtocol {
    var text = ""

    public init(literalCapacity: Int, interpolationCount: Int) {}
    public mutating func appendLiteral(_ literal: String) { text += literal }
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String,
        align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        text += privacy.isPublic ? argumentString() : "<private>"
    }
    @_disfavoredOverload
    public mutating func appendInterpolation<T: CustomStringConvertible>(
        _ value: @autoclosure @escaping () -> T,
        align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        text += privacy.isPublic ? value().description : "<private>"
    }
}

/// A message to log.
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    public typealias StringInterpolation = OSLogInterpolation
    let text: String

    public init(stringInterpolation: OSLogInterpolation) { text = stringInterpolation.text }
    public init(stringLiteral value: String) { text = value }
}

/// Writes to the unified log; the stand-in keeps each message.
public struct Logger: @unchecked Sendable {
    let subsystem: String
    let category: String

    public init(subsystem: String, category: String) {
        self.subsystem = subsystem
        self.category = category
    }

    public func info(_ message: OSLogMessage) { record("info", message) }
    public func notice(_ message: OSLogMessage) { record("notice", message) }
    public func error(_ message: OSLogMessage) { record("error", message) }

    /// What was logged: "LEVEL CATEGORY: TEXT", oldest first.
    nonisolated(unsafe) public static var standInLogged: [String] = []

    private func record(_ level: String, _ message: OSLogMessage) {
        Self.standInLogged.append("\(level) \(category): \(message.text)")
    }
}
