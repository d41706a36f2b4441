import Foundation
import Hummingbird
internal import LibC
import MessageFilterCore
import NIOCore
import NIOPosix

/// A publication file opened for one response and streamed from disk in chunks, so that a
/// response costs one chunk of memory, not the file: a slow reader holds at most a chunk and the
/// socket's buffers. The descriptor is closed when the response is done with it (or dropped).
final class StaticFile: Sendable {
    /// The bytes read from disk at a time.
    static let chunkBytes = 64 * 1024

    let path: String
    let descriptor: Int32
    let length: Int64
    /// From the file's modification time and length, as before streaming: a file replaced by a
    /// publish gets another.
    let etag: String

    /// Opens the regular file at `path`, not following a symlink in its last component (the
    /// caller checks that the rest resolves inside the publication); nil if there is none.
    /// Non-blocking, so that a FIFO put in the publication is refused instead of waited on; it
    /// changes nothing for a regular file's reads.
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return nil
        }
        self.path = path
        self.descriptor = descriptor
        length = Int64(info.st_size)
        etag =
            "\"\(String(info.st_mtim.tv_sec, radix: 16))-\(String(info.st_mtim.tv_nsec, radix: 16))-\(String(info.st_size, radix: 16))\""
    }

    deinit { close(descriptor) }

    /// The bytes `range` of the file, read a chunk at a time on NIO's thread pool as the
    /// connection takes them.
    ///
    /// The writer waits while the connection's buffer is over its high-water mark (64 KiB), but
    /// it hands each chunk to the connection's event loop without waiting for it to be taken: a
    /// busy loop would let every response read ahead of it. Waiting for `eventLoop` after each
    /// chunk keeps a response at most one chunk ahead of its connection's buffer: with 100 slow
    /// readers of a 3 MB shard and 100 of a bundle, the server's peak went from 93–244 MB to
    /// 57–59 MB (docs/RELIABILITY.md, "Servers in the field").
    func body(_ range: ClosedRange<Int64>, eventLoop: any EventLoop) -> ResponseBody {
        ResponseBody(contentLength: Int(range.upperBound - range.lowerBound + 1)) { writer in
            var offset = range.lowerBound
            while offset <= range.upperBound {
                let count = Int(min(Int64(Self.chunkBytes), range.upperBound - offset + 1))
                let at = offset
                let chunk = try await NIOThreadPool.singleton.runIfActive { try self.read(count, at: at) }
                try await writer.write(chunk)
                try await eventLoop.submit {}.get()
                offset += Int64(count)
            }
            try await writer.finish(nil)
        }
    }

    /// Exactly `count` bytes at `offset`.
    ///
    /// - Throws: `MessageFilterError` naming the file and offset when it is shorter (it was cut
    ///   while served) or cannot be read.
    private func read(_ count: Int, at offset: Int64) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        var done = 0
        while done < count {
            var failure: Int32 = 0
            let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { bytes in
                let read = pread(descriptor, bytes.baseAddress, count - done, off_t(offset) + off_t(done))
                if read < 0 { failure = errno }
                return max(0, read)
            }
            if failure == EINTR { continue }
            guard got > 0 else {
                let reason =
                    failure == 0
                    ? "the file ends there (it was cut while served)" : String(cString: strerror(failure))
                throw MessageFilterError(.io, "Reading \(path) at offset \(offset + Int64(done)) failed: \(reason).")
            }
            done += got
        }
        return buffer
    }
}
