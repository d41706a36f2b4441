/// What a publication's host said about one file, as UpdateCore reads an HTTP answer: the
/// file, no such file, or a refusal with its sentence. The one reading of a host's answer, for
/// the app's URLSession and the tools' HTTP client alike (docs/USAGE.md, on hosts that hide
/// missing files).
public enum HostAnswer: Sendable, Equatable {
    /// The file's bytes.
    case file([UInt8])
    /// The host has no such file: 404 or 410, or, for a file that may be missing, a 403 (S3
    /// without list permission) or a web page of the host's own (a single-page-app fallback).
    case missing
    /// Any other answer, with a sentence naming the URL and what it answered.
    case refused(String)

    /// Reads a host's answer to a GET of `url`.
    ///
    /// - Parameters:
    ///   - url: the file's URL, for the sentence.
    ///   - status: the HTTP status code.
    ///   - reason: the status line's reason phrase, if known.
    ///   - contentType: the `Content-Type` header, if any.
    ///   - body: the body as received.
    ///   - limit: the most bytes the file may have.
    ///   - optional: whether the file may be missing (the update file, a rotated root): a 403 or
    ///     a web page then means it is missing. A file the signed metadata names is not optional.
    public init(
        url: String,
        status: Int,
        reason: String = "",
        contentType: String? = nil,
        body: [UInt8],
        limit: Int,
        optional: Bool
    ) {
        switch status {
        case 200 where optional && Self.isPage(body, contentType: contentType): self = .missing
        case 200 where body.count > limit:
            self = .refused("\(url) is larger than the \(limit) bytes it may have.")
        case 200: self = .file(body)
        case 404, 410: self = .missing
        case 403 where optional: self = .missing
        default:
            let hint =
                status == 403
                ? " (S3 answers 403 for a file it does not have when it may not list the bucket, so the file may be missing, removed by publish --keep while a cache still names it; or the bucket refuses reads: give the files public read access)"
                : ""
            guard status > 0 else {
                self = .refused("\(url) gave no HTTP answer.")
                return
            }
            let line = reason.isEmpty ? "\(status)" : "\(status) \(reason)"
            self = .refused("\(url) answered \(line); 200 or 404 was expected\(hint).")
        }
    }

    /// The file's bytes; nil when it is missing.
    ///
    /// - Throws: `UpdateError` with code `unavailable` and the refusal's sentence.
    public func bytes() throws(UpdateError) -> [UInt8]? {
        switch self {
        case .file(let bytes): return bytes
        case .missing: return nil
        case .refused(let sentence): throw UpdateError(.unavailable, sentence)
        }
    }

    /// Whether an answer of 200 is a web page (a host's page for a file it does not have), not
    /// a file of the publication, which is JSON or binary: a `text/html` type, or a body whose
    /// first byte that is not white space is `<`.
    static func isPage(_ body: [UInt8], contentType: String? = nil) -> Bool {
        if let contentType {
            let type = contentType.lowercased().drop { $0 == " " || $0 == "\t" }
            if type.hasPrefix("text/html") || type.hasPrefix("application/xhtml+xml") { return true }
        }
        // A byte-order mark, then white space, then `<`.
        let text = body.starts(with: [0xEF, 0xBB, 0xBF]) ? body.dropFirst(3) : body[...]
        return text.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "<")
    }
}
