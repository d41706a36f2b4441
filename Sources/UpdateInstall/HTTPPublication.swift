import BlocklistCore
import BlocklistSystem
import Crypto
import HTTPFetch
import UpdateCore

/// A publication on a static HTTP server or CDN (`http://`; an app fetches over TLS with
/// URLSession). Each file is one GET under `base`; 404 means it does not exist. Every request
/// shares one deadline, and downloads stream to their file through HTTPFetch's fixed buffer
/// while their SHA-256 is computed, so a shard costs no memory of its size.
public final class HTTPPublication: PublicationReader {
    public let base: HTTPURL
    /// CLOCK_MONOTONIC nanoseconds after which every request fails with a timeout.
    public let deadline: UInt64
    private let isCancelled: () -> Bool
    /// Body bytes received, all requests together.
    public private(set) var bytesReceived: Int64 = 0

    public var name: String { base.description }
    public var bytesOnTheWire: Int64? { bytesReceived }

    public init(_ location: String, deadline: UInt64, isCancelled: @escaping () -> Bool = { false }) throws {
        var text = location
        if !text.hasSuffix("/") { text += "/" }
        base = try HTTPURL(text)
        self.deadline = deadline
        self.isCancelled = isCancelled
    }

    /// The largest bundle taken (1 MiB).
    public static let maximumBundleBytes: Int64 = 1 << 20
    /// The largest metadata file read into memory over the network (1 MiB).
    public static let maximumMetadataBytes = 1 << 20

    /// Files of the bundle `GET /v1/update?from=N` answered, served before any request.
    private var bundled: [String: [UInt8]] = [:]
    /// Requests made.
    public private(set) var requests = 0

    /// Asks the server for everything from `installedGeneration` in one request
    /// (`blocklist updates serve`); a static server without it answers 404 and each file is
    /// then fetched alone.
    public func prepare(installedGeneration: UInt64) throws {
        let url = try HTTPURL(base.description + "v1/update?from=\(installedGeneration)")
        var bytes: [UInt8] = []
        requests += 1
        // A bundle is held in memory, so it is taken only while small (an extension has about
        // 8 MiB); a larger update is fetched file by file, shards streamed to disk.
        let head: HTTPResponseHead
        do {
            head = try HTTPFetch.get(
                url,
                deadline: deadline,
                maximumBodyBytes: Self.maximumBundleBytes,
                isCancelled: isCancelled
            ) {
                bytes.append(contentsOf: $0)
            }
        } catch let error as HTTPFetchError where error.code == .tooLarge {
            return
        }
        bytesReceived += Int64(bytes.count)
        guard head.status == 200 else { return }
        bundled = try UpdateBundle.decode(bytes, what: "\(url)'s bundle")
    }

    public func read(_ path: String, maximumBytes: Int) throws -> [UInt8]? {
        guard FileInfo.isSafe(path) else { throw UpdateError(.malformed, "\(path) is not a plain relative path.") }
        if let bytes = bundled[path] {
            guard bytes.count <= maximumBytes else {
                throw UpdateError(
                    .mismatch,
                    "\(path) in the bundle is larger than the \(maximumBytes) bytes the signed metadata allows."
                )
            }
            return bytes
        }
        // A bundle holds every root the publication has: one it lacks does not exist.
        if !bundled.isEmpty && path.hasSuffix(".root.json") { return nil }
        requests += 1
        let url = base.appending(path: path)
        var bytes: [UInt8] = []
        let head = try HTTPFetch.get(
            url,
            deadline: deadline,
            maximumBodyBytes: Int64(min(maximumBytes, Self.maximumMetadataBytes)),
            isCancelled: isCancelled
        ) {
            bytes.append(contentsOf: $0)
        }
        bytesReceived += Int64(bytes.count)
        switch head.status {
        case 200: return bytes
        case 404, 410: return nil
        default:
            throw HTTPFetchError(.status, "\(url) answered \(head.status) \(head.reason); 200 or 404 was expected.")
        }
    }

    public func download(_ file: FileInfo, to destination: String, isCancelled: () -> Bool) throws {
        if let bytes = bundled[file.path] {
            try file.check(bytes, what: "\(base)\(file.path) (in the bundle)")
            try FileSystem.writeNewFile(destination, bytes, sync: false)
            return
        }
        requests += 1
        let url = base.appending(path: file.path)
        let output = try FileDescriptor.createExclusive(destination)
        var sha = SHA256()
        var written: Int64 = 0
        var failure: (any Error)?
        let stop = { isCancelled() || self.isCancelled() }
        let head = try HTTPFetch.get(url, deadline: deadline, maximumBodyBytes: file.length, isCancelled: stop) {
            chunk in
            guard failure == nil else { return }
            do {
                try output.write(chunk, at: written)
                sha.update(bufferPointer: chunk)
                written += Int64(chunk.count)
            } catch {
                failure = error
            }
        }
        bytesReceived += written
        if let failure { throw failure }
        guard head.status == 200 else {
            throw HTTPFetchError(
                .status,
                "\(url) answered \(head.status) \(head.reason); the signed snapshot names it."
            )
        }
        guard written == file.length, Array(sha.finalize()) == file.sha256 else {
            throw UpdateError(
                .mismatch,
                "\(url) is \(written) bytes with another SHA-256 than the signed metadata gives (\(file.length) bytes); it was truncated or replaced."
            )
        }
    }
}
