import BlocklistCore
import BlocklistSystem
import Crypto
import UpdateCore

/// Where an update reads a publication from: a directory (a mounted share, a test) or a server.
package protocol PublicationReader {
    /// Names the publication in sentences.
    var name: String { get }
    /// The file at `path` (relative to the publication), `nil` if it does not exist. An
    /// `optional` file (one the publication may lack, as the next root) also counts as missing
    /// where a static host hides missing files behind a refusal or an HTML page.
    ///
    /// - Throws: past `maximumBytes`, or if it cannot be read.
    func read(_ path: String, maximumBytes: Int, optional: Bool) throws -> [UInt8]?
    /// Copies `file` to the new file `destination`, checking its length and SHA-256 as it goes;
    /// `isCancelled` is polled between pieces.
    func download(_ file: FileInfo, to destination: String, isCancelled: () -> Bool) throws
    /// Told the installed generation before anything is read: a server may then send
    /// everything in one request. Optional.
    func prepare(installedGeneration: UInt64) throws
    /// Body bytes received over the network so far, if this reader uses one.
    var bytesOnTheWire: Int64? { get }
}

extension PublicationReader {
    /// A file the publication must have: the host's refusal is an error.
    package func read(_ path: String, maximumBytes: Int) throws -> [UInt8]? {
        try read(path, maximumBytes: maximumBytes, optional: false)
    }
    package func prepare(installedGeneration: UInt64) throws {}
    package var bytesOnTheWire: Int64? { nil }
}

/// A publication in a directory.
package struct DirectoryPublication: PublicationReader {
    package let directory: String
    package var name: String { directory }

    package init(directory: String) { self.directory = directory }

    package func read(_ path: String, maximumBytes: Int, optional: Bool) throws -> [UInt8]? {
        guard FileInfo.isSafe(path) else { throw UpdateError(.malformed, "\(path) is not a plain relative path.") }
        let full = directory + "/" + path
        guard try FileSystem.kind(full) != .missing else { return nil }
        let result: Result<[UInt8], BlocklistError> = Result { () throws(BlocklistError) in
            try FileSystem.readFile(full, limit: maximumBytes)
        }
        if case .failure(let error) = result, error.code == .limitExceeded {
            throw UpdateError(.mismatch, "\(full) is larger than the \(maximumBytes) bytes the signed metadata allows.")
        }
        return try result.get()
    }

    package func download(_ file: FileInfo, to destination: String, isCancelled: () -> Bool) throws {
        guard let bytes = try read(file.path, maximumBytes: Int(file.length)) else {
            throw UpdateError(.mismatch, "\(directory)/\(file.path), which the signed snapshot names, is missing.")
        }
        try file.check(bytes, what: "\(directory)/\(file.path)")
        try FileSystem.writeNewFile(destination, bytes, sync: false)
    }
}
