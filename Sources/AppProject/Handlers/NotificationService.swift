import BlocklistCore
import Foundation
import UpdateCore
import UserNotifications

/// A Notification Service Extension's principal class: applies the update a blocklist push
/// carries inline, or fetches the one update file the phone needs from the push's signed URL.
/// `finish` may run on URLSession's queue while the system calls `serviceExtensionTimeWillExpire`:
/// the handler and the content are touched under `lock` only, and the first `finish` delivers.
final class NotificationService: UNNotificationServiceExtension, @unchecked Sendable {
    private let lock = NSLock()
    private var contentHandler: ((UNNotificationContent) -> Void)?
    private var content = UNMutableNotificationContent()

    override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        lock.withLock {
            self.contentHandler = contentHandler
            content = (request.content.mutableCopy() as? UNMutableNotificationContent) ?? content
        }
        guard let push = request.content.userInfo["blocklist"] as? [String: Any] else { return finish(.unchanged) }
        do {
            let settings = try ExtensionSettings.current()
            let root = try Root.trusted(try settings.resource("root", "json"), what: "the app's root.json")
            let now = Int64(Date().timeIntervalSince1970)
            var installed = try InstalledShards.read(in: settings.path)
            let step = try installed.step(
                inline: (push["inline"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) },
                announcement: try push["announcement"].map { [UInt8](try JSONSerialization.data(withJSONObject: $0)) },
                root: root,
                // An app made without --push-key has no push.key: it takes the update from the signed URL.
                pushKey: try? settings.resource("push", "key"),
                now: now
            )
            switch step {
            case .apply(let update): finish(.updated(try installed.apply(update, in: settings.path)))
            case .fetch(let url, let name): fetch(url, name, root: root, now: now, installed: installed, settings)
            case .nothing: finish(.unchanged)
            }
        } catch {
            finish(.failed(error))
        }
    }

    /// Fetches the update file at `url` (from the push's signed announcement) and applies it.
    private func fetch(
        _ url: String,
        _ name: String,
        root: Root,
        now: Int64,
        installed: InstalledShards,
        _ settings: ExtensionSettings
    ) {
        guard let location = URL(string: url) else { return finish(.unchanged) }
        var request = URLRequest(url: location)
        request.timeoutInterval = 20
        URLSession.shared.dataTask(with: request) { data, response, error in
            do {
                guard let data, (response as? HTTPURLResponse)?.statusCode == 200 else {
                    throw error ?? SettingsError("\(name) could not be fetched from \(url).")
                }
                var installed = installed
                let update = try InlinePush(signed: [UInt8](data), trusting: root, now: now, what: name)
                self.finish(.updated(try installed.apply(update, in: settings.path)))
            } catch {
                self.finish(.failed(error))
            }
        }.resume()
    }

    /// How a push ended.
    enum Outcome {
        /// Applied: the indexes of the shards it changed.
        case updated([Int])
        /// Refused or failed; the installed set is as it was.
        case failed(Error)
        /// Not a blocklist push, nothing newer, or out of time.
        case unchanged
    }

    /// Delivers the notification: with the changed shards, or the error, in its body.
    private func finish(_ outcome: Outcome) {
        lock.lock()
        defer { lock.unlock() }
        guard let contentHandler else { return }
        switch outcome {
        case .updated(let changed):
            // CallKit takes the new lists when the app reloads its extensions (it does on opening).
            content.body = "Block list update ready: \(changed.count) of its lists changed. Open the app to apply it."
        case .failed(let error):
            // The sentence, with its paths, is for the app's list of problems; the notification
            // speaks to people.
            (try? ExtensionSettings.current())?.recordFailure(error, source: "NotificationService")
            content.body = "Block list not updated. The app shows why; the next update tries again."
        case .unchanged: break
        }
        contentHandler(content)
        self.contentHandler = nil
    }

    override func serviceExtensionTimeWillExpire() {
        // The installed files are whole (each rename is); if the record was not written, the app
        // finds the set not whole when it opens and installs its own, which the next push updates.
        finish(.unchanged)
    }
}
