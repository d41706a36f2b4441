import HTTPFetch
import UpdateCore

/// The reader for a publication `--from` names: an `http://` URL (a request stops once no byte
/// has moved for `stallTimeout` nanoseconds, and everything at `deadline`, CLOCK_MONOTONIC
/// nanoseconds, if one is given), or a directory path. A push's URL never comes here: the
/// notification service reads only URLs (`HTTPPublication`).
package func publicationReader(
    _ location: String,
    deadline: UInt64 = .max,
    stallTimeout: UInt64 = HTTPPublication.defaultStallTimeout,
    isCancelled: @escaping () -> Bool = { false }
) throws -> any PublicationReader {
    // A scheme is case-insensitive (RFC 3986 §3.1), as HTTPURL and the push URL check read it.
    let lowered = location.prefix(8).lowercased()
    if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
        return try HTTPPublication(location, deadline: deadline, stallTimeout: stallTimeout, isCancelled: isCancelled)
    }
    if let colon = location.firstIndex(of: ":"), location[colon...].hasPrefix("://") {
        throw UpdateError(
            .malformed,
            "\(location.prefix(200)) is neither an http:// URL nor a directory; a publication is read over HTTP or from a directory."
        )
    }
    return DirectoryPublication(directory: location)
}
