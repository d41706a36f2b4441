import ArgumentParser
import ArgumentTypes
import BlocklistCore
import CommandSupport
import Foundation
import Hummingbird
import HummingbirdCore
internal import LibC
import NIOCore
import Publication
import UpdateCore

/// `blocklist updates serve`, which `blocklist` execs here: a publication over HTTP.
struct UpdatesTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocklist updates",
        abstract: "Serve a publication to phones.",
        version: blocklistVersion,
        subcommands: [UpdatesServe.self]
    )
}

struct UpdatesServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Serve a publication (blocklist publish's directory) over HTTP, with ETags, and every update in one request.",
        discussion: """
            GET /PATH serves PUBDIR's files with an ETag, streamed from disk; If-None-Match answers 304, and one \
            Range (bytes=A-B, A- or -N, with If-Range) answers 206 or 416. timestamp.json is sent with \
            Cache-Control: no-cache, a generation's files as immutable. GET /v1/update?from=N answers one bundle that \
            takes a phone from generation N to the newest (blocklist update uses it), made once and kept until \
            timestamp.json changes; one over 1 MiB, what a phone takes, is answered 404. Same time limits, connection \
            limit and graceful shutdown as sms serve. Prints "listening on http://HOST:PORT/" once it accepts \
            connections; any static HTTP server or CDN can serve PUBDIR instead (docs/USAGE.md, Publishing).
            """,
        version: blocklistVersion
    )

    @Argument(help: ArgumentHelp("The publication directory.", valueName: "pubdir"), completion: .directory)
    var publication: String

    @OptionGroup var server: ServerOptions

    func validate() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: publication + "/timestamp.json", isDirectory: &isDirectory),
            !isDirectory.boolValue
        else {
            throw ValidationError("\(publication) holds no timestamp.json; run blocklist publish first.")
        }
    }

    func run() async throws {
        // Every file served must resolve inside the publication: a symlink in it (to a file or a
        // directory, at any depth) that leads out is not followed.
        guard let resolved = realpath(publication, nil) else {
            throw ValidationError("\(publication) cannot be resolved: \(String(cString: strerror(errno))).")
        }
        let root = String(cString: resolved)
        free(resolved)
        let router = Router(context: ConnectionRequestContext.self)
        let bundles = BundleCache(publication: root)
        let serveBundle: @Sendable (Request, ConnectionRequestContext) async throws -> Response = { request, _ in
            guard let text = request.uri.queryParameters.get("from"), let from = UInt64(text) else {
                return Self.text(.badRequest, "Give the installed generation: /v1/update?from=N (0 for none).\n")
            }
            guard let bundle = try await bundles.bundle(from: from) else {
                return Self.text(
                    .notFound,
                    "The update from generation \(from) is over \(Figures.grouped(UpdateBundle.maximumServedBytes)) bytes; fetch its files one by one.\n"
                )
            }
            return Response(
                status: .ok,
                headers: [.contentType: "application/octet-stream", .cacheControl: "no-cache"],
                body: ResponseBody(byteBuffer: bundle)
            )
        }
        let serveFile: @Sendable (Request, ConnectionRequestContext) async throws -> Response = { request, context in
            let path = context.parameters.getCatchAll().joined(separator: "/")
            // Only what publish writes for phones: never a key or anything else left in PUBDIR.
            guard FileInfo.isSafe(path), Publisher.isPublishedFile(path) else {
                return Self.text(.notFound, "Not found.\n")
            }
            let full = root + "/" + path
            guard let real = realpath(full, nil) else { return Self.text(.notFound, "Not found.\n") }
            let resolvedPath = String(cString: real)
            free(real)
            guard resolvedPath == full, let file = StaticFile(path: full) else {
                return Self.text(.notFound, "Not found.\n")
            }
            let cache =
                path == Publisher.timestampName || path.hasSuffix("root.json") || path == PublicationPage.fileName
                ? "no-cache" : "public, max-age=31536000, immutable"
            var headers: HTTPFields = [.eTag: file.etag, .cacheControl: cache, .acceptRanges: "bytes"]
            if let match = request.headers[.ifNoneMatch], Self.matches(match, file.etag) {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] =
                path.hasSuffix(".json")
                ? "application/json"
                : path == PublicationPage.fileName ? "text/html; charset=utf-8" : "application/octet-stream"
            let whole = file.length > 0 ? 0...(file.length - 1) : nil
            switch ByteRange(
                range: request.headers[.range],
                ifRange: request.headers[.ifRange],
                etag: file.etag,
                length: file.length
            ) {
            case .whole:
                return Response(
                    status: .ok,
                    headers: headers,
                    body: whole.map { file.body($0, eventLoop: context.eventLoop) } ?? ResponseBody()
                )
            case .part(let range):
                headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(file.length)"
                return Response(
                    status: .partialContent,
                    headers: headers,
                    body: file.body(range, eventLoop: context.eventLoop)
                )
            case .unsatisfiable:
                var answer = Self.text(
                    .rangeNotSatisfiable,
                    "The range asked for starts past the end of \(path), which is \(Figures.counted(file.length, "byte")).\n"
                )
                answer.headers[.contentRange] = "bytes */\(file.length)"
                answer.headers[.acceptRanges] = "bytes"
                return answer
            }
        }
        // The publication's page for people at / (and /index.html); phones never read it.
        let redirect: @Sendable (Request, ConnectionRequestContext) async throws -> Response = { _, _ in
            Response(status: .movedPermanently, headers: [.location: "/" + PublicationPage.fileName])
        }
        // Each path answers GET, and HEAD as GET would: the same status and headers, the length
        // of the body it would send, no body (a CDN's origin check, `curl -I`).
        for (path, handler) in [("/", redirect), ("v1/update", serveBundle), ("**", serveFile)] {
            router.get(RouterPath(path), use: handler)
            router.head(RouterPath(path)) { request, context -> Response in
                var response = try await handler(request, context)
                let length = response.body.contentLength
                response.body = ResponseBody()
                if let length { response.headers[.contentLength] = String(length) }
                return response
            }
        }
        try await server.run(router: router, path: "/", serverName: "blocklist-updates")
    }

    /// Whether an If-None-Match value (a list of entity tags, or `*`) names `etag`; weak
    /// comparison, as RFC 9110 §13.1.2 asks for If-None-Match.
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}
