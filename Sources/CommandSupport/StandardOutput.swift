/// Standard output's fate at exit: `print` buffers, and a full disk, a closed pipe or /dev/full
/// only shows when the buffer is flushed and closed, which `exit` does silently.
internal import LibC

package enum StandardOutput {
    /// Flushes and closes standard output.
    ///
    /// - Returns: `nil` if everything printed reached it, or a sentence saying it did not.
    package static func close() -> String? {
        // The C library's stream; the process is about to end, nothing else uses it now.
        let stream = stdout
        errno = 0
        let failed = fflush(stream) != 0 || ferror(stream) != 0
        let flushError = errno
        let closed = fclose(stream) == 0
        let closeError = errno
        if failed { return "Writing to standard output failed: \(text(flushError))." }
        if !closed && closeError != EBADF { return "Closing standard output failed: \(text(closeError))." }
        return nil
    }

    /// Flushes standard output, before an exec replaces this process.
    package static func flush() {
        _ = fflush(stdout)
    }

    /// Ends the process with `status`, or with 1 (and a sentence on stderr) if standard output
    /// lost anything, so a command whose output was cut never exits 0.
    package static func exit(_ status: Int32) -> Never {
        if let problem = close() {
            Terminal.error("Error: \(problem)\n")
            terminate(status == 0 ? 1 : status)
        }
        terminate(status)
    }

    /// Ends a command that stopped with `message` (help, a version, or an error) and `status`:
    /// the message goes to standard output if `status` is 0, else to standard error.
    package static func exit(_ status: Int32, message: String) -> Never {
        if !message.isEmpty {
            if status == 0 { print(message) } else { Terminal.error(message + "\n") }
        }
        exit(status)
    }

    private static func terminate(_ status: Int32) -> Never {
        #if canImport(Glibc)
            Glibc.exit(status)
        #elseif canImport(Musl)
            Musl.exit(status)
        #else
            Darwin.exit(status)
        #endif
    }

    private static func text(_ code: Int32) -> String {
        guard code != 0, let message = strerror(code) else { return "an unknown error" }
        return String(cString: message)
    }
}

/// This executable's path, from /proc/self/exe (or argv[0] if that cannot be read).
package func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return commandLineArgument(0) ?? "" }
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The directory this executable is in.
func executableDirectory() -> String {
    let executable = executablePath()
    guard let slash = executable.lastIndex(of: "/") else { return "." }
    return String(executable[..<slash])
}

/// Where blocklist's helper program `name` may be: beside this executable (a build directory,
/// `.build/release`), then in `../libexec/blocklist` (an install, `Scripts/install.sh`), the way
/// git keeps its helpers.
private func helperCandidates(_ name: String) -> [String] {
    let directory = executableDirectory()
    return [directory + "/" + name, directory + "/../libexec/blocklist/" + name]
}

/// Why `path` cannot be run as a helper, or `nil` if it can: a regular file this user may execute.
func unusableHelper(_ path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return errno == ENOENT ? "does not exist" : String(cString: strerror(errno)) }
    if info.st_mode & S_IFMT == S_IFDIR { return "is a directory" }
    if info.st_mode & S_IFMT != S_IFREG { return "is not a regular file" }
    return access(path, X_OK) == 0 ? nil : "is not executable"
}

/// The path of blocklist's helper program `name`: the first place it can be run from, else the
/// path beside this executable.
package func siblingExecutable(_ name: String) -> String {
    let candidates = helperCandidates(name)
    return candidates.first { unusableHelper($0) == nil } ?? candidates[0]
}

/// A sentence naming helper `name`, where it was looked for and what is wrong in each place, if
/// it can be run from neither; `nil` if it is found.
package func missingHelper(_ name: String) -> String? {
    let candidates = helperCandidates(name)
    let problems = candidates.map { (path: $0, problem: unusableHelper($0)) }
    guard problems.allSatisfy({ $0.problem != nil }) else { return nil }
    let places = problems.map { "\($0.path) \($0.problem!)" }.joined(separator: ", and ")
    return "blocklist needs its helper \(name), and cannot run it: \(places). blocklist's programs work together: "
        + "copy \(name) beside blocklist (as in .build/release after swift build -c release), or install them all with Scripts/install.sh --prefix DIR."
}

/// Replaces this process with `path` run with `arguments` (argv[0] first). Returns only if exec
/// failed, with errno's sentence.
package func replaceProcess(with path: String, arguments: [String]) -> String {
    var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    execv(path, pointers)
    return String(cString: strerror(errno))
}

