import BlocklistCore
import BlocklistSystem
import Crypto
internal import LibC
import SetStorage
import UpdateCore

/// The App Group's download cache (`.blocklist-downloads`): each file an update downloads is
/// kept there under its SHA-256 (`<hex>`, and `<hex>.part` while it arrives), so that a run that
/// is interrupted (a stall, the extension's deadline, a kill) leaves what it got, and the next
/// run resumes it instead of starting over. Proved blocklist's own by its marker; only names of
/// that form are ever removed from it, never anything else, and never through a symlink.
///
/// Without an App Group (an update from a directory, where nothing needs resuming), it is a
/// temporary directory of its own, which `removeTemporary` removes.
struct DownloadCache {
    let directory: DirectoryHandle
    let isTemporary: Bool

    /// Opens (creating if missing) the cache in `appGroup`, or a new temporary one.
    init(in appGroup: String?) throws {
        guard let appGroup else {
            Self.removeAbandoned()
            let made = try DirectoryHandle(path: try FileSystem.makeTemporaryDirectory(prefix: Self.temporaryPrefix))
            // The marker names this process: a later run removes the directory once it is gone.
            do {
                try FileSystem.writeNewFile(
                    made.path(of: OutputDirectory.downloadsMarkerName),
                    Self.temporaryMarker(pid: getpid()),
                    sync: false
                )
            } catch {
                // Made this instant, by this process: what there is of it goes again.
                try? made.removeRegularFile(OutputDirectory.downloadsMarkerName)
                try? FileSystem.removeEmptyDirectory(made.path)
                throw error
            }
            directory = made
            isTemporary = true
            return
        }
        isTemporary = false
        if try FileSystem.kind(appGroup) == .missing { _ = try FileSystem.makeDirectory(appGroup) }
        let group = try DirectoryHandle(path: appGroup)
        let name = OutputDirectory.downloadsName
        // A run killed (or out of disk) between making the cache and writing its marker left
        // it empty, or with a marker cut short: made by blocklist, so made again.
        if try group.kind(of: name) == .directory, try !OutputDirectory.isDownloadCache(name, in: group) {
            Self.removeIfCutShort(group.path(of: name), expected: OutputDirectory.downloadsMarkerContent, age: 0)
        }
        if try group.kind(of: name) == .missing {
            try group.makeDirectory(name)
            try FileSystem.writeNewFile(
                group.path(of: name) + "/" + OutputDirectory.downloadsMarkerName,
                OutputDirectory.downloadsMarkerContent,
                sync: true
            )
        }
        guard try OutputDirectory.isDownloadCache(name, in: group) else {
            throw UpdateError(
                .malformed,
                "\(group.path(of: name)) is not the download cache blocklist made (no marker); move it away."
            )
        }
        directory = try group.openDirectory(name)
    }

    /// Where `file` is downloaded to.
    func path(of file: FileInfo) -> String { directory.path(of: TextEncodings.hex(file.sha256)) }

    /// Whether `file` is here whole, with its length and SHA-256 (an earlier run finished it).
    func holds(_ file: FileInfo) -> Bool {
        let name = TextEncodings.hex(file.sha256)
        guard (try? directory.kind(of: name)) == .file, let input = try? FileDescriptor.openForReading(path(of: file)),
            (try? input.size()) == file.length
        else { return false }
        var sha = SHA256()
        guard (try? HTTPPublication.hash(path(of: file), bytes: file.length, into: &sha)) != nil else { return false }
        return Array(sha.finalize()) == file.sha256
    }

    /// Removes every cached file but those of `keeping` (by SHA-256): what a finished update, or
    /// one for a generation no longer published, left.
    func prune(keeping: Set<[UInt8]>) throws {
        let kept = Set(keeping.map { TextEncodings.hex($0) })
        for name in try directory.entries() {
            // <hex>, <hex>.part, or <hex>.<pid>.part (beside a part that was not a regular file).
            var base = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
            if name.hasSuffix(".part"), let dot = base.firstIndex(of: "."),
                Int32(base[base.index(after: dot)...]) != nil
            {
                base = String(base[..<dot])
            }
            guard base.utf8.count == 64, base.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
                !kept.contains(base), try directory.kind(of: name) == .file
            else { continue }
            try directory.removeRegularFile(name)
        }
    }

