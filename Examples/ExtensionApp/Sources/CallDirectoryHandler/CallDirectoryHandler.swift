import BlocklistCore

/// What a Call Directory extension's `beginRequest(with:)` does with one shard: every number, in
/// ascending order, through one fixed buffer (no allocation per entry), into `add`, which is
/// `context.addBlockingEntry(withNextSequentialPhoneNumber:)` in the extension.
///
/// - Returns: how many numbers were added.
public func addBlockingEntries(fromShardAt path: String, _ add: (Int64) -> Void) throws -> Int64 {
    let reader = try ShardReader(path: path)
    let buffer = UnsafeMutableBufferPointer<Int64>.allocate(capacity: 4096)
    defer { buffer.deallocate() }
    var added: Int64 = 0
    while true {
        let count = try reader.read(into: buffer)
        if count == 0 { break }
        for index in 0..<count { add(buffer[index]) }
        added += Int64(count)
    }
    return added
}
