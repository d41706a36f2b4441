import MessageFilterCore
import Testing

/// The sub-actions' raw values are IdentityLookup's (`ILMessageFilterSubAction`, docs/PLATFORM.md),
/// which the extension hands to the SDK as they are.
@Suite struct SubActionRawValueTests {
    @Test(arguments: [
        ("transactionalOthers", MessageAction.transaction, 10_000),
        ("transactionalFinance", .transaction, 10_001),
        ("transactionalOrders", .transaction, 10_002),
        ("transactionalPublicServices", .transaction, 10_008),
        ("promotionalOthers", .promotion, 20_000),
        ("promotionalCoupons", .promotion, 20_002),
        ("promotionalCoupons", .transaction, 0),
        ("transactionalFinance", .promotion, 0),
        ("transactionalFinance", .junk, 0),
        ("nonsense", .transaction, 0),
    ])
    func namesMapToThePlatformsRawValues(name: String, action: MessageAction, raw: Int) {
        #expect(DeferralResponse.subActionRawValue(name, of: action) == raw)
    }

    @Test func everySubActionOfAnActionInOrder() {
        #expect(DeferralResponse.subActionRawValue(nil, of: .transaction) == 0)
        #expect(DeferralResponse.subActionRawValues(of: .transaction) == Array(10_000...10_008))
        #expect(DeferralResponse.subActionRawValues(of: .promotion) == [20_000, 20_001, 20_002])
        #expect(DeferralResponse.subActionRawValues(of: .junk).isEmpty)
    }
}
