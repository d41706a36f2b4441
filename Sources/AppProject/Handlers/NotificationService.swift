import BlocklistCore
import Foundation
import UpdateCore
import UserNotifications

/// A Notification Service Extension's principal class: UpdateCore's `InstalledShards.receive`
/// applies the update a blocklist push carries, or fetches it from the push's signed URL; CallKit
/// then reloads each extension whose shard changed, and the notification says what is true.
final class NotificationService: UNNotificationServiceExtension, @unchecked Sendable {
    /// The content handler, called once: by the update's end or by `serviceExtensionTimeWillExpire`.
    private let delivery = Delivery()

    override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = (request.content.mutableCopy() as? UNMutableNotificationContent) ?? UNMutableNotificationContent()
        delivery.start(content, contentHandler)
        // data(withJSONObject:) raises an exception (no Swift error) for what is not an array or
        // an object: a push whose "blocklist" is a string keeps its alert as it came.
        guard let push = request.content.userInfo["blocklist"], JSONSerialization.isValidJSONObject(push),
            let settings = try? ExtensionSettings.current(),
            let bytes = try? JSONSerialization.data(withJSONObject: push)
        else { return delivery.finish(nil) }
        let (delivery, now) = (delivery, Int64(Date().timeIntervalSince1970))
        Task {
            let outcome = await InstalledShards.receive(
                push: [UInt8](bytes),
                trust: (try? settings.resource("root", "json")) ?? [],
                // An app made without --push-key has no push.key: it takes updates from the signed URL.
                pushKey: try? settings.resource("push", "key"),
                now: now,
                in: settings.path,
                fetch: { try await URLSession.fetch($0, limit: $1, optional: true) }
            )
            if case .failed(let error) = outcome { ExtensionSettings.log(error, category: "NotificationService") }
            var reloaded = false
            if case .updated = outcome, let installed = try? InstalledShards.read(in: settings.path) {
                reloaded = await installed.reloadCallKit(
                    extensions: ExtensionSettings.callDirectoryExtensions,
                    using: CallKitManager(),
                    incrementalOnly: true,
                    in: settings.path
                ).isLoaded
            }
            delivery.finish(outcome.notificationBody(reloaded: reloaded))
        }
    }

    override func serviceExtensionTimeWillExpire() { delivery.finish(nil) }
}

/// A notification's content and its handler, which is called once, whichever comes first: the
/// update's end or the system's deadline (`serviceExtensionTimeWillExpire`, on another thread).
final class Delivery: @unchecked Sendable {
    private let lock = NSLock()
    private var content: UNMutableNotificationContent?
    private var handler: ((UNNotificationContent) -> Void)?

    func start(_ content: UNMutableNotificationContent, _ handler: @escaping (UNNotificationContent) -> Void) {
        lock.withLock { (self.content, self.handler) = (content, handler) }
    }

    /// Delivers the content, its body replaced by `body` unless nil.
    func finish(_ body: String?) {
        let (content, handler) = lock.withLock {
            defer { (self.content, self.handler) = (nil, nil) }
            return (self.content, self.handler)
        }
        guard let content, let handler else { return }
        if let body { content.body = body }
        handler(content)
    }
}

// swift-format-ignore: AvoidRetroactiveConformances
extension UpdateError: @retroactive LocalizedError { public var errorDescription: String? { description } }
