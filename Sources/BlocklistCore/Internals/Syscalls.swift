#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Every libc call the core makes goes through here, so that each return code becomes a thrown
// `BlocklistError` whose sentence names the path and the operation.

@usableFromInline
func _errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}

@usableFromInline
func _ioError(_ what: String, _ path: String, errno code: Int32 = errno) -> BlocklistError {
    BlocklistError(.io, "\(what) \(path) failed: \(_errnoText(code)).", underlying: SystemError(errno: code))
}

/// A file descriptor that closes itself when dropped.
package struct FileDescriptor: ~Copyable {
    package let rawValue: Int32
    package let path: String

    /// Opens `path` for reading, refusing directories with a sentence that says so.
    package static func openForReading(_ path: String) throws(BlocklistError) -> FileDescriptor {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw _ioError("Opening", path) }
        let descriptor = FileDescriptor(rawValue: fd, path: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw _ioError("Reading the status of", path) }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw BlocklistError(.notAShard, "\(path) is a directory, not a shard file.")
        }
        return descriptor
    }

    /// Creates `path` for writing; fails if it exists, so a writer never clobbers a file it did not make.
    package static func createExclusive(_ path: String, mode: mode_t = 0o644) throws(BlocklistError) -> FileDescriptor {
        let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw _ioError("Creating", path) }
        return FileDescriptor(rawValue: fd, path: path)
    }

    private init(rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    deinit { _ = close(rawValue) }

    /// The file's size in bytes.
    package func size() throws(BlocklistError) -> Int64 {
        var info = stat()
        guard fstat(rawValue, &info) == 0 else { throw _ioError("Reading the status of", path) }
        return Int64(info.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at end of file).
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(BlocklistError) -> Int {
        while true {
            let n = pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw _ioError("Reading", path)
        }
    }

    /// Writes all of `buffer` at `offset`.
    package func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(BlocklistError) {
        var done = 0
        while done < buffer.count {
            let n = pwrite(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw _ioError("Writing", path)
            }
            done += n
        }
    }

    /// Flushes the file's data to stable storage.
    package func sync() throws(BlocklistError) {
        guard fsync(rawValue) == 0 else { throw _ioError("Syncing", path) }
    }
}
