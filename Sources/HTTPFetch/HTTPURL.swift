/// An `http://` URL as this client fetches it: a host, a port and a request target.
///
/// Plain HTTP only. An app fetches over TLS with URLSession; this client serves the simulators'
/// hosts and `blocklist update --from http://…` on a machine's loopback or local network, so
/// `https://` is refused rather than silently fetched in the clear.
///
/// Strict on purpose: a URL with userinfo (`user@`), an empty host, a port outside 1…65535, white
/// space, control characters, bytes outside ASCII, a malformed `%` escape or a character RFC 3986
/// does not allow in a path or query is refused with a sentence naming it. A fragment (`#…`) is
/// dropped, as a browser never sends it. The host is lowercased; an IPv6 literal is written in
/// brackets (`http://[::1]:8080/`) and kept without them in `host`.

public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address literal, lowercased, without an IPv6 literal's brackets.
    public let host: String
    /// The TCP port: the URL's, or 80.
    public let port: UInt16
    /// The request target: the path and the query, `/` when the URL has neither.
    public let target: String

    /// Parses `text`, an `http://host[:port][/path][?query][#fragment]` URL.
    ///
    /// - Throws: `HTTPFetchError` with code `.badURL` and a sentence naming `text` and its fault.
    public init(_ text: String) throws(HTTPFetchError) {
        let bytes = Array(text.utf8)
        func refuse(_ why: String) -> HTTPFetchError {
            HTTPFetchError(.badURL, "The URL \(text.debugDescription) \(why).")
        }
        if let bad = bytes.firstIndex(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            let byte = bytes[bad]
            throw refuse(
                byte == 0x20
                    ? "contains a space; percent-encode it as %20"
                    : byte >= 0x80
                        ? "contains a character outside ASCII; percent-encode its UTF-8 bytes"
                        : "contains a control character (\(Self.hex(byte)))"
            )
        }
        guard let separator = Self.find(Array("://".utf8), in: bytes) else {
            throw refuse("is not an http:// URL")
        }
        let scheme = String(decoding: bytes[..<separator], as: UTF8.self).lowercased()
        if scheme == "https" {
            throw refuse(
                "is https, and this client speaks plain HTTP only; TLS is the job of the app's URLSession"
            )
        }
        guard scheme == "http" else { throw refuse("is not an http:// URL (its scheme is \(scheme))") }

        let rest = bytes[(separator + 3)...]
        let authorityEnd =
            rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if authority.contains(UInt8(ascii: "@")) {
            throw refuse("has userinfo (a name before @); this client sends no credentials in URLs")
        }

        // The host: an IPv6 literal in brackets, or a name or IPv4 address.
        var hostBytes: ArraySlice<UInt8>
        var afterHost: ArraySlice<UInt8>
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw refuse("opens an IPv6 address with [ and does not close it")
            }
            hostBytes = authority[(authority.startIndex + 1)..<close]
            afterHost = authority[(close + 1)...]
            let valid = hostBytes.allSatisfy {
                Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
            }
            guard valid, hostBytes.contains(UInt8(ascii: ":")) else {
                throw refuse("has a bracketed host that is not an IPv6 address")
            }
            guard afterHost.isEmpty || afterHost.first == UInt8(ascii: ":") else {
                throw refuse("has characters after its IPv6 address's closing bracket")
            }
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
            hostBytes = authority[..<colon]
            afterHost = authority[colon...]
            if let bad = hostBytes.first(where: { !(Self.isUnreserved($0)) }) {
                throw refuse("has a host with the character \(Self.describe(bad)), which a host name cannot hold")
            }
        }
        guard !hostBytes.isEmpty else { throw refuse("has no host") }

        var port: UInt16 = 80
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

        // The target: the path and the query, without the fragment.
        var targetBytes = rest[authorityEnd...]
        if let hash = targetBytes.firstIndex(of: UInt8(ascii: "#")) { targetBytes = targetBytes[..<hash] }
        var index = targetBytes.startIndex
        while index < targetBytes.endIndex {
            let byte = targetBytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < targetBytes.endIndex, Self.isHexDigit(targetBytes[index + 1]),
                    Self.isHexDigit(targetBytes[index + 2])
                else {
                    throw refuse("has a % that does not begin an escape of two hexadecimal digits")
                }
                index += 3
                continue
            }
            guard Self.isPathOrQuery(byte) else {
                throw refuse("has the character \(Self.describe(byte)) in its path or query; percent-encode it")
            }
            index += 1
        }
        var target = String(decoding: targetBytes, as: UTF8.self)
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }

        self.host = String(decoding: hostBytes, as: UTF8.self).lowercased()
        self.port = port
        self.target = target
    }

    /// A URL whose fields are already valid; for `appending(path:)`.
    private init(host: String, port: UInt16, target: String) {
        self.host = host
        self.port = port
        self.target = target
    }

    /// The URL as text: `http://host[:port]target`, the port written only when it is not 80.
    public var description: String { "http://" + hostHeader + target }

    /// The `Host` header's value: the host (IPv6 in brackets) and the port unless it is 80.
    public var hostHeader: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return port == 80 ? host : "\(host):\(port)"
    }

    /// This URL with `path` resolved against its target's directory, as a relative reference is:
    /// `http://h/pub/index.json` appending `timestamp.json` is `http://h/pub/timestamp.json`; a
    /// `path` that starts with `/` replaces the whole path. The query is dropped unless `path`
    /// has one. Bytes a target cannot hold (spaces, control characters, non-ASCII, `#`, a `%`
    /// that begins no escape) are percent-encoded; `.` and `..` segments are kept as written.
    public func appending(path: String) -> HTTPURL {
        var encoded: [UInt8] = []
        let bytes = Array(path.utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        for (index, byte) in bytes.enumerated() {
            let escape =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count && Self.isHexDigit(bytes[index + 1])
                && Self.isHexDigit(bytes[index + 2])
            if escape || (byte != UInt8(ascii: "%") && Self.isPathOrQuery(byte)) {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        let relative = String(decoding: encoded, as: UTF8.self)
        if relative.hasPrefix("/") { return HTTPURL(host: host, port: port, target: relative) }
        let pathPart = target.utf8.prefix { $0 != UInt8(ascii: "?") }
        let slash = pathPart.lastIndex(of: UInt8(ascii: "/")).map { pathPart.index(after: $0) } ?? pathPart.startIndex
        let directory = String(target[target.startIndex..<slash])
        return HTTPURL(host: host, port: port, target: (directory.isEmpty ? "/" : directory) + relative)
    }

    // MARK: - Character classes (RFC 3986)

    /// HEXDIG, in either case.
    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// ALPHA, DIGIT, `-`, `.`, `_`, `~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    /// What a path or query may hold besides `%` escapes: unreserved, sub-delims, `:`, `@`, `/`, `?`.
    static func isPathOrQuery(_ byte: UInt8) -> Bool {
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

    /// `byte` as `0x0D`.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return "0x" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }

    /// `byte` for a sentence: `'x'` if printable ASCII, else `0x0D`.
    static func describe(_ byte: UInt8) -> String {
        byte > 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : hex(byte)
    }

    /// Where `needle` first occurs in `bytes`.
    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
