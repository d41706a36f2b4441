// A stand-in for UserNotifications' Notification Service Extension API, with the iOS SDK's
// signatures (no iOS SDK is available here; see AppGroupContainers).
@_exported import AppGroupContainers

/// A notification's content.
open class UNNotificationContent: NSObject {
    open internal(set) var title: String = ""
    open internal(set) var body: String = ""
    open internal(set) var userInfo: [AnyHashable: Any] = [:]

    public override init() {}

    /// A mutable copy (`UNMutableNotificationContent`), as NSMutableCopying gives.
    open override func mutableCopy() -> Any {
        let copy = UNMutableNotificationContent()
        copy.title = title
        copy.body = body
        copy.userInfo = userInfo
        return copy
    }
}

/// Content the extension may change.
open class UNMutableNotificationContent: UNNotificationContent {
    open override var title: String {
        get { super.title }
        set { super.title = newValue }
    }
    open override var body: String {
        get { super.body }
        set { super.body = newValue }
    }
    open override var userInfo: [AnyHashable: Any] {
        get { super.userInfo }
        set { super.userInfo = newValue }
    }
}

/// A notification as it arrives.
open class UNNotificationRequest: NSObject {
    open private(set) var identifier: String
    open private(set) var content: UNNotificationContent

    /// The stand-in's initializer: the system makes requests of pushes.
    public init(identifier: String, content: UNNotificationContent) {
        self.identifier = identifier
        self.content = content
    }
}

/// The principal class of a Notification Service Extension.
open class UNNotificationServiceExtension: NSObject {
    public override init() {}

    /// Called with a push that has `mutable-content: 1`; call `contentHandler` within about 30 s.
    open func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        contentHandler(request.content)
    }

    /// Called just before the system ends the extension.
    open func serviceExtensionTimeWillExpire() {}
}
