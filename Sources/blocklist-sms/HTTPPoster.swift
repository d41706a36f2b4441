import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Posts one JSON body to the deferral server over HTTP/1.1 with SwiftNIO, as the system does for
/// a deferred query, and gives back the status and body, or why there is none.
struct HTTPPoster: Sendable {
    let host: String
    let port: Int
    let path: String
    let timeoutMilliseconds: Int64

    /// Reads `http://HOST:PORT/PATH`.
    init?(url: String, timeoutMilliseconds: Int64) {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
        host = String(parts[0])
        self.port = port
        self.path = path.isEmpty ? "/" : String(path)
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    enum Outcome: Sendable {
        case response(status: Int, body: [UInt8])
        case failed(reason: String)
    }

    func post(_ body: [UInt8]) async -> Outcome {
        let timeout = TimeAmount.milliseconds(timeoutMilliseconds)
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(timeout)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            return .failed(reason: "the server at \(host):\(port) is down or unreachable (\(error))")
        }
        // Closing the channel ends the read below; the flag tells a timeout from a server's close.
        let timedOut = TimeoutFlag()
        let timer = channel.channel.eventLoop.scheduleTask(in: timeout) {
            timedOut.set()
            channel.channel.close(promise: nil)
        }
        defer { timer.cancel() }
        var status = 0
        var received: [UInt8] = []
        var complete = false
        do {
            try await channel.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
                head.headers.add(name: "Host", value: "\(host):\(port)")
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Content-Length", value: "\(body.count)")
                head.headers.add(name: "Connection", value: "close")
                try await outbound.write(.head(head))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
                try await outbound.write(.end(nil))
                for try await part in inbound {
                    switch part {
                    case .head(let response): status = Int(response.status.code)
                    case .body(var buffer):
                        if received.count + buffer.readableBytes > 1 << 20 { return }
                        received += buffer.readBytes(length: buffer.readableBytes) ?? []
                    case .end:
                        complete = true
                        return
                    }
                }
            }
        } catch {
            if timedOut.isSet { return .failed(reason: "no answer from the server within \(timeoutMilliseconds) ms") }
            return .failed(reason: "the exchange with the server failed (\(error))")
        }
        if timedOut.isSet { return .failed(reason: "no answer from the server within \(timeoutMilliseconds) ms") }
        guard complete else { return .failed(reason: "the server closed the connection before a whole response") }
        return .response(status: status, body: received)
    }
}

/// A flag one thread sets and another reads.
final class TimeoutFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