    /// Empties the App Group's cache, when it has one that is blocklist's, after an install
    /// that did not go through it (an update file, or a publication in a directory): what an
    /// earlier interrupted run left is of no use once the set is newer. Best effort.
    static func emptyIfPresent(in appGroup: String) {
        guard let group = try? DirectoryHandle(path: appGroup),
            (try? group.kind(of: OutputDirectory.downloadsName)) == .directory,
            (try? OutputDirectory.isDownloadCache(OutputDirectory.downloadsName, in: group)) == true,
            let directory = try? group.openDirectory(OutputDirectory.downloadsName)
        else { return }
        try? DownloadCache(directory: directory, isTemporary: false).prune(keeping: [])
    }

    static let temporaryPrefix = "blocklist-update"

    /// Removes a temporary cache: its files of the cache's names, its marker, the directory.
    func removeTemporary() {
        guard isTemporary else { return }
        try? prune(keeping: [])
        try? directory.removeRegularFile(OutputDirectory.downloadsMarkerName)
        try? FileSystem.removeEmptyDirectory(directory.path)
    }

    /// A temporary cache's marker: the cache's marker, then the process that made it.
    static func temporaryMarker(pid: Int32) -> [UInt8] {
        OutputDirectory.downloadsMarkerContent + Array("pid \(pid)\n".utf8)
    }

    /// Removes the temporary caches in $TMPDIR of updates that were killed: those whose marker
    /// names a process that no longer runs. A run killed between making its directory and
    /// writing the marker leaves the directory empty, or holding a marker cut short: those go
    /// too once a minute old (an update starting now may be about to write its marker), the
    /// directory by rmdir, which removes only an empty one. Anything else stays.
    static func removeAbandoned(
        in parent: String = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    ) {
        guard let names = try? FileSystem.list(parent) else { return }
        for name in names where name.hasPrefix(temporaryPrefix + "-") {
            // What a whole marker's writer may have written so far, with any pid.
            removeIfCutShort(
                parent + "/" + name,
                expected: OutputDirectory.downloadsMarkerContent + Array("pid ".utf8),
                age: 60,
                digitsAfter: true
            )
            guard let child = try? DirectoryHandle(path: parent + "/" + name, followingSymlinks: false),
                let marker = try? child.readFile(OutputDirectory.downloadsMarkerName, limit: 64),
                marker.starts(with: OutputDirectory.downloadsMarkerContent),
                let pid = Int32(
                    String(decoding: marker.dropFirst(OutputDirectory.downloadsMarkerContent.count), as: UTF8.self)
                        .dropFirst(4).prefix { $0 != "\n" }
                ),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let abandoned = DownloadCache(directory: child, isTemporary: true)
            abandoned.removeTemporary()
        }
    }

    /// Removes `path` if it is a cache whose run was killed before its marker was whole: empty,
    /// or holding only the marker with a proper beginning of `expected` (for a temporary cache,
    /// with `digitsAfter`, the marker's text, "pid " and digits), and unchanged for `age`
    /// seconds (an update starting now may be about to write its marker).
    private static func removeIfCutShort(_ path: String, expected: [UInt8], age: Int, digitsAfter: Bool = false) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
            Int(time(nil)) - Int(info.st_mtim.tv_sec) >= age,
            let child = try? DirectoryHandle(path: path, followingSymlinks: false),
            let entries = try? child.entries()
        else { return }
        if entries == [OutputDirectory.downloadsMarkerName] {
            let marker = OutputDirectory.downloadsMarkerName
            guard (try? child.kind(of: marker)) == .file,
                let bytes = try? child.readFile(marker, limit: 64)
            else { return }
            let written = bytes.prefix(expected.count)
            // A whole temporary marker ends in a newline after the digits: the pid check's.
            guard expected.starts(with: written), written.count < expected.count || digitsAfter,
                bytes.dropFirst(expected.count).allSatisfy({ digitsAfter && (48...57).contains($0) })
            else { return }
            try? child.removeRegularFile(marker)
        } else if !entries.isEmpty {
            return
        }
        try? FileSystem.removeEmptyDirectory(path)
    }

    private init(directory: DirectoryHandle, isTemporary: Bool) {
        self.directory = directory
        self.isTemporary = isTemporary
    }
}
