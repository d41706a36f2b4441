import Foundation
import MessageFilterCore
import NIOCore
import Publication
import UpdateCore

/// The `/v1/update` bundles of one publication: each made at most once per (from, generation),
/// by one request while others for it wait, and kept while `timestamp.json` stays the same file.
///
/// A bundle is never larger than ``UpdateBundle/maximumServedBytes``, what a phone takes: one
/// that would be is decided from the snapshot's signed lengths before any shard is read, and
/// answered 404, after which the phone fetches file by file. Every `from` that is neither the
/// newest generation nor a base of one (a snapshot or deltas still published) gets the same
/// bundle as 0, so a client cycling through numbers makes no more bundles than there are bases.
/// Memory: at most `capacity` bundles, each shared by every response that sends it.
actor BundleCache {
    /// What tells one `timestamp.json` from another without reading it: a publish replaces it by rename.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var seconds: Int
        var nanoseconds: Int
        var size: Int64
    }

    let publication: String
    let capacity: Int
    private var identity: Identity?
    private var newest: UInt64 = 0
    private var bases: Set<UInt64> = []
    /// Bundles made or being made, by the `from` that stands for them; nil when over the limit.
    private var bundles: [UInt64: Task<ByteBuffer?, any Error>] = [:]
    /// The keys of `bundles`, least recently used first.
    private var recent: [UInt64] = []

    init(publication: String, capacity: Int = 8) {
        self.publication = publication
        self.capacity = capacity
    }

    /// The bundle from generation `from` to the newest, or nil when it would be over the limit.
    ///
    /// - Throws: if the publication cannot be read.
    func bundle(from: UInt64) async throws -> ByteBuffer? {
        let current = try Self.identity(of: publication + "/" + Publisher.timestampName)
        if current != identity {
            bundles = [:]
            recent = []
            (newest, bases) = try UpdateBundle.bases(publication: publication)
            identity = current
        }
        let key = from >= newest ? newest : bases.contains(from) ? from : 0
        recent.removeAll { $0 == key }
        recent.append(key)
        if let made = bundles[key] { return try await made.value }
        let publication = self.publication
        let making = Task.detached { () throws -> ByteBuffer? in
            switch try UpdateBundle.compose(publication: publication, from: key) {
            case .bundle(let bytes): ByteBuffer(bytes: bytes)
            case .tooLarge: nil
            }
        }
        bundles[key] = making
        if recent.count > capacity { bundles[recent.removeFirst()] = nil }
        do {
            return try await making.value
        } catch {
            // Not kept: the next request tries again (a publish may have been under way).
            if bundles[key] == making { bundles[key] = nil }
            throw error
        }
    }

    /// - Throws: `MessageFilterError` naming the file when it cannot be examined.
    static func identity(of path: String) throws -> Identity {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw MessageFilterError(.io, "Examining \(path) failed: \(String(cString: strerror(errno))).")
        }
        return Identity(
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            seconds: info.st_mtim.tv_sec,
            nanoseconds: info.st_mtim.tv_nsec,
            size: Int64(info.st_size)
        )
    }
}
