import BlocklistCore
internal import ByteCodecs
import JSONStream
internal import LibC

/// Reads a list file a line at a time through fixed buffers: a regular file, a pipe, or standard
/// input (`-`), gzip-compressed or not (told by its first two bytes, so a `.gz` name is not needed).
///
/// A gzip file is read as `zcat` reads it: every member of a multi-member file (`cat a.gz b.gz`),
/// in order; bytes after the last member that are not another member are refused with their
/// offset, and so is a file that ends inside a member.
///
/// A byte-order mark at the start is skipped. A line ends at a line feed, a carriage return and
/// line feed, or a carriage return alone (classic Mac OS, and some exports), as Python's universal
/// newlines read them: the three may mix in one file. A line longer than `maximumLineBytes` (not counting those) is reported as such and skipped to
/// its end, so a 2 GB file without a newline costs a buffer, not 2 GB. Every line is handed over
/// as bytes; nothing makes a `String` per line.
///
/// - Complexity: memory is three buffers allocated once (32 KiB, 64 KiB, one line) and, for
///   gzip, one zlib stream, whatever the file's size.
package final class InputLines {
    /// The longest line accepted, in bytes, without its line ending (and, on line 1, without a
    /// byte-order mark).
    package static let maximumLineBytes = 1024
    /// How the file is named in sentences: its path, or "standard input".
    package let name: String
    /// The line number of the line last returned, from 1.
    package private(set) var lineNumber = 0
    /// Bytes read from the file (compressed bytes for a gzip file).
    package private(set) var bytesRead: Int64 = 0
    /// The file's size when it is a regular file (so that progress can tell how much is left);
    /// `nil` for a pipe, a FIFO or standard input that is not a file.
    package private(set) var size: Int64?
    /// The SHA-256 of the bytes read so far, as they are in the file.
    private var hasher = PortableSHA256()

    /// One line of the file.
    package enum Line {
        /// The line's bytes, without its line ending; valid until the next call.
        case text(UnsafeRawBufferPointer)
        /// A line longer than `maximumLineBytes`, skipped to its end; `bytes` is its length.
        case tooLong(bytes: Int64)
    }

    private static let rawBytes = 32 * 1024
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let raw: UnsafeMutableRawBufferPointer
    private let data: UnsafeMutableRawBufferPointer
    /// A line, with room for a byte-order mark (3) and one byte more around the longest.
    private let line: UnsafeMutableRawBufferPointer
    private var inflater: Inflater?
    private var position = 0
    private var count = 0
    private var rawEnded = false
    private var dataEnded = false
    private var started = false
    /// The line before ended at a carriage return that was the last byte held: a line feed
    /// next belongs to that line ending.
    private var lineFeedMayFollow = false
    /// A gzip member ended; what follows is another member, or the end of the file.
    private var memberEnded = false
    /// Whether the first bytes gzip gave have been told from another format (xz, UTF-16, …
    /// inside gzip).
    private var innerChecked = false
    /// Where the gzip member being read starts in the file.
    private var memberStart: Int64 = 0

    /// Opens `path` (`-` for standard input). Refuses a directory, a device or a socket; a FIFO is
    /// read (process substitution hands one over).
    package convenience init(path: String) throws(BlocklistError) {
        let (fd, name) = try Self.open(path)
        self.init(descriptor: fd, name: name, owned: path != "-")
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { size = Int64(info.st_size) }
    }

    /// Reads lines from an open descriptor, which it closes at the end if `owned`.
    package init(descriptor: Int32, name: String, owned: Bool) {
        self.name = name
        fd = descriptor
        ownsDescriptor = owned
        raw = .allocate(byteCount: Self.rawBytes, alignment: 8)
        data = .allocate(byteCount: 64 * 1024, alignment: 8)
        line = .allocate(byteCount: Self.maximumLineBytes + 4, alignment: 8)
    }

    /// Opens a list for reading: standard input for `-`, else a regular file or a FIFO, in blocking
    /// mode. Returns the descriptor and how sentences name it.
    package static func open(_ path: String) throws(BlocklistError) -> (descriptor: Int32, name: String) {
        if path == "-" {
            // Standard input as a file would be: a pipe or a regular file, not a terminal or a
            // device (`< /dev/zero` would never end, `< /dev/null` would pass for an empty list).
            try checkType(0, name: "standard input")
            return (0, "standard input")
        }
        // Opened without blocking first, so that a device or a socket is refused before any read.
        let opened = path.withCString { _openForReading($0, O_NONBLOCK) }
        guard opened >= 0 else {
            throw BlocklistError(.io, "Opening the list \(path) failed: \(String(cString: strerror(errno))).")
        }
        let type: mode_t
        do {
            type = try checkType(opened, name: path)
        } catch {
            close(opened)
            throw error
        }
        guard type == S_IFIFO else {
            _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK)
            return (opened, path)
        }
        // A FIFO opened without blocking reads as empty until a writer comes, which would pass for
        // an empty list; opened blocking again, it would wait forever for a writer that came and
        // went in between. So it stays as it is and waits, as `cat` does, until a writer has come:
        // poll reports a FIFO readable once data arrives or a writer that came has left.
        if let failure = waitForData(opened) {
            close(opened)
            throw BlocklistError(.io, "Waiting for a writer to the FIFO \(path) failed: \(failure).")
        }
        return (opened, path)
    }

    /// Reads what `descriptor` holds into `buffer`, at most its size: 0 at the end, -1 with
    /// `errno` on failure. A descriptor without blocking (a FIFO) is waited on when it is empty.
    package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let n = _read(descriptor, buffer)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { return -1 }
            if waitForData(descriptor) != nil { return -1 }
        }
    }

    /// Waits until `descriptor` is readable (data, or its writer gone); a sentence if poll failed.
    private static func waitForData(_ descriptor: Int32) -> String? {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, -1) < 0 {
            if errno != EINTR { return String(cString: strerror(errno)) }
        }
        return nil
    }

    /// The file type of `descriptor`, refusing anything but a regular file or a FIFO.
    @discardableResult
    private static func checkType(_ descriptor: Int32, name: String) throws(BlocklistError) -> mode_t {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw BlocklistError(.io, "Reading the status of \(name) failed: \(String(cString: strerror(errno))).")
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || type == S_IFIFO else {
            throw BlocklistError(
                .invalidInput,
                "\(name) is \(_fileTypeName(type)), not a regular file or a pipe; give a list file."
            )
        }
        return type
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
    ///   `.io` or `.invalidInput` naming the file (and byte offset) if reading or decompressing
    ///   fails.
    package func next() throws(BlocklistError) -> UnsafeRawBufferPointer? {
        switch try nextLine() {
        case nil: return nil
        case .text(let bytes): return bytes
        case .tooLong(let bytes):
            throw BlocklistError(.invalidInput, "\(name):\(lineNumber): \(Self.tooLongReason(bytes)).")
        }
    }

    /// Why a line of `bytes` bytes is refused, as a clause.
    package static func tooLongReason(_ bytes: Int64) -> String {
        "the line is \(bytes) bytes, longer than \(maximumLineBytes); a list holds one number (or a CSV record) per line"
    }

    /// The next line, or that it was too long; `nil` at the end.
    ///
    /// - Throws: `.io` or `.invalidInput` naming the file (and byte offset) if reading or
    ///   decompressing fails.
    package func nextLine() throws(BlocklistError) -> Line? {
        var length = 0
        var total: Int64 = 0
        var sawAny = false
        let room = line.count
        while true {
            if position == count {
                if dataEnded {
                    if !sawAny { return nil }
                    break
                }
                try fill()
                continue
            }
            if lineFeedMayFollow {
                lineFeedMayFollow = false
                if data[position] == 10 {
                    position += 1
                    continue
                }
            }
            sawAny = true
            let available = UnsafeRawBufferPointer(rebasing: data[position..<count])
            let newline = available.firstIndex { $0 == 10 || $0 == 13 }
            let take = (newline ?? available.endIndex) - available.startIndex
            total += Int64(take)
            if length < room {
                let copied = min(take, room - length)
                UnsafeMutableRawPointer(line.baseAddress! + length).copyMemory(
                    from: available.baseAddress!,
                    byteCount: copied
                )
                length += copied
            }
            if let newline {
                position += take + 1
                if available[newline] == 13 {
                    // A carriage return: a line feed right after it is part of the same ending.
                    if position < count {
                        if data[position] == 10 { position += 1 }
                    } else {
                        lineFeedMayFollow = true
                    }
                }
                break
            }
            position = count
        }
        lineNumber += 1
        var start = 0
        if lineNumber == 1, length >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
            start = 3
            total -= 3
        }
        guard total <= Int64(Self.maximumLineBytes) else { return .tooLong(bytes: total) }
        return .text(UnsafeRawBufferPointer(rebasing: line[start..<(start + Int(total))]))
    }

    /// The SHA-256 of the file's bytes as 64 hex digits, once every line has been read.
    package func sha256() -> String {
        var copy = hasher
        return copy.finish()
    }

    private func readRaw(into buffer: UnsafeMutableRawBufferPointer) throws(BlocklistError) -> Int {
        let n = Self.read(fd, into: buffer)
        guard n >= 0 else { throw BlocklistError(.io, "Reading \(name) failed: \(String(cString: strerror(errno))).") }
        bytesRead += Int64(n)
        hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        return n
    }

    /// Reads into `raw` after its first `kept` bytes until it holds at least `wanted` bytes or the
    /// file ends (a pipe may hand over one byte at a time); returns how many it holds.
    private func readRaw(keeping kept: Int, wanted: Int) throws(BlocklistError) -> Int {
        var held = kept
        while held < wanted && !rawEnded {
            let n = try readRaw(into: UnsafeMutableRawBufferPointer(rebasing: raw[held...]))
            if n == 0 { rawEnded = true }
            held += n
        }
        return held
    }

    private func fill() throws(BlocklistError) {
        position = 0
        count = 0
        if !started {
            started = true
            // Read the first bytes to tell gzip from text, and from what is neither.
            let n = try readRaw(keeping: 0, wanted: 6)
            if let format = TextFormat.unreadable(UnsafeRawBufferPointer(rebasing: raw[0..<n]), name: name) {
                throw BlocklistError(
                    .invalidInput,
                    "\(name) is \(format.what), and blocklist reads plain text (UTF-8) and gzip: \(format.fix); nothing was read."
                )
            }
            if n >= 2, raw[0] == 0x1F, raw[1] == 0x8B {
                let stream = try Inflater(windowBits: 15 + 16, context: name, payloadOffset: 0)
                stream.setInput(UnsafeRawBufferPointer(rebasing: raw[0..<n]))
                inflater = stream
            } else {
                data.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<n]))
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
            if memberEnded {
                memberEnded = false
                guard try nextMemberFollows(inflater) else {
                    dataEnded = true
                    return
                }
                try inflater.reset(payloadOffset: memberStart)
            }
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
                memberEnded = true
            } else if produced == 0 && rawEnded && inflater.availableInput == 0 {
                throw BlocklistError(
                    .invalidInput,
                    "\(name) is a truncated gzip file: it ends at byte \(bytesRead) inside the gzip member that starts at byte \(memberStart)."
                )
            }
        }
        if !innerChecked, count > 0 {
            innerChecked = true
            // What gzip holds is told as a file is: an xz file or UTF-16 text gzipped is named,
            // not read as lines of binary.
            let head = UnsafeRawBufferPointer(rebasing: data[0..<min(count, 6)])
            if let format = TextFormat.unreadable(head, name: name + ".out") {
                var what = String(format.what.prefix { $0 != "(" }.trimmingSuffixSpaces)
                if what.hasSuffix("-compressed") { what = what.dropLast("-compressed".count) + " data" }
                let fix = format.fix.replacing(" first (", with: " (")
                throw BlocklistError(
                    .invalidInput,
                    "\(name) is gzip-compressed \(what), and blocklist reads plain text (UTF-8), gzipped or not: decompress it (gzip -dc \(name) > \(name).out), then \(fix); nothing was read."
                )
            }
        }
    }

    /// After a gzip member: whether another follows (its magic bytes are next), or the file ends.
    ///
    /// - Throws: `.invalidInput` naming the offset of trailing bytes that are not gzip.
    private func nextMemberFollows(_ inflater: Inflater) throws(BlocklistError) -> Bool {
        var pending = inflater.pendingInput
        if pending.count < 2 {
            // Keep the byte left (if any) at the start of the buffer and read after it.
            let kept = pending.count
            if kept == 1 { raw[0] = pending[pending.startIndex] }
            let held = try readRaw(keeping: kept, wanted: 2)
            inflater.setInput(UnsafeRawBufferPointer(rebasing: raw[0..<held]))
            pending = inflater.pendingInput
        }
        if pending.isEmpty { return false }
        let offset = bytesRead - Int64(pending.count)
        guard pending.count >= 2, pending[pending.startIndex] == 0x1F, pending[pending.startIndex + 1] == 0x8B else {
            throw BlocklistError(
                .invalidInput,
                "\(name) has bytes after its gzip data, from byte \(offset) on, that are not another gzip member; remove them (or recompress the file)."
            )
        }
        memberStart = offset
        return true
    }
}

/// libc's `open`, which the class's own `open` hides.
private func _openForReading(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC | flags)
}

/// libc's `read`, which the class's own `read` hides.
private func _read(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(descriptor, buffer.baseAddress, buffer.count)
}

extension Substring {
    /// The text without the spaces it ends with.
    fileprivate var trimmingSuffixSpaces: Substring {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == " " { end = index(before: end) }
        return self[startIndex..<end]
    }
}
