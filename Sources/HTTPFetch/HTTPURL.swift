internal import ByteCodecs

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

package struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address literal, lowercased, without an IPv6 literal's brackets.
    package let host: String
    /// The TCP port: the URL's, or 80.
    package let port: UInt16
    /// The request target: the path and the query, `/` when the URL has neither.
    package let target: String

    /// Parses `text`, an `http://host[:port][/path][?query][#fragment]` URL, by ByteCodecs'
    /// `WebURL` (the package's one URL parser) and this client's policy: plain `http://` only.
    ///
    /// - Throws: `HTTPFetchError` with code `.badURL` and a sentence naming `text` and its fault.
    package init(_ text: String) throws(HTTPFetchError) {
        func refuse(_ why: String) -> HTTPFetchError {
            HTTPFetchError(.badURL, "The URL \(text.debugDescription) \(why).")
        }
        if text.utf8.count >= 8, text.utf8.prefix(8).map({ $0 | 0x20 }).elementsEqual("https://".utf8) {
            throw refuse("is https, and this client speaks plain HTTP only; TLS is the job of the app's URLSession")
        }
        let url: WebURL
        do {
            url = try WebURL(parsing: text, schemes: ["http"])
        } catch {
            throw refuse(error.reason)
        }
        var target = url.pathAndQuery
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        self.host = url.host
        self.port = url.port ?? 80
        self.target = target
    }

    /// A URL whose fields are already valid; for `appending(path:)`.
    private init(host: String, port: UInt16, target: String) {
        self.host = host
        self.port = port
        self.target = target
    }

    /// The URL as text: `http://host[:port]target`, the port written only when it is not 80.
    package var description: String { "http://" + hostHeader + target }

    /// The `Host` header's value: the host (IPv6 in brackets) and the port unless it is 80.
    package var hostHeader: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return port == 80 ? host : "\(host):\(port)"
    }

    /// This URL with `path` resolved against its target's directory, as a relative reference is:
    /// `http://h/pub/index.json` appending `timestamp.json` is `http://h/pub/timestamp.json`; a
    /// `path` that starts with `/` replaces the whole path. The query is dropped unless `path`
    /// has one. Bytes a target cannot hold (spaces, control characters, non-ASCII, `#`, a `%`
    /// that begins no escape) are percent-encoded; `.` and `..` segments are kept as written.
    package func appending(path: String) -> HTTPURL {
        var encoded: [UInt8] = []
        let bytes = Array(path.utf8)
        for (index, byte) in bytes.enumerated() {
            let escape =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count && Hex.isDigit(bytes[index + 1])
                && Hex.isDigit(bytes[index + 2])
            if escape || (byte != UInt8(ascii: "%") && WebURL.isPathOrQuery(byte)) {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), Hex.digit(byte >> 4, uppercase: true), Hex.digit(byte, uppercase: true)]
            }
        }
        let relative = String(decoding: encoded, as: UTF8.self)
        if relative.hasPrefix("/") { return HTTPURL(host: host, port: port, target: relative) }
        let pathPart = target.utf8.prefix { $0 != UInt8(ascii: "?") }
        let slash = pathPart.lastIndex(of: UInt8(ascii: "/")).map { pathPart.index(after: $0) } ?? pathPart.startIndex
        let directory = String(target[target.startIndex..<slash])
        return HTTPURL(host: host, port: port, target: (directory.isEmpty ? "/" : directory) + relative)
    }

    /// The URL a `Location` header's `reference` names, resolved against this one as RFC 3986
    /// (section 5.2) resolves a reference: absolute (`http://…`), scheme-relative (`//host/…`),
    /// an absolute path (`/…`), a query (`?…`) or a relative path (`x.blk`, `../pub/`), with its
    /// `.` and `..` segments removed; a fragment is dropped. RFC 9110 allows each in `Location`.
    ///
    /// - Throws: `HTTPFetchError` `.badURL` when the result is not a URL this client fetches.
    package func resolving(_ reference: String) throws(HTTPFetchError) -> HTTPURL {
        let text = String(reference.prefix { $0 != "#" })
        let bytes = Array(text.utf8)
        let colon = bytes.firstIndex(of: UInt8(ascii: ":"))
        let beforeSlash = bytes.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        if let colon, colon < beforeSlash, colon > 0,
            bytes[..<colon].allSatisfy({ WebURL.isSchemeByte($0) }), WebURL.isSchemeStart(bytes[0])
        {
            return try HTTPURL(text)
        }
        if text.hasPrefix("//") { return try HTTPURL("http:" + text) }
        let path = String(target.prefix { $0 != "?" })
        let merged: String
        if text.isEmpty {
            merged = target
        } else if text.hasPrefix("/") {
            merged = Self.removingDotSegments(text)
        } else if text.hasPrefix("?") {
            merged = path + text
        } else {
            let directory = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[...$0]) } ?? "/"
            merged = Self.removingDotSegments(directory + text)
        }
        return try HTTPURL("http://" + hostHeader + merged)
    }

    /// `target` (a path, and a query kept as it is) without its `.` and `..` segments (RFC 3986,
    /// section 5.2.4).
    static func removingDotSegments(_ target: String) -> String {
        let query = target.firstIndex(of: "?").map { String(target[$0...]) } ?? ""
        let path = String(target.prefix { $0 != "?" })
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (offset, segment) in segments.enumerated() {
            let last = offset == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/") + query
    }
}
