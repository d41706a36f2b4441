/// Why a fetch failed: a code to act on and one sentence, naming the URL, to show.
///
/// The parser alone does not know the URL; its sentences name "the response" unless it is given
/// a subject (`HTTPFetch.get` gives it "The response from <url>").

package struct HTTPFetchError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure it is.
    package enum Code: Sendable, Equatable {
        /// The URL cannot be fetched by this client: not `http://`, malformed, or with userinfo.
        case badURL
        /// A header the caller asked to send cannot be sent (not a token name, CR or LF in its
        /// value, or one this client writes itself).
        case badRequest
        /// The host could not be resolved or no address of it accepted the connection.
        case connect
        /// The deadline passed.
        case timeout
        /// `isCancelled` returned true.
        case cancelled
        /// The server's response breaks HTTP/1.1's message syntax or framing (RFC 9112), or ended
        /// early.
        case protocolViolation
        /// The head or the body is larger than the limit.
        case tooLarge
        /// The status is not what the caller wanted; the client itself never throws it, so that
        /// callers can report a 404 with the same type.
        case status
        /// A read or write on the connection failed.
        case io
    }

    /// What kind of failure it is.
    package let code: Code
    /// One sentence that says what went wrong, naming the URL when it is known.
    package let description: String

    /// An error of kind `code`, told by `description` (one sentence, with its period).
    package init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
