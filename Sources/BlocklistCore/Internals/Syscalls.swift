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

/// File-system operations for committing shard sets, each turning its return code into a sentence.
package enum FileSystem {
    /// What is at a path.
    package enum Kind: Equatable {
        case missing, file, directory, other
    }

    package static func kind(_ path: String) throws(BlocklistError) -> Kind {
        var info = stat()
        if path.withCString({ stat($0, &info) }) != 0 {
            if errno == ENOENT { return .missing }
            throw _ioError("Reading the status of", path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    package static func isWritableDirectory(_ path: String) -> Bool {
        path.withCString { access($0, W_OK | X_OK) } == 0
    }

    package static func makeDirectory(_ path: String) throws(BlocklistError) {
        guard path.withCString({ mkdir($0, 0o755) }) == 0 else { throw _ioError("Creating the directory", path) }
    }

    package static func rename(_ from: String, to: String) throws(BlocklistError) {
        let result = from.withCString { source in to.withCString { target in _rename(source, target) } }
        guard result == 0 else {
            let code = errno
            throw BlocklistError(.io, "Renaming \(from) to \(to) failed: \(_errnoText(code)).", underlying: SystemError(errno: code))
        }
    }

    package static func removeFile(_ path: String) throws(BlocklistError) {
        guard path.withCString({ unlink($0) }) == 0 || errno == ENOENT else { throw _ioError("Removing", path) }
    }

    /// Removes a directory and the plain files in it (shard-set directories hold nothing else).
    package static func removeDirectory(_ path: String) throws(BlocklistError) {
        for name in try list(path) { try removeFile(path + "/" + name) }
        guard path.withCString({ rmdir($0) }) == 0 || errno == ENOENT else { throw _ioError("Removing the directory", path) }
    }

    /// The names in a directory, without "." and "..", sorted.
    package static func list(_ path: String) throws(BlocklistError) -> [String] {
        guard let directory = path.withCString({ opendir($0) }) else { throw _ioError("Listing", path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Flushes a directory's entries (creations, renames) to stable storage.
    package static func syncDirectory(_ path: String) throws(BlocklistError) {
        let fd = path.withCString { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw _ioError("Opening the directory", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw _ioError("Syncing the directory", path) }
    }

    /// Reads a whole file of at most `limit` bytes, to its end (files in /proc report size 0).
    package static func readFile(_ path: String, limit: Int = 64 << 20) throws(BlocklistError) -> [UInt8] {
        let file = try FileDescriptor.openForReading(path)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        var bytes: [UInt8] = []
        while true {
            let read = try file.read(into: chunk, at: Int64(bytes.count))
            if read == 0 { return bytes }
            guard bytes.count + read <= limit else {
                throw BlocklistError(.limitExceeded, "\(path) is larger than the \(limit) bytes this tool reads.")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<read]))
        }
    }

    /// Writes `bytes` to a new file at `path` (which must not exist) and flushes it.
    package static func writeNewFile(_ path: String, _ bytes: [UInt8], sync: Bool) throws(BlocklistError) {
        let file = try FileDescriptor.createExclusive(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count]), at: 0)
        if sync { try file.sync() }
    }
}

private func _rename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    rename(from, to)
}

/// An exclusive advisory lock (`flock`) on a file, held until dropped.
///
/// The kernel releases it when the process dies, so a killed holder never leaves it stuck.
package final class FileLock {
    private var fd: Int32

    /// Takes the lock on `path` (creating the file), or fails at once with `.busy` naming `what`.
    package init(path: String, what: String) throws(BlocklistError) {
        let fd = path.withCString { open($0, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw _ioError("Opening the lock file", path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK {
                throw BlocklistError(.busy, "\(what) is busy: another process holds the lock \(path).")
            }
            throw BlocklistError(.io, "Locking \(path) failed: \(_errnoText(code)).", underlying: SystemError(errno: code))
        }
        self.fd = fd
    }

    /// Releases the lock; later calls do nothing.
    package func unlock() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { unlock() }
}

/// Memory figures of a process as Linux reports them in /proc/PID/status, in KiB.
package struct ProcessMemory: Sendable, Equatable {
    /// Peak resident set size (VmHWM).
    package var peakResident: Int
    /// Current resident set size (VmRSS).
    package var resident: Int
    /// Current anonymous resident memory (RssAnon): heap and stacks, without mapped files.
    package var anonymous: Int

    /// Reads the figures of `pid`, or of this process; `nil` where /proc is not available.
    package static func read(pid: Int32? = nil) -> ProcessMemory? {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let bytes = try? FileSystem.readFile(path, limit: 1 << 20) else { return nil }
        var memory = ProcessMemory(peakResident: 0, resident: 0, anonymous: 0)
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            func value() -> Int { Int(text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0) }
            if text.hasPrefix("VmHWM:") { memory.peakResident = value() }
            if text.hasPrefix("VmRSS:") { memory.resident = value() }
            if text.hasPrefix("RssAnon:") { memory.anonymous = value() }
        }
        return memory
    }
}
