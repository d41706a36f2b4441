import BlocklistCore
import Foundation
import SetStorage

/// The package's root directory (this file is Tests/TestSupport/Support.swift).
package let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A fresh directory under the system's temporary directory, removed when the value goes away.
package final class TemporaryDirectory {
    package let path: String

    package init() throws {
        let template = FileManager.default.temporaryDirectory.path + "/blocklist-test-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: bytes)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    package func file(_ name: String) -> String { path + "/" + name }
}

package func readBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

package func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Writes `runs` as shard `index` at `path`.
@discardableResult
package func writeShard(_ runs: [NumberRun], index: Int = 1, to path: String) throws -> ShardHeader {
    let writer = try ShardWriter(path: path, shardIndex: index)
    for run in runs { try writer.append(run) }
    return try writer.finish(sync: false)
}

/// Every number of the shard at `path`, through `next()`.
package func readNumbers(_ path: String) throws -> [Int64] {
    let reader = try ShardReader(path: path)
    var numbers: [Int64] = []
    while let number = try reader.next() { numbers.append(number) }
    return numbers
}

/// What running the built `blocklist` binary printed.
package struct CommandResult {
    package var status: Int32
    package var stdout: String
    package var stderr: String
}

/// The directory holding the products `swift build` made, next to this test bundle.
package let productsDirectory: String = {
    let executable =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent().path
}()

/// A `blocklist` process (or `executable`) started in the background; output goes through files,
/// so a large output cannot fill a pipe and stall the child.
package final class RunningBlocklist {
    package let process = Process()
    private let scratch: TemporaryDirectory

    package init(
        _ arguments: [String],
        in directory: String? = nil,
        executable: String = productsDirectory + "/blocklist",
        environment: [String: String] = [:]
    ) throws {
        scratch = try TemporaryDirectory()
        FileManager.default.createFile(atPath: scratch.file("out"), contents: nil)
        FileManager.default.createFile(atPath: scratch.file("err"), contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = FileHandle(forWritingAtPath: scratch.file("out"))
        process.standardError = FileHandle(forWritingAtPath: scratch.file("err"))
        try process.run()
    }

    /// Waits for the process to end and returns what it printed.
    package func wait() throws -> CommandResult {
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: try readBytes(scratch.file("out")), as: UTF8.self),
            stderr: String(decoding: try readBytes(scratch.file("err")), as: UTF8.self)
        )
    }
}

/// Runs `blocklist` with `arguments` in `directory` and waits for it.
package func runBlocklist(_ arguments: [String], in directory: String? = nil, environment: [String: String] = [:])
    throws
    -> CommandResult
{
    try RunningBlocklist(arguments, in: directory, environment: environment).wait()
}

/// Polls `condition` every 10 ms for up to `seconds`; true as soon as it holds.
package func waitUntil(seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

/// Whether process `pid` still runs (a zombie or a vanished process does not).
package func isRunning(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
        return false
    }
    return !stat[close...].hasPrefix(") Z")
}

extension Manifest {
    /// The manifest as an older blocklist wrote it: JSONEncoder, pretty, keys sorted.
    package func jsonForTests() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
    }
}

/// The first line a child process writes to `pipe` (without its newline), read a byte at a time
/// and no further: another test's child may hold the pipe's write end too, so its end may never
/// come. Test servers print their port this way.
package func firstLine(of pipe: Pipe) -> String {
    var line: [UInt8] = []
    while true {
        let byte = pipe.fileHandleForReading.readData(ofLength: 1)
        if byte.isEmpty || byte.first == 0x0A { break }
        line += byte
    }
    return String(decoding: line, as: UTF8.self)
}

/// Runs `executable` with `arguments`, feeding `input` on standard input; returns its status
/// and standard output.
/// Copies a program to run it from elsewhere, through `cp`: a copy written in this process leaves
/// its write descriptor, for a moment, in any child another test forks then, and running the copy
/// fails with "Text file busy" while that child lives (found in `.ci/run`).
package func copyExecutable(_ source: String, to destination: String) throws {
    let copied = try runProcess("/bin/cp", [source, destination])
    guard copied.status == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination])
    }
}

package func runProcess(_ executable: String, _ arguments: [String], input: Data = Data()) throws -> (
    status: Int32, stdout: Data
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    ignoreSIGPIPE()
    try process.run()
    // Write on another thread: a large input would fill the pipe while the child writes; a child
    // that stops before it read everything makes the write fail (EPIPE), and its status says so.
    let writer = Thread {
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()
    }
    writer.start()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, output)
}
