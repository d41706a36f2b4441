import BlocklistCore
internal import LibC

// The file-system and process calls of the tools (never of an extension): committing directories,
// locks, /proc. Each return code becomes a thrown `BlocklistError` whose sentence names the path.

/// File-system operations for committing shard sets, each turning its return code into a sentence.
package enum FileSystem {
    /// What is at a path.
    package enum Kind: Equatable {
        case missing, file, directory, symlink, other
    }

    /// What `path` is, following symlinks (as opening it would), or with `followingSymlinks: false`
    /// what the last component itself is.
    package static func kind(_ path: String, followingSymlinks: Bool = true) throws(BlocklistError) -> Kind {
        var info = stat()
        let result = path.withCString { followingSymlinks ? stat($0, &info) : lstat($0, &info) }
        if result != 0 {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            throw _ioError("Reading the status of", path)
        }
        return Kind(mode: info.st_mode)
    }

    package static func isWritableDirectory(_ path: String) -> Bool {
        path.withCString { access($0, W_OK | X_OK) } == 0
    }

    /// Creates the directory `path`.
    ///
    /// - Returns: false if something already had that name (another process may have made it
    ///   since the caller looked: the caller looks again, and did not create it).
    @discardableResult
    package static func makeDirectory(_ path: String) throws(BlocklistError) -> Bool {
        guard path.withCString({ mkdir($0, 0o755) }) == 0 else {
            if errno == EEXIST { return false }
            throw _ioError("Creating the directory", path)
        }
        return true
    }

    /// Removes the directory `path` if it is empty (rmdir: never a symlink, never anything in it).
    package static func removeEmptyDirectory(_ path: String) throws(BlocklistError) {
        guard path.withCString({ rmdir($0) }) == 0 || errno == ENOENT else {
            throw _ioError("Removing the directory", path)
        }
    }

    package static func rename(_ from: String, to: String) throws(BlocklistError) {
        let result = from.withCString { source in to.withCString { target in _rename(source, target) } }
        guard result == 0 else {
            let code = errno
            throw BlocklistError(
                .io,
                "Renaming \(from) to \(to) failed: \(_errnoText(code)).",
                underlying: SystemError(errno: code)
            )
        }
    }

    /// Unlinks `path` (a symlink itself, never its target); a missing file is not an error.
    package static func removeFile(_ path: String) throws(BlocklistError) {
        guard path.withCString({ unlink($0) }) == 0 || errno == ENOENT else { throw _ioError("Removing", path) }
    }

    /// The names in a directory, without "." and "..", sorted.
    package static func list(_ path: String) throws(BlocklistError) -> [String] {
        try DirectoryHandle(path: path).entries()
    }

    /// The absolute path of an existing directory, symlinks resolved.
    /// Makes a new directory of its own under $TMPDIR (or /tmp), named `prefix-XXXXXX`.
    package static func makeTemporaryDirectory(prefix: String) throws(BlocklistError) -> String {
        let parent = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((parent + "/" + prefix + "-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw _ioError("Creating a temporary directory in", parent)
        }
        return String(cString: made)
    }

    package static func resolvedPath(_ path: String) throws(BlocklistError) -> String {
        guard let resolved = path.withCString({ realpath($0, nil) }) else { throw _ioError("Resolving", path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Reads a whole file of at most `limit` bytes, to its end (files in /proc report size 0).
    package static func readFile(_ path: String, limit: Int = 64 << 20) throws(BlocklistError) -> [UInt8] {
        try FileDescriptor.readWholeFile(path, limit: limit)
    }

    /// Writes `bytes` to a new file at `path` (which must not exist) and flushes it.
    package static func writeNewFile(_ path: String, _ bytes: [UInt8], sync: Bool) throws(BlocklistError) {
        try FileDescriptor.writeNewFile(path, bytes, sync: sync)
    }
}

extension FileSystem.Kind {
    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .file
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symlink
        default: self = .other
        }
    }
}

/// An open directory. Everything it does to the entries in it is relative to its descriptor and
/// never follows a symlink (`fstatat`/`openat` with `AT_SYMLINK_NOFOLLOW`/`O_NOFOLLOW`,
/// `unlinkat`), so swapping an entry for a symlink cannot make it touch anything outside.
package final class DirectoryHandle {
    package let path: String
    private let fd: Int32

    /// Opens the directory at `path` (following a symlink only if `followingSymlinks`).
    package init(path: String, followingSymlinks: Bool = true) throws(BlocklistError) {
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingSymlinks ? 0 : O_NOFOLLOW)
        let fd = path.withCString { open($0, flags) }
        guard fd >= 0 else { throw _ioError("Opening the directory", path) }
        self.path = path
        self.fd = fd
    }

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { _ = close(fd) }

    /// The path of entry `name`, for sentences.
    package func path(of name: String) -> String { path + "/" + name }

    /// What entry `name` itself is (a symlink is `.symlink`, never its target).
    package func kind(of name: String) throws(BlocklistError) -> FileSystem.Kind {
        var info = stat()
        guard name.withCString({ fstatat(fd, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            if errno == ENOENT { return .missing }
            throw _ioError("Reading the status of", path(of: name))
        }
        return FileSystem.Kind(mode: info.st_mode)
    }

    /// The entry names, without "." and "..", sorted.
    package func entries() throws(BlocklistError) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let directory = fdopendir(copy) else {
            if copy >= 0 { _ = close(copy) }
            throw _ioError("Listing", path)
        }
        defer { closedir(directory) }
        rewinddir(directory)
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Opens the subdirectory `name`; a symlink is refused (ELOOP), never followed.
    package func openDirectory(_ name: String) throws(BlocklistError) -> DirectoryHandle {
        let child = name.withCString { openat(fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard child >= 0 else { throw _ioError("Opening the directory", path(of: name)) }
        return DirectoryHandle(fd: child, path: path(of: name))
    }

    package func makeDirectory(_ name: String) throws(BlocklistError) {
        guard name.withCString({ mkdirat(fd, $0, 0o755) }) == 0 else {
            throw _ioError("Creating the directory", path(of: name))
        }
    }

    /// Renames entry `from` to `to` (both in this directory, or `to` in `target`). A symlink at
    /// `to` is replaced, not followed.
    package func rename(_ from: String, to: String, in target: DirectoryHandle? = nil) throws(BlocklistError) {
        let targetFD = target?.fd ?? fd
        let targetPath = target?.path(of: to) ?? path(of: to)
        let result = from.withCString { source in to.withCString { renameat(fd, source, targetFD, $0) } }
        guard result == 0 else {
            let code = errno
            throw BlocklistError(
                .io,
                "Renaming \(path(of: from)) to \(targetPath) failed: \(_errnoText(code)).",
                underlying: SystemError(errno: code)
            )
        }
    }

    /// Unlinks the regular file `name`: a symlink, a directory or anything else is left alone and
    /// refused. A missing entry is not an error.
    package func removeRegularFile(_ name: String) throws(BlocklistError) {
        switch try kind(of: name) {
        case .missing: return
        case .file: break
        default: throw BlocklistError(.io, "\(path(of: name)) is not a regular file blocklist wrote; leaving it.")
        }
        guard name.withCString({ unlinkat(fd, $0, 0) }) == 0 || errno == ENOENT else {
            throw _ioError("Removing", path(of: name))
        }
    }

    /// Removes the empty subdirectory `name` (rmdir never follows a symlink). A missing one is
    /// not an error; a non-empty one fails with ENOTEMPTY.
    package func removeEmptyDirectory(_ name: String) throws(BlocklistError) {
        guard name.withCString({ unlinkat(fd, $0, AT_REMOVEDIR) }) == 0 || errno == ENOENT else {
            throw _ioError("Removing the directory", path(of: name))
        }
    }

    /// Reads the regular file `name` (never through a symlink): all of it, refusing more than
    /// `limit` bytes, or only its first `prefix` bytes.
    package func readFile(_ name: String, limit: Int, prefix: Int? = nil) throws(BlocklistError) -> [UInt8] {
        let file = name.withCString { openat(fd, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard file >= 0 else { throw _ioError("Opening", path(of: name)) }
        defer { _ = close(file) }
        var info = stat()
        guard fstat(file, &info) == 0 else { throw _ioError("Reading the status of", path(of: name)) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw BlocklistError(.io, "\(path(of: name)) is \(_fileTypeName(info.st_mode)), not a regular file.")
        }
        var bytes = [UInt8](repeating: 0, count: prefix ?? (min(limit, Int(info.st_size)) + 1))
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes {
                pread(file, $0.baseAddress! + filled, $0.count - filled, off_t(filled))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw _ioError("Reading", path(of: name))
            }
            if n == 0 { break }
            filled += n
        }
        guard filled <= limit else {
            throw BlocklistError(.limitExceeded, "\(path(of: name)) is larger than the \(limit) bytes expected.")
        }
        return Array(bytes[0..<filled])
    }

    /// Flushes the directory's entries to stable storage.
    package func sync() throws(BlocklistError) {
        guard fsync(fd) == 0 else { throw _ioError("Syncing the directory", path) }
    }

    /// Takes an advisory lock on the regular file `name` in this directory, creating it if needed
    /// (never through a symlink).
    /// With `create: false` the file must exist, and is opened read-only (enough for `flock`), so
    /// a reader never creates or changes a file.
    package func lock(
        _ name: String,
        exclusive: Bool,
        create: Bool = true,
        what: String,
        patienceMilliseconds: Int = 0
    ) throws(BlocklistError) -> FileLock {
        let flags = create ? O_RDWR | O_CREAT : O_RDONLY
        // A holder that gives the directory up removes the lock file before it unlocks; whoever
        // waited for it then holds a lock on a file without a name, which a newcomer would not
        // see. Lock the file that has the name instead.
        for _ in 0..<3 {
            let lockFD = name.withCString { openat(fd, $0, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644) }
            guard lockFD >= 0 else { throw _ioError("Opening the lock file", path(of: name)) }
            let lock = try FileLock(
                fd: lockFD,
                path: path(of: name),
                exclusive: exclusive,
                what: what,
                patienceMilliseconds: patienceMilliseconds
            )
            if !create || lock.isLinked { return lock }
            lock.unlock()
        }
        throw BlocklistError(
            .busy,
            "\(what) is busy: its lock file \(path(of: name)) was removed three times while this process waited for it."
        )
    }
}

private func _rename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    rename(from, to)
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
            func value() -> Int {
                Int(
                    text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
                        ?? 0
                )
            }
            if text.hasPrefix("VmHWM:") { memory.peakResident = value() }
            if text.hasPrefix("VmRSS:") { memory.resident = value() }
            if text.hasPrefix("RssAnon:") { memory.anonymous = value() }
        }
        return memory
    }
    /// The process's dirty private memory in KiB (Private_Dirty of /proc/PID/smaps_rollup):
    /// anonymous pages and file pages it has written, what iOS counts as an extension's
    /// footprint, not the clean pages of its binary or of a mapped file. Nil where the file is
    /// not available. A binary written moments ago shows its pages as dirty until they reach the
    /// disk: sync first.
    package static func privateDirtyKiB(pid: Int32? = nil) -> Int? {
        let path = pid.map { "/proc/\($0)/smaps_rollup" } ?? "/proc/self/smaps_rollup"
        guard let bytes = try? FileSystem.readFile(path, limit: 1 << 20) else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("Private_Dirty:") else { continue }
            return text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }
}
