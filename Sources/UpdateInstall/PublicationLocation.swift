import HTTPFetch
import UpdateCore

/// The file `name` in the directory that holds `path` (`.` for a bare file name): where the push
/// key sits beside the trust root, and the root beside the signing key.
public func siblingFile(of path: String, named name: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return name }
    return String(path[...slash]) + name
}

/// The reader for a publication a push or `--from` names: an `http://` URL (every request within
/// `deadline`, CLOCK_MONOTONIC nanoseconds; default: a minute from now), or a directory path.
public func publicationReader(
    _ location: String,
    deadline: UInt64? = nil,
    isCancelled: @escaping () -> Bool = { false }
) throws -> any PublicationReader {
    if location.hasPrefix("http://") || location.hasPrefix("https://") {
        return try HTTPPublication(
            location,
            deadline: deadline ?? HTTPFetch.now() + 60_000_000_000,
            isCancelled: isCancelled
        )
    }
    if let colon = location.firstIndex(of: ":"), location[colon...].hasPrefix("://") {
        throw UpdateError(
            .malformed,
            "\(location) is neither an http:// URL nor a directory; a publication is read over HTTP or from a directory."
        )
    }
    return DirectoryPublication(directory: location)
}
