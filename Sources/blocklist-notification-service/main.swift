// Plays an app's Notification Service Extension (seed 003): reads one push payload, opens or
// fetches the update it announces, installs it in the App Group, and prints the notification to
// show. At the deadline it does what `serviceExtensionTimeWillExpire` does: cancels the work,
// delivers a best attempt, and leaves the App Group as it was.
//
// blocklist-notification-service PAYLOAD.json --app-group DIR --trust root.json
//     [--push-key FILE] [--deadline SECONDS] [--network wifi|cellular]
//
// Prints one JSON object: the notification, the result, and what the update did. Exit status 0
// when a notification was delivered (a best attempt included), 64 for bad arguments, 1 otherwise.
// Standard library, zlib and Crypto: no Foundation, no argument parser, statically linked.

import BlocklistCore
import BlocklistSystem
import Crypto
internal import LibC
import Synchronization
import UpdateCore
import UpdateInstall

func fail(_ status: Int32, _ message: String) -> Never {
    fputs("Error: \(message)\n", stderr)
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var payloadPath: String?
var appGroup: String?
var trustPath: String?
var pushKeyPath: String?
var deadlineSeconds = 30.0
var network = NotificationService.Network.wifi
var index = 0
func value(_ name: String) -> String {
    index += 1
    guard index < arguments.count else { fail(64, "\(name) needs a value.") }
    return arguments[index]
}
while index < arguments.count {
    let argument = arguments[index]
    switch argument {
    case "--app-group": appGroup = value(argument)
    case "--trust": trustPath = value(argument)
    case "--push-key": pushKeyPath = value(argument)
    case "--deadline":
        let text = value(argument)
        guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
            fail(64, "--deadline \(text) is not a number of seconds in (0, 3600].")
        }
        deadlineSeconds = seconds
    case "--network":
        let text = value(argument)
        guard let chosen = NotificationService.Network(rawValue: text) else {
            fail(64, "--network \(text) is not one of wifi, cellular.")
        }
        network = chosen
    case "--version":
        print(blocklistVersion)
        exit(0)
    case "-h", "--help":
        print(
            "usage: blocklist-notification-service PAYLOAD.json --app-group DIR --trust root.json [--push-key FILE] [--deadline S] [--network wifi|cellular] | --version"
        )
        exit(0)
    default:
        guard !argument.hasPrefix("-"), payloadPath == nil else { fail(64, "Unknown argument \(argument).") }
        payloadPath = argument
    }
    index += 1
}
guard let payloadPath, let appGroup, let trustPath else {
    fail(64, "Give the payload file, --app-group DIR and --trust root.json.")
}

let payload: [UInt8]
let trust: [UInt8]
var pushKey: SymmetricKey?
do {
    payload = try FileSystem.readFile(payloadPath, limit: 64 * 1024)
    trust = try FileSystem.readFile(trustPath, limit: 4 << 20)
    // The push key: the one given, else push.key beside the trust root if the app has one.
    let keyPath = pushKeyPath ?? siblingFile(of: trustPath, named: "push.key")
    if try FileSystem.kind(keyPath) != .missing {
        pushKey = try PushKeyFile.key(try FileSystem.readFile(keyPath, limit: 64 * 1024), what: keyPath)
    } else if pushKeyPath != nil {
        fail(1, "The push key \(keyPath) does not exist.")
    }
} catch {
    fail(1, "\(error)")
}

func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// The work, shared with the thread that does it.
final class Work: Sendable {
    let cancelled = Atomic<Bool>(false)
    let finished = Atomic<Bool>(false)
    nonisolated(unsafe) var delivery: NotificationService.Delivery?
    nonisolated(unsafe) var error: String?
}

let work = Work()
let started = monotonicMilliseconds()
/// The installed generation before the push, to tell whether a run cut short by the deadline
/// changed the App Group all the same (its commit is a rename, done or not).
let generationBefore = (try? UpdateInstaller.installed(in: appGroup))?.publication.generation
let now = Int64(time(nil))
let body: @Sendable () -> Void = {
    do {
        work.delivery = try NotificationService.handle(
            payload: payload,
            appGroup: appGroup,
            trust: trust,
            pushKey: pushKey,
            network: network,
            now: now,
            isCancelled: { work.cancelled.load(ordering: .relaxed) },
            reader: { location in
                // Only a URL, never a local path: the announcement's URL, checked. Downloads stop
                // at the deadline too (and when cancelled), like a URLSession task.
                try HTTPPublication(
                    location,
                    deadline: UInt64(started + Int64(deadlineSeconds * 1000)) * 1_000_000,
                    maximumBundleBytes: HTTPPublication.extensionBundleBytes,
                    isCancelled: { work.cancelled.load(ordering: .relaxed) }
                )
            }
        )
    } catch {
        work.error = "\(error)"
    }
    work.finished.store(true, ordering: .releasing)
}

var thread = pthread_t()
let box = Unmanaged.passRetained(Box(body))
final class Box: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
guard
    pthread_create(
        &thread,
        nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        },
        box.toOpaque()
    ) == 0
else { fail(1, "Starting the update thread failed: \(String(cString: strerror(errno))).") }

let deadline = started + Int64(deadlineSeconds * 1000)
while !work.finished.load(ordering: .acquiring) && monotonicMilliseconds() < deadline { usleep(5_000) }
var timedOut = false
if !work.finished.load(ordering: .acquiring) {
    // serviceExtensionTimeWillExpire: cancel, give the work a moment to stop before its commit.
    work.cancelled.store(true, ordering: .relaxed)
    let grace = monotonicMilliseconds() + 2_000
    while !work.finished.load(ordering: .acquiring) && monotonicMilliseconds() < grace { usleep(5_000) }
    timedOut = work.delivery == nil
}
let elapsed = monotonicMilliseconds() - started

var report: [String: JSONValue] = ["milliseconds": .number(String(elapsed))]
if let delivery = work.delivery {
    report["notification"] = delivery.notification
    report["result"] = .string(delivery.result)
    if let message = delivery.message { report["message"] = .string(message) }
    if let outcome = delivery.outcome {
        report["generation"] = .number(String(outcome.generation))
        report["fromGeneration"] = .number(String(outcome.fromGeneration))
        report["added"] = .number(String(outcome.added))
        report["removed"] = .number(String(outcome.removed))
        report["totalEntries"] = .number(String(outcome.totalEntries))
        report["bytesDownloaded"] = .number(String(outcome.bytesDownloaded))
        report["changedShards"] = .array(outcome.changedShards.map { .number(String($0)) })
    }
} else if timedOut {
    report["notification"] = NotificationService.bestAttempt(payload)
    report["result"] = .string("expired")
    let generationNow = (try? UpdateInstaller.installed(in: appGroup))?.publication.generation
    report["message"] = .string(
        generationNow == generationBefore
            ? "the deadline of \(deadlineSeconds) s passed; the App Group is unchanged"
            : "the deadline of \(deadlineSeconds) s passed as the update was committed; the App Group holds generation \(generationNow.map(String.init) ?? "none")"
    )
} else {
    fputs("Error: \(work.error ?? "the update failed")\n", stderr)
    report["notification"] = NotificationService.bestAttempt(payload)
    report["result"] = .string("error")
    report["message"] = .string(work.error ?? "the update failed")
}
print(String(decoding: JSONValue.object(report).canonicalBytes, as: UTF8.self))
fflush(stdout)
exit(work.delivery == nil && !timedOut ? 1 : 0)
