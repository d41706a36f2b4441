internal import JSONStream

/// What a deferral server answers, as the extension reads it from the response body the system
/// hands back: a JSON object such as `{"action": "junk"}` or
/// `{"action": "transaction", "subAction": "transactionalFinance"}`.
///
/// - `action` is required: `allow`, `junk` (or `filter`), `promotion`, `transaction` or `none`.
/// - `subAction` is optional: one of IdentityLookup's sub-actions of that action
///   (`promotionalOffers`, `transactionalFinance`, …).
/// - Other members are ignored; anything else is refused with a reason, and the message then
///   gets `none`.
///
/// The reader is JSONStream's `JSONReader` (the package's one JSON reader), not Foundation's,
/// because the extension process has a few MiB of memory and Foundation alone costs most of it
/// (docs/MESSAGE-FILTER.md, memory). It accepts RFC 8259 JSON of at most 64 KiB, with arrays and
/// objects nested at most 33 deep (the response object and 32 levels below it), and refuses an
/// object that names a member twice (two "action" members leave the answer ambiguous).

public struct DeferralResponse: Sendable, Equatable {
    public var action: MessageAction
    public var subAction: String?

    public init(action: MessageAction, subAction: String? = nil) {
        self.action = action
        self.subAction = subAction
    }

    public static let subActions: [MessageAction: [String]] = [
        .transaction: [
            "transactionalOthers", "transactionalFinance", "transactionalOrders", "transactionalReminders",
            "transactionalHealth", "transactionalWeather", "transactionalCarrier", "transactionalRewards",
            "transactionalPublicServices",
        ],
        .promotion: ["promotionalOthers", "promotionalOffers", "promotionalCoupons"],
    ]

    /// IdentityLookup's raw value of `ILMessageFilterSubAction` for the sub-action `name` of
    /// `action` (docs/PLATFORM.md: transactional ones from 10000, promotional ones from 20000, in
    /// ``subActions``' order), or 0 (`none`) for nil or a name `action` does not have.
    public static func subActionRawValue(_ name: String?, of action: MessageAction) -> Int {
        guard let name, let index = subActions[action]?.firstIndex(of: name) else { return 0 }
        return (action == .transaction ? 10_000 : 20_000) + index
    }

    /// The raw values of every sub-action of `action`, in IdentityLookup's order: what a
    /// capabilities query answers.
    public static func subActionRawValues(of action: MessageAction) -> [Int] {
        (subActions[action] ?? []).map { subActionRawValue($0, of: action) }
    }

    /// IdentityLookup's raw value of `ILMessageFilterAction` for ``action``: the numbers agree
    /// (docs/PLATFORM.md).
    public var actionRawValue: Int { Int(action.rawValue) }

    /// IdentityLookup's raw value of `ILMessageFilterSubAction` for ``subAction``
    /// (``subActionRawValue(_:of:)``).
    public var subActionRawValue: Int { Self.subActionRawValue(subAction, of: action) }

    /// The server's answer to a deferred message: the response body read with
    /// ``parse(_:)``, or `none` when there is no body or it is not an answer (a message is never
    /// filed as junk because the server failed).
    public static func answer(_ body: [UInt8]?) -> DeferralResponse {
        guard let body, let answer = try? body.withUnsafeBytes({ try parse($0) }) else {
            return DeferralResponse(action: .none)
        }
        return answer
    }

    public static let maximumBytes = 64 * 1024

    /// How deep arrays and objects may nest in a response: the object and 32 levels below it.
    public static let maximumDepth = 33

    /// Reads a response body.
    ///
    /// - Throws: `invalidResponse` with a sentence saying what is wrong, and where.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(MessageFilterError) -> DeferralResponse {
        if bytes.count > maximumBytes {
            throw MessageFilterError(
                .invalidResponse,
                "The server's response has \(bytes.count) bytes; at most \(maximumBytes) are read."
            )
        }
        let subject = "The server's response"
        let reader = StrictJSON.reader(bytes, maximumDepth: maximumDepth)
        var action: String?
        var subAction: String?
        do throws(JSONError) {
            guard try reader.next() == .objectStart else {
                throw reader.error(.syntax, "the response is not a JSON object")
            }
            while let token = try reader.next(), token == .key {
                let name = reader.string
                let value = try reader.next()
                switch name {
                case "action", "subAction":
                    guard value == .string else { throw reader.error(.syntax, "\"\(name)\" is not a string") }
                    if name == "action" { action = reader.string } else { subAction = reader.string }
                default:
                    try reader.skipValue(openedBy: value)
                }
            }
            guard try reader.next() == nil else { throw reader.error(.syntax, "bytes follow the JSON object") }
        } catch {
            throw MessageFilterError(.invalidResponse, "\(subject) is not valid JSON: \(error.description).")
        }
        guard let action else {
            throw MessageFilterError(.invalidResponse, "The server's response has no \"action\" member.")
        }
        guard let value = MessageAction(name: action) else {
            throw MessageFilterError(
                .invalidResponse,
                "The server's response has the action \"\(action)\"; expected allow, junk, promotion, transaction or none."
            )
        }
        if let subAction {
            guard let allowed = subActions[value], allowed.contains(subAction) else {
                throw MessageFilterError(
                    .invalidResponse,
                    "The server's response has the subAction \"\(subAction)\", which is not a sub-action of \(value)."
                )
            }
        }
        return DeferralResponse(action: value, subAction: subAction)
    }
}

/// RFC 8259 JSON, checked strictly (JSONStream's `JSONReader`, the package's one JSON reader)
/// before a reader that is lenient about the parts it skips (Foundation's `JSONDecoder` takes
/// trailing commas, invalid escapes and control characters in members it does not decode, and
/// the first of duplicate members).
package enum StrictJSON {
    /// Checks that `bytes` are one JSON value whose arrays and objects nest at most
    /// `maximumDepth` deep, whose objects have no duplicate member names, whose strings are valid
    /// UTF-8 with no lone surrogate. A UTF-8 byte-order mark at the start is skipped.
    ///
    /// - Parameters:
    ///   - bytes: the JSON text, UTF-8.
    ///   - subject: what the bytes are, to start the error's sentence ("The request body").
    ///   - maximumDepth: the most levels of arrays and objects, the top one included.
    /// - Throws: `invalidResponse` with a sentence saying what is wrong, and where.
    public static func check(_ bytes: UnsafeRawBufferPointer, subject: String, maximumDepth: Int = 33)
        throws(MessageFilterError)
    {
        let reader = reader(bytes, maximumDepth: maximumDepth)
        do throws(JSONError) {
            while try reader.next() != nil {}
        } catch {
            throw MessageFilterError(.invalidResponse, "\(subject) is not valid JSON: \(error.description).")
        }
    }

    /// A reader of `bytes` in place, its limits set by the size of the text (a string, or an
    /// object's member count, can never be larger than the text that holds it).
    static func reader(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> JSONReader {
        var offset = 0
        return JSONReader(
            bufferBytes: min(max(bytes.count, 16), 16 * 1024),
            maximumDepth: maximumDepth,
            maximumStringBytes: max(bytes.count, 1),
            maximumKeys: max(bytes.count / 4, 1)
        ) { (into: UnsafeMutableRawBufferPointer) throws(JSONError) -> Int in
            let count = min(into.count, bytes.count - offset)
            if count > 0 { into.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])) }
            offset += count
            return count
        }
    }
}
