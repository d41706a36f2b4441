import BlocklistCore
import BlocklistSystem
import SetStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Manifest {
    /// The largest manifest read: 10,000 shards take about 1.6 MB.
    static let maximumSize = 64 << 20

    /// Reads and checks `outputDirectory/manifest.json`. Reads only: never creates or changes a file.
    ///
    /// - Throws: `BlocklistError` naming the file: missing, not a regular file, not JSON, a newer
    ///   version, or a file name that would reach outside the set directory.
    public static func load(from outputDirectory: String) throws(BlocklistError) -> Manifest {
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
            throw BlocklistError(
                .manifestMismatch,
                "\(outputDirectory) has no \(fileName); run `blocklist generate --output \(outputDirectory)` first."
            )
        }
        let bytes = try FileSystem.readFile(path, limit: maximumSize)
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: Data(bytes))
        } catch {
            throw BlocklistError(
                .manifestMismatch,
                "\(path) is not a valid manifest: \(describe(error))",
                underlying: error
            )
        }
        try manifest.validate(path: path)
        return manifest
    }
}

/// A decoding error as one readable clause.
private func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)." }
    func location(_ path: [any CodingKey]) -> String {
        path.isEmpty
            ? "the top level" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
    switch error {
    case .keyNotFound(let key, let context): return "\(location(context.codingPath + [key])) is missing."
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
        return "\(location(context.codingPath)) has the wrong type (\(context.debugDescription))."
    case .dataCorrupted(let context): return "\(location(context.codingPath)): \(context.debugDescription)"
    @unknown default: return "\(error)."
    }
}
