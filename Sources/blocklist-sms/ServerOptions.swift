import ArgumentParser
import ArgumentTypes
import Foundation
import Hummingbird
import HummingbirdCore
internal import LibC
import Logging
import MessageFilterCore
import NIOCore
import ServiceLifecycle

/// What every server of blocklist's takes, and how it runs: the address, the connection limits
/// and time limits (``GuardedHTTP1Channel``), and graceful shutdown on SIGINT or SIGTERM. One
/// definition for `sms serve` and `updates serve`.
struct ServerOptions: ParsableArguments {
    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(parsing: .unconditional, help: "The port to listen on; 0 picks a free one (the line printed says which).")
    var port: WholeNumber = 8080

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a request's head may take to arrive, from the connection's accept or the request's first byte, in milliseconds.",
            valueName: "ms"
        )
    )
    var headerTimeoutMs: WholeNumber = 10_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a request's body may take to arrive after its head, in milliseconds.",
            valueName: "ms"
        )
    )
    var bodyTimeoutMs: WholeNumber = 10_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a kept-alive connection may wait for its next request, in milliseconds.",
            valueName: "ms"
        )
    )
    var idleTimeoutMs: WholeNumber = 30_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How many connections are served at once. When all are taken, the oldest one still sending its request (or idle) is closed to make room, or failing one, the oldest whose answer waits on a peer that does not read; when none is, more wait in the kernel's queue.",
            valueName: "N"
        )
    )
    var maxConnections: WholeNumber = 1024

    func validate() throws {
        try port.check("--port", 0...65535)
        guard !host.isEmpty, host.utf8.allSatisfy({ (33...126).contains($0) }) else {
            throw ValidationError(
                "--host must be an address or a host name, as 127.0.0.1, ::1 or localhost; \(Serve.quoted(host)) is not."
            )
        }
        try headerTimeoutMs.check("--header-timeout-ms", 1...3_600_000)
        try bodyTimeoutMs.check("--body-timeout-ms", 1...3_600_000)
        try idleTimeoutMs.check("--idle-timeout-ms", 1...3_600_000)
        try maxConnections.check("--max-connections", 1...100_000)
    }

    /// Serves `router` until SIGINT or SIGTERM: prints "listening on http://HOST:PORT/PATH" once it
    /// accepts connections and "stopped" at the end.
    func run(router: Router<ConnectionRequestContext>, path: String, serverName: String) async throws {
        try Self.reserveDescriptors(for: maxConnections.value)
        var logger = Logger(label: serverName)
        logger.logLevel = .warning
        // An IPv6 address goes in brackets in a URL (RFC 3986), so the line can be pasted as one.
        let announced = "listening on http://\(host.contains(":") ? "[\(host)]" : host):%d\(path)"
        let timeouts = ConnectionTimeouts(
            header: .milliseconds(Int64(headerTimeoutMs.value)),
            body: .milliseconds(Int64(bodyTimeoutMs.value)),
            idle: .milliseconds(Int64(idleTimeoutMs.value))
        )
        let slots = ConnectionSlots(limit: maxConnections.value)
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(inner: HTTP1Channel(responder: responder), timeouts: timeouts, slots: slots)
            },
            configuration: .init(
                address: .hostname(host, port: port.value),
                serverName: serverName,
                // The kernel's queue, as deep as it allows (net.core.somaxconn caps it): while
                // slots are freed for them, new connections wait there rather than be dropped.
                backlog: 4096,
                // One over the limit: the newcomer for whom ConnectionSlots closes the oldest
                // connection still sending its request.
                availableConnectionsDelegate: MaximumAvailableConnections(maxConnections.value + 1)
            ),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                // Unbuffered, so that a script reading a pipe sees it at once.
                FileHandle.standardOutput.write(
                    Data((announced.replacingOccurrences(of: "%d", with: "\(bound)") + "\n").utf8)
                )
            },
            logger: logger
        )
        var configuration = ServiceGroupConfiguration(
            services: [app],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // Graceful shutdown answers what has arrived; whatever still runs after 4 s is cancelled,
        // so that the process is gone within 5 s of the signal.
        configuration.maximumGracefulShutdownDuration = .seconds(4)
        configuration.maximumCancellationDuration = .milliseconds(500)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError {
            let what =
                error.description.hasPrefix("bind")
                ? "Listening on \(host) port \(port.value) failed" : "The server failed"
            throw MessageFilterError(
                .io,
                "\(what): \(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))."
            )
        } catch is SocketAddressError.UnknownHost {
            throw MessageFilterError(
                .io,
                "Listening on \(Serve.quoted(host)) failed: it is neither an IP address nor a host name this machine can resolve."
            )
        }
        FileHandle.standardOutput.write(Data("stopped\n".utf8))
    }

    /// Raises the soft limit on open descriptors to what `connections` need (with room for the
    /// process's own), up to the hard limit.
    ///
    /// - Throws: `MessageFilterError` naming the limit when the hard limit is too low.
    static func reserveDescriptors(for connections: Int) throws {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let needed = rlim_t(connections + 64)
        guard limit.rlim_cur < needed else { return }
        guard limit.rlim_max >= needed else {
            throw MessageFilterError(
                .io,
                "--max-connections \(connections) needs \(needed) open files, but this process may open at most \(limit.rlim_max) (ulimit -Hn)."
            )
        }
        limit.rlim_cur = needed
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

}
