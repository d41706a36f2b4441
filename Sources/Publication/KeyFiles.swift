import BlocklistCore
import BlocklistSystem
import Crypto
internal import LibC
import UpdateCore

/// A publisher's key directory (`blocklist keys create DIR`):
/// - `signing.key`: the Ed25519 private key, mode 0600;
/// - `push.key`: the ChaChaPoly key that seals inline pushes, mode 0600; the app holds a copy;
/// - `root.json`: the trust root an app ships, self-signed, listing the public key.
///
/// Creating never overwrites: every file is created exclusively, and a directory that already
/// holds any of them is refused before anything is written.
package enum KeyFiles {
    package static let signingKeyName = "signing.key"
    package static let pushKeyName = "push.key"
    package static let rootName = "root.json"

    /// Writes a new key directory. The root expires after `rootLifetime` seconds (default: 1 year).
    ///
    /// - Returns: the key ID.
    package static func create(in directory: String, now: Int64, rootLifetime: Int64 = 365 * 86_400) throws -> String {
        if try FileSystem.kind(directory) == .missing { _ = try FileSystem.makeDirectory(directory) }
        guard try FileSystem.kind(directory) == .directory else {
            throw UpdateError(.malformed, "\(directory) is not a directory.")
        }
        for name in [signingKeyName, pushKeyName, rootName]
        where try FileSystem.kind(directory + "/" + name, followingSymlinks: false) != .missing {
            throw UpdateError(
                .malformed,
                "\(directory)/\(name) exists; keys create never overwrites a key. Give a new directory."
            )
        }
        let key = Curve25519.Signing.PrivateKey()
        let pushKey = SymmetricKey(size: .bits256)
        let root = Root(version: 1, expires: now + rootLifetime, threshold: 1, keys: [key.publicKey])
        try write(
            directory + "/" + signingKeyName,
            JSONValue.object([
                "type": .string("ed25519-private"),
                "private": .string(TextEncodings.base64(Array(key.rawRepresentation))),
            ]).canonicalBytes + [0x0A],
            mode: 0o600
        )
        try write(
            directory + "/" + pushKeyName,
            JSONValue.object([
                "type": .string("chachapoly-key"),
                "key": .string(TextEncodings.base64(pushKey.withUnsafeBytes { Array($0) })),
            ]).canonicalBytes + [0x0A],
            mode: 0o600
        )
        try write(directory + "/" + rootName, try SignedDocument.sign(root.payload, with: [key]), mode: 0o644)
        return Keys.keyID(of: key.publicKey)
    }

    /// Rotates keys: writes a new key directory whose root, one version up, lists a new signing
    /// key and is signed by the old key and the new one (so that an app shipping the old root
    /// follows it), with the same push key (the app holds it). Publishing with the new directory's
    /// key puts the new root in the publication; from then on updates refuse the old key.
    ///
    /// - Returns: the new key ID and root version.
    package static func rotate(from old: String, to new: String, now: Int64, rootLifetime: Int64 = 365 * 86_400) throws
        -> (keyID: String, version: Int64)
    {
        let oldKey = try signingKey(at: old + "/" + signingKeyName)
        let oldRoot = try Root.trusted(
            try FileSystem.readFile(old + "/" + rootName, limit: 4 << 20),
            what: old + "/" + rootName
        )
        guard oldRoot.keys[Keys.keyID(of: oldKey.publicKey)] != nil else {
            throw UpdateError(.badSignature, "\(old)/\(signingKeyName) is not one of the keys of \(old)/\(rootName).")
        }
        let pushBytes = try FileSystem.readFile(old + "/" + pushKeyName, limit: 64 * 1024)
        _ = try pushKey(at: old + "/" + pushKeyName)
        if try FileSystem.kind(new) == .missing { _ = try FileSystem.makeDirectory(new) }
        for name in [signingKeyName, pushKeyName, rootName, Publisher.generationRecordName]
        where try FileSystem.kind(new + "/" + name, followingSymlinks: false) != .missing {
            throw UpdateError(
                .malformed,
                "\(new)/\(name) exists; keys rotate never overwrites a key. Give a new directory."
            )
        }
        let key = Curve25519.Signing.PrivateKey()
        let root = Root(version: oldRoot.version + 1, expires: now + rootLifetime, threshold: 1, keys: [key.publicKey])
        try write(
            new + "/" + signingKeyName,
            JSONValue.object([
                "type": .string("ed25519-private"),
                "private": .string(TextEncodings.base64(Array(key.rawRepresentation))),
            ]).canonicalBytes + [0x0A],
            mode: 0o600
        )
        try write(new + "/" + pushKeyName, pushBytes, mode: 0o600)
        try write(new + "/" + rootName, try SignedDocument.sign(root.payload, with: [oldKey, key]), mode: 0o644)
        // The generation record goes along: the new key publishes above every generation the
        // old one did, even into a PUBDIR restored from a backup.
        let record = old + "/" + Publisher.generationRecordName
        if try FileSystem.kind(record, followingSymlinks: false) == .file {
            try write(
                new + "/" + Publisher.generationRecordName,
                try FileSystem.readFile(record, limit: 64),
                mode: 0o644
            )
        }
        return (Keys.keyID(of: key.publicKey), root.version)
    }

    /// Reads a signing key file.
    ///
    /// - Throws: if others than its owner may read or write it (as ssh refuses such a key),
    ///   naming the `chmod` that fixes it, or if it is not a key `keys create` wrote.
    package static func signingKey(at path: String) throws -> Curve25519.Signing.PrivateKey {
        guard try FileSystem.kind(path) == .file else {
            throw UpdateError(
                .malformed,
                "\(path) is not a file; give --key KEYDIR/signing.key, the signing key blocklist keys create wrote."
            )
        }
        let fields = try? JSONValue(parsing: try FileSystem.readFile(path, limit: 64 * 1024), what: path)
        guard case .object(let members)? = fields, members["type"] == .string("ed25519-private"),
            case .string(let text)? = members["private"], let raw = TextEncodings.base64Decode(Array(text.utf8)),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw UpdateError(
                .malformed,
                "\(path) is not a signing key written by blocklist keys create; give --key KEYDIR/signing.key."
            )
        }
        try checkPrivate(path, what: "signing key")
        return key
    }

    /// Reads a push key file (the publisher's copy: private, as the signing key).
    package static func pushKey(at path: String) throws -> SymmetricKey {
        try checkPrivate(path, what: "push key")
        return try PushKeyFile.key(try FileSystem.readFile(path, limit: 64 * 1024), what: path)
    }

    /// Refuses a key file that its group or others may read or write.
    package static func checkPrivate(_ path: String, what: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw UpdateError(.malformed, "The \(what) \(path) cannot be read: \(String(cString: strerror(errno))).")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw UpdateError(
                .malformed,
                "The \(what) \(path) can be read by others (mode 0\(String(mode, radix: 8))); a private key must be the owner's alone. Run chmod 600 \(path) (and think about whether it leaked)."
            )
        }
    }

    static func write(_ path: String, _ bytes: [UInt8], mode: mode_t) throws {
        let file = try FileDescriptor.createExclusive(path, mode: mode)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count]), at: 0)
        try file.sync()
    }
}
