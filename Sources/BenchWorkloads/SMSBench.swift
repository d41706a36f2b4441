import BlocklistCore
import BlocklistSystem
import CallDirectorySimulator
import CommandSupport
internal import LibC
import MessageFilterCompiler
import MessageFilterCore
import MessageFilterHosting

/// The message filter's rows of the CLI's `bench`: offline classification beside today's linear
/// scan, the extension process's memory with 10,000 rules, and deferred queries over loopback.
package struct SMSBench {
    let directory: String
    let size: BenchSize
    let programs: BenchPrograms

    package init(directory: String, size: BenchSize, programs: BenchPrograms) {
        self.directory = directory
        self.size = size
        self.programs = programs
    }

    package struct Row: Encodable, Sendable {
        package var workload: String
        package var messages: Int64
        package var seconds: Double
        package var messagesPerSecond: Double
        package var peakResidentKiB: Int?
        package var note: String?
    }

    package func run(progress: (String) -> Void) throws -> [Row] {
        var rows: [Row] = []
        progress("classifying with compiled rules…")
        let compiled = try BenchHarness.measure(
            ["sms-compiled", directory, String(size.compiledMessages)],
            programs: programs
        )
        rows.append(
            Row(
                workload: "sms: compiled, 1,000 contains + 50 regex",
                messages: compiled.entries,
                seconds: compiled.seconds,
                messagesPerSecond: Double(compiled.entries) / max(compiled.seconds, 1e-9),
                peakResidentKiB: compiled.peakKiB,
                note: "target ≥ 6,000,000/s"
            )
        )
        progress("classifying with a linear scan…")
        let linear = try BenchHarness.measure(
            ["sms-linear", directory, String(size.linearMessages)],
            programs: programs
        )
        let linearRate = Double(linear.entries) / max(linear.seconds, 1e-9)
        rows.append(
            Row(
                workload: "sms: linear scan, same rules",
                messages: linear.entries,
                seconds: linear.seconds,
                messagesPerSecond: linearRate,
                peakResidentKiB: linear.peakKiB,
                note:
                    "compiled is \(Figures.grouped(Int64((rows[0].messagesPerSecond / max(linearRate, 1e-9)).rounded())))× faster (target ≥ 20×)"
            )
        )
        progress("running hostile regexes on 64 KiB bodies…")
        let worst = try BenchHarness.measure(
            ["sms-worst", directory, String(size == .smoke ? 2 : HostileRegexes.patterns.count)],
            programs: programs
        )
        rows.append(
            Row(
                workload: "sms: worst regex, 64 KiB adversarial body",
                messages: worst.entries,
                seconds: worst.seconds,
                messagesPerSecond: 1 / max(worst.seconds, 1e-9),
                peakResidentKiB: worst.peakKiB,
                note:
                    "the regex's own work, slowest of \(worst.entries) regex × body pairs shipped as a DFA: \(worst.detail ?? "?"); target ≤ 2 ms per regex shipped as a DFA, and linear for a program (≤ 10 ns per instruction and byte)"
            )
        )
        progress("running the extension with 10,000 rules…")
        rows.append(try extensionMemory())
        progress("deferring queries to the server over loopback…")
        rows.append(try deferredQueries())
        return rows
    }

    /// 10,000 rules (9,000 contains, 900 of them through confusables, 500 sender prefixes, 300
    /// suffixes, 200 regexes) compiled and
    /// loaded by the Message Filter extension's host, which then answers 20,000 messages that reach every
    /// kind of rule; its VmHWM at the end, and its dirty memory (Private_Dirty, what iOS counts)
    /// sampled every 1,000 messages and at the middle: the middle one and the largest seen. The binary is synced
    /// first, so that its freshly written pages do not count as dirty. Before it, the host's cold
    /// start three times: exec, map the rules, answer one message.
    func extensionMemory() throws -> Row {
        let (path, messages) = try Self.extensionCorpus(in: directory, messages: size.extensionMessages)
        sync()
        let clock = ContinuousClock()
        // Cold start, as the extension's first message meets it: exec, map the rules, the first
        // verdict; the best of three fresh processes.
        var coldStart = Double.infinity
        for _ in 0..<3 {
            let started = clock.now
            let child = try ChildProcess(path: programs.messageFilterHost, arguments: [path])
            let channel = FrameChannel(input: child.output, output: child.inputDescriptor)
            try channel.write(
                MessageFilterWire.encodeQuery(
                    sender: Array(messages[0].sender.utf8),
                    body: Array(messages[0].body.utf8)
                )
            )
            _ = try channel.readAnswer()
            coldStart = min(coldStart, (clock.now - started).seconds)
            child.release()
            try child.wait()
        }
        let child = try ChildProcess(path: programs.messageFilterHost, arguments: [path])
        let channel = FrameChannel(input: child.output, output: child.inputDescriptor)
        let started = clock.now
        var dirtyMidRun: Int?
        var dirtyLargest: Int?
        for (index, message) in messages.enumerated() {
            try channel.write(
                MessageFilterWire.encodeQuery(sender: Array(message.sender.utf8), body: Array(message.body.utf8))
            )
            _ = try channel.readAnswer()
            let middle = index + 1 == messages.count / 2
            if index % 1_000 == 999 || middle, let dirty = ProcessMemory.privateDirtyKiB(pid: child.pid) {
                if middle { dirtyMidRun = dirty }
                dirtyLargest = max(dirtyLargest ?? 0, dirty)
            }
        }
        let seconds = (clock.now - started).seconds
        let peak = child.peakResidentKiB()
        child.release()
        try child.wait()
        func kib(_ value: Int?) -> String { value.map { "\(Figures.grouped(Int64($0))) KiB" } ?? "unknown" }
        return Row(
            workload: "sms: extension process, 10,000 rules",
            messages: Int64(messages.count),
            seconds: seconds,
            messagesPerSecond: Double(messages.count) / max(seconds, 1e-9),
            peakResidentKiB: peak,
            note:
                "dirty \(kib(dirtyMidRun)) mid-run, \(kib(dirtyLargest)) largest (goal ≤ 512 KiB); pipe round trips; cold start (exec, map the rules, first verdict) \(Terminal.fixed(coldStart * 1000, 1)) ms, best of 3"
        )
    }

    /// Writes `sms-compiled`'s rules and 10,000 messages into `directory/sms-corpus` for
    /// Benchmarks/Hyperscan/hs-bench.c: `patterns.tsv` holds a line per rule (its precedence key,
    /// `c` when it ignores case, its target `s`, `b` or `a`, and its pattern in Hyperscan's
    /// syntax: a keyword escaped, anchored for prefix and suffix), `messages.tsv` a line per
    /// message (sender, a tab, body).
    package static func hyperscanCorpus(in directory: String) throws -> (path: String, messages: Int) {
        let (rules, messages) = Workload.classificationCorpus(messages: 10_000)
        return (try hyperscanCorpus(rules: rules, messages: messages, in: directory), messages.count)
    }

    /// What Hyperscan cannot read as our rules mean them: nil for a rule it can, or why not
    /// (`Benchmarks/Hyperscan/hs-bench.c` reads a pattern per rule over the raw text, so where
    /// normalization changes a message the two may decide differently).
    package static func hyperscanRefusal(_ rule: MessageRule) -> String? {
        if rule.match == .all { return "it combines conditions" }
        if rule.target == .links { return "it matches links" }
        if rule.confusables { return "it reads confusables" }
        if rule.value.contains(where: { $0 == "\t" || $0 == "\n" }) { return "its value holds a tab or a line break" }
        return nil
    }

    /// Writes `rules` and `messages` into `directory/sms-corpus` for hs-bench: `patterns.tsv`
    /// (key, case flag, target, pattern) and `messages.tsv` (sender, tab, body).
    ///
    /// - Precondition: every rule passes `hyperscanRefusal`.
    package static func hyperscanCorpus(
        rules: [MessageRule],
        messages: [(sender: String, body: String)],
        in directory: String
    ) throws -> String {
        var patterns = ""
        for (index, rule) in rules.enumerated() {
            precondition(hyperscanRefusal(rule) == nil)
            var pattern = ""
            if rule.match == .regex {
                pattern = rule.value
            } else {
                for scalar in rule.value.unicodeScalars {
                    let ascii = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
                    pattern += ascii ? String(scalar) : "\\x{\(String(scalar.value, radix: 16))}"
                }
                if rule.match == .prefix { pattern = "^" + pattern }
                if rule.match == .suffix { pattern += "$" }
            }
            let target = rule.target == .sender ? "s" : rule.target == .body ? "b" : "a"
            let key = CompiledRulesFormat.key(action: rule.action, rule: index)
            patterns += "\(key)\t\(rule.caseSensitive ? "" : "c")\t\(target)\t\(pattern)\n"
        }
        // A backslash, a tab, a line feed, a carriage return and NUL are written as `\\`, `\t`,
        // `\n`, `\r` and `\0`, which hs-bench reads back, so that messages keep them.
        func escaped(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\\": out += "\\\\"
                case "\t": out += "\\t"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\0": out += "\\0"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        var lines = ""
        for message in messages {
            lines += escaped(message.sender) + "\t" + escaped(message.body) + "\n"
        }
        // Written aside and renamed into place, so that a failure leaves no half corpus, and an
        // existing corpus is never written over.
        let path = directory + "/sms-corpus"
        guard try FileSystem.kind(path, followingSymlinks: false) == .missing else {
            throw BlocklistError(
                .io,
                "\(path) exists already; give --corpus a directory without one, or remove it. Nothing was written."
            )
        }
        let staging = directory + "/.sms-corpus-\(getpid())"
        guard try FileSystem.makeDirectory(staging) else {
            throw BlocklistError(.io, "\(staging) exists already; remove it (a run killed while writing left it).")
        }
        do {
            try FileSystem.writeNewFile(staging + "/patterns.tsv", Array(patterns.utf8), sync: false)
            try FileSystem.writeNewFile(staging + "/messages.tsv", Array(lines.utf8), sync: false)
            try FileSystem.rename(staging, to: path)
        } catch {
            try? FileSystem.removeFile(staging + "/patterns.tsv")
            try? FileSystem.removeFile(staging + "/messages.tsv")
            try? FileSystem.removeEmptyDirectory(staging)
            throw error
        }
        return path
    }

    /// The 10,000 rules, compiled into `directory/sms-10k`, and messages that reach every kind;
    /// every tenth contains rule matches through confusables, so that the skeleton's tables and
    /// its fold of every message count.
    package static func extensionCorpus(in directory: String, messages count: Int) throws -> (
        path: String, messages: [(sender: String, body: String)]
    ) {
        var corpus = SyntheticCorpus(seed: 11)
        var rules = corpus.rules(contains: 9000, prefix: 500, suffix: 300, regex: 200)
        for index in stride(from: 0, to: 9000, by: 10) where rules[index].match == .contains {
            rules[index].confusables = true
        }
        let path = try CompiledRulesFile.write(RulesCompiler.compile(rules), toDirectory: directory + "/sms-10k")
        return (path, corpus.messages(count, rules: rules, hitEvery: 4))
    }

    /// The deferral server (`serve`) on a free port, and the Messages simulator (`simulate`) deferring every message to
    /// it with 16 in flight: queries per second through the extension, the HTTP client and server.
    func deferredQueries() throws -> Row {
        let tool = programs.sms
        guard access(tool, X_OK) == 0 else {
            return Row(
                workload: "sms: deferred queries over loopback",
                messages: 0,
                seconds: 0,
                messagesPerSecond: 0,
                note: "skipped: \(tool) is missing (swift build -c release builds it)"
            )
        }
        var corpus = SyntheticCorpus(seed: 13)
        let serverRules = corpus.rules(contains: 1000, regex: 50)
        let serverPath = try CompiledRulesFile.write(
            RulesCompiler.compile(serverRules),
            toDirectory: directory + "/sms-server"
        )
        // The extension's one rule never matches, so every message is deferred.
        let extensionRules = [
            MessageRule(name: "never", target: .sender, match: .prefix, value: "\u{1}", action: .junk)
        ]
        let extensionPath = try CompiledRulesFile.write(
            RulesCompiler.compile(extensionRules),
            toDirectory: directory + "/sms-extension"
        )
        var lines = ""
        for message in corpus.messages(size.deferredMessages, rules: serverRules) {
            lines += "{\"sender\":\"\(message.sender)\",\"body\":\"\(message.body)\"}\n"
        }
        let messagesPath = directory + "/sms-messages.jsonl"
        try FileSystem.writeNewFile(messagesPath, Array(lines.utf8), sync: false)

        let server = try ChildProcess(path: tool, arguments: ["serve", "--rules", serverPath, "--port", "0"])
        defer {
            kill(server.pid, SIGTERM)
            server.release()
            try? server.wait()
        }
        var announced: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 1)
        defer { buffer.deallocate() }
        while !announced.contains(UInt8(ascii: "\n")) {
            guard server.waitForOutput(milliseconds: 10_000) else {
                throw BlocklistError(.io, "\(tool) serve did not start within 10 s.")
            }
            let count = try server.read(into: buffer)
            if count == 0 { throw BlocklistError(.io, "\(tool) serve exited before it listened.") }
            announced += buffer[0..<count]
        }
        let line = String(decoding: announced.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard let url = line.split(separator: " ").last else {
            throw BlocklistError(.io, "\(tool) serve said \"\(line)\".")
        }
        let simulate = try ChildProcess(
            path: tool,
            arguments: [
                "simulate", "--rules", extensionPath, "--file", messagesPath, "--server", String(url), "--concurrency",
                "16", "--quiet", "--json",
            ]
        )
        var output: [UInt8] = []
        while true {
            guard simulate.waitForOutput(milliseconds: 120_000) else { break }
            let count = try simulate.read(into: buffer)
            if count == 0 { break }
            output += buffer[0..<count]
        }
        simulate.release()
        try simulate.wait()
        let text = String(decoding: output, as: UTF8.self)
        func number(_ key: String) -> Double? {
            guard let range = text.firstRange(of: "\"\(key)\" : ") else { return nil }
            return Double(text[range.upperBound...].prefix { "0123456789.e+-".contains($0) })
        }
        guard simulate.exitStatus == 0, let rate = number("messagesPerSecond"), let seconds = number("seconds"),
            let count = number("deferred")
        else {
            throw BlocklistError(
                .io,
                "\(tool) simulate failed (status \(simulate.exitStatus)): \(text.prefix(300))"
            )
        }
        let p50 = number("deferredP50Microseconds").map { Terminal.fixed($0 / 1000, 2) } ?? "-"
        let p99 = number("deferredP99Microseconds").map { Terminal.fixed($0 / 1000, 2) } ?? "-"
        return Row(
            workload: "sms: deferred over loopback, 16 in flight",
            messages: Int64(count),
            seconds: seconds,
            messagesPerSecond: rate,
            peakResidentKiB: number("extensionPeakKiB").map { Int($0) },
            note: "target ≥ 5,000/s; p50 \(p50) ms, p99 \(p99) ms"
        )
    }
}
