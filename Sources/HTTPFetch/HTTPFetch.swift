/// A small, strict HTTP/1.1 GET client on the C library's sockets, for the notification
/// service's host and `blocklist update --from http://…`.
///
/// Plain `http://` only: an app fetches over TLS with URLSession, and `HTTPURL` refuses
/// `https://` rather than fetch it in the clear. No Foundation and no SwiftNIO, so that a small
/// static executable can link it: a fetch costs one 16 KiB read buffer, the request's bytes and
/// the head, whatever the size of the body.
///
/// ```swift
/// let url = try HTTPURL("http://127.0.0.1:8080/pub/timestamp.json")
/// let head = try HTTPFetch.get(url, deadline: HTTPFetch.now() + 5_000_000_000, maximumBodyBytes: 1 << 20) { chunk in
///     file.write(chunk)
/// }
/// guard head.status == 200 else { … }
/// ```
internal import LibC

package enum HTTPFetch {
    /// The read buffer's size.
    static let bufferBytes = 16 * 1024
    /// The longest wait between two looks at the deadline and `isCancelled`, in milliseconds.
    static let sliceMilliseconds: UInt64 = 50
    /// Header fields this client writes itself, which a caller may not give.
    static let reservedHeaders = ["host", "connection", "user-agent", "content-length", "transfer-encoding"]

    /// The time on CLOCK_MONOTONIC, in nanoseconds: what `deadline` is measured against.
    package static func now() -> UInt64 {
        var time = timespec()
        let status = clock_gettime(CLOCK_MONOTONIC, &time)
        precondition(status == 0, "clock_gettime(CLOCK_MONOTONIC) failed")  // only for a clock that does not exist
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// GETs `url` and hands the decoded body to `body`, one chunk at a time (slices of one read
    /// buffer, reused: no allocation per chunk; the slice is valid during the call only).
    ///
    /// The request is `GET <target> HTTP/1.1` with `Host`, `Connection: close`,
    /// `User-Agent: blocklist` and `headers` (such as `If-None-Match`). The host is resolved
    /// with getaddrinfo (names like `localhost` and numeric addresses, IPv4 and IPv6; each
    /// address is tried in turn) and connected to without blocking.
    ///
    /// - Parameters:
    ///   - deadline: a CLOCK_MONOTONIC instant in nanoseconds (`now()` plus a timeout); once it
    ///     passes, connecting, sending and reading stop with `.timeout`. Name resolution is not
    ///     bound by it: getaddrinfo blocks (numeric addresses and /etc/hosts answer at once). In a
    ///     `-static-executable` build, glibc resolves names through NSS modules it loads at run
    ///     time (the linker warns); numeric addresses need none.
    ///   - maximumBodyBytes: the largest body accepted; a longer one is refused with `.tooLarge`
    ///     before any byte past the limit is handed over (a Content-Length or chunk size above it
    ///     before any of that body is).
    ///   - stallTimeout: nanoseconds without progress (connecting, sending, or a byte arriving)
    ///     after which the fetch stops with `.timeout`, whatever `deadline` allows: a slow but
    ///     moving download goes on, a silent one stops. Default: none.
    ///   - isCancelled: asked between reads and at least every 50 ms while waiting; true stops the
    ///     fetch with `.cancelled`.
    ///   - onHead: called with the final response's head before any of its body reaches `body`
    ///     (a resumed download learns there whether the server honoured its Range).
    /// - Returns: the final response's head (interim 1xx responses are skipped). Any status is
    ///   returned: what a 404 or a 304 (which has no body) means is the caller's to say.
    /// - Throws: `HTTPFetchError` (its sentence names the URL), or what `body` throws; the
    ///   socket is closed on every path.
    package static func get(
        _ url: HTTPURL,
        headers: [(String, String)] = [],
        deadline: UInt64,
        stallTimeout: UInt64 = .max,
        maximumBodyBytes: Int64,
        isCancelled: () -> Bool = { false },
        head onHead: (HTTPResponseHead) throws -> Void = { _ in },
        body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> HTTPResponseHead {
        let request = try requestBytes(url, headers)
        try checkTime(url, deadline, isCancelled, "before connecting")
        // The deadline in force: the whole fetch's, or sooner if nothing moves for stallTimeout.
        var stallDeadline = now().addingReportingOverflow(stallTimeout)
        func limit() -> UInt64 { stallDeadline.overflow ? deadline : min(deadline, stallDeadline.partialValue) }
        func stalled<T>(_ step: () throws(HTTPFetchError) -> T) throws(HTTPFetchError) -> T {
            do {
                return try step()
            } catch let error where error.code == .timeout && limit() < deadline {
                throw HTTPFetchError(
                    .timeout,
                    "Fetching \(url) stalled: no byte moved for \(stallTimeout / 1_000_000_000) s (the stall timeout)."
                )
            }
        }
        let socket = try stalled { () throws(HTTPFetchError) in try connect(url, limit(), isCancelled) }
        defer { _ = close(socket) }  // a socket only read from loses nothing if close fails
        stallDeadline = now().addingReportingOverflow(stallTimeout)
        try stalled { () throws(HTTPFetchError) in try send(request, on: socket, url, limit(), isCancelled) }
        stallDeadline = now().addingReportingOverflow(stallTimeout)

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 16)
        defer { buffer.deallocate() }
        var parser = HTTPResponseParser(maximumBodyBytes: maximumBodyBytes, subject: "The response from \(url)")
        var callerError: (any Error)?
        var headDelivered = false
        var early: [UInt8] = []
        while true {
            try stalled { () throws(HTTPFetchError) in
                try wait(for: Int16(POLLIN), on: socket, url, limit(), isCancelled, "for the response")
            }
            let count = recv(socket, buffer.baseAddress, buffer.count, 0)
            if count > 0 { stallDeadline = now().addingReportingOverflow(stallTimeout) }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                throw HTTPFetchError(.io, "Reading the response from \(url) failed: \(message(code)).")
            }
            if count == 0 {
                try parser.finish()
                break
            }
            let complete = try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { chunk in
                guard callerError == nil else { return }
                // Until `onHead` has seen the head, the body waits (at most one read's worth).
                if !headDelivered {
                    early.append(contentsOf: chunk)
                    return
                }
                do { try body(chunk) } catch { callerError = error }
            }
            if let callerError { throw callerError }
            if !headDelivered, let head = parser.head {
                headDelivered = true
                try onHead(head)
                if !early.isEmpty { try early.withUnsafeBytes { try body($0) } }
                early = []
            }
            if complete { break }
        }
        guard let head = parser.head else {
            preconditionFailure("a complete response has a head")
        }
        return head
    }

    // MARK: - The request

    /// The request's bytes, after checking the caller's header fields.
    static func requestBytes(_ url: HTTPURL, _ headers: [(String, String)]) throws(HTTPFetchError) -> [UInt8] {
        var request: [UInt8] = []
        request.reserveCapacity(
            128 + url.target.utf8.count + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        )
        func line(_ name: String, _ value: String) {
            request += name.utf8
            request += ": ".utf8
            request += value.utf8
            request += "\r\n".utf8
        }
        request += "GET \(url.target) HTTP/1.1\r\n".utf8
        line("Host", url.hostHeader)
        line("Connection", "close")
        line("User-Agent", "blocklist")
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                throw HTTPFetchError(
                    .badRequest,
                    "The header name \(name.debugDescription) for \(url) is not a token (RFC 9110 §5.1)."
                )
            }
            guard !reservedHeaders.contains(where: { asciiCaseInsensitiveEqual($0, name) }) else {
                throw HTTPFetchError(.badRequest, "The header \(name) for \(url) is one this client writes itself.")
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw HTTPFetchError(
                    .badRequest,
                    "The value of the header \(name) for \(url) holds a control character (CR, LF or another)."
                )
            }
            line(name, value)
        }
        request += "\r\n".utf8
        return request
    }

    // MARK: - The socket

    /// A connected, non-blocking socket to one of `url`'s host's addresses.
    static func connect(_ url: HTTPURL, _ deadline: UInt64, _ isCancelled: () -> Bool) throws(HTTPFetchError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocket
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard resolved == 0 else {
            let reason = resolved == EAI_SYSTEM ? message(errno) : String(cString: gai_strerror(resolved))
            throw HTTPFetchError(.connect, "Cannot resolve the host of \(url): \(reason).")
        }
        defer { freeaddrinfo(list) }
        var failure = "getaddrinfo returned no address"
        var entry = list
        while let info = entry?.pointee {
            entry = info.ai_next
            let socket = openSocket(info.ai_family, info.ai_protocol)
            guard socket >= 0 else {
                failure = "socket() failed: \(message(errno))"
                continue
            }
            var status = connectSocket(socket, info.ai_addr, info.ai_addrlen)
            if status == 0 { return socket }
            var code = errno
            if code == EINPROGRESS || code == EINTR {
                // The connection goes on in the background: wait for the socket to be writable.
                do {
                    try wait(for: Int16(POLLOUT), on: socket, url, deadline, isCancelled, "to connect")
                } catch {
                    _ = close(socket)
                    throw error
                }
                var length = socklen_t(MemoryLayout<Int32>.size)
                status = getsockopt(socket, SOL_SOCKET, SO_ERROR, &code, &length)
                if status != 0 { code = errno }
                if status == 0 && code == 0 { return socket }
            }
            failure = message(code)
            _ = close(socket)
        }
        throw HTTPFetchError(.connect, "Cannot connect to \(url): \(failure).")
    }

    /// Sends all of `request`, through short writes and interruptions.
    static func send(
        _ request: [UInt8],
        on socket: Int32,
        _ url: HTTPURL,
        _ deadline: UInt64,
        _ isCancelled: () -> Bool
    ) throws(HTTPFetchError) {
        var sent = 0
        while sent < request.count {
            let count = request.withUnsafeBytes {
                sendBytes(socket, $0.baseAddress! + sent, $0.count - sent)
            }
            if count > 0 {
                sent += count
                continue
            }
            let code = errno
            if count < 0 && code == EINTR { continue }
            if count == 0 || code == EAGAIN || code == EWOULDBLOCK {
                try wait(for: Int16(POLLOUT), on: socket, url, deadline, isCancelled, "to send the request")
                continue
            }
            throw HTTPFetchError(.io, "Sending the request to \(url) failed: \(message(code)).")
        }
    }

    /// Waits until `socket` is ready for `events` (or has an error or hang-up, which the next call
    /// reports), looking at the deadline and `isCancelled` at least every 50 ms.
    static func wait(
        for events: Int16,
        on socket: Int32,
        _ url: HTTPURL,
        _ deadline: UInt64,
        _ isCancelled: () -> Bool,
        _ what: String
    ) throws(HTTPFetchError) {
        while true {
            try checkTime(url, deadline, isCancelled, "while waiting \(what)")
            let current = now()
            let left = deadline > current ? deadline - current : 0
            let milliseconds = min((left + 999_999) / 1_000_000, sliceMilliseconds)
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(milliseconds))
            if ready > 0 { return }
            if ready < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                throw HTTPFetchError(.io, "Waiting \(what) from \(url) failed: poll: \(message(code)).")
            }
        }
    }

    /// Throws `.cancelled` or `.timeout` if it is time to stop.
    static func checkTime(
        _ url: HTTPURL,
        _ deadline: UInt64,
        _ isCancelled: () -> Bool,
        _ when: String
    ) throws(HTTPFetchError) {
        if isCancelled() { throw HTTPFetchError(.cancelled, "Fetching \(url) was cancelled \(when).") }
        if now() >= deadline { throw HTTPFetchError(.timeout, "Fetching \(url) timed out \(when).") }
    }

    // MARK: - The C library, each platform's spelling

    #if canImport(Glibc)
        static let streamSocket = Int32(SOCK_STREAM.rawValue)

        /// A socket that is non-blocking and closed on exec from the start.
        static func openSocket(_ family: Int32, _ proto: Int32) -> Int32 {
            socket(family, streamSocket | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), proto)
        }

        /// send(2) without SIGPIPE when the peer has gone.
        static func sendBytes(_ socket: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
            Glibc.send(socket, bytes, count, Int32(MSG_NOSIGNAL))
        }
    #else
        static let streamSocket = SOCK_STREAM

        /// A socket that is non-blocking, closed on exec and raises no SIGPIPE.
        static func openSocket(_ family: Int32, _ proto: Int32) -> Int32 {
            let socket = Darwin.socket(family, streamSocket, proto)
            guard socket >= 0 else { return socket }
            var on: Int32 = 1
            let flags = fcntl(socket, F_GETFL)
            guard flags >= 0, fcntl(socket, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(socket, F_SETFD, FD_CLOEXEC) == 0,
                setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
            else {
                let code = errno
                _ = close(socket)
                errno = code
                return -1
            }
            return socket
        }

        /// send(2); SO_NOSIGPIPE keeps SIGPIPE away.
        static func sendBytes(_ socket: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
            Darwin.send(socket, bytes, count, 0)
        }
    #endif

    /// strerror's sentence for `code`, with its number.
    static func message(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}

/// connect(2), named apart from `HTTPFetch.connect`.
@inline(__always) private func connectSocket(
    _ socket: Int32,
    _ address: UnsafePointer<sockaddr>?,
    _ length: socklen_t
) -> Int32 {
    connect(socket, address, length)
}
