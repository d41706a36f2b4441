#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BlocklistCore

/// Reads a list file a line at a time through fixed buffers: a regular file, a pipe, or standard
/// input (`-`), gzip-compressed or not (told by its first two bytes, so a `.gz` name is not needed).
///
/// A byte-order mark at the start is skipped and a carriage return before a newline is dropped.
/// A line longer than `maximumLineBytes` is refused at once, so a 2 GB file without a newline
/// costs a buffer, not 2 GB. Every line is handed over as bytes; nothing makes a `String` per line.
public final class InputLines {
    /// The longest line accepted, without its line ending.
    public static let maximumLineBytes = 1024
    /// How the file is named in sentences: its path, or "standard input".
    public let name: String
    /// The line number of the line last returned, from 1.
    public private(set) var lineNumber = 0
    /// Bytes read from the file (compressed bytes for a gzip file).
    public private(set) var bytesRead: Int64 = 0
    /// The SHA-256 of the bytes read so far, as they are in the file.
    private var hasher = SHA256()

    private let fd: Int32
    private let ownsDescriptor: Bool
    private let raw: UnsafeMutableRawBufferPointer
    private let data: UnsafeMutableRawBufferPointer
    private let line: UnsafeMutableRawBufferPointer
    private var inflater: Inflater?
    private var position = 0
    private var count = 0
    private var rawEnded = false
    private var dataEnded = false
    private var started = false

    /// Opens `path` (`-` for standard input). Refuses a directory, a device or a socket; a FIFO is
    /// read (process substitution hands one over).
    public convenience init(path: String) throws(BlocklistError) {
        let (fd, name) = try Self.open(path)
        self.init(descriptor: fd, name: name, owned: path != "-")
    }

    /// Reads lines from an open descriptor, which it closes at the end if `owned`.
    public init(descriptor: Int32, name: String, owned: Bool) {
        self.name = name
        fd = descriptor
        ownsDescriptor = owned
        raw = .allocate(byteCount: 32 * 1024, alignment: 8)
        data = .allocate(byteCount: 64 * 1024, alignment: 8)
        line = .allocate(byteCount: Self.maximumLineBytes, alignment: 8)
    }

    /// Opens a list for reading: standard input for `-`, else a regular file or a FIFO, in blocking
    /// mode. Returns the descriptor and how sentences name it.
    package static func open(_ path: String) throws(BlocklistError) -> (descriptor: Int32, name: String) {
        if path == "-" { return (0, "standard input") }
        let opened = path.withCString { _openForReading($0) }
        guard opened >= 0 else { throw BlocklistError(.io, "Opening the list \(path) failed: \(String(cString: strerror(errno))).") }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let code = errno
            close(opened)
            throw BlocklistError(.io, "Reading the status of \(path) failed: \(String(cString: strerror(code))).")
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || type == S_IFIFO else {
            close(opened)
            throw BlocklistError(.invalidInput, "\(path) is \(_fileTypeName(type)), not a regular file or a pipe; give a list file.")
        }
        // Blocking reads from here on: a FIFO without a writer yet waits as `cat` would.
        _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK)
        return (opened, path)
    }

    deinit {
        if ownsDescriptor { close(fd) }
        raw.deallocate()
        data.deallocate()
        line.deallocate()
    }

    /// The next line, without its line ending, valid until the next call; `nil` at the end.
    ///
    /// - Throws: `.invalidInput` naming the file and line for a line over `maximumLineBytes`;
    ///   `.io` or `.compression` naming the file if reading fails.
    public func next() throws(BlocklistError) -> UnsafeRawBufferPointer? {
        var length = 0
        var sawAny = false
        while true {
            if position == count {
                if dataEnded {
                    if !sawAny { return nil }
                    break
                }
                try fill()
                continue
            }
            sawAny = true
            let available = UnsafeRawBufferPointer(rebasing: data[position..<count])
            if let newline = available.firstIndex(of: 10) {
                let take = newline - available.startIndex
                try append(available.baseAddress!, take, into: &length)
                position += take + 1
                break
            }
            try append(available.baseAddress!, available.count, into: &length)
            position = count
        }
        lineNumber += 1
        if lineNumber == 1, length >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
            line.copyMemory(from: UnsafeRawBufferPointer(rebasing: line[3..<length]))
            length -= 3
        }
        if length > 0, line[length - 1] == 13 { length -= 1 }
        return UnsafeRawBufferPointer(rebasing: line[0..<length])
    }

    /// The SHA-256 of the file's bytes as 64 hex digits, once every line has been read.
    public func sha256() -> String {
        var copy = hasher
        return copy.finish()
    }

    private func append(_ bytes: UnsafeRawPointer, _ count: Int, into length: inout Int) throws(BlocklistError) {
        guard length + count <= Self.maximumLineBytes + 1 else {  // + 1: room for a CR
            throw BlocklistError(
                .invalidInput,
                "\(name):\(lineNumber + 1): the line is longer than \(Self.maximumLineBytes) bytes; a list holds one number (or a CSV record) per line.")
        }
        if count > 0 { UnsafeMutableRawPointer(line.baseAddress! + length).copyMemory(from: bytes, byteCount: count) }
        length += count
    }

    private func readRaw(into buffer: UnsafeMutableRawBufferPointer) throws(BlocklistError) -> Int {
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 {
                bytesRead += Int64(n)
                hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                return n
            }
            if errno == EINTR { continue }
            throw BlocklistError(.io, "Reading \(name) failed: \(String(cString: strerror(errno))).")
        }
    }

    private func fill() throws(BlocklistError) {
        position = 0
        count = 0
        if !started {
            started = true
            // Read the first bytes to tell gzip from text.
            let n = try readRaw(into: data)
            if n >= 2, data[0] == 0x1F, data[1] == 0x8B {
                UnsafeMutableRawBufferPointer(rebasing: raw[0..<n]).copyMemory(from: UnsafeRawBufferPointer(rebasing: data[0..<n]))
                let stream = try Inflater(windowBits: 15 + 16, context: name, payloadOffset: 0)
                stream.setInput(UnsafeRawBufferPointer(rebasing: raw[0..<n]))
                inflater = stream
            } else {
                count = n
                if n == 0 { dataEnded = true }
                return
            }
        }
        guard let inflater else {
            count = try readRaw(into: data)
            if count == 0 { dataEnded = true }
            return
        }
        while count == 0 {
            if inflater.availableInput == 0 && !rawEnded {
                let n = try readRaw(into: raw)
                if n == 0 {
                    rawEnded = true
                } else {
                    inflater.setInput(UnsafeRawBufferPointer(rebasing: raw[0..<n]))
                }
            }
            let step: Inflater.Step
            let produced: Int
            do {
                (step, produced) = try inflater.inflate(into: data)
            } catch {
                throw BlocklistError(.invalidInput, "\(name) is not a valid gzip file: \(error.message)")
            }
            count = produced
            if step == .end {
                dataEnded = true
                return
            }
            if produced == 0 && rawEnded && inflater.availableInput == 0 {
                throw BlocklistError(.invalidInput, "\(name) is a truncated gzip file: it ends before its compressed stream does.")
            }
        }
    }
}

/// libc's `open`, which the class's own `open` hides.
private func _openForReading(_ path: UnsafePointer<CChar>) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
}
