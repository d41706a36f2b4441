import NIOCore
import NIOHTTP1
import NIOPosix

/// Posts JSON bodies to the deferral server over HTTP/1.1 with SwiftNIO, as the system does for
/// deferred queries, and gives back each status and body, or why there is none. Connections are
/// kept alive and reused, one request at a time each.
struct HTTPPoster: Sendable {
    let host: String
    let port: Int
    let path: String
    let timeoutMilliseconds: Int64
    private let pool = ConnectionPool()

    /// Reads `http://HOST:PORT/PATH`, an IPv6 host in brackets (`http://[::1]:8080/`, RFC 3986).
    init?(url: String, timeoutMilliseconds: Int64) {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        let hostPart: Substring
        let portPart: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]"), authority[authority.index(after: close)...].hasPrefix(":")
            else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            portPart = authority[authority.index(close, offsetBy: 2)...]
            guard hostPart.contains(":") else { return nil }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            hostPart = parts[0]
            portPart = parts[1]
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (1...65535).contains(port) else { return nil }
        host = String(hostPart)
        self.port = port
        self.path = path.isEmpty ? "/" : String(path)
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    enum Outcome: Sendable {
        case response(status: Int, body: [UInt8])
        case failed(reason: String)
    }

    struct TimedOut: Error {}

    func post(_ body: [UInt8]) async -> Outcome {
        let timeout = TimeAmount.milliseconds(timeoutMilliseconds)
        let channel: any Channel
        do {
            channel = try await pool.acquire { try await connect(timeout: timeout) }
        } catch {
            return .failed(reason: "the server at \(host):\(port) is down or unreachable (\(error))")
        }
        let promise = channel.eventLoop.makePromise(of: ResponseCollector.Response.self)
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(TimedOut())
            channel.close(promise: nil)
        }
        let head = HTTPRequestHead(
            version: .http1_1,
            method: .POST,
            uri: path,
            headers: [
                "Host": host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)",
                "Content-Type": "application/json", "Content-Length": "\(body.count)",
            ]
        )
        channel.eventLoop.execute {
            do {
                try channel.pipeline.syncOperations.handler(type: ResponseCollector.self).expect(promise)
            } catch {
                promise.fail(error)
                return
            }
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
        do {
            let response = try await promise.futureResult.get()
            timer.cancel()
            if response.keepAlive { await pool.release(channel) } else { channel.close(promise: nil) }
            return .response(status: response.status, body: response.body)
        } catch is TimedOut {
            return .failed(reason: "no answer from the server within \(timeoutMilliseconds) ms")
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            return .failed(reason: "the server closed the connection before a whole response (\(error))")
        }
    }

    private func connect(timeout: TimeAmount) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseCollector())
                }
            }
            .connect(host: host, port: port)
            .get()
    }
}

/// Idle keep-alive connections.
actor ConnectionPool {
    private var idle: [any Channel] = []

    func acquire(connect: @Sendable () async throws -> any Channel) async throws -> any Channel {
        while let channel = idle.popLast() {
            if channel.isActive { return channel }
        }
        return try await connect()
    }

    func release(_ channel: any Channel) {
        if channel.isActive { idle.append(channel) }
    }
}

/// Collects one response at a time into the promise the poster hands it.
final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
        var keepAlive: Bool
    }

    private var waiting: EventLoopPromise<Response>?
    private var response = Response(status: 0, body: [], keepAlive: true)

    func expect(_ promise: EventLoopPromise<Response>) {
        waiting = promise
        response = Response(status: 0, body: [], keepAlive: true)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            response.status = Int(head.status.code)
            response.keepAlive = head.isKeepAlive
        case .body(var buffer):
            // A deferral answer is small; more than 1 MiB is not one.
            if response.body.count + buffer.readableBytes <= 1 << 20 {
                response.body += buffer.readBytes(length: buffer.readableBytes) ?? []
            }
        case .end:
            let promise = waiting
            waiting = nil
            promise?.succeed(response)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiting?.fail(ChannelError.eof)
        waiting = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        waiting?.fail(error)
        waiting = nil
        context.close(promise: nil)
    }
}
