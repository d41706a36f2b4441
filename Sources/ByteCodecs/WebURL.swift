/// An absolute `http://` or `https://` URL read by RFC 3986's syntax, strictly: the one URL parser
/// of the package. Each caller adds its own policy on top (HTTPFetch's `HTTPURL` fetches plain
/// `http://` only; a push's URL carries no query or fragment).
///
/// Refused, each with a reason that names the fault: white space, control characters and bytes
/// outside ASCII anywhere; a scheme the caller does not take; userinfo (`user@`); an empty host; a
/// host name with a character outside RFC 3986's unreserved set (letters, digits, `-._~`); brackets
/// that hold no IPv6 address (RFC 4291's text forms, an IPv4 tail included); a port outside
/// 1…65535; a `%` that does not begin two hex digits; and a character a path, query or fragment
/// cannot hold.
package struct WebURL: Sendable, Equatable {
    /// The scheme, lowercased: one of those the caller gave.
    package let scheme: String
    /// The host name or address literal, lowercased, without an IPv6 literal's brackets.
    package let host: String
    /// The port as written, or `nil`.
    package let port: UInt16?
    /// The path (possibly empty) and the query with its `?`, as written.
    package let pathAndQuery: String
    /// Whether the URL has a query (`?…`).
    package let hasQuery: Bool
    /// The fragment after `#`, or `nil`.
    package let fragment: String?

    /// Parses `text` as an absolute URL whose scheme is one of `schemes` (lowercase names).
    ///
    /// - Throws: `URLSyntaxError`, whose reason completes a sentence that names the URL.
    package init(parsing text: String, schemes: [String]) throws(URLSyntaxError) {
        let bytes = Array(text.utf8)
        func refuse(_ why: String) -> URLSyntaxError { URLSyntaxError(reason: why) }
        if let bad = bytes.firstIndex(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            let byte = bytes[bad]
            throw refuse(
                byte == 0x20
                    ? "contains a space; percent-encode it as %20"
                    : byte >= 0x80
                        ? "contains a character outside ASCII; percent-encode its UTF-8 bytes"
                        : "contains a control character (0x\(Hex.padded(UInt64(byte), width: 2, uppercase: true)))"
            )
        }
        let wanted = schemes.map { "\($0)://" }.joined(separator: " or ")
        guard let separator = Self.find(Array("://".utf8), in: bytes), separator > 0,
            Self.isSchemeStart(bytes[0]), bytes[1..<separator].allSatisfy(Self.isSchemeByte)
        else {
            throw refuse("is not an \(wanted) URL")
        }
        let scheme = String(decoding: bytes[..<separator], as: UTF8.self).lowercased()
        guard schemes.contains(scheme) else { throw refuse("is not an \(wanted) URL (its scheme is \(scheme))") }

        let rest = bytes[(separator + 3)...]
        let authorityEnd =
            rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if authority.contains(UInt8(ascii: "@")) {
            throw refuse("has userinfo (a name before @); a URL here carries no credentials")
        }

        // The host: an IPv6 literal in brackets, or a name or IPv4 address.
        let hostBytes: ArraySlice<UInt8>
        let afterHost: ArraySlice<UInt8>
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw refuse("opens an IPv6 address with [ and does not close it")
            }
            hostBytes = authority[(authority.startIndex + 1)..<close]
            afterHost = authority[(close + 1)...]
            guard Self.isIPv6(hostBytes) else { throw refuse("has a bracketed host that is not an IPv6 address") }
            guard afterHost.isEmpty || afterHost.first == UInt8(ascii: ":") else {
                throw refuse("has characters after its IPv6 address's closing bracket")
            }
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
            hostBytes = authority[..<colon]
            afterHost = authority[colon...]
            if let bad = hostBytes.first(where: { !Self.isUnreserved($0) }) {
                throw refuse("has a host with the character \(Self.describe(bad)), which a host name cannot hold")
            }
        }
        guard !hostBytes.isEmpty else { throw refuse("has no host") }

        var port: UInt16?
        if !afterHost.isEmpty {
            let digits = afterHost.dropFirst()
            guard !digits.isEmpty else { throw refuse("has a colon after its host but no port") }
            guard digits.count <= 5, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let value = Int(String(decoding: digits, as: UTF8.self)), value >= 1, value <= 65535
            else {
                throw refuse(
                    "has the port \(String(decoding: digits, as: UTF8.self).debugDescription); a port is a number from 1 to 65535"
                )
            }
            port = UInt16(value)
        }

        // The path, query and fragment: RFC 3986's characters, or % and two hex digits.
        let tail = rest[authorityEnd...]
        var index = tail.startIndex
        while index < tail.endIndex {
            let byte = tail[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < tail.endIndex, Hex.isDigit(tail[index + 1]), Hex.isDigit(tail[index + 2]) else {
                    throw refuse("has a % that does not begin an escape of two hexadecimal digits")
                }
                index += 3
                continue
            }
            guard Self.isPathOrQuery(byte) || byte == UInt8(ascii: "#") else {
                throw refuse("has the character \(Self.describe(byte)) in its path or query; percent-encode it")
            }
            index += 1
        }
        let hash = tail.firstIndex(of: UInt8(ascii: "#"))
        if let hash, tail[(hash + 1)...].contains(UInt8(ascii: "#")) {
            throw refuse("has the character '#' in its fragment; percent-encode it")
        }
        let pathAndQuery = tail[..<(hash ?? tail.endIndex)]

        self.scheme = scheme
        self.host = String(decoding: hostBytes, as: UTF8.self).lowercased()
        self.port = port
        self.pathAndQuery = String(decoding: pathAndQuery, as: UTF8.self)
        self.hasQuery = pathAndQuery.contains(UInt8(ascii: "?"))
        self.fragment = hash.map { String(decoding: tail[($0 + 1)...], as: UTF8.self) }
    }

    // MARK: - Character classes (RFC 3986)

    package static func isSchemeStart(_ byte: UInt8) -> Bool {
        byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")
    }

    package static func isSchemeByte(_ byte: UInt8) -> Bool {
        isSchemeStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// ALPHA, DIGIT, `-`, `.`, `_`, `~`.
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    /// What a path or query may hold besides `%` escapes: unreserved, sub-delims, `:`, `@`, `/`, `?`.
    package static func isPathOrQuery(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }

    /// Whether `text` is an IPv6 address in RFC 4291's text form: eight groups of one to four hex
    /// digits, or fewer with one `::` standing for at least one zero group, the last two groups
    /// possibly written as an IPv4 address (four decimal octets without leading zeros).
    static func isIPv6(_ text: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(text)
        var halves: [[UInt8]] = []
        var start = 0
        var index = 0
        var compressed = false
        // Split at the one "::".
        while index < bytes.count {
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: ":") {
                guard !compressed else { return false }
                compressed = true
                halves.append(Array(bytes[start..<index]))
                index += 2
                start = index
                continue
            }
            index += 1
        }
        halves.append(Array(bytes[start...]))
        var groups = 0
        for (number, half) in halves.enumerated() where !half.isEmpty {
            let parts = half.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            for (position, part) in parts.enumerated() {
                let last = number == halves.count - 1 && position == parts.count - 1
                if last, part.contains(UInt8(ascii: ".")) {
                    guard isIPv4(part) else { return false }
                    groups += 2
                } else {
                    guard (1...4).contains(part.count), part.allSatisfy(Hex.isDigit) else { return false }
                    groups += 1
                }
            }
        }
        return compressed ? groups <= 7 : groups == 8
    }

    /// Four decimal octets, 0…255 each, no leading zeros.
    static func isIPv4(_ text: ArraySlice<UInt8>) -> Bool {
        let octets = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return octets.count == 4
            && octets.allSatisfy { octet in
                (1...3).contains(octet.count) && octet.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                    && (octet.count == 1 || octet.first != UInt8(ascii: "0"))
                    && Int(String(decoding: octet, as: UTF8.self))! <= 255
            }
    }

    /// `byte` for a sentence: `'x'` if printable ASCII, else `0x0D`.
    package static func describe(_ byte: UInt8) -> String {
        byte > 0x20 && byte < 0x7F
            ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + Hex.padded(UInt64(byte), width: 2, uppercase: true)
    }

    /// Where `needle` first occurs in `bytes`.
    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// Why `WebURL` refused a text: a reason that completes "The URL "…" ", such as "has no host".
package struct URLSyntaxError: Error, Sendable, Equatable {
    package let reason: String
}
