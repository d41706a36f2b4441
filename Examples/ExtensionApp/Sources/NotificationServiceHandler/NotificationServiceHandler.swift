import UpdateCore

/// What a Notification Service Extension does with an update file (`from-N.push`, fetched with
/// URLSession) or an opened inline push: verify it under the app's trusted root, apply its deltas
/// to the installed shards into new files, and check the result against the signed set digest.
/// The app then renames the new files over the old ones and records `shardDigests` and the new
/// generation.
public func applyUpdate(
    file: [UInt8],
    trustedRoot: [UInt8],
    now: Int64,
    installedGeneration: UInt64,
    shards: [(path: String, digest: [UInt8])],
    writingTo resultPath: (Int) -> String
) throws -> (generation: UInt64, applied: InlinePush.Application) {
    let root = try Root.trusted(trustedRoot, what: "the app's root.json")
    let push = try InlinePush(signed: file, trusting: root, now: now, what: "the update file")
    let applied = try push.apply(
        installedGeneration: installedGeneration,
        shards: shards,
        writingTo: resultPath
    )
    return (push.to, applied)
}

/// A shard's content digest, for the shards the app installs in full.
public func contentDigest(ofShardAt path: String) throws -> [UInt8] {
    try ShardContent.digest(ofShardAt: path)
}
