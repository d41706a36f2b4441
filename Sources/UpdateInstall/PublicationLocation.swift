import UpdateCore

/// The reader for a publication a push or `--from` names: a directory path, or an `http://` URL.
public func publicationReader(_ location: String) throws -> any PublicationReader {
    if location.hasPrefix("http://") || location.hasPrefix("https://") {
        throw UpdateError(
            .malformed,
            "\(location): reading a publication over HTTP is not built into this version; give a directory."
        )
    }
    return DirectoryPublication(directory: location)
}
