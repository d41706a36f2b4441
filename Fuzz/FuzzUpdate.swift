// libFuzzer target for what a phone reads of a publication (Scripts/fuzz.sh update), linked with
// UpdateCore built with a crypto stand-in (Fuzz/CryptoStub.swift) so that inputs get past signatures and
// sealing. The first byte picks what the rest is:
//   0 a delta file, decoded then applied to a fixed base shard; 1 a raw delta payload, applied;
//   2 signed metadata (envelope, then root, timestamp and snapshot payloads);
//   3 a sealed inline push; 4 an update bundle; 5 JSON (canonical bytes must read back the same)
//   and an App Group's state file; 6 base64 and hex (what decodes must encode back to itself);
//   7 an update file (from-M.push, a push's signed body), its deltas applied.
// Scripts/fuzz-update-seeds.py writes the seeds of the binary formats.
// Any failure must be a thrown UpdateError: a crash, a trap or a broken invariant is a finding.

import BlocklistCore
import Crypto
import UpdateCore

#if canImport(Glibc)
    import Glibc
#endif

nonisolated(unsafe) var basePath: String?

func base() -> String {
    if let basePath { return basePath }
    let path = "/tmp/blocklist-fuzz-update-base-\(getpid()).blk"
    unlink(path)
    let writer = try! ShardWriter(path: path, shardIndex: 1, version: 2)
    for start in stride(from: Int64(1_000), to: 200_000, by: 997) {
        try! writer.append(NumberRun(start: start, count: 3))
    }
    try! writer.beginIdentification(labels: [Array("spam".utf8), Array("scam".utf8)])
    for start in stride(from: Int64(500_000), to: 600_000, by: 5_000) {
        try! writer.appendIdentification(NumberRun(start: start, count: 10), label: Int(start / 5_000) % 2)
    }
    _ = try! writer.finish(sync: false)
    basePath = path
    return path
}

let root = Root(
    version: 1,
    expires: .max,
    threshold: 1,
    keys: [try! Curve25519.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 9, count: 32))]
)

func apply(_ payload: [UInt8]) {
    let result = "/tmp/blocklist-fuzz-update-result-\(getpid()).blk"
    unlink(result)
    defer { unlink(result) }
    do {
        let (header, counts, digest) = try ShardDelta.apply(
            payload,
            what: "fuzz",
            baseAt: base(),
            to: result,
            sync: false
        )
        // Whatever applied is a sound shard with the counts it claims.
        let reader = try! ShardReader(path: result)
        precondition(reader.header == header)
        precondition(counts.added >= 0 && counts.removed >= 0)
        precondition(try! ShardContent.digest(ofShardAt: result) == digest, "the digest made while writing differs")
    } catch {}
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let mode = data[0] % 8
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch mode {
    case 0:
        if let decoded = try? DeltaFile.decode(bytes, what: "fuzz") { apply(decoded.payload) }
    case 1:
        apply(bytes)
    case 2:
        if let document = try? SignedDocument(parsing: bytes, what: "fuzz") {
            _ = try? Root(payload: document.payload, what: "fuzz")
            _ = try? Timestamp(payload: document.payload, what: "fuzz")
            _ = try? Snapshot(payload: document.payload, what: "fuzz")
            _ = try? document.verifiedPayload(trusting: root, what: "fuzz")
        }
        _ = try? Snapshot(payload: bytes, what: "fuzz")
        _ = try? Timestamp(payload: bytes, what: "fuzz")
        // A push's signed announcement: a URL it accepts is an http(s) URL with a host.
        if let announcement = try? PushAnnouncement(payload: bytes, what: "fuzz"), let url = announcement.url {
            precondition(url.hasPrefix("http://") || url.hasPrefix("https://"), "a push URL of another scheme")
            precondition((try? PushAnnouncement(payload: announcement.payload, what: "again")) == announcement)
        }
        _ = try? PushAnnouncement.checkURL(String(decoding: bytes, as: UTF8.self))
        _ = try? Root(payload: bytes, what: "fuzz")
    case 3:
        if let push = try? InlinePush(
            opening: bytes,
            pushKey: SymmetricKey(data: [UInt8](repeating: 0, count: 32)),
            trusting: root,
            now: 0
        ) {
            for delta in push.deltas { apply(delta) }
        }
    case 4:
        if let files = try? UpdateBundle.decode(bytes, what: "fuzz") {
            let again = UpdateBundle.encode(files.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            precondition((try? UpdateBundle.decode(again, what: "again")) == files, "a bundle does not read back")
        }
    case 5:
        if let value = try? JSONValue(parsing: bytes, what: "fuzz") {
            let canonical = value.canonicalBytes
            precondition(
                (try? JSONValue(parsing: canonical, what: "canonical")) == value,
                "canonical JSON does not read back"
            )
        }
        _ = try? InstalledPublication(stateBytes: bytes, what: "fuzz")
    case 7:
        if let update = try? InlinePush(signed: bytes, trusting: root, now: 0, what: "fuzz") {
            for delta in update.deltas { apply(delta) }
        }
    default:
        if let decoded = TextEncodings.base64Decode(bytes) {
            precondition(Array(TextEncodings.base64(decoded).utf8) == bytes, "base64 is not canonical")
        }
        if let decoded = TextEncodings.hexDecode(bytes) {
            precondition(Array(TextEncodings.hex(decoded).utf8) == bytes, "hex is not canonical")
        }
    }
    return 0
}
