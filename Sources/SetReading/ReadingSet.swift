import BlocklistCore
import BlocklistSystem
internal import LibC
import SetStorage

/// A committed generation held open for reading: its manifest, and a shared lock on its marker
/// that keeps `generate` from removing it until this value goes away.
///
/// `load` and `verify` read through one, so a `generate` that commits a new set meanwhile leaves
/// the old one in place for them (and removes it on a later run).
package final class ReadingSet {
    /// The output directory.
    package let directory: String
    /// The manifest of the generation held.
    package let manifest: Manifest
    private let lock: FileLock?

    /// Reads `directory`'s manifest and locks its generation (shared). Reads only: a set written
    /// before generation markers existed is read without a lock.
    ///
    /// If a generate replaces the manifest and removes the generation between the read and the
    /// lock, the marker is gone (or unlinked once the lock is had) and the manifest is read again.
    ///
    /// - Throws: `BlocklistError` from `Manifest.load`, or `.busy` if the set keeps changing.
    package init(directory: String) throws(BlocklistError) {
        self.directory = directory
        var attempts = 0
        while true {
            attempts += 1
            let manifest = try Manifest.load(from: directory)
            let setPath = directory + "/" + manifest.directory
            let marker = setPath + "/" + OutputDirectory.markerName
            switch try FileSystem.kind(setPath, followingSymlinks: false) {
            case .symlink:
                throw BlocklistError(
                    .invalidInput,
                    "\(setPath) is a symbolic link, not the directory generate wrote; blocklist follows no link inside a set. Generate the set again."
                )
            case .file, .other:
                throw BlocklistError(
                    .invalidInput,
                    "\(setPath) is not a directory; the manifest names it as the set's generation. Generate the set again."
                )
            case .missing, .directory:
                break
            }
            let kind = try FileSystem.kind(marker, followingSymlinks: false)
            if kind == .missing, try FileSystem.kind(setPath, followingSymlinks: false) == .directory,
                try Manifest.load(from: directory).generation == manifest.generation
            {
                // An older version's set: nothing to lock.
                self.manifest = manifest
                lock = nil
                return
            }
            if kind == .file, let handle = try? DirectoryHandle(path: setPath, followingSymlinks: false),
                let held = try? handle.lock(
                    OutputDirectory.markerName,
                    exclusive: false,
                    create: false,
                    what: "The set \(setPath)"
                ),
                held.isLinked
            {
                self.manifest = manifest
                lock = held
                return
            }
            guard attempts < 100 else {
                throw BlocklistError(
                    .busy,
                    "\(directory) kept changing while it was opened (100 tries); is a generate looping on it?"
                )
            }
            usleep(10_000)
        }
    }

    /// The path of `shard`.
    package func path(of shard: Manifest.Shard) -> String { manifest.path(of: shard, in: directory) }

    /// Lets go of the generation (also when this value goes away).
    package func close() { lock?.unlock() }
}
