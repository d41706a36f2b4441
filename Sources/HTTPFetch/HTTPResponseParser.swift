internal import ByteCodecs

/// A response's status line and header fields.
package struct HTTPResponseHead: Sendable {
    /// The status code, 100…599.
    package var status: Int
    /// The reason phrase as sent (often empty; RFC 9112 §4 tells clients to ignore it).
    package var reason: String
    /// The header fields in the order received: names as sent, values without their leading and
    /// trailing white space. Bytes outside ASCII are read as ISO 8859-1.
    package var headers: [(name: String, value: String)]

    /// A head with these fields.
    package init(status: Int, reason: String = "", headers: [(name: String, value: String)] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// The value of the field `name`, compared without regard to ASCII case: nil if absent, the
    /// values of a repeated field joined with ", " (RFC 9110 §5.3).
    package func value(of name: String) -> String? {
        var found: String?
        for field in headers where asciiCaseInsensitiveEqual(field.name, name) {
            found = found.map { $0 + ", " + field.value } ?? field.value
        }
        return found
    }
}

/// Whether `a` and `b` are the same but for the case of ASCII letters.
func asciiCaseInsensitiveEqual(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8) { lowercase($0) == lowercase($1) }
}

@inline(__always) func lowercase(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}

/// An HTTP/1.1 response parser (RFC 9112), apart from any socket so that it can be fuzzed and
/// compared with another implementation: feed it the bytes as they come, in pieces of any size;
/// it keeps the head and hands the decoded body over as slices of the bytes fed (or of nothing
/// else: it copies no body byte).
///
/// Strict, because it reads what a server on a network sends:
/// - the status line is `HTTP/1.x SSS reason` with status 100…599 (the reason and the space
///   before it may be missing); `101 Switching Protocols` is refused, other 1xx interim
///   responses are skipped;
/// - lines end in CRLF: a bare LF or a bare CR is refused (RFC 9112 §2.2 allows accepting a bare
///   LF; this parser does not);
/// - header fields are `token ":" OWS value OWS`: white space before the colon, a name that is
///   not a token, a control character in a value (other than HTAB) and obs-fold (a line
///   beginning with white space) are refused;
/// - the body's framing: `Transfer-Encoding: chunked` (the only coding accepted; chunk extensions
///   ignored, trailer fields skipped, sizes overflow-checked), else `Content-Length` (digits only;
///   repeated with the same value is accepted, with different values refused), else the body runs
///   until the connection closes (`finish()`). Both Transfer-Encoding and Content-Length in one
///   response is refused (RFC 9112 §6.3 calls it a sign of smuggling, to be handled as an error);
/// - 204 and 304 responses, and responses to HEAD, have no body whatever their fields say;
/// - the heads (interim ones included) may hold `maximumHeaderBytes`, and the trailer section as
///   many again; the body `maximumBodyBytes`, checked before any of it is handed over when its
///   size is declared (Content-Length, each chunk size).
///
/// Bytes after the end of the message are ignored: the client asks for `Connection: close`.
/// Every failure is an `HTTPFetchError` whose sentence begins with `subject`. After a failure,
/// `feed` and `finish` throw the same error again.
package struct HTTPResponseParser {
    /// The most bytes the heads (interim responses' and the final one's, CRLFs included) may
    /// take, and separately the trailer section.
    package let maximumHeaderBytes: Int
    /// The most body bytes, after chunked decoding.
    package let maximumBodyBytes: Int64
    /// Whether the request was HEAD, whose response never has a body.
    package let requestWasHEAD: Bool
    /// What the error sentences call the response: "The response" unless given.
    package let subject: String

    /// The final response's head, once it has been read (never an interim response's).
    package private(set) var head: HTTPResponseHead?
    /// How many body bytes have been handed over.
    package private(set) var bodyByteCount: Int64 = 0
    /// Whether the message is complete.
    package var isComplete: Bool {
        if case .complete = state { return true }
        return false
    }

    private enum State {
        case statusLine
        case fieldLines
        case fixedBody(remaining: Int64)
        case untilClose
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataCR
        case chunkDataLF
        case trailers
        case complete
        case failed(HTTPFetchError)
    }

    private var state = State.statusLine
    /// The line being read (status line, field line, chunk-size line or trailer line), without
    /// its CRLF.
    private var line: [UInt8] = []
    /// Whether the last byte of the line being read was a CR.
    private var sawCR = false
    /// The bytes of every head so far, and of the trailer section.
    private var headBytes = 0
    private var trailerBytes = 0
    /// The bytes of the current chunk-size line.
    private var chunkLineBytes = 0
    /// Which field line of the current head is being read (from 1), for the sentences.
    private var fieldLineNumber = 0
    /// The head being read.
    private var pending = HTTPResponseHead(status: 0)
    /// The declared Content-Length, for the sentence of a truncated body.
    private var contentLength: Int64 = 0
    /// Whether any byte has been fed.
    private var started = false

    /// A parser of one response; see the type's documentation for the limits. `subject` begins
    /// every error's sentence ("The response from http://…").
    package init(
        maximumHeaderBytes: Int = 16 * 1024,
        maximumBodyBytes: Int64,
        requestWasHEAD: Bool = false,
        subject: String = "The response"
    ) {
        precondition(maximumHeaderBytes > 0 && maximumBodyBytes >= 0, "limits must not be negative")
        self.maximumHeaderBytes = maximumHeaderBytes
        self.maximumBodyBytes = maximumBodyBytes
        self.requestWasHEAD = requestWasHEAD
        self.subject = subject
        line.reserveCapacity(256)
    }

    /// Reads `bytes`, the next piece of the response, calling `body` with each run of body bytes
    /// it holds (slices of `bytes`, valid during the call). `body` cannot throw: a caller that
    /// must stop keeps its error and stops feeding (as `HTTPFetch.get` does), so that the
    /// parser's errors stay typed.
    ///
    /// - Returns: true when the message is complete; the rest of `bytes` is then ignored, and so
    ///   are later calls.
    /// - Throws: `.protocolViolation` for a response this parser refuses, `.tooLarge` for the
    ///   limits.
    package mutating func feed(
        _ bytes: UnsafeRawBufferPointer,
        body: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTPFetchError) -> Bool {
        if case .failed(let error) = state { throw error }
        do {
            return try consume(bytes, body: body)
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Tells the parser the connection closed: completes a body that runs until the close, or
    /// refuses the response as cut short.
    ///
    /// - Throws: `.protocolViolation` if the message is not complete (no response at all, inside
    ///   the head, before the end of the body).
    package mutating func finish() throws(HTTPFetchError) {
        let why: String
        switch state {
        case .complete: return
        case .failed(let error): throw error
        case .untilClose:
            state = .complete
            return
        case .statusLine where !started:
            why = "is empty: the server closed the connection without answering"
        case .statusLine, .fieldLines:
            why = "ends inside its head, after \(headBytes) bytes: the server closed the connection early"
        case .fixedBody(let remaining):
            why =
                "ends after \(contentLength - remaining) of the \(contentLength) body bytes its Content-Length declares: "
                + "the server closed the connection early"
        case .chunkSize where !line.isEmpty || sawCR:
            why =
                "ends inside a chunk-size line, after \(bodyByteCount) body bytes: the server closed the connection early"
        case .chunkSize, .chunkData, .chunkDataCR, .chunkDataLF:
            why =
                "ends inside its chunked body, after \(bodyByteCount) bytes and before the last chunk: "
                + "the server closed the connection early"
        case .trailers:
            why = "ends inside its trailer section, before the empty line that ends the message"
        }
        let error = violation(why)
        state = .failed(error)
        throw error
    }

    // MARK: - Reading

    private mutating func consume(
        _ bytes: UnsafeRawBufferPointer,
        body: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTPFetchError) -> Bool {
        if !bytes.isEmpty { started = true }
        var index = 0
        while index < bytes.count {
            switch state {
            case .complete, .failed:
                return true
            case .statusLine, .fieldLines, .chunkSize, .trailers:
                let byte = bytes[index]
                index += 1
                try countLineByte()
                if sawCR {
                    sawCR = false
                    guard byte == 0x0A else {
                        throw violation("has a CR not followed by LF\(lineContext); lines end in CRLF")
                    }
                    try endOfLine()
                    line.removeAll(keepingCapacity: true)
                } else if byte == 0x0D {
                    sawCR = true
                } else if byte == 0x0A {
                    throw violation("has a line ending in a bare LF\(lineContext); lines end in CRLF")
                } else {
                    line.append(byte)
                }
            case .fixedBody(let remaining):
                let count = Int(min(Int64(bytes.count - index), remaining))
                body(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                bodyByteCount += Int64(count)
                state = remaining == Int64(count) ? .complete : .fixedBody(remaining: remaining - Int64(count))
            case .untilClose:
                let available = Int64(bytes.count - index)
                if available > maximumBodyBytes - bodyByteCount {
                    // Hand over what fits, so that the outcome does not depend on how the bytes were split.
                    let count = Int(maximumBodyBytes - bodyByteCount)
                    body(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                    bodyByteCount += Int64(count)
                    throw HTTPFetchError(
                        .tooLarge,
                        "\(subject) has a body longer than the limit of \(maximumBodyBytes) bytes."
                    )
                }
                body(UnsafeRawBufferPointer(rebasing: bytes[index...]))
                bodyByteCount += available
                index = bytes.count
            case .chunkData(let remaining):
                let count = Int(min(Int64(bytes.count - index), remaining))
                body(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                bodyByteCount += Int64(count)
                state = remaining == Int64(count) ? .chunkDataCR : .chunkData(remaining: remaining - Int64(count))
            case .chunkDataCR, .chunkDataLF:
                let byte = bytes[index]
                index += 1
                let expected: UInt8
                if case .chunkDataCR = state { expected = 0x0D } else { expected = 0x0A }
                guard byte == expected else {
                    throw violation(
                        "has \(describe(byte)) where a chunk's data should end in CRLF, after \(bodyByteCount) body bytes"
                    )
                }
                state = expected == 0x0D ? .chunkDataLF : .chunkSize
            }
        }
        return isComplete
    }

    /// Counts one byte of a line against the limit of its kind.
    private mutating func countLineByte() throws(HTTPFetchError) {
        switch state {
        case .statusLine, .fieldLines:
            headBytes += 1
            if headBytes > maximumHeaderBytes {
                throw HTTPFetchError(
                    .tooLarge,
                    "\(subject) has a head larger than the limit of \(maximumHeaderBytes) bytes."
                )
            }
        case .trailers:
            trailerBytes += 1
            if trailerBytes > maximumHeaderBytes {
                throw HTTPFetchError(
                    .tooLarge,
                    "\(subject) has a trailer section larger than the limit of \(maximumHeaderBytes) bytes."
                )
            }
        default:
            chunkLineBytes += 1
            if chunkLineBytes > maximumHeaderBytes {
                throw violation("has a chunk-size line longer than \(maximumHeaderBytes) bytes")
            }
        }
    }

    /// Where the line being read is, for the sentences.
    private var lineContext: String {
        switch state {
        case .statusLine: return " in its status line"
        case .fieldLines: return " in header line \(fieldLineNumber + 1)"
        case .trailers: return " in its trailer section"
        default: return " in a chunk-size line"
        }
    }

    private mutating func endOfLine() throws(HTTPFetchError) {
        switch state {
        case .statusLine:
            try readStatusLine()
            fieldLineNumber = 0
            state = .fieldLines
        case .fieldLines:
            if line.isEmpty {
                try endOfHead()
            } else {
                fieldLineNumber += 1
                try readFieldLine()
            }
        case .chunkSize:
            let size = try readChunkSize()
            chunkLineBytes = 0
            if size == 0 {
                state = .trailers
            } else if size > maximumBodyBytes - bodyByteCount {
                throw HTTPFetchError(
                    .tooLarge,
                    "\(subject) has a chunk of \(size) bytes after \(bodyByteCount), past the limit of \(maximumBodyBytes) body bytes."
                )
            } else {
                state = .chunkData(remaining: size)
            }
        case .trailers:
            // Trailer fields are skipped: nothing here uses them.
            if line.isEmpty { state = .complete }
        default:
            break
        }
    }

    /// `HTTP-version SP status-code [SP reason-phrase]`.
    private mutating func readStatusLine() throws(HTTPFetchError) {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, line[0..<7].elementsEqual(prefix), isDigit(line[7]), line[8] == 0x20,
            isDigit(line[9]), isDigit(line[10]), isDigit(line[11])
        else {
            throw violation(
                "does not begin with a status line (HTTP/1.x, a space, three digits), but with \(quote(line))"
            )
        }
        let status = Int(line[9] - 0x30) * 100 + Int(line[10] - 0x30) * 10 + Int(line[11] - 0x30)
        guard status >= 100 && status <= 599 else {
            throw violation("has the status \(status), outside 100…599")
        }
        var reason = ""
        if line.count > 12 {
            guard line[12] == 0x20 else {
                throw violation("has \(describe(line[12])) after its status code where a space should be")
            }
            let text = line[13...]
            if let bad = text.first(where: { !isFieldValueByte($0) }) {
                throw violation("has the control character \(describe(bad)) in its reason phrase")
            }
            reason = latin1(text)
        }
        pending = HTTPResponseHead(status: status, reason: reason)
    }

    /// `field-name ":" OWS field-value OWS`.
    private mutating func readFieldLine() throws(HTTPFetchError) {
        let place = "header line \(fieldLineNumber)"
        if line[0] == 0x20 || line[0] == 0x09 {
            throw violation(
                "has \(place) beginning with white space: a folded line (obs-fold), which RFC 9112 §5.2 lets a client refuse"
            )
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw violation("has \(place), \(quote(line)), without a colon")
        }
        guard colon > 0 else { throw violation("has \(place) with an empty field name") }
        for byte in line[..<colon] where !isTokenByte(byte) {
            throw violation(
                byte == 0x20 || byte == 0x09
                    ? "has \(place) with white space before its colon"
                    : "has \(place) whose field name holds \(describe(byte)), which a name cannot"
            )
        }
        var start = colon + 1
        var end = line.count
        while start < end && (line[start] == 0x20 || line[start] == 0x09) { start += 1 }
        while end > start && (line[end - 1] == 0x20 || line[end - 1] == 0x09) { end -= 1 }
        if let bad = line[start..<end].first(where: { !isFieldValueByte($0) }) {
            throw violation("has \(place) with the control character \(describe(bad)) in its value")
        }
        pending.headers.append(
            (name: String(decoding: line[..<colon], as: UTF8.self), value: latin1(line[start..<end]))
        )
    }

    /// Skips an interim response, or settles the body's framing.
    private mutating func endOfHead() throws(HTTPFetchError) {
        let status = pending.status
        if status < 200 {
            if status == 101 {
                throw violation("switches protocols (101), which this client never asks for")
            }
            state = .statusLine  // an interim response: the final one follows
            return
        }
        var length: Int64?
        var chunked = false
        var transferEncoding = false
        for field in pending.headers {
            if asciiCaseInsensitiveEqual(field.name, "content-length") {
                let value = try readContentLength(field.value)
                if let length, length != value {
                    throw violation("has two Content-Length fields that disagree (\(length) and \(value))")
                }
                length = value
            } else if asciiCaseInsensitiveEqual(field.name, "transfer-encoding") {
                transferEncoding = true
                for element in field.value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                    let coding = element.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
                    if coding.isEmpty { continue }
                    let name = String(decoding: coding.reversed(), as: UTF8.self)
                    guard asciiCaseInsensitiveEqual(name, "chunked") else {
                        throw violation(
                            "has the transfer coding \(name.debugDescription), which this client does not decode (only chunked)"
                        )
                    }
                    guard !chunked else { throw violation("applies the chunked transfer coding twice") }
                    chunked = true
                }
                guard chunked else { throw violation("has an empty Transfer-Encoding field") }
            }
        }
        if transferEncoding && length != nil {
            throw violation(
                "has both Transfer-Encoding and Content-Length, which RFC 9112 §6.3 treats as an error (a sign of smuggling)"
            )
        }
        head = pending
        if requestWasHEAD || status == 204 || status == 304 {
            state = .complete
        } else if chunked {
            chunkLineBytes = 0
            state = .chunkSize
        } else if let length {
            guard length <= maximumBodyBytes else {
                throw HTTPFetchError(
                    .tooLarge,
                    "\(subject) declares a body of \(length) bytes, more than the limit of \(maximumBodyBytes)."
                )
            }
            contentLength = length
            state = length == 0 ? .complete : .fixedBody(remaining: length)
        } else {
            state = .untilClose
        }
    }

    /// `Content-Length = 1*DIGIT`, within Int64.
    private func readContentLength(_ value: String) throws(HTTPFetchError) -> Int64 {
        var length: Int64 = 0
        guard !value.isEmpty else { throw violation("has an empty Content-Length") }
        for byte in value.utf8 {
            guard isDigit(byte) else {
                throw violation("has the Content-Length \(value.debugDescription), which is not a number of bytes")
            }
            let (times10, overflow) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow && !overflow2 else {
                throw HTTPFetchError(
                    .tooLarge,
                    "\(subject) declares a body of \(value) bytes, more than the limit of \(maximumBodyBytes)."
                )
            }
            length = sum
        }
        return length
    }

    /// `chunk-size [ BWS ";" chunk-ext ]`: the size; the extensions are ignored.
    private func readChunkSize() throws(HTTPFetchError) -> Int64 {
        var size: Int64 = 0
        var index = 0
        while index < line.count, let digit = hexValue(line[index]) {
            guard size <= Int64.max >> 4 else {
                throw violation("has a chunk size, \(quote(line)), too large to be one")
            }
            size = size << 4 | Int64(digit)
            index += 1
        }
        guard index > 0 else {
            throw violation("has a chunk-size line, \(quote(line)), that does not begin with a hexadecimal size")
        }
        var rest = index
        while rest < line.count && (line[rest] == 0x20 || line[rest] == 0x09) { rest += 1 }
        if rest == line.count {
            guard rest == index else {
                throw violation("has white space after a chunk size, \(quote(line)), with no extension after it")
            }
            return size
        }
        guard line[rest] == UInt8(ascii: ";") else {
            throw violation("has a chunk-size line, \(quote(line)), with \(describe(line[rest])) after its size")
        }
        if let bad = line[rest...].first(where: { !isFieldValueByte($0) }) {
            throw violation("has the control character \(describe(bad)) in a chunk extension")
        }
        return size
    }

    // MARK: - Sentences and bytes

    private func violation(_ why: String) -> HTTPFetchError {
        HTTPFetchError(.protocolViolation, "\(subject) \(why).")
    }
}

@inline(__always) private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

@inline(__always) private func hexValue(_ byte: UInt8) -> UInt8? { Hex.value(byte) }

/// HTAB, SP, VCHAR and obs-text: what a field value, reason phrase or chunk extension may hold.
@inline(__always) private func isFieldValueByte(_ byte: UInt8) -> Bool {
    byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
}

/// `tchar`: ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
func isTokenByte(_ byte: UInt8) -> Bool {
    if isDigit(byte) || (lowercase(byte) >= UInt8(ascii: "a") && lowercase(byte) <= UInt8(ascii: "z")) { return true }
    switch byte {
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
        UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}

/// Bytes read as ISO 8859-1 (each byte the scalar of the same number).
private func latin1(_ bytes: ArraySlice<UInt8>) -> String {
    if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
    var text = ""
    text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
    return text
}

/// A byte for a sentence: `'x'` if printable ASCII, else `0x0D`.
private func describe(_ byte: UInt8) -> String {
    WebURL.describe(byte)
}

/// The first 40 bytes of a line for a sentence, quoted, with anything but printable ASCII escaped.
private func quote(_ bytes: [UInt8]) -> String {
    var text = "\""
    for byte in bytes.prefix(40) {
        if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
            text.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            text += "\\x" + Hex.padded(UInt64(byte), width: 2, uppercase: true)
        }
    }
    return text + (bytes.count > 40 ? "…\"" : "\"")
}
