import BlocklistCore
import BlocklistSystem
import Crypto
import UpdateCore

/// The APNs payload announcing a publication's newest generation (`blocklist push payload`):
/// `aps.alert` with a title and body, `mutable-content: 1`, and under `blocklist` the generation,
/// the signed `announcement` (`PushAnnouncement`: the generation, its expiry and the URL to fetch
/// from) and, when it fits APNs's 4 KB, the update itself, sealed (`InlinePush`).
package enum PushPayload {
    /// APNs's limit for a remote notification's payload.
    package static let maximumBytes = 4096

    package struct Made: Sendable {
        package var json: [UInt8]
        package var generation: UInt64
        package var inline: Bool
        /// Why the update is not inline, if it is not.
        package var note: String?
    }

    /// The payload for `publication`'s newest generation.
    ///
    /// - Parameters:
    ///   - url: where a phone fetches the update when it is not inline: an `http://` or
    ///     `https://` URL (`PushAnnouncement.checkURL`), signed with the announcement.
    ///   - pushKey: seals an inline update; `nil` never inlines.
    ///   - why: why there is no push key, for the note (default: there is none).
    ///   - now: seconds since 1970; a publication whose timestamp or snapshot has expired is
    ///     refused (phones would refuse it).
    package static func make(
        publication: String,
        signingKey: Curve25519.Signing.PrivateKey,
        pushKey: SymmetricKey?,
        url: String?,
        why: String? = nil,
        now: Int64
    ) throws -> Made {
        let directory = try DirectoryHandle(path: publication)
        let (timestamp, snapshot) = try Publisher.current(directory)
        // Phones check the push against the newest root the publication publishes.
        if let root = try Publisher.publishedRoots(directory).last?.root,
            root.keys[Keys.keyID(of: signingKey.publicKey)] == nil
        {
            throw UpdateError(
                .badSignature,
                "The signing key is not one of the keys of root version \(root.version), which \(publication) publishes: every phone would refuse this push. Give the signing.key of the key directory that published it."
            )
        }
        // A push for what phones would refuse only tells users "the update finishes later".
        for (role, expires) in [("timestamp.json", timestamp.expires), ("the snapshot", snapshot.expires)]
        where expires <= now {
            throw UpdateError(
                .expired,
                "\(publication)'s \(role) expired at \(TextEncodings.utcTime(expires)); phones would refuse the update. Run blocklist publish first, then push."
            )
        }
        let generation = snapshot.generation
        let entries = snapshot.shards.reduce(0) { $0 + $1.entries }
        func payload(_ blocklist: [String: JSONValue]) -> [UInt8] {
            JSONValue.object([
                "aps": .object([
                    "alert": .object([
                        "title": .string("Block list update"),
                        "body": .string("Generation \(generation): \(entries) numbers."),
                    ]),
                    "mutable-content": .number("1"),
                ]),
                "blocklist": .object(blocklist.merging(["generation": .number(String(generation))]) { a, _ in a }),
            ]).canonicalBytes
        }
        if let url { try PushAnnouncement.checkURL(url) }
        // The announcement carries the URL inside the signed part: a phone reads it from nowhere else.
        let announcement = try JSONValue(
            parsing: try SignedDocument.sign(
                PushAnnouncement(generation: generation, expires: timestamp.expires, url: url).payload,
                with: [signingKey]
            ),
            what: "the push's announcement"
        )
        var note: String?
        if let pushKey {
            switch try Publisher.update(directory, to: snapshot, from: generation - 1, expires: timestamp.expires) {
            case .update(let push):
                let sealed = try push.sealed(signingWith: [signingKey], pushKey: pushKey)
                let json = payload(["inline": .string(TextEncodings.base64(sealed)), "announcement": announcement])
                if json.count <= maximumBytes {
                    // Inline alone reaches only the apps that hold the push key and generation
                    // \(generation - 1): say so, since the others are told nothing to fetch.
                    let alone =
                        url == nil
                        ? "no --url: apps made without a push key, and phones not at generation \(generation - 1), have nothing to fetch; they catch up from the publication"
                        : nil
                    return Made(json: json, generation: generation, inline: true, note: alone)
                }
                note = "the update is \(json.count) bytes inline, over APNs's \(maximumBytes); the push carries the URL"
            case .noBase:
                note = "no earlier generation to make a delta from; the push carries the URL"
            case .noDelta:
                note =
                    "the deltas from generation \(generation - 1) cannot all be made or are too large; the push carries the URL"
            }
        } else {
            note = "\(why ?? "no push key"); the push carries the URL"
        }
        guard url != nil else {
            throw UpdateError(
                .malformed,
                "The update cannot go inline (\(note ?? "")) and no --url was given to fetch it from."
            )
        }
        return Made(json: payload(["announcement": announcement]), generation: generation, inline: false, note: note)
    }
}
