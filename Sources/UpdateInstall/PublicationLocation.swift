import HTTPFetch
import UpdateCore

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
    return DirectoryPublication(directory: location)
}
