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

            // An app made without --push-key has no push.key: it takes the update from the signed URL.
            if let inline = push["inline"] as? String, let sealed = Data(base64Encoded: inline),
                let pushKeyFile = try? settings.resource("push", "key")
            {
                let pushKey = try PushKeyFile.key(pushKeyFile, what: "the app's push key")
                let update = try InlinePush(opening: [UInt8](sealed), pushKey: pushKey, trusting: root, now: now)
                if update.from == installed.generation {
                    return finish(.updated(try installed.apply(update, in: settings.path)))
                }
            }
            fetchUpdateFile(push, root: root, now: now, installed: installed, settings)
        } catch {
            finish(.failed(error))
        }
    }

    /// Fetches `from-N.push` (N the installed generation) from the URL of the push's signed
    /// announcement, never from an unsigned field, and applies it.
    private func fetchUpdateFile(
        _ push: [String: Any],
        root: Root,
        now: Int64,
        installed: InstalledShards,
        _ settings: ExtensionSettings
    ) {
        do {
            let envelope = try JSONSerialization.data(withJSONObject: push["announcement"] ?? [:])
            let announcement = try PushAnnouncement.verified([UInt8](envelope), trusting: root, now: now)
            guard announcement.generation > installed.generation,
                let publication = announcement.url.flatMap(URL.init(string:))
            else { return finish(.unchanged) }
            let name = InlinePush.fileName(from: installed.generation)
            var request = URLRequest(url: publication.appendingPathComponent(name))
            request.timeoutInterval = 20
            URLSession.shared.dataTask(with: request) { data, response, error in
                do {
                    guard let data, (response as? HTTPURLResponse)?.statusCode == 200 else {
                        throw error ?? SettingsError("\(name) could not be fetched from \(publication).")
                    }
                    var installed = installed
                    let update = try InlinePush(signed: [UInt8](data), trusting: root, now: now, what: name)
                    self.finish(.updated(try installed.apply(update, in: settings.path)))
                } catch {
                    self.finish(.failed(error))
                }
            }.resume()
        } catch {
            finish(.failed(error))
        }
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
        case .failed(let error): content.body = "Block list not updated: \(error)"
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
