import IdentityLookup
import MessageFilterCore

/// A Message Filter extension's principal class: classifies offline, then defers.
final class MessageFilterExtension: ILMessageFilterExtension {
    /// The compiled rules, loaded once per process; nil when the app has not written them yet.
    static let classifier: MessageClassifier? = {
        guard let settings = try? ExtensionSettings.current() else { return nil }
        let rules = try? CompiledRules(contentsOf: settings.rules, keepingNames: false)
        return rules.map { MessageClassifier(rules: $0) }
    }()
}

extension MessageFilterExtension: ILMessageFilterQueryHandling {
    func handle(
        _ request: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping (ILMessageFilterQueryResponse) -> Void
    ) {
        let decision = Self.classifier?.classify(sender: request.sender ?? "", body: request.messageBody ?? "")
        let response = ILMessageFilterQueryResponse()
        switch decision?.action ?? .none {
        case .allow: response.action = .allow
        case .junk: response.action = .junk
        case .promotion: response.action = .promotion  // iOS 16 and later, as are sub-actions
        case .transaction: response.action = .transaction
        case .none:
            return deferToServer(request, context: context, completion: completion)
        }
        completion(response)
    }
}

extension MessageFilterExtension {
    func deferToServer(
        _ request: ILMessageFilterQueryRequest,
        context: ILMessageFilterExtensionContext,
        completion: @escaping (ILMessageFilterQueryResponse) -> Void
    ) {
        context.deferQueryRequestToNetwork { network, _ in
            let response = ILMessageFilterQueryResponse()
            if let data = network?.data,
                let answer = try? data.withUnsafeBytes({ try DeferralResponse.parse($0) })
            {
                response.action = ILMessageFilterAction(rawValue: Int(answer.action.rawValue)) ?? .none
            }
            completion(response)
        }
    }
}
