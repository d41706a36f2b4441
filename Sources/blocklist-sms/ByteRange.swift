/// What a GET's `Range` and `If-Range` ask of a file (RFC 9110 §14): the whole file, one part,
/// or nothing (416). `updates serve` answers one range; several are answered with the whole file,
/// as RFC 9110 §14.2 allows a server to, and so are a syntax it does not know and an empty file.
enum ByteRange: Equatable {
    case whole
    /// The bytes `lowerBound...upperBound` of the file, both inside it.
    case part(ClosedRange<Int64>)
    case unsatisfiable

    /// The answer to `range` and `ifRange` for a file of `length` bytes whose entity tag is `etag`.
    ///
    /// - Parameters:
    ///   - range: the `Range` header, if any: `bytes=a-b`, `bytes=a-` or `bytes=-n`.
    ///   - ifRange: the `If-Range` header, if any: the range is served only when it is `etag`
    ///     (strong comparison); a date never matches, as no `Last-Modified` is sent.
    init(range: String?, ifRange: String?, etag: String, length: Int64) {
        guard let range, length > 0 else {
            self = .whole
            return
        }
        if let ifRange, Self.trimmed(Substring(ifRange)) != etag[...] {
            self = .whole
            return
        }
        let equals = range.firstIndex(of: "=") ?? range.endIndex
        guard range[..<equals].lowercased() == "bytes", equals < range.endIndex else {
            self = .whole
            return
        }
        // Empty list elements are allowed (RFC 9110 §5.6.1).
        let specs = range[range.index(after: equals)...].split(separator: ",").map(Self.trimmed).filter { !$0.isEmpty }
        guard specs.count == 1, let dash = specs[0].firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = specs[0][..<dash]
        let last = specs[0][specs[0].index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Self.number(last) else {
                self = .whole
                return
            }
            self = suffix == 0 ? .unsatisfiable : .part(max(0, length - suffix)...(length - 1))
            return
        }
        guard let start = Self.number(first) else {
            self = .whole
            return
        }
        let end: Int64
        if last.isEmpty {
            end = length - 1
        } else {
            guard let given = Self.number(last), given >= start else {
                self = .whole
                return
            }
            end = min(given, length - 1)
        }
        self = start < length ? .part(start...end) : .unsatisfiable
    }

    /// Digits as a number, saturating at `Int64.max`; nil for anything else.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        var value: Int64 = 0
        for digit in text.utf8 {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            if overflow || overflow2 { return .max }
            value = sum
        }
        return value
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        let end = text.lastIndex(where: { !isSpace($0) })!
        return text[start...end]
    }
}
