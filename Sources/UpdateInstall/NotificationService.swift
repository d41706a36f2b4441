import BlocklistCore
import BlocklistSystem
import Crypto
import HTTPFetch
import UpdateCore

/// What the Notification Service Extension does with a push (seed 003): nothing unless
/// `mutable-content` is 1 and an alert is present, as the system does; otherwise it opens the
/// inline update or fetches the one the push points to, verifies and installs it, and rewrites
/// the alert. The host (`blocklist-notification-service`) runs it under a deadline.
package enum NotificationService {
    /// Downloads above this many bytes wait for Wi-Fi when the network is cellular (1 MiB).
    package static let cellularLimitBytes: Int64 = 1 << 20

    package enum Network: String, Sendable { case wifi, cellular }

    /// The outcome and the notification to show.
    package struct Delivery: Sendable {
        /// The push as delivered: its alert rewritten, or unchanged.
        package var notification: JSONValue
        /// "ignored", "updated", "current", "deferred", "failed".
        package var result: String
        package var outcome: UpdateInstaller.Outcome?
        package var message: String?
    }

    /// Handles one push.
    ///
    /// - Parameters:
    ///   - payload: the APNs payload's bytes.
    ///   - reader: opens the publication at the URL the push's signed announcement gives (an
    ///     `http://` or `https://` URL, checked), or `nil` if it cannot be reached.
    package static func handle(
        payload: [UInt8],
        appGroup: String,
        trust: [UInt8],
        pushKey: SymmetricKey?,
        network: Network,
        now: Int64,
        isCancelled: @escaping () -> Bool,
        reader: (String) throws -> (any PublicationReader)?
    ) throws -> Delivery {
        let notification = try JSONValue(parsing: payload, what: "the push payload")
        guard case .object(var members) = notification, case .object(var aps)? = members["aps"],
            aps["mutable-content"] == .number("1"), let alert = aps["alert"]
        else {
            return Delivery(
                notification: notification,
                result: "ignored",
                outcome: nil,
                message: "not mutable-content 1 with an alert: delivered as is"
            )
        }
        _ = alert
        func rewrite(_ title: String, _ body: String) -> JSONValue {
            aps["alert"] = .object(["title": .string(title), "body": .string(body)])
            members["aps"] = .object(aps)
            return .object(members)
        }
        guard case .object(let blocklist)? = members["blocklist"] else {
            return Delivery(
                notification: notification,
                result: "ignored",
                outcome: nil,
                message: "no blocklist update in the push"
            )
        }
        do {
            // The app's root, and every rotation an earlier update followed: a retired key stays
            // retired. Everything in the push is checked against it as an update checks its
            // metadata: an expired root trusts nothing.
            let root = try UpdateInstaller.installed(in: appGroup).root(trusting: trust)
            try root.checkCurrent(now: now)
            // The URL comes only from the signed announcement.
            var announcement: PushAnnouncement?
            if let envelope = blocklist["announcement"] {
                announcement = try PushAnnouncement.verified(envelope.canonicalBytes, trusting: root, now: now)
            }
            var outcome: UpdateInstaller.Outcome?
            if case .string(let inline)? = blocklist["inline"], let pushKey {
                guard let sealed = TextEncodings.base64Decode(Array(inline.utf8)) else {
                    throw UpdateError(.malformed, "The push's inline update is not base64.")
                }
                let push = try InlinePush(opening: sealed, pushKey: pushKey, trusting: root, now: now)
                let installed = try UpdateInstaller.installed(in: appGroup)
                if push.to <= installed.publication.generation {
                    // A push replayed, or one for a generation an earlier update already installed.
                    return Delivery(
                        notification: rewrite(
                            "Block list up to date",
                            "\(Figures.grouped(installed.totalEntries)) numbers blocked (generation \(installed.publication.generation))."
                        ),
                        result: "current",
                        outcome: nil,
                        message:
                            "the push is for generation \(push.to); generation \(installed.publication.generation) is installed"
                    )
                }
                do {
                    outcome = try UpdateInstaller.apply(push, appGroup: appGroup, now: now, isCancelled: isCancelled)
                } catch let error as UpdateError where error.code == .wrongBase {
                    outcome = nil  // Not the base this phone holds: fetch instead, if the push says where.
                }
            }
            if outcome == nil {
                guard let location = announcement?.url, let publication = try reader(location) else {
                    throw UpdateError(
                        .malformed,
                        "The push carries no update this phone can apply and no signed URL to fetch one."
                    )
                }
                if network == .cellular {
                    let installed = try UpdateInstaller.installed(in: appGroup)
                    let route = try UpdatePlan.route(
                        trusting: root,
                        installed: installed.publication,
                        now: now,
                        fetch: { path, maximum, optional in
                            try publication.read(path, maximumBytes: maximum, optional: optional)
                        }
                    )
                    let size: Int64? =
                        switch route {
                        case .updateFile(_, let bytes)?: bytes
                        case .plan(let plan)?: plan.downloadBytes
                        case nil: nil
                        }
                    if let size, size > cellularLimitBytes {
                        return Delivery(
                            notification: rewrite(
                                "Block list update waiting",
                                "A block list update of \(Figures.grouped(size)) bytes waits for Wi-Fi."
                            ),
                            result: "deferred",
                            outcome: nil,
                            message: "deferred: \(size) bytes on cellular (limit \(cellularLimitBytes))"
                        )
                    }
                }
                outcome = try UpdateInstaller.update(
                    from: publication,
                    trust: trust,
                    appGroup: appGroup,
                    now: now,
                    isCancelled: isCancelled
                )
            }
            let done = outcome!
            if done.upToDate {
                return Delivery(
                    notification: rewrite(
                        "Block list up to date",
                        "\(Figures.grouped(done.totalEntries)) numbers blocked."
                    ),
                    result: "current",
                    outcome: done,
                    message: nil
                )
            }
            return Delivery(
                notification: rewrite(
                    done.fromGeneration == 0 ? "Block list installed" : "Block list updated",
                    done.fromGeneration == 0
                        ? "Block list installed: \(Figures.grouped(done.totalEntries)) numbers blocked"
                        : "Block list updated: +\(Figures.grouped(done.added)) numbers, −\(Figures.grouped(done.removed)) (\(Figures.grouped(done.totalEntries)) blocked)"
                ),
                result: "updated",
                outcome: done,
                message: nil
            )
        } catch {
            if isCancelled() { throw error }
            // A download that ran into the deadline is the deadline's: the best attempt, as
            // serviceExtensionTimeWillExpire delivers it.
            let expired = (error as? HTTPFetchError).map { $0.code == .timeout || $0.code == .cancelled } ?? false
            return Delivery(
                notification: rewrite("Block list update", "The update finishes when you open the app."),
                result: expired ? "expired" : "failed",
                outcome: nil,
                message: "\(error)"
            )
        }
    }

    /// The best attempt `serviceExtensionTimeWillExpire` delivers.
    package static func bestAttempt(_ payload: [UInt8]) -> JSONValue {
        guard let notification = try? JSONValue(parsing: payload, what: "the push payload"),
            case .object(var members) = notification, case .object(var aps)? = members["aps"]
        else { return .object([:]) }
        aps["alert"] = .object([
            "title": .string("Block list update"), "body": .string("The update finishes when you open the app."),
        ])
        members["aps"] = .object(aps)
        return .object(members)
    }

}
