#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BlocklistCore
import BlocklistSet
import BlocklistSystem

/// The patterns of one list file, as `generate` uses them.
package struct ListFilePatterns {
    package var block: [BlockPattern] = []
    package var allow: [BlockPattern] = []
    package var identify: [(pattern: BlockPattern, label: [UInt8])] = []
    /// What the manifest records of the file.
    package var input: Manifest.Input
}

/// Reads a list file (JSON) without JSON in this process: its bytes go through a pipe to
/// `blocklist list-file decode`, which decodes and checks them with Codable and answers with one
/// record per pattern. Foundation, which JSONDecoder needs, would cost most of `generate`'s 7 MiB.
///
/// The bytes are read once, here: the SHA-256 in the manifest is that of the bytes decoded.
package enum ListFileReader {
    /// The largest list file read.
    package static let maximumBytes = 16 << 20

    /// Reads `path` (`-` for standard input) through the decoder at `decoder` (a `blocklist`
    /// executable).
    ///
    /// - Throws: `.invalidInput` with the decoder's sentence (file, pattern and field) for a
    ///   malformed file; `.io` if the file or the decoder fails.
    package static func load(_ path: String, decoder: String) throws(BlocklistError) -> ListFilePatterns {
        let (fd, name) = try InputLines.open(path)
        defer { if path != "-" { close(fd) } }
        let child: ChildProcess
        do {
            child = try ChildProcess(path: decoder, arguments: ["list-file", "decode", "--source", name])
        } catch {
            throw BlocklistError(
                .io, "Reading the list file \(name) needs \(decoder) (blocklist, which decodes JSON for generate), which did not start: \(error.message)")
        }
        var hasher = SHA256()
        var bytes: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 32 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        // A decoder that dies early closes the pipe: that is an error to report, not a SIGPIPE.
        let previousHandler = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previousHandler) }
        var decoderGone = false
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw BlocklistError(.io, "Reading \(name) failed: \(String(cString: strerror(errno))).") }
            if n == 0 { break }
            bytes += Int64(n)
            guard bytes <= maximumBytes else {
                throw BlocklistError(.limitExceeded, "\(name) is larger than \(maximumBytes) bytes; a list file holds patterns, and single numbers go in a --numbers file.")
            }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            hasher.update(chunk)
            var written = 0
            while written < n && !decoderGone {
                let w = write(child.inputDescriptor, chunk.baseAddress! + written, n - written)
                if w < 0 && errno == EINTR { continue }
                if w < 0 {
                    decoderGone = true
                    break
                }
                written += w
            }
        }
        child.release()
        var patterns = ListFilePatterns(input: Manifest.Input(kind: "list", path: absolutePath(path), bytes: bytes, lines: 0, skipped: 0, sha256: hasher.finish()))
        var failure: String?
        let records = InputLines(descriptor: child.output, name: "the output of \(decoder) list-file decode", owned: false)
        while let line = try records.next() {
            let fields = line.split(separator: 9, maxSplits: 2, omittingEmptySubsequences: false)
            let action = String(decoding: fields[0], as: UTF8.self)
            if action == "error" {
                failure = fields.count > 1 ? String(decoding: line[(fields[0].count + 1)...], as: UTF8.self) : "it is not a list file"
                continue
            }
            guard fields.count >= 2 else { continue }
            let pattern = try BlockPattern(parsing: String(decoding: fields[1], as: UTF8.self))
            switch action {
            case "block": patterns.block.append(pattern)
            case "allow": patterns.allow.append(pattern)
            case "identify" where fields.count == 3:
                do {
                    patterns.identify.append((pattern, try ListLine.validLabel(Array(fields[2]))))
                } catch {
                    throw BlocklistError(.invalidInput, "\(name): the label of \(pattern): \(error.reason).")
                }
            default:
                throw BlocklistError(.io, "\(decoder) list-file decode answered a record this generate does not know (\"\(action)\"); use blocklist and blocklist-generate of the same build.")
            }
            patterns.input.lines += 1
        }
        try child.wait()
        if let failure { throw BlocklistError(.invalidInput, failure) }
        guard child.exitStatus == 0, child.termSignal == 0 else {
            let how = child.termSignal != 0 ? "was killed by signal \(child.termSignal)" : "exited with status \(child.exitStatus)"
            throw BlocklistError(.io, "Decoding the list file \(name) failed: \(decoder) list-file decode \(how).")
        }
        return patterns
    }
}

/// `path` made absolute against the working directory, without resolving symlinks; `-` stays.
package func absolutePath(_ path: String) -> String {
    guard path != "-", !path.hasPrefix("/") else { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let directory = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    return directory == "/" ? "/" + relative : directory + "/" + relative
}
