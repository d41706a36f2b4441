import BlocklistCore
import BlocklistSystem
import Crypto
import HTTPFetch
internal import LibC
import UpdateCore

/// A publication on a static HTTP server or CDN (`http://`; an app fetches over TLS with
/// URLSession). Each file is one GET under `base`; 404 means it does not exist. A request stops
/// when no byte has moved for `stallTimeout`, or at the optional whole `deadline`; a slow but
/// moving network is never cut off. Downloads stream to their file through HTTPFetch's fixed
/// buffer while their SHA-256 is computed, so a shard costs no memory of its size, and an
/// interrupted one is resumed with `Range` where it stopped.
package final class HTTPPublication: PublicationReader {
    package let base: HTTPURL
    /// CLOCK_MONOTONIC nanoseconds after which every request fails with a timeout (`.max`: none).
    package let deadline: UInt64
    /// Nanoseconds without a byte after which a request fails with a timeout.
    package let stallTimeout: UInt64
    /// The default stall timeout: 30 s.
    package static let defaultStallTimeout: UInt64 = 30_000_000_000
    private let isCancelled: () -> Bool
    /// Body bytes received, all requests together.
    package private(set) var bytesReceived: Int64 = 0

    package var name: String { base.description }
    package var bytesOnTheWire: Int64? { bytesReceived }

    package init(
        _ location: String,
        deadline: UInt64 = .max,
        stallTimeout: UInt64 = HTTPPublication.defaultStallTimeout,
        maximumBundleBytes: Int64 = HTTPPublication.maximumBundleBytes,
        isCancelled: @escaping () -> Bool = { false }
    ) throws {
        bundleLimit = maximumBundleBytes
        guard !location.contains("?"), !location.contains("#") else {
            throw HTTPFetchError(
                .badURL,
                "The publication URL \(location.prefix(200)) has a query or a fragment; give the directory's URL (each file's name is added to it)."
            )
        }
        // Parsed as given, so that a refusal quotes what the user typed; a directory's URL then
        // ends in "/".
        let parsed = try HTTPURL(location)
        base = parsed.target.hasSuffix("/") ? parsed : try HTTPURL(location + "/")
        self.deadline = deadline
        self.stallTimeout = stallTimeout
        self.isCancelled = isCancelled
    }

    /// The largest bundle taken (1 MiB): `UpdateBundle.maximumServedBytes`, what `updates serve` answers at most.
    package static let maximumBundleBytes = Int64(UpdateBundle.maximumServedBytes)
    /// The largest bundle an app extension takes (256 KiB): it holds the bundle in memory within
    /// about 8 MiB; a larger one (refused from its Content-Length, before its body) goes file by file.
    package static let extensionBundleBytes: Int64 = 256 * 1024
    /// The largest bundle this reader takes.
    private let bundleLimit: Int64
    /// The largest metadata file read into memory over the network: what a signed metadata
    /// file may be (4 MiB; a 10,000-shard snapshot is 3 MB). The signed length of each file
    /// bounds it further.
    package static let maximumMetadataBytes = SignedDocument.maximumBytes

    /// Files of the bundle `GET /v1/update?from=N` answered, served before any request.
    private var bundled: [String: Range<Int>] = [:]
    /// The bundle's bytes, which `bundled` indexes (held once, not copied per file).
    private var bundle: [UInt8] = []
    /// Requests made.
    package private(set) var requests = 0

    /// Asks the server for everything from `installedGeneration` in one request
    /// (`blocklist updates serve`); a static server without it answers 404 and each file is
    /// then fetched alone.
    package func prepare(installedGeneration: UInt64) throws {
        let url = try HTTPURL(base.description + "v1/update?from=\(installedGeneration)")
        var bytes: [UInt8] = []
        requests += 1
        // A bundle is held in memory, so it is taken only while small (an extension has about
        // 8 MiB); a larger update is fetched file by file, shards streamed to disk.
        let head: HTTPResponseHead
        do {
            head = try get(
                url,
                maximumBodyBytes: bundleLimit,
                restart: { bytes = [] },
                head: { head in
                    // Room for the whole body at once: appending would double the buffer.
                    if head.status == 200, let length = head.value(of: "Content-Length").flatMap({ Int($0) }),
                        length > 0, length <= bundleLimit
                    {
                        bytes.reserveCapacity(length)
                    }
                },
                body: { bytes.append(contentsOf: $0) }
            )
        } catch let error as HTTPFetchError where ![.cancelled, .connect, .badURL].contains(error.code) {
            // The route is optional: a bundle too large, cut short, looping, stalled or not HTTP
            // at all is no bundle, and the files are fetched one by one (a host that cannot be
            // reached fails there, with its own sentence).
            return
        }
        bytesReceived += Int64(bytes.count)
        // A static host answers what it answers for an unknown path: 404, 403 (S3 without list
        // permission), or 200 with an HTML page (a single-page-app fallback). Only a bundle is
        // a bundle; anything else means "fetch file by file".
        guard head.status == 200, bytes.starts(with: UpdateBundle.magic) else { return }
        // One that does not read as a bundle is no bundle either (a host's junk): file by file.
        guard let index = try? UpdateBundle.index(bytes, what: "\(url)'s bundle") else { return }
        bundled = index
        bundle = bytes
    }

    package func read(_ path: String, maximumBytes: Int, optional: Bool) throws -> [UInt8]? {
        guard FileInfo.isSafe(path) else { throw UpdateError(.malformed, "\(path) is not a plain relative path.") }
        if let range = bundled[path] {
            guard range.count <= maximumBytes else {
                throw UpdateError(
                    .mismatch,
                    "\(path) in the bundle is larger than the \(maximumBytes) bytes the signed metadata allows."
                )
            }
            return Array(bundle[range])
        }
        // A bundle holds every root the publication has: one it lacks does not exist.
        if !bundled.isEmpty && path.hasSuffix(".root.json") { return nil }
        requests += 1
        let url = base.appending(path: path)
        var bytes: [UInt8] = []
        let head = try get(
            url,
            maximumBodyBytes: Int64(min(maximumBytes, Self.maximumMetadataBytes)),
            restart: { bytes = [] },
            body: { bytes.append(contentsOf: $0) }
        )
        bytesReceived += Int64(bytes.count)
        // The body was limited as it arrived.
        let answer = HostAnswer(
            url: "\(url)",
            status: head.status,
            reason: head.reason,
            contentType: head.value(of: "Content-Type"),
            body: bytes,
            limit: .max,
            optional: optional
        )
        switch answer {
        case .file(let bytes): return bytes
        case .missing: return nil
        case .refused(let sentence): throw HTTPFetchError(.status, sentence)
        }
    }

    /// Downloads `file` to `destination`, by way of `destination.part`: what an interrupted
    /// run left there is resumed with `Range: bytes=N-` (its bytes hashed again first); a host
    /// that answers the whole file instead (200) starts it over. The part stays on a failure,
    /// for the next run, unless its bytes are proved wrong (then it is removed).
    package func download(_ file: FileInfo, to destination: String, isCancelled: () -> Bool) throws {
        if let range = bundled[file.path] {
            let bytes = Array(bundle[range])
            try file.check(bytes, what: "\(base)\(file.path) (in the bundle)")
            // Written aside and renamed over the destination: a kill or a full disk leaves a
            // part, never a short file under the digest's name.
            let part = destination + ".\(getpid()).part"
            try? FileSystem.removeFile(part)
            try FileSystem.writeNewFile(part, bytes, sync: false)
            try FileSystem.rename(part, to: destination)
            return
        }
        do {
            try download(file, to: destination, resuming: true, isCancelled: isCancelled)
        } catch let error as UpdateError where error.code == .mismatch {
            // A part an earlier run left may hold wrong bytes (a damaged disk, a host that
            // changed): once, from the start, before the host is blamed.
            try download(file, to: destination, resuming: false, isCancelled: isCancelled)
        }
    }

    private func download(_ file: FileInfo, to destination: String, resuming: Bool, isCancelled: () -> Bool) throws {
        requests += 1
        let url = base.appending(path: file.path)
        var part = destination + ".part"
        var sha = SHA256()
        var offset: Int64 = 0
        switch try FileSystem.kind(part, followingSymlinks: false) {
        case .missing: _ = try FileDescriptor.createExclusive(part)
        case .file: break
        default:
            // Not what an earlier run left: left alone, and this download goes beside it.
            part = destination + ".\(getpid()).part"
            try? FileSystem.removeFile(part)
            _ = try FileDescriptor.createExclusive(part)
        }
        let output = try FileDescriptor.openForResuming(part)
        if !resuming { try output.truncate(to: 0) }
        offset = try output.size()
        if offset >= file.length {
            try output.truncate(to: 0)
            offset = 0
        } else if offset > 0 {
            try Self.hash(part, bytes: offset, into: &sha)
        }
        let resumedFrom = offset
        var failure: (any Error)?
        let head = try get(
            url,
            headers: resumedFrom > 0 ? [("Range", "bytes=\(resumedFrom)-")] : [],
            maximumBodyBytes: file.length,
            isCancelled: isCancelled,
            head: { head in
                guard resumedFrom > 0 else { return }
                if head.status == 206 {
                    guard Self.rangeStart(head) == resumedFrom else {
                        throw HTTPFetchError(
                            .status,
                            "\(url) answered 206 with Content-Range \(head.value(of: "Content-Range") ?? "(none)"), not the bytes from \(resumedFrom) that were asked for."
                        )
                    }
                } else if head.status == 200 {
                    // The host ignores Range: the whole file comes again.
                    try output.truncate(to: 0)
                    sha = SHA256()
                    offset = 0
                }
            },
            body: { chunk in
                guard failure == nil else { return }
                do {
                    guard offset + Int64(chunk.count) <= file.length else {
                        throw UpdateError(
                            .mismatch,
                            "\(url) sends more than the \(file.length) bytes the signed metadata gives."
                        )
                    }
                    try output.write(chunk, at: offset)
                    sha.update(bufferPointer: chunk)
                    offset += Int64(chunk.count)
                } catch {
                    failure = error
                }
            }
        )
        bytesReceived += offset - (head.status == 206 ? resumedFrom : 0)
        if let failure { throw failure }
        guard head.status == 200 || (head.status == 206 && resumedFrom > 0) else {
            throw HTTPFetchError(
                .status,
                "\(url) answered \(head.status) \(head.reason); the signed snapshot names it."
            )
        }
        guard offset == file.length, Array(sha.finalize()) == file.sha256 else {
            try? FileSystem.removeFile(part)
            throw UpdateError(
                .mismatch,
                "\(url) is \(offset) bytes with another SHA-256 than the signed metadata gives (\(file.length) bytes); it was truncated or replaced."
            )
        }
        try FileSystem.rename(part, to: destination)
    }

    /// The most redirects one request follows.
    package static let maximumRedirects = 5

    /// One GET through HTTPFetch, following up to `maximumRedirects` redirects (301, 302, 303,
    /// 307, 308 with a `Location`, absolute or relative as RFC 9110 allows), as a CDN or a
    /// bucket's website endpoint sends them: everything read is checked against the signed
    /// metadata, wherever it came from. `onHead` and `body` see only the final response;
    /// `restart` is called before each redirect is followed. `isCancelled` is asked besides
    /// this reader's own.
    func get(
        _ first: HTTPURL,
        headers: [(String, String)] = [],
        maximumBodyBytes: Int64,
        isCancelled: () -> Bool = { false },
        restart: () -> Void = {},
        head onHead: (HTTPResponseHead) throws -> Void = { _ in },
        body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> HTTPResponseHead {
        var url = first
        for _ in 0...Self.maximumRedirects {
            var redirect = false
            let head = try HTTPFetch.get(
                url,
                headers: headers,
                deadline: deadline,
                stallTimeout: stallTimeout,
                maximumBodyBytes: maximumBodyBytes,
                isCancelled: { isCancelled() || self.isCancelled() },
                head: { head in
                    redirect = [301, 302, 303, 307, 308].contains(head.status) && head.value(of: "Location") != nil
                    if !redirect { try onHead(head) }
                },
                body: { chunk in if !redirect { try body(chunk) } }
            )
            guard redirect, let location = head.value(of: "Location") else { return head }
            restart()
            url = try url.resolving(location)
        }
        throw HTTPFetchError(.status, "\(first) redirected more than \(Self.maximumRedirects) times.")
    }

    /// The first byte a 206's `Content-Range: bytes FIRST-LAST/LENGTH` covers.
    static func rangeStart(_ head: HTTPResponseHead) -> Int64? {
        guard let value = head.value(of: "Content-Range"), value.hasPrefix("bytes ") else { return nil }
        return Int64(value.dropFirst(6).prefix { $0 != "-" })
    }

    /// Feeds the first `bytes` of `path` to `sha` through one 64 KiB buffer.
    static func hash(_ path: String, bytes: Int64, into sha: inout SHA256) throws {
        let input = try FileDescriptor.openForReading(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < bytes {
            let want = Int(min(Int64(buffer.count), bytes - offset))
            let count = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
            guard count > 0 else { throw UpdateError(.shard, "\(path) ended before its \(bytes) bytes.") }
            sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }
}
