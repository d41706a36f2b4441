/// The byte stream an extension host sends the simulator for one request: records of a 1-byte
/// operation, a little-endian UInt32 count, and a payload. Adds and removals carry `count`
/// little-endian Int64 numbers; a cancel carries a `count`-byte UTF-8 reason; the others carry nothing.
/// Identification additions name the label that the last `label` record (a `count`-byte UTF-8
/// label) set.
package enum RequestWire {
    package static let add: UInt8 = 1
    package static let remove: UInt8 = 2
    package static let removeAll: UInt8 = 3
    package static let complete: UInt8 = 4
    package static let cancel: UInt8 = 5
    package static let label: UInt8 = 6
    package static let addIdentification: UInt8 = 7
    package static let removeIdentification: UInt8 = 8
    package static let removeAllIdentification: UInt8 = 9

    /// Whether `operation`'s payload is bytes (`count` of them) rather than numbers.
    package static func carriesBytes(_ operation: UInt8) -> Bool { operation == cancel || operation == label }
    /// Operation byte and count.
    package static let recordHeaderSize = 5
    /// The most numbers one record carries.
    package static let maximumBatch = 4096
}
