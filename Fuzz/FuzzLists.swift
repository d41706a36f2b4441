import BlocklistCore
import JSONStream
import ListImport
import SetStorage

// A libFuzzer target for every parser of list input: the JSON reader, list files, CSV records and
// number lines, plain and gzip input, and manifest.json (mode 6). Any input must be read or refused with an error, never
// crash or hang; and where a second reading exists, both must agree. Built with
// Scripts/fuzz.sh lists.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file `InputLines` reads: it reads descriptors, so each input is written here first.
nonisolated(unsafe) private var inputPath: String = { "/dev/shm/blocklist-fuzz-lists-\(getpid())" }()

private func write(_ bytes: [UInt8]) {
    let fd = open(inputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot open \(inputPath)")
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
        precondition(n > 0, "cannot write \(inputPath)")
        done += n
    }
    close(fd)
}

/// The tokens of a document read through a buffer of `chunk` bytes, or the error.
private func tokens(_ bytes: [UInt8], chunk: Int) -> ([String], JSONError?) {
    var offset = 0
    let reader = JSONReader(bufferBytes: chunk) { (buffer: UnsafeMutableRawBufferPointer) throws(JSONError) -> Int in
        // The reader asks for `buffer.count` bytes; hand over at most `chunk`, so tokens straddle fills.
        let n = min(buffer.count, chunk, bytes.count - offset)
        if n > 0 {
            bytes.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)]))
            }
        }
        offset += n
        return n
    }
    var out: [String] = []
    do {
        while let token = try reader.next() {
            switch token {
            case .key, .string, .number: out.append("\(token):\(reader.text)")
            default: out.append("\(token)")
            }
        }
    } catch {
        return (out, error)
    }
    return (out, nil)
}

/// The lines `InputLines` reads from the file, or nil if it refuses it.
private func lines() -> [[UInt8]]? {
    guard let input = try? InputLines(path: inputPath) else { return nil }
    var result: [[UInt8]] = []
    do {
        while let line = try input.nextLine() {
            switch line {
            case .text(let bytes): result.append(Array(bytes))
            case .tooLong(let bytes): result.append(Array("<\(bytes)>".utf8))
            }
        }
    } catch {
        return nil
    }
    return result
}

/// The lines a plain reading of `text` gives, as `InputLines` defines them (Python's universal
/// newlines): CRLF and then a lone CR made LF, the whole split at LF.
private func expectedLines(_ text: [UInt8]) -> [[UInt8]] {
    guard !text.isEmpty else { return [] }
    var unified: [UInt8] = []
    var index = 0
    while index < text.count {
        if text[index] == 13 {
            unified.append(10)
            if index + 1 < text.count, text[index + 1] == 10 { index += 1 }
        } else {
            unified.append(text[index])
        }
        index += 1
    }
    var pieces = unified.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
    if unified.last == 10 { pieces.removeLast() }
    return pieces.enumerated().map { index, piece in
        var line = piece
        if index == 0, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        return line.count > InputLines.maximumLineBytes ? Array("<\(line.count)>".utf8) : line
    }
}

