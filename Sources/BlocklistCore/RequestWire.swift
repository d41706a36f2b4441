/// The byte stream an extension host sends the simulator for one request: records of a 1-byte
/// operation, a little-endian UInt32 count, and a payload. Adds and removals carry `count`
/// little-endian Int64 numbers; a cancel carries a `count`-byte UTF-8 reason; the others carry nothing.
package enum RequestWire {
    package static let add: UInt8 = 1
    package static let remove: UInt8 = 2
    package static let removeAll: UInt8 = 3
    package static let complete: UInt8 = 4
    package static let cancel: UInt8 = 5
    /// Operation byte and count.
    package static let recordHeaderSize = 5
    /// The most numbers one record carries.
    package static let maximumBatch = 4096
}
