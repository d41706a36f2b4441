import BlocklistCore
import Foundation
import IdentityLookup
import MessageFilterCore

/// A Message Filter extension's principal class: classifies offline with MessageFilterCore's
/// `SharedClassifier` (any thread may call it: the system may ask about two messages at once),
/// and defers to the server when no rule decides.
final class MessageFilterExtension: ILMessageFilterExtension {
    /// The compiled rules the app installed, loaded once per process; until then each message
    /// tries again (and is deferred).
    static let classifier = SharedClassifier {
        do {
            return try CompiledRules(contentsOf: AppGroupLayout.rules(in: try ExtensionSettings.current().path))
        } catch {
            ExtensionSettings.log(error, category: "MessageFilter")
            return nil
        }
    }

    /// IdentityLookup's response for a verdict, its action and sub-action by raw value.
    static func response(_ verdict: DeferralResponse) -> ILMessageFilterQueryResponse {
        let response = ILMessageFilterQueryResponse()
        response.action = ILMessageFilterAction(rawValue: verdict.actionRawValue) ?? .none
        response.subAction = ILMessageFilterSubAction(rawValue: verdict.subActionRawValue) ?? .none
        return response
    }
}

extension MessageFilterExtension: ILMessageFilterQueryHandling, ILMessageFilterCapabilitiesQueryHandling {
    func handle(
        _ request: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterQueryResponse) -> Void
    ) {
        if let verdict = Self.classifier.verdict(sender: request.sender ?? "", body: request.messageBody ?? "") {
            return completion(Self.response(verdict))
        }
        context.deferQueryRequestToNetwork { network, _ in
            completion(Self.response(DeferralResponse.answer(network.map { [UInt8]($0.data) })))
        }
    }

    /// Every sub-action of IdentityLookup's (iOS 16): Messages shows a folder for each.
    func handle(
        _ capabilitiesQueryRequest: ILMessageFilterCapabilitiesQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping @Sendable (ILMessageFilterCapabilitiesQueryResponse) -> Void
    ) {
        let response = ILMessageFilterCapabilitiesQueryResponse()
        let sorted = { (action: MessageAction) in
            DeferralResponse.subActionRawValues(of: action).compactMap(ILMessageFilterSubAction.init(rawValue:))
        }
        response.transactionalSubActions = sorted(.transaction)
        response.promotionalSubActions = sorted(.promotion)
        completion(response)
    }
}

// swift-format-ignore: AvoidRetroactiveConformances
extension MessageFilterError: @retroactive LocalizedError { public var errorDescription: String? { description } }
