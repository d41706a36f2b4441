import Foundation
import IdentityLookup
import MessageFilterCore

/// A Message Filter extension's principal class: classifies offline, then defers.
final class MessageFilterExtension: ILMessageFilterExtension {
    /// The compiled rules, loaded once per process when the app has written them: until then
    /// each message tries again (and is deferred). Any thread may call it: the system may ask
    /// about two messages at once.
    static let classifier = SharedClassifier {
        (try? ExtensionSettings.current()).flatMap { try? CompiledRules(contentsOf: $0.rules) }
    }

    /// The offline decision for a message; nil when no rules are installed.
    static func classify(sender: String, body: String) -> MessageClassifier.Decision? {
        classifier.classify(sender: sender, body: body)
    }

    /// IdentityLookup's sub-action for a rule's or the server's name of one.
    static func subAction(_ name: String?, of action: MessageAction) -> ILMessageFilterSubAction {
        ILMessageFilterSubAction(rawValue: DeferralResponse.subActionRawValue(name, of: action)) ?? .none
    }
}

extension MessageFilterExtension: ILMessageFilterQueryHandling {
    func handle(
        _ request: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterQueryResponse) -> Void
    ) {
        let decision = Self.classify(sender: request.sender ?? "", body: request.messageBody ?? "")
        let response = ILMessageFilterQueryResponse()
        switch decision?.action ?? .none {
        case .allow: response.action = .allow
        case .junk: response.action = .junk
        case .promotion: response.action = .promotion  // iOS 14 and later; sub-actions iOS 16
        case .transaction: response.action = .transaction
        case .none:
            return deferToServer(request, context: context, completion: completion)
        }
        if let decision { response.subAction = Self.subAction(decision.subAction, of: decision.action) }
        completion(response)
    }
}

extension MessageFilterExtension {
    func deferToServer(
        _ request: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterQueryResponse) -> Void
    ) {
        context.deferQueryRequestToNetwork { network, _ in
            let response = ILMessageFilterQueryResponse()
            if let data = network?.data,
                let answer = try? data.withUnsafeBytes({ try DeferralResponse.parse($0) })
            {
                response.action = ILMessageFilterAction(rawValue: Int(answer.action.rawValue)) ?? .none
                response.subAction = Self.subAction(answer.subAction, of: answer.action)
            }
            completion(response)
        }
    }
}

extension MessageFilterExtension: ILMessageFilterCapabilitiesQueryHandling {
    /// The sub-actions rules and the server may give, every one of IdentityLookup's (iOS 16):
    /// Messages shows a folder for each.
    func handle(
        _ capabilitiesQueryRequest: ILMessageFilterCapabilitiesQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterCapabilitiesQueryResponse) -> Void
    ) {
        let response = ILMessageFilterCapabilitiesQueryResponse()
        response.transactionalSubActions = DeferralResponse.subActionRawValues(of: .transaction).compactMap {
            ILMessageFilterSubAction(rawValue: $0)
        }
        response.promotionalSubActions = DeferralResponse.subActionRawValues(of: .promotion).compactMap {
            ILMessageFilterSubAction(rawValue: $0)
        }
        completion(response)
    }
}
