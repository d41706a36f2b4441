/// How the package writes a figure for people: the one definition behind every command's
/// output, the Notification Service's alerts and the publication page.
package enum Figures {
    /// 98552781 → "98,552,781".
    package static func grouped<Value: BinaryInteger>(_ value: Value) -> String {
        let digits = String(value.magnitude)
        var result = ""
        result.reserveCapacity(digits.utf8.count + digits.utf8.count / 3 + 1)
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return value < 0 ? "-" + result : result
    }

    /// "1 shard", "2 shards", "1,002 entries": `count`, grouped, and the noun in the singular or
    /// the plural (`plural` when adding an s is wrong).
    package static func counted<Value: BinaryInteger>(_ count: Value, _ singular: String, plural: String? = nil)
        -> String
    {
        grouped(count) + " " + (count == 1 ? singular : plural ?? singular + "s")
    }
}
