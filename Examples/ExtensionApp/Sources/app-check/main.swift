import CallDirectoryHandler
import Foundation
import MessageFilterHandler
import NotificationServiceHandler

// Runs the three handlers on files the blocklist tools made, and prints what each did:
//     app-check SHARD RULES SENDER BODY ROOT UPDATE-FILE GENERATION NOW OUT-DIR SHARD...
let arguments = CommandLine.arguments
guard arguments.count >= 11 else {
    print("usage: app-check SHARD RULES SENDER BODY ROOT UPDATE-FILE GENERATION NOW OUT-DIR SHARD...")
    exit(64)
}
func bytes(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
    return [UInt8](data)
}
do {
    var previous: Int64 = 0
    var ascending = true
    let added = try addBlockingEntries(fromShardAt: arguments[1]) { number in
        ascending = ascending && number > previous
        previous = number
    }
    print("call-directory entries \(added) ascending \(ascending) last \(previous)")

    let filter = try MessageFilterHandler(rulesAt: arguments[2])
    print("message-filter action \(filter.action(sender: arguments[3], body: arguments[4]))")

    let shardPaths = Array(arguments[10...])
    let shards = try shardPaths.map { (path: $0, digest: try contentDigest(ofShardAt: $0)) }
    let (generation, applied) = try applyUpdate(
        file: try bytes(arguments[6]),
        trustedRoot: try bytes(arguments[5]),
        now: Int64(arguments[8])!,
        installedGeneration: UInt64(arguments[7])!,
        shards: shards,
        writingTo: { "\(arguments[9])/shard-\($0).blk" }
    )
    print(
        "notification-service generation \(generation) changed \(applied.changedShards.map(String.init).joined(separator: ",")) added \(applied.counts.blockingAdded) removed \(applied.counts.blockingRemoved)"
    )
    for index in applied.changedShards {
        let count = try addBlockingEntries(fromShardAt: "\(arguments[9])/shard-\(index).blk") { _ in }
        print("updated-shard \(index) entries \(count)")
    }
} catch {
    print("error \(error)")
    exit(1)
}
