import BlocklistCore
package import LibC

// The libc calls the simulator makes to run an extension host (and `blocklist bench` a workload):
// spawn it with its standard output on a pipe, wait for data with a timeout, watch its memory, kill
// it, reap it.

/// A spawned process whose standard output is a pipe to this process.
package final class ChildProcess {
    package let pid: pid_t
    /// The read end of the child's standard output.
    package let output: Int32
    /// The write end of the child's standard input; closing it lets the child exit.
    private var input: Int32
    private var reaped = false
    /// How the child ended, once reaped.
    package private(set) var exitStatus: Int32 = 0
    package private(set) var termSignal: Int32 = 0
    /// wait4's ru_maxrss in KiB, once reaped; see `peakResidentKiB()` for why it overstates.
    package private(set) var maximumResidentKiB = 0

    /// Spawns `path` with `arguments`.
    package init(path: String, arguments: [String]) throws(BlocklistError) {
        var fds: [Int32] = [0, 0]
        var inputFds: [Int32] = [0, 0]
        guard pipe(&fds) == 0, pipe(&inputFds) == 0 else {
            throw BlocklistError(.io, "Creating pipes for \(path) failed: \(String(cString: strerror(errno))).")
        }
        // The originals close at exec; the child keeps only the copies dup2 makes as 0 and 1.
        for fd in fds + inputFds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, inputFds[0], 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(fds[1])
        close(inputFds[0])
        guard code == 0 else {
            close(fds[0])
            close(inputFds[1])
            throw BlocklistError(.io, "Starting \(path) failed: \(String(cString: strerror(code))).")
        }
        self.pid = pid
        output = fds[0]
        input = inputFds[1]
    }

    /// The write end of the child's standard input, until `release()`.
    package var inputDescriptor: Int32 { input }

    /// Lets the child exit once it has completed its request (it waits for end of input).
    package func release() {
        if input >= 0 { close(input) }
        input = -1
    }

    deinit {
        if !reaped {
            Glibc.kill(pid, SIGKILL)
            _ = try? wait()
        }
        close(output)
        release()
    }

    /// Waits up to `milliseconds` for output; true if some is ready or the pipe closed.
    package func waitForOutput(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        return ready > 0
    }

    /// Reads what is available into `buffer`; 0 at end of output.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(BlocklistError) -> Int {
        while true {
            let n = Glibc.read(output, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw BlocklistError(.io, "Reading from child process \(pid) failed: \(String(cString: strerror(errno))).")
        }
    }

    /// The child's peak resident memory so far (VmHWM) in KiB, or nil once it is gone.
    ///
    /// wait4's ru_maxrss cannot serve here: at exec, Linux folds the high-water mark of the address
    /// space being replaced into the child's ru_maxrss, and after posix_spawn's vfork that is the
    /// spawning process's, so it reports the simulator's size rather than the extension's.
    package func peakResidentKiB() -> Int? { ProcessMemory.read(pid: pid)?.peakResident }

    package func kill() { _ = Glibc.kill(pid, SIGKILL) }

    /// Reaps the child, recording its status and peak memory.
    package func wait() throws(BlocklistError) {
        _ = try reap(blocking: true)
    }

    /// Reaps the child if it has ended; false while it still runs.
    package func waitIfEnded() throws(BlocklistError) -> Bool {
        try reap(blocking: false)
    }

    private func reap(blocking: Bool) throws(BlocklistError) -> Bool {
        guard !reaped else { return true }
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let result = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
            if result == 0 { return false }
            if result > 0 { break }
            if errno == EINTR { continue }
            throw BlocklistError(.io, "Waiting for child process \(pid) failed: \(String(cString: strerror(errno))).")
        }
        reaped = true
        maximumResidentKiB = usage.ru_maxrss
        if status & 0x7F == 0 {
            exitStatus = (status >> 8) & 0xFF
        } else {
            termSignal = status & 0x7F
        }
        return true
    }
}

/// What a child process did: its output, wall time, and memory as sampled.
package struct ChildRun: Sendable {
    package var output: [UInt8] = []
    package var seconds: Double = 0
    package var peakKiB = 0
    package var anonymousKiB = 0
    package var ruMaxRSSKiB = 0
    /// The child's exit status (0 unless `run` was told to accept a failure).
    package var exitStatus: Int32 = 0
}

extension ChildProcess {
    /// Runs `path` with `arguments` to its end, reading its output and sampling its memory
    /// (`ProcessMemory`) every 5 ms: how `blocklist bench` measures each workload and `push
    /// deliver` its notification host.
    ///
    /// - Parameters:
    ///   - what: names the program in the error.
    ///   - acceptingFailure: return a run that exited non-zero (its status in `exitStatus`)
    ///     instead of throwing; a signal still throws. Default: false.
    package static func run(
        _ path: String,
        _ arguments: [String],
        what: String,
        acceptingFailure: Bool = false
    ) throws(BlocklistError) -> ChildRun {
        let clock = ContinuousClock()
        let started = clock.now
        let child = try ChildProcess(path: path, arguments: arguments)
        var run = ChildRun()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        func sample() {
            if let memory = ProcessMemory.read(pid: child.pid) {
                run.peakKiB = max(run.peakKiB, memory.peakResident)
                run.anonymousKiB = max(run.anonymousKiB, memory.anonymous)
            }
        }
        while true {
            sample()
            guard child.waitForOutput(milliseconds: 5) else { continue }
            let count = try child.read(into: buffer)
            if count == 0 { break }
            run.output += buffer[0..<count]
        }
        child.release()
        // A child may close its output long before it ends (sort -o does at once).
        while try !child.waitIfEnded() {
            sample()
            usleep(5000)
        }
        let (whole, attoseconds) = (clock.now - started).components
        run.seconds = Double(whole) + Double(attoseconds) / 1e18
        run.exitStatus = child.exitStatus
        guard child.exitStatus == 0 || acceptingFailure, child.termSignal == 0 else {
            throw BlocklistError(
                .io,
                "\(what) failed (status \(child.exitStatus), signal \(child.termSignal))."
            )
        }
        run.ruMaxRSSKiB = child.maximumResidentKiB
        return run
    }
}
