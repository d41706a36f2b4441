/// What a Notification Service Extension does with a blocklist push, decided from the push's two
/// fields and the installed set (`InstalledShards.step(inline:announcement:root:pushKey:now:)`).
package enum PushStep: Sendable {
    /// The push carried its update inline, leading from the installed generation: apply it
    /// (``InstalledShards/apply(_:in:)``).
    case apply(InlinePush)
    /// Fetch `url`, the update file for the installed generation (`fileName`) at the publication
    /// the push's signed announcement names, read it with
    /// ``InlinePush/init(signed:trusting:now:what:)`` and apply it; `generation` is the one
    /// announced.
    case fetch(url: String, fileName: String, generation: UInt64)
    /// A newer generation, `generation`, that this push gives no way to reach (an inline update
    /// from another generation, or none the app can open, and no URL): the app catches up.
    case behind(generation: UInt64)
    /// Nothing newer than the installed generation.
    case nothing
}

extension InstalledShards {
    /// Decides what to do with a blocklist push.
    ///
    /// 1. Its inline update (the sealed bytes, base64-decoded by the caller), when the app has a
    ///    push key and the update leads from the installed generation.
    /// 2. Otherwise the update file for the installed generation, from the publication URL of its
    ///    signed announcement (never from an unsigned field), when the announcement is newer.
    /// 3. Otherwise, when the push names a newer generation it gives no way to reach, behind;
    ///    else nothing.
    ///
    /// - Parameters:
    ///   - sealed: the push's `inline` field, decoded from base64; nil when it has none.
    ///   - announcement: the push's `announcement` field as JSON bytes; nil when it has none.
    ///   - root: the app's trusted root (``Root/trusted(_:what:)``).
    ///   - pushKey: the app's push key file; nil for an app made without one, which then takes
    ///     every update from the signed URL.
    ///   - now: seconds since 1970.
    /// - Throws: `UpdateError` when the inline update or the announcement is refused (a bad
    ///   signature, an expired or backwards push): nothing is applied then.
    package func step(
        inline sealed: [UInt8]?,
        announcement: [UInt8]?,
        root: Root,
        pushKey: [UInt8]?,
        now: Int64
    ) throws(UpdateError) -> PushStep {
        var newer: UInt64?
        if let sealed, let pushKey {
            let key = try PushKeyFile.key(pushKey, what: "the app's push key")
            let update = try InlinePush(opening: sealed, pushKey: key, trusting: root, now: now)
            if update.from == generation { return .apply(update) }
            if update.to > generation { newer = update.to }
        }
        if let announcement {
            let announced = try PushAnnouncement.verified(announcement, trusting: root, now: now)
            if announced.generation > generation {
                guard let url = announced.url, !url.isEmpty else { return .behind(generation: announced.generation) }
                let name = InlinePush.fileName(from: generation)
                return .fetch(
                    url: url.hasSuffix("/") ? url + name : url + "/" + name,
                    fileName: name,
                    generation: announced.generation
                )
            }
        }
        return newer.map { .behind(generation: $0) } ?? .nothing
    }
}
