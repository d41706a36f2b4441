import BenchWorkloads
import BlocklistSystem
import Foundation
import TestSupport
import Testing

@testable import BlocklistCore
@testable import CallDirectorySimulator
@testable import SetReading
@testable import SetStorage

/// Faults injected into the real binaries: SIGKILL at random moments, a full disk, two writers.
/// Each test is seeded, so a failure replays. docs/RELIABILITY.md lists what each one covers.
@Suite(.serialized) struct FaultTests {
    /// Two specs that differ in every shard, so that a set tells which one it is.
    static let specA = ["--pattern", "+8270####", "--range-size", "500"]
    static let specB = ["--pattern", "+8270####", "--range-size", "500", "--exclude", "00"]

    /// The files of an output directory other than the committed set: leftovers of a killed run.
    static func leftovers(_ directory: String) throws -> [String] {
        guard FileManager.default.fileExists(atPath: directory) else { return [] }
        let manifest = try? Manifest.load(from: directory)
        return try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0 != ShardSet.lockFileName && $0 != Manifest.fileName && $0 != manifest?.directory
        }
    }

    @Test func aGenerateKilledAtRandomMomentsLeavesTheOldOrTheNewSet() throws {
        var random = SplitMix64(state: 100)
        let scratch = try TemporaryDirectory()
        let output = scratch.file("out")
        // How long one run takes here (the shortest of three), to spread the kills over it.
        var duration = Double.infinity
        for _ in 0..<3 {
            let started = Date()
            #expect(try runBlocklist(["generate"] + Self.specA + ["--output", output]).status == 0)
            duration = min(duration, Date().timeIntervalSince(started))
        }
        var kills = 0

        for trial in 0..<100 {
            let useB = trial % 2 == 0
            let previous = try Manifest.load(from: output).spec.exclusions
            let process = try RunningBlocklist(["generate"] + (useB ? Self.specB : Self.specA) + ["--output", output])
            usleep(UInt32(Double.random(in: 0...duration, using: &random) * 1_000_000))
            kill(process.process.processIdentifier, SIGKILL)
            let result = try process.wait()
            if result.status != 0 { kills += 1 }

            let verification = ShardSet.verify(output)
            #expect(verification.isValid, "trial \(trial): \(verification.problems.map(\.message))")
            let now = try Manifest.load(from: output).spec.exclusions
            #expect(
                now == previous || now == (useB ? ["00"] : ["000"]),
                "trial \(trial): the set is neither the old nor the new one"
            )
        }
        #expect(kills >= 10, "most trials should have been killed mid-run (\(kills) were)")
        // The next complete run removes whatever the killed ones left.
        let final = try runBlocklist(["generate"] + Self.specA + ["--output", output])
        #expect(final.status == 0)
        let left = try Self.leftovers(output)
        // What each leftover holds, and what the run said of it, so that a rare failure explains itself.
        let contents = left.map { name in
            "\(name): \((try? FileManager.default.contentsOfDirectory(atPath: output + "/" + name)) ?? [])"
        }
        #expect(left.isEmpty, "\(contents); the last run said: \(final.stdout) \(final.stderr)")
        #expect(ShardSet.verify(output).isValid)
    }

    @Test(arguments: [0, 1])
    func aFullDiskFailsWithASentenceAndKeepsTheOldSet(blocks: Int) throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("out")
        #expect(try runBlocklist(["generate"] + Self.specA + ["--output", output]).status == 0)
        let before = try Manifest.load(from: output)
        let result = try runWithFileSizeLimit(
            blocks: blocks,
            productsDirectory + "/blocklist",
            ["generate"] + Self.specB + ["--output", output]
        )
        #expect(result.status == 1, "\(result.stdout)")
        #expect(result.stdout.contains("File too large"), "\(result.stdout)")
        #expect(result.stdout.contains(output), "the sentence names the file: \(result.stdout)")
        #expect(try Manifest.load(from: output) == before)
        #expect(ShardSet.verify(output).isValid)
        let left = try Self.leftovers(output)
        #expect(left.isEmpty, "\(left)")
    }

    @Test func aFullDiskDuringALoadRollsBackAndKeepsTheOldEntries() throws {
        let scratch = try TemporaryDirectory()
        let (first, second, store) = (scratch.file("a"), scratch.file("b"), scratch.file("store.sqlite"))
        let big = ["--pattern", "+8270######", "--range-size", "200000", "--no-sync"]
        #expect(try runBlocklist(["generate"] + big + ["--output", first]).status == 0)
        #expect(try runBlocklist(["generate"] + big + ["--exclude", "00", "--output", second]).status == 0)
        #expect(try runBlocklist(["enable", "all", first, "--store", store]).status == 0)
        #expect(try runBlocklist(["load", first, "--store", store, "--only", "1"]).status == 0)
        let before = try CallDirectoryStore(path: store).entries(of: "extension-01")
        // 128 KiB of file: the new entries outgrow it in the WAL, before they can commit.
        let result = try runWithFileSizeLimit(
            blocks: 256,
            productsDirectory + "/blocklist",
            ["load", second, "--store", store, "--only", "1"]
        )
        #expect(result.status == 1)
        #expect(result.stdout.contains("failed: unknown (0)"), "\(result.stdout)")
        let reopened = try CallDirectoryStore(path: store)
        #expect(try reopened.integrityCheck() == "ok")
        #expect(try reopened.entries(of: "extension-01") == before)
        #expect(try reopened.extension("extension-01")?.state == .failed)
    }

    @Test func twoGeneratesIntoOneDirectoryNeverMix() throws {
        let scratch = try TemporaryDirectory()
        let output = scratch.file("out")
        for round in 0..<10 {
            let a = try RunningBlocklist(["generate"] + Self.specA + ["--output", output])
            let b = try RunningBlocklist(["generate"] + Self.specB + ["--output", output])
            let results = [try a.wait(), try b.wait()]
            #expect(results.contains { $0.status == 0 }, "round \(round): one of them wins")
            for result in results where result.status != 0 {
                #expect(
                    result.stderr.contains("is busy: another process holds the lock"),
                    "round \(round): \(result.stderr)"
                )
            }
            #expect(ShardSet.verify(output).isValid, "round \(round)")
            #expect(try Self.leftovers(output).isEmpty)
        }
        // Deterministically: while the lock is held, generate is refused and writes nothing.
        let before = try Manifest.load(from: output)
        let lock = try FileLock(path: output + "/" + ShardSet.lockFileName, what: "test")
        let refused = try runBlocklist(["generate"] + Self.specA + ["--output", output])
        lock.unlock()
        #expect(refused.status == 1 && refused.stderr.contains("another process holds the lock"), "\(refused.stderr)")
        #expect(try Manifest.load(from: output) == before)
    }

    /// A child another thread forks holds a copy of every descriptor until its exec, the lock's
    /// among them. Releasing the lock must not wait for that copy to close: the next taker (the
    /// next reload of a chaos run, under load) found the store busy when `unlock` only closed ours.
    @Test func aLockIsFreeOnceReleasedThoughACopyOfItsDescriptorIsStillOpen() throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.file("store.sqlite.lock")
        let lock = try FileLock(path: path, what: "test")
        // The copy a forked child holds: a descriptor on the same open file description.
        let lockFD = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name -> Int32? in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            return target == path ? Int32(name) : nil
        }.first
        let fd = try #require(lockFD)
        let copy = dup(fd)
        #expect(copy >= 0)
        defer { close(copy) }
        lock.unlock()
        let next = try FileLock(path: path, what: "test")
        next.unlock()
    }

    /// Two generates that start into a missing directory at once: both see it missing, one
    /// makes it, and the other uses it instead of failing on "File exists"; a holder that gives
    /// the directory up removes its lock file, and whoever waited locks the file that has the name.
    @Test func aDirectoryOrLockFileAnotherProcessMadeOrRemovedIsTakenAsItNowIs() throws {
        let scratch = try TemporaryDirectory()
        #expect(try FileSystem.makeDirectory(scratch.file("d")))
        #expect(try FileSystem.makeDirectory(scratch.file("d")) == false)
        let directory = try DirectoryHandle(path: scratch.file("d"))
        nonisolated(unsafe) let held = try directory.lock("l", exclusive: true, what: "d")
        let path = scratch.file("d/l")
        let giver = Thread {
            usleep(200_000)
            unlink(path)
            held.unlock()
        }
        giver.start()
        let taken = try directory.lock("l", exclusive: true, what: "d", patienceMilliseconds: 5000)
        #expect(taken.isLinked)
        #expect(FileManager.default.fileExists(atPath: path))
    }

    /// SIGKILL of `blocklist load` or of its extension host at random moments: after each, the store
    /// passes integrity_check and every extension holds exactly the old or the new shard; a final
    /// run converges.
    @Test func aLoadKilledAtRandomEntriesNeverMixesOldAndNew() throws {
        var random = SplitMix64(state: 50)
        let scratch = try TemporaryDirectory()
        let store = scratch.file("store.sqlite")
        let spec = ["--pattern", "+8270#####", "--range-size", "20000", "--no-sync"]
        let versions = [scratch.file("v1"), scratch.file("v2")]
        #expect(try runBlocklist(["generate"] + spec + ["--output", versions[0]]).status == 0)
        #expect(try runBlocklist(["generate"] + spec + ["--exclude", "00", "--output", versions[1]]).status == 0)
        var numbersByChecksum: [String: [Int64]] = [:]
        for directory in versions {
            let manifest = try Manifest.load(from: directory)
            for shard in manifest.shards {
                numbersByChecksum[shard.checksum] = try readNumbers(manifest.path(of: shard, in: directory))
            }
        }
        #expect(try runBlocklist(["enable", "all", versions[0], "--store", store]).status == 0)
        let started = Date()
        #expect(try runBlocklist(["load", versions[0], "--store", store]).status == 0)
        let duration = Date().timeIntervalSince(started)

        var interrupted = 0
        let trials = SeededRuns.count(50, short: 12)
        for trial in 0..<trials {
            let directory = versions[trial % 2 == 0 ? 1 : 0]
            let strategy = Bool.random(using: &random) ? "full" : "delta"
            let loader = try RunningBlocklist(["load", directory, "--store", store, "--strategy", strategy, "--force"])
            usleep(UInt32(Double.random(in: 0...duration, using: &random) * 1_000_000))
            let pid = loader.process.processIdentifier
            if Bool.random(using: &random), let host = childProcesses(of: pid).first {
                kill(host, SIGKILL)  // the extension dies; the system fails that request and goes on
            } else {
                kill(pid, SIGKILL)
            }
            if try loader.wait().status != 0 { interrupted += 1 }

            let current = try CallDirectoryStore(path: store)
            #expect(try current.integrityCheck() == "ok", "trial \(trial)")
            for row in try current.extensions() {
                let entries = try current.entries(of: row.identifier)
                let committed = row.loadedChecksum.flatMap { numbersByChecksum[$0] } ?? []
                #expect(
                    entries == committed,
                    "trial \(trial): \(row.identifier) holds \(entries.count) entries, not its committed shard"
                )
            }
        }
        #expect(interrupted >= trials / 5, "the kills should interrupt loads (\(interrupted) of \(trials) did)")
        let final = try runBlocklist(["load", versions[1], "--store", store])
        #expect(final.status == 0, "\(final.stdout)")
        let manifest = try Manifest.load(from: versions[1])
        let converged = try CallDirectoryStore(path: store)
        for shard in manifest.shards {
            #expect(
                try converged.entries(
                    of: CallDirectoryStore.identifier(ofShard: shard.index, of: manifest.shards.count)
                )
                    == numbersByChecksum[shard.checksum]
            )
        }
    }
}

/// Runs `executable` with RLIMIT_FSIZE at `blocks` × 512 bytes and SIGXFSZ ignored, so that a write
/// past the limit fails with EFBIG as on a full disk. Its stdout and stderr go, merged, through a
/// pipe (a file would hit the limit too) into `stdout`.
func runWithFileSizeLimit(blocks: Int, _ executable: String, _ arguments: [String]) throws -> CommandResult {
    let script = "( trap '' XFSZ; ulimit -f \(blocks); exec \"$@\" ) 2>&1 | cat; exit ${PIPESTATUS[0]}"
    return try RunningBlocklist(["-c", script, "bash", executable] + arguments, executable: "/bin/bash").wait()
}

/// The children of process `pid`, from /proc.
func childProcesses(of pid: Int32) -> [Int32] {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children") else { return [] }
    return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}