/// Replaces this process with `path`, named `name` in argv[0] and given this process's own
/// arguments from `first` on, passed as the kernel handed them over: the argument vector is
/// reused in place (argv[first - 1] becomes `name`), so twenty thousand `--pattern`s cost no copy
/// of their strings or of their pointers. Returns only if exec failed, with errno's sentence,
/// after putting argv[first - 1] back.
package func replaceProcess(with path: String, name: String, passingArgumentsFrom first: Int) -> String {
    precondition(first >= 1 && first <= Int(CommandLine.argc))
    let argv = CommandLine.unsafeArgv
    let replaced = argv[first - 1]
    let argv0 = strdup(name)
    defer {
        argv[first - 1] = replaced
        free(argv0)
    }
    argv[first - 1] = argv0
    execv(path, argv + (first - 1))
    return String(cString: strerror(errno))
}

/// This process's argument `index` (0 is its name), read without building `CommandLine.arguments`.
package func commandLineArgument(_ index: Int) -> String? {
    guard index < Int(CommandLine.argc), let pointer = CommandLine.unsafeArgv[index] else { return nil }
    return String(cString: pointer)
}

/// Gives the memory of this process's arguments after argv[0] back to the kernel, once they have
/// been read into something smaller: the kernel copies them onto the stack at exec, and 20,000
/// `--allow-pattern`s hold 940 KiB there for the whole run (the strings and their pointers).
/// Only whole pages that hold nothing but those arguments are released; they read as zero bytes
/// afterwards, so `commandLineArgument` returns `nil` for them and `CommandLine.arguments` must
/// not be read. `/proc/PID/cmdline` (what `ps` shows) keeps argv[0]. Does nothing unless the
/// strings lie end to end, as Linux puts them.
package func releaseCommandLineArguments() {
    let count = Int(CommandLine.argc)
    let argv = CommandLine.unsafeArgv
    guard count > 2, let first = argv[1] else { return }
    var end = UnsafeRawPointer(first)
    for index in 1..<count {
        guard let argument = argv[index], UnsafeRawPointer(argument) == end else { return }
        end += strlen(argument) + 1
    }
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    func release(from start: UnsafeRawPointer, to end: UnsafeRawPointer) {
        let low = (Int(bitPattern: start) + page - 1) / page * page
        let high = Int(bitPattern: end) / page * page
        guard high > low, let address = UnsafeMutableRawPointer(bitPattern: low) else { return }
        _ = madvise(address, high - low, MADV_DONTNEED)
    }
    release(from: UnsafeRawPointer(first), to: end)
    release(from: UnsafeRawPointer(argv + 1), to: UnsafeRawPointer(argv + count))
}

/// What every command-line program does first:
/// - It stops with a sentence (status 1) when the Swift runtime could not read this process's
///   command line: a static executable finds it through /proc/self/maps, and with no descriptor
///   free (`ulimit -n 3`) it sees no argument at all, not even its name. It would otherwise take
///   an empty command line for `blocklist` alone, print its help and exit 0, and a caller would
///   believe an update had run.
/// - It ignores SIGXFSZ, so that a write past `ulimit -f` fails with EFBIG, which the writer
///   names in a sentence (and the run cleans up), instead of killing the process silently.
package func beginCommand() {
    _ = signal(SIGXFSZ, SIG_IGN)
    guard CommandLine.argc == 0 else { return }
    StandardOutput.exit(
        1,
        message:
            "Error: blocklist could not read its own command line (the system refused to open /proc/self/maps: are all file descriptors in use? see ulimit -n); nothing was done."
    )
}

/// A refusal of the first argument that is not valid UTF-8, or `nil` when all are. Swift reads
/// such an argument with U+FFFD in place of the bad bytes, so a path would name another file and a
/// sender would match what it does not hold; every command refuses it instead (exit 64), with the
/// usage line every exit 64 has: `program`, and the subcommand when the first argument names one.
package func argumentNotUTF8(program: String = "blocklist") -> String? {
    for index in 1..<max(Int(CommandLine.argc), 1) {
        guard let pointer = CommandLine.unsafeArgv[index] else { continue }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
        guard String(validating: bytes, as: UTF8.self) == nil else { continue }
        var shown = ""
        for byte in bytes {
            if byte >= 0x20 && byte < 0x7F {
                shown.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                shown += "\\x" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        var command = program
        if index > 1, let first = CommandLine.unsafeArgv[1], first.pointee != UInt8(ascii: "-"),
            let name = String(validatingCString: first)
        {
            command += " " + name
        }
        return
            "Error: argument \(index), \"\(shown)\", is not valid UTF-8; blocklist takes paths and values as UTF-8.\n"
            + "Usage: \(command) <arguments>\n  See '\(command) --help' for more information."
    }
    return nil
}
