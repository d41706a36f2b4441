// A stand-in for IdentityLookup's message filtering API, with the declarations and raw values
// docs/PLATFORM.md gives from Apple's headers and documentation (no iOS SDK is available here;
// see AppGroupContainers), held to that table by PlatformTableTests.
@_exported import AppGroupContainers

/// What to do with a message.
public enum ILMessageFilterAction: Int, Sendable {
    case none = 0
    case allow = 1
    case junk = 2
    case promotion = 3
    case transaction = 4

    /// The older name of `junk`.
    public static let filter = ILMessageFilterAction.junk
}

/// The sub-action of a promotion or a transaction (iOS 16 and later; `promotion` and
/// `transaction` themselves are iOS 14).
public enum ILMessageFilterSubAction: Int, Sendable {
    case none = 0
    case transactionalOthers = 10000
    case transactionalFinance = 10001
    case transactionalOrders = 10002
    case transactionalReminders = 10003
    case transactionalHealth = 10004
    case transactionalWeather = 10005
    case transactionalCarrier = 10006
    case transactionalRewards = 10007
    case transactionalPublicServices = 10008
    case promotionalOthers = 20000
    case promotionalOffers = 20001
    case promotionalCoupons = 20002
}

/// The principal class of a Message Filter extension.
open class ILMessageFilterExtension: NSObject {
    public override init() {}
}

/// A message the system asks about.
open class ILMessageFilterQueryRequest: NSObject {
    open private(set) var sender: String?
    open private(set) var messageBody: String?
    open private(set) var receiverISOCountryCode: String?

    /// The stand-in's own initializer: the system makes requests.
    public init(sender: String?, messageBody: String?, receiverISOCountryCode: String? = nil) {
        self.sender = sender
        self.messageBody = messageBody
        self.receiverISOCountryCode = receiverISOCountryCode
    }
}

/// The extension's answer.
open class ILMessageFilterQueryResponse: NSObject {
    open var action: ILMessageFilterAction = .none
    open var subAction: ILMessageFilterSubAction = .none
    public override init() {}
}

/// What the extension's server answered.
open class ILNetworkResponse: NSObject, @unchecked Sendable {
    open private(set) var urlResponse: HTTPURLResponse
    open private(set) var data: Data

    /// The stand-in's own initializer: the system makes responses.
    public init(data: Data, statusCode: Int = 200) {
        self.data = data
        urlResponse = HTTPURLResponse(
            url: URL(string: "https://example.invalid/")!,
            statusCode: statusCode,
            httpVersion: "HTTP/1.1",
            headerFields: nil
        )!
    }
}

/// What the system hands a query; `Sendable`, as Apple's documentation lists it.
open class ILMessageFilterExtensionContext: NSObject, @unchecked Sendable {
    public override init() {}

    /// Sends the message to the server named in the extension's Info.plist
    /// (`ILMessageFilterExtensionNetworkURL`) and calls back with its answer.
    open func deferQueryRequestToNetwork(completion: @escaping @Sendable (ILNetworkResponse?, (any Error)?) -> Void) {
        completion(nil, nil)
    }
    /// The async form Swift imports.
    open func deferQueryRequestToNetwork() async throws -> ILNetworkResponse {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ILNetworkResponse, any Error>) in
            deferQueryRequestToNetwork { response, error in
                if let response {
                    continuation.resume(returning: response)
                } else {
                    continuation.resume(throwing: error ?? CocoaError(.featureUnsupported))
                }
            }
        }
    }
}

/// What a Message Filter extension's principal class adopts.
public protocol ILMessageFilterQueryHandling: NSObjectProtocol {
    func handle(
        _ queryRequest: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterQueryResponse) -> Void
    )
}

/// What the system asks an extension once, in iOS 16 and later: which sub-actions it sorts
/// messages into (Messages shows a folder for each).
open class ILMessageFilterCapabilitiesQueryRequest: NSObject {
    /// The stand-in's own initializer: the system makes requests.
    public override init() {}
}

/// The sub-actions an extension sorts into.
open class ILMessageFilterCapabilitiesQueryResponse: NSObject {
    open var transactionalSubActions: [ILMessageFilterSubAction] = []
    open var promotionalSubActions: [ILMessageFilterSubAction] = []
    public override init() {}
}

/// What a Message Filter extension's principal class adopts to name its sub-actions (iOS 16).
public protocol ILMessageFilterCapabilitiesQueryHandling: NSObjectProtocol {
    func handle(
        _ capabilitiesQueryRequest: ILMessageFilterCapabilitiesQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterCapabilitiesQueryResponse) -> Void
    )
}
