// A stand-in for IdentityLookup's message filtering API, with the iOS SDK's signatures and raw
// values (no iOS SDK is available here; see AppGroupContainers). `ILNetworkResponse` carries its
// data only: its `urlResponse` (an HTTPURLResponse) is left out.
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

/// The sub-action of a promotion or a transaction (iOS 16 and later).
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
open class ILNetworkResponse: NSObject {
    open private(set) var data: Data

    /// The stand-in's own initializer: the system makes responses.
    public init(data: Data) { self.data = data }
}

/// What the system hands a query.
open class ILMessageFilterExtensionContext: NSObject {
    public override init() {}

    /// Sends the message to the server named in the extension's Info.plist
    /// (`ILMessageFilterExtensionNetworkURL`) and calls back with its answer.
    open func deferQueryRequestToNetwork(completion: @escaping (ILNetworkResponse?, Error?) -> Void) {
        completion(nil, nil)
    }
}

/// What a Message Filter extension's principal class adopts.
public protocol ILMessageFilterQueryHandling: NSObjectProtocol {
    func handle(
        _ queryRequest: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping (ILMessageFilterQueryResponse) -> Void
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
        completion: @escaping (ILMessageFilterCapabilitiesQueryResponse) -> Void
    )
}
