/// The byte stream an extension host sends the simulator for one request: records of a 1-byte
/// operation, a little-endian UInt32 count, and a payload. Adds and removals carry `count`
/// little-endian Int64 numbers; a cancel carries a `count`-byte UTF-8 reason; the others carry nothing.
/// Identification additions name the label that the last `label` record (a `count`-byte UTF-8
/// label) set.
package enum RequestWire {
    /// A record's operation, its first byte.
    package enum Operation: UInt8, Sendable {
        case add = 1
        case remove = 2
        case removeAll = 3
        case complete = 4
        case cancel = 5
        case label = 6
        case addIdentification = 7
        case removeIdentification = 8
        case removeAllIdentification = 9

        /// Whether the payload is bytes (`count` of them) rather than numbers.
        package var carriesBytes: Bool { self == .cancel || self == .label }
    }

    /// Operation byte and count.
    package static let recordHeaderSize = 5
    /// The most numbers one record carries.
    package static let maximumBatch = 4096
}
