import BlocklistCore
import BlocklistSystem
import MessageFilterCore

/// Where compiled rules live on disk, and how they are written: aside, then renamed into place,
/// so that a reader sees the old file or the new one, never a mix.
package enum CompiledRulesFile {
    /// The file `sms compile` writes in its output directory.
    package static let name = "rules.blsms"

    /// The compiled rules file a path names: the path itself, or `rules.blsms` inside it if it
    /// is a directory.
    package static func resolve(_ path: String) -> String {
        (try? FileSystem.kind(path)) == .directory ? path + "/" + name : path
    }

    /// Writes `bytes` as `directory/rules.blsms`, creating the directory (not its parents) if
    /// needed.
    ///
    /// An existing `rules.blsms` is replaced only if it is a regular file that starts with the
    /// compiled rules magic; anything else there (a symlink, a directory, another file) is
    /// refused and left alone. The new file is written to a temporary name, synced, and renamed;
    /// on any failure the temporary file is removed and the old file stays.
    ///
    /// - Throws: `MessageFilterError` (`.io`), whose sentence names the directory or file; the
    ///   file system's own errors are carried over in its words.
    package static func write(_ bytes: [UInt8], toDirectory directory: String) throws(MessageFilterError) -> String {
        // A file the readers would refuse is never written.
        guard bytes.count <= CompiledRulesFormat.maximumFileSize else {
            throw MessageFilterError(
                .invalidRules,
                "The compiled rules would take \(bytes.count) bytes; an extension reads at most \(CompiledRulesFormat.maximumFileSize) (64 MiB), so split the rules or shorten them. Nothing was written."
            )
        }
        do {
            return try writeAside(bytes, toDirectory: directory)
        } catch {
            throw MessageFilterError(.io, error.message)
        }
    }

    private static func writeAside(_ bytes: [UInt8], toDirectory directory: String) throws(BlocklistError) -> String {
        guard !directory.isEmpty else {
            throw BlocklistError(.invalidInput, "The output directory is empty; give a directory such as Output.")
        }
        if try FileSystem.kind(directory) == .directory, try FileSystem.resolvedPath(directory) == "/" {
            throw BlocklistError(
                .invalidInput,
                "Refusing to use / as the output directory; give a directory of its own, such as Output."
            )
        }
        switch try FileSystem.kind(directory, followingSymlinks: false) {
        case .missing: try FileSystem.makeDirectory(directory)
        case .directory: break
        case .symlink:
            guard try FileSystem.kind(directory) == .directory else {
                throw BlocklistError(
                    .io,
                    "\(directory) is a symlink to something that is not a directory; give a directory for the compiled rules."
                )
            }
        default:
            throw BlocklistError(
                .io,
                "\(directory) exists and is not a directory; give a directory for the compiled rules."
            )
        }
        let handle = try DirectoryHandle(path: directory)
        switch try handle.kind(of: name) {
        case .missing: break
        case .file:
            let head = try handle.readFile(name, limit: 8, prefix: 8)
            guard head == CompiledRulesFormat.magic else {
                throw BlocklistError(
                    .io,
                    "\(handle.path(of: name)) exists and is not compiled rules; leaving it. Remove it or choose another --output."
                )
            }
        default:
            throw BlocklistError(
                .io,
                "\(handle.path(of: name)) exists and is not a regular file; leaving it. Remove it or choose another --output."
            )
        }
        var random = SystemRandomNumberGenerator()
        let temporary = ".\(name).\(String(random.next() as UInt64, radix: 16)).tmp"
        do {
            try FileSystem.writeNewFile(handle.path(of: temporary), bytes, sync: true)
            try handle.rename(temporary, to: name)
            try handle.sync()
        } catch {
            try? handle.removeRegularFile(temporary)
            throw error
        }
        return handle.path(of: name)
    }
}
