import BlocklistCore
import BlocklistSystem
import SetStorage

extension Manifest {
    /// The largest manifest read: 10,000 shards take about 1.6 MB.
    static let maximumSize = 64 << 20

    /// Reads and checks `outputDirectory/manifest.json`. Reads only: never creates or changes a file.
    ///
    /// - Throws: `BlocklistError` naming the file: missing, not a regular file, not JSON, a newer
    ///   version, or a file name that would reach outside the set directory.
    package static func load(from outputDirectory: String) throws(BlocklistError) -> Manifest {
        let path = outputDirectory + "/" + fileName
        switch try FileSystem.kind(outputDirectory) {
        case .missing:
            throw BlocklistError(
                .io,
                "\(outputDirectory) does not exist; run `blocklist generate --output \(outputDirectory)` first."
            )
        case .directory: break
        default: throw BlocklistError(.io, "\(outputDirectory) is not a directory.")
        }
        if try FileSystem.kind(path) == .missing {
            // `generate` refuses a directory that holds other files: suggest it only for an empty one.
            let names = (try? FileSystem.list(outputDirectory)) ?? []
            guard names.isEmpty else {
                let shown =
                    names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
                throw BlocklistError(
                    .manifestMismatch,
                    "\(outputDirectory) holds no blocklist set: it has no \(fileName) but other files (\(shown)); give the directory `blocklist generate --output` wrote, or generate a set into a new directory."
                )
            }
            throw BlocklistError(
                .manifestMismatch,
                "\(outputDirectory) has no \(fileName); run `blocklist generate --output \(outputDirectory)` first."
            )
        }
        let manifest = try decode(try FileSystem.readFile(path, limit: maximumSize), path: path)
        try manifest.validate(path: path)
        return manifest
    }
}