/// `text` as gzip members cut at `cuts`.
private func gzip(_ text: [UInt8], cuts: [Int]) -> [UInt8] {
    var file: [UInt8] = []
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
    defer { output.deallocate() }
    let bounds = [0] + cuts.map { min($0, text.count) }.sorted() + [text.count]
    for (from, to) in zip(bounds, bounds.dropFirst()) {
        let deflater = try! Deflater(level: 6, windowBits: 15 + 16, memLevel: 8, context: "fuzz")
        text[from..<to].withUnsafeBytes { part in
            try! deflater.compress(part, into: output, finish: true) { chunk throws(BlocklistError) in file += chunk }
        }
    }
    return file
}

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let mode = data[0] % 7
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch mode {
    case 0:
        // The JSON reader: the same tokens and verdict whatever the buffer's size.
        let whole = tokens(rest, chunk: 32 * 1024)
        let pieces = tokens(rest, chunk: 1 + Int(rest.first ?? 0) % 7)
        precondition(
            whole.0 == pieces.0 && whole.1 == pieces.1,
            "the reader depends on its buffer: \(whole) vs \(pieces)"
        )
        if whole.1 == nil {
            let opens = whole.0.filter { $0 == "objectStart" || $0 == "arrayStart" }.count
            let closes = whole.0.filter { $0 == "objectEnd" || $0 == "arrayEnd" }.count
            precondition(opens == closes, "unbalanced tokens accepted")
        }
    case 1:
        // List files: read or refused; what is read is within the limits.
        if let file = try? ListFile.decode(rest, source: "fuzz") {
            precondition(file.entries.count <= ListFile.maximumPatterns)
            for entry in file.entries where entry.action == .identify { precondition(entry.label != nil) }
        }
    case 2:
        // CSV records and number lines: fields lie inside the line, in order.
        for line in rest.split(separator: 10, omittingEmptySubsequences: false) {
            Array(line).withUnsafeBytes { buffer in
                if let fields = try? ListLine.fields(buffer) {
                    precondition(fields.count >= 1 && fields.first.upperBound <= buffer.count)
                    if let second = fields.second {
                        precondition(second.lowerBound >= fields.first.upperBound && second.upperBound <= buffer.count)
                    }
                    if fields.count > 1 { precondition(fields.second != nil && fields.separator != nil) }
                }
                if case .number(let number, _)? = try? ListLine(defaultCountry: 33).parse(buffer) {
                    precondition(number >= 1_000_000 && number <= 999_999_999_999_999, "\(number)")
                }
                var label: [UInt8] = []
                if let fields = try? ListLine.fields(buffer), let second = fields.second,
                    (try? ListLine.label(buffer, second, quoted: fields.secondQuoted, into: &label)) != nil
                {
                    precondition(
                        String(validatingUTF8: label.map { CChar(bitPattern: $0) } + [0]) != nil,
                        "a label that is not UTF-8"
                    )
                }
            }
        }
    case 3:
        // Plain input, repeated past the 32 KiB and 64 KiB buffers: the lines are the bytes split
        // at LF, CRLF and lone CR (unless it starts as gzip); what starts as another format (xz, UTF-16, …)
        // is refused as a whole, never read as lines.
        let text = Array(repeatElement(rest, count: 1 + Int(rest.last ?? 0) % 24).joined())
        write(text)
        let read = lines()
        let other = text.prefix(6).withUnsafeBytes { TextFormat.unreadable($0, name: "fuzz") } != nil
        if other {
            precondition(read == nil, "a list in another format was read as lines")
        } else if !(text.count >= 2 && text[0] == 0x1F && text[1] == 0x8B) {
            precondition(read == expectedLines(text), "plain lines differ")
        }
    case 4:
        // gzip in 1–4 members cut where the input says: the lines of the text it holds.
        let cuts = rest.prefix(3).map { Int($0) * 997 }
        let text = Array(repeatElement(rest.dropFirst(3), count: 1 + Int(rest.last ?? 0) % 24).joined())
        write(gzip(text, cuts: cuts))
        // What gzip holds is told as a file is: the first member with bytes gives the head.
        let bounds = [0] + cuts.map { min($0, text.count) }.sorted() + [text.count]
        let first = zip(bounds, bounds.dropFirst()).first { $0.0 < $0.1 }.map { text[$0.0..<$0.1] } ?? []
        let inner = first.prefix(6).withUnsafeBytes { TextFormat.unreadable($0, name: "fuzz") } != nil
        if inner {
            precondition(lines() == nil, "a gzipped list in another format was read as lines")
        } else {
            precondition(lines() == expectedLines(text), "gzip lines differ from the text's")
        }
    case 6:
        // manifest.json's reader: read or refused with an error; what it reads reads again the same
        // after a byte-for-byte copy with a trailing newline, and validates or is refused.
        if let manifest = try? Manifest.decode(rest, path: "fuzz/manifest.json") {
            precondition(
                (try? Manifest.decode(rest + [0x0A], path: "fuzz/manifest.json")) == manifest,
                "a trailing newline changed the manifest"
            )
            _ = try? manifest.validate(path: "fuzz/manifest.json")
        }
    default:
        // Any bytes after a gzip member: read only if they are another member; a truncated copy
        // of a valid file is always refused.
        let text = Array(rest.dropFirst(1))
        let file = gzip(text, cuts: [Int(rest.first ?? 0) * 7])
        write(file + rest.prefix(4))
        let tail = Array(rest.prefix(4))
        if !tail.isEmpty && !(tail.count >= 2 && tail[0] == 0x1F && tail[1] == 0x8B) {
            precondition(lines() == nil, "trailing bytes that are not gzip were accepted")
        }
        if file.count > 1 {
            write(Array(file.prefix(file.count - 1)))
            precondition(lines() == nil, "a truncated gzip file was accepted")
        }
    }
    return 0
}
