internal import LibC

/// An advisory lock (`flock`) on a file, held until dropped: exclusive for a writer, shared for
/// readers.
///
/// The kernel releases it when the process dies, so a killed holder never leaves it stuck.
package final class FileLock {
    private var fd: Int32

    /// Takes the exclusive lock on `path` (creating the file), or fails with `.busy` naming
    /// `what` once another holder has kept it for `patienceMilliseconds` (default: at once).
    package convenience init(path: String, what: String, patienceMilliseconds: Int = 0) throws(BlocklistError) {
        let fd = path.withCString { open($0, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw _ioError("Opening the lock file", path) }
        try self.init(fd: fd, path: path, exclusive: true, what: what, patienceMilliseconds: patienceMilliseconds)
    }

    /// Takes the lock on an open descriptor, which it then owns; fails with `.busy` if another
    /// holder keeps it for `patienceMilliseconds` (default: at once).
    ///
    /// A little patience matters for a lock a process holds for its whole run: while any thread of
    /// it spawns a child, the child shares the lock until its exec closes the descriptor.
    package init(fd: Int32, path: String, exclusive: Bool, what: String, patienceMilliseconds: Int = 0)
        throws(BlocklistError)
    {
        var waited = 0
        while flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            let code = errno
            if code == EWOULDBLOCK && waited < patienceMilliseconds {
                usleep(10_000)
                waited += 10
                continue
            }
            close(fd)
            if code == EWOULDBLOCK {
                throw BlocklistError(.busy, "\(what) is busy: another process holds the lock \(path).")
            }
            throw BlocklistError(
                .io,
                "Locking \(path) failed: \(_errnoText(code)).",
                underlying: SystemError(errno: code)
            )
        }
        self.fd = fd
    }

    /// Whether the locked file still has a name: false once it was unlinked, which is how a
    /// writer tells readers that waited for this lock that what it guarded is gone.
    package var isLinked: Bool {
        var info = stat()
        return fd >= 0 && fstat(fd, &info) == 0 && info.st_nlink > 0
    }

    /// Releases the lock; later calls do nothing.
    ///
    /// `LOCK_UN` first, then `close`: a child that another thread forked in the meantime holds a
    /// copy of the descriptor until its exec, and closing ours alone would leave the lock held
    /// through that copy, so that the next taker found it busy.
    package func unlock() {
        if fd >= 0 {
            flock(fd, LOCK_UN)
            close(fd)
        }
        fd = -1
    }

    deinit { unlock() }
}
