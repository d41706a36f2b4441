// Every libc call the core makes goes through here and FileLock.swift (the tools' own, such as
// directory commits and /proc, are in BlocklistSystem), so that each return code becomes a thrown
// `BlocklistError` whose sentence names the path and the operation.
package import LibC

package func _errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}

package func _ioError(_ what: String, _ path: String, errno code: Int32 = errno) -> BlocklistError {
    BlocklistError(.io, "\(what) \(path) failed: \(_errnoText(code)).", underlying: SystemError(errno: code))
}

/// A file descriptor that closes itself when dropped.
package struct FileDescriptor: ~Copyable {
    package let rawValue: Int32
    package let path: String

    /// Opens `path` for reading. Only a regular file is accepted: a directory, a FIFO, a device or
    /// a socket is refused by its type with a sentence, and opening never blocks (O_NONBLOCK, so a
    /// FIFO with no writer cannot hang the reader).
    package static func openForReading(_ path: String) throws(BlocklistError) -> FileDescriptor {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw _ioError("Opening", path) }
        let descriptor = FileDescriptor(rawValue: fd, path: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw _ioError("Reading the status of", path) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            throw BlocklistError(
                .notAShard,
                "\(path) is \(_fileTypeName(type)), not a regular file; refusing to read it."
            )
        }
        // Reads of a regular file never block; clear the flag so they behave as usual.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    /// Creates `path` for writing; fails if it exists, so a writer never clobbers a file it did not make.
    package static func createExclusive(_ path: String, mode: mode_t = 0o644) throws(BlocklistError) -> FileDescriptor {
        // O_EXCL also refuses a symlink at `path`, dangling or not: nothing is written through one.
        let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw _ioError("Creating", path) }
        return FileDescriptor(rawValue: fd, path: path)
    }

    /// Whether anything (a file, a directory, a symlink, dangling or not) has the name `path`.
    package static func nameExists(_ path: String) -> Bool {
        var info = stat()
        return path.withCString { lstat($0, &info) } == 0
    }

    /// Removes `path`, a file this call created with `createExclusive` (a writer's own output
    /// after a failure); never anything else.
    package static func removeCreated(_ path: String) {
        _ = path.withCString { unlink($0) }
    }

    /// Copies the regular file `source` to the new file `destination` (which must not exist)
    /// through one 64 KiB buffer; `sync` flushes the copy to stable storage before returning.
    package static func copy(_ source: String, toNew destination: String, sync: Bool) throws(BlocklistError) {
        let input = try openForReading(source)
        let output = try createExclusive(destination)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = try input.read(into: buffer, at: offset)
            if count == 0 { break }
            try output.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), at: offset)
            offset += Int64(count)
        }
        if sync { try output.sync() }
    }

    /// Reads a whole file of at most `limit` bytes, to its end (files in /proc report size 0).
    package static func readWholeFile(_ path: String, limit: Int = 64 << 20) throws(BlocklistError) -> [UInt8] {
        let file = try openForReading(path)
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
        let file = try createExclusive(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count]), at: 0)
        if sync { try file.sync() }
    }

    /// Makes the directory `path`, and its parents, unless a directory is there already;
    /// anything else there (a file, a symlink) is refused with a sentence, never followed.
    package static func makeDirectory(_ path: String) throws(BlocklistError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if prefix.withCString({ mkdir($0, 0o755) }) != 0 {
                let code = errno
                var info = stat()
                guard code == EEXIST, prefix.withCString({ lstat($0, &info) }) == 0,
                    info.st_mode & S_IFMT == S_IFDIR
                else {
                    throw code == EEXIST
                        ? BlocklistError(
                            .io,
                            "\(prefix) is \(_fileTypeName(info.st_mode)), not a directory; nothing was written into it."
                        )
                        : _ioError("Making the directory", prefix, errno: code)
                }
            }
            prefix += "/"
        }
    }

    /// Renames `source` over `destination` in one step: `destination` is the old file or the new.
    package static func rename(_ source: String, over destination: String) throws(BlocklistError) {
        let result = source.withCString { from in destination.withCString { to in LibC.rename(from, to) } }
        guard result == 0 else { throw _ioError("Renaming \(source) to", destination) }
    }

    /// Opens the existing regular file `path` for writing, to go on where it ends (a download
    /// resumed); a symlink is refused (O_NOFOLLOW), never written through.
    package static func openForResuming(_ path: String) throws(BlocklistError) -> FileDescriptor {
        let fd = path.withCString { open($0, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw _ioError("Opening", path) }
        let descriptor = FileDescriptor(rawValue: fd, path: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw _ioError("Reading the status of", path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw BlocklistError(
                .io,
                "\(path) is \(_fileTypeName(info.st_mode)), not a regular file; refusing to write to it."
            )
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    /// Cuts the file to `length` bytes.
    package func truncate(to length: Int64) throws(BlocklistError) {
        guard ftruncate(rawValue, off_t(length)) == 0 else { throw _ioError("Truncating", path) }
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

/// "a FIFO (named pipe)", "a character device", …: what a non-regular file is, for sentences.
package func _fileTypeName(_ type: mode_t) -> String {
    switch type & S_IFMT {
    case S_IFDIR: "a directory"
    case S_IFIFO: "a FIFO (named pipe)"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFSOCK: "a socket"
    case S_IFLNK: "a symbolic link"
    default: "not a regular file"
    }
}
