import Foundation

/// Python, the independent implementation that differential tests hold the code to.
///
/// A new machine of this project's kind has `python3` with the `regex` module and without
/// `confusables` (packages/installed-swift.txt). A test whose reference module may be missing is
/// enabled with `PythonReference.available(_:)`: it is skipped, with the module named, where the
/// module is missing, unless `BLOCKLIST_REQUIRE_REFERENCES=1` (`.ci/run`, which installs every
/// module) makes it run and fail. A reference that dies (a missing module, a bug in its script)
/// fails its test with Python's last line, never the whole test process with SIGPIPE.
package enum PythonReference {
    /// True under `.ci/run` (`BLOCKLIST_REQUIRE_REFERENCES=1`): no reference may be missing.
    package static let required = ProcessInfo.processInfo.environment["BLOCKLIST_REQUIRE_REFERENCES"] == "1"

    /// What installs each module a test may import, at the version its tests were written against.
    package static let installs: [String: String] = [
        "icu": "pip install --only-binary=:all: icukit-pyicu==78.3.1",
        "regex": "pip install regex",
    ]

    /// Whether a test that imports `module` runs here: the module imports, or references are
    /// required (then a missing one fails the test with its install command).
    package static func available(_ module: String) -> Bool { required || imports(module) }

    /// Whether `python3` imports `module`, asked once per module and process.
    package static func imports(_ module: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let known = importable[module] { return known }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import " + module]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        var answer = false
        if (try? process.run()) != nil {
            process.waitUntilExit()
            answer = process.terminationStatus == 0
        }
        importable[module] = answer
        return answer
    }

    /// Runs `script` in one `python3` process, which reads a JSON request per line on standard
    /// input and prints a JSON answer per line, and returns its answers. Throws, naming what to
    /// install or Python's last line of error, when Python stops before it answered every request.
    package static func answers(_ script: String, _ requests: [Any]) throws -> [Any] {
        ignoreSIGPIPE()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var lines = Data()
        for request in requests {
            lines.append(try JSONSerialization.data(withJSONObject: request))
            lines.append(0x0A)
        }
        // Written from another thread: python answers as it reads, and a full pipe would block. A
        // python that stopped early makes the write fail with EPIPE, which is ignored here: the
        // missing answers say so below.
        // Every read and write is read(2) or write(2), retried when a signal interrupts it:
        // FileHandle stops the process on EINTR (seen when a child exited during a long answer).
        let writer = input.fileHandleForWriting
        let payload = [UInt8](lines)
        let thread = Thread {
            var written = 0
            while written < payload.count {
                let count = payload[written...].withUnsafeBytes {
                    write(writer.fileDescriptor, $0.baseAddress, $0.count)
                }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                written += count
            }
            try? writer.close()
        }
        thread.start()
        // Standard error is drained on its own thread, so that a chatty script never blocks.
        let errorText = ErrorText()
        let errorDescriptor = errors.fileHandleForReading.fileDescriptor
        let drain = Thread {
            var data: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(errorDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                data += buffer[0..<count]
            }
            errorText.set(String(decoding: data, as: UTF8.self))
        }
        drain.start()
        // Read the answers by count, not to the end of the pipe, and stop python then: a process
        // another test starts at the same moment may inherit a pipe's write end and hold it open, so
        // neither end of file may ever come.
        var answer = Data()
        var lineCount = 0
        let descriptor = output.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while lineCount < requests.count {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            answer.append(contentsOf: buffer[0..<count])
            lineCount += buffer[0..<count].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        if lineCount < requests.count {
            try? errors.fileHandleForWriting.close()
            throw PythonReferenceError(
                answered: lineCount,
                requested: requests.count,
                stderr: errorText.wait(seconds: 5)
            )
        }
        return try String(decoding: answer, as: UTF8.self).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8))
        }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var importable: [String: Bool] = [:]
}

/// A Python reference that stopped before it answered every request.
package struct PythonReferenceError: Error, CustomStringConvertible {
    package let answered: Int
    package let requested: Int
    package let stderr: String

    /// The module Python could not import, when that is why it stopped.
    package var missingModule: String? {
        guard let range = stderr.range(of: "No module named '") else { return nil }
        return String(stderr[range.upperBound...].prefix { $0 != "'" })
    }

    package var description: String {
        if let module = missingModule {
            let install = PythonReference.installs[module] ?? "pip install \(module)"
            return "The Python reference needs the module '\(module)', which python3 here does not have: \(install)."
        }
        let last = stderr.split(separator: "\n").last.map(String.init) ?? "no message"
        return "The Python reference stopped after \(answered) of \(requested) answers: \(last)"
    }
}

/// Standard error of a child, set by the thread that reads it.
private final class ErrorText: @unchecked Sendable {
    private let condition = NSCondition()
    private var text: String?

    func set(_ value: String) {
        condition.lock()
        text = value
        condition.broadcast()
        condition.unlock()
    }

    func wait(seconds: Double) -> String {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while text == nil && condition.wait(until: deadline) {}
        return text ?? ""
    }
}

/// Ignores SIGPIPE in the test process, once: a child that stops early makes a write to its
/// standard input fail with EPIPE instead of killing every test with the signal.
package func ignoreSIGPIPE() {
    _ = sigpipeIgnored
}

private let sigpipeIgnored: Void = {
    signal(SIGPIPE, SIG_IGN)
}()
