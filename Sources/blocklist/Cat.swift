import ArgumentParser
import BlocklistCore
import CommandSupport
internal import LibC

struct Cat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every number of one or more shards, one per line, ascending.",
        discussion: """
            Numbers are printed as CXCallDirectoryPhoneNumber digits (827001001001). Give shards in index order. \
            With --labels, prints the identification entries instead: number, a tab, and the label.
            """
    )

    @Argument(
        help: ArgumentHelp("Shard files, in ascending order.", valueName: "file"),
        completion: .file(extensions: ["blk"])
    )
    var files: [String]

    @Flag(help: "Print identification entries (number<TAB>label) instead of blocking entries.")
    var labels = false

    func run() throws {
        let output = LineWriter(fd: 1)
        do {
            try write(to: output)
        } catch {
            // What earlier files gave is printed before the error is: never a silent cut.
            try output.flush()
            throw error
        }
    }

    private func write(to output: LineWriter) throws {
        var previous: Int64 = 0
        var previousFile = ""
        let batch = UnsafeMutableBufferPointer<Int64>.allocate(capacity: 4096)
        defer { batch.deallocate() }
        for file in files where labels {
            let reader = try ShardReader(path: file)
            let table = try reader.readLabels()
            while let (run, label) = try reader.nextIdentificationRun() {
                if run.start <= previous {
                    throw BlocklistError(
                        .invalidInput,
                        "\(file) identifies \(run.start), not above \(previousFile)'s last \(previous); give shards in index order."
                    )
                }
                for number in run.start...run.last { try output.write(number, label: table[label]) }
                previous = run.last
                previousFile = file
            }
        }
        for file in files where !labels {
            let reader = try ShardReader(path: file)
            if reader.header.entryCount > 0 && reader.header.first <= previous {
                throw BlocklistError(
                    .invalidInput,
                    "\(file) starts at \(reader.header.first), not above \(previousFile)'s last number \(previous); give shards in index order."
                )
            }
            while true {
                let count = try reader.read(into: batch)
                if count == 0 { break }
                for index in 0..<count { try output.write(batch[index]) }
            }
            // The label table and identification runs are not printed, but a shard whose later
            // sections are damaged is not sound: say so rather than exit 0.
            try reader.checkToEnd()
            if reader.header.entryCount > 0 {
                previous = reader.header.last
                previousFile = file
            }
        }
        try output.flush()
    }
}

/// Writes decimal numbers, one per line, through one fixed buffer: no String per number.
final class LineWriter {
    private let fd: Int32
    private let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 16)
    private var used = 0

    init(fd: Int32) { self.fd = fd }
    deinit { buffer.deallocate() }

    /// Writes `value` and a newline, after `prefix` (`diff`'s + and -) if one is given.
    func write(_ value: Int64, prefix: UInt8? = nil) throws {
        if used > buffer.count - 22 { try flush() }
        if let prefix {
            buffer[used] = prefix
            used += 1
        }
        var digits = value.magnitude
        var end = used + 20
        buffer[end] = UInt8(ascii: "\n")
        repeat {
            end -= 1
            buffer[end] = UInt8(48 + digits % 10)
            digits /= 10
        } while digits > 0
        if value < 0 {
            end -= 1
            buffer[end] = UInt8(ascii: "-")
        }
        let length = used + 21 - end
        if end != used {
            UnsafeMutableRawPointer(buffer.baseAddress! + used).copyMemory(
                from: buffer.baseAddress! + end,
                byteCount: length
            )
        }
        used += length
    }

    /// Writes `value` (after `prefix`, if given), a tab and `label`, and a newline.
    func write(_ value: Int64, prefix: UInt8? = nil, label: [UInt8]) throws {
        if used > buffer.count - 23 - label.count { try flush() }
        try write(value, prefix: prefix)
        used -= 1
        buffer[used] = 9
        used += 1
        for byte in label {
            buffer[used] = byte
            used += 1
        }
        buffer[used] = UInt8(ascii: "\n")
        used += 1
    }

    func flush() throws {
        var done = 0
        while done < used {
            let n = systemWrite(fd, buffer.baseAddress! + done, used - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw BlocklistError(.io, "Writing to standard output failed: \(String(cString: strerror(errno))).")
            }
            done += n
        }
        used = 0
    }
}

private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
