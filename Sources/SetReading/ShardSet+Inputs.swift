import BlocklistCore
import BlocklistSystem
internal import LibC
import ListImport
import SetStorage

extension ShardSet {
    /// What checking a packed set against its inputs found.
    struct InputCheck {
        var problems: [BlocklistError] = []
        var notes: [String] = []
        /// Whether the shards were made again from the inputs and compared.
        var rederived = false
    }

    /// Checks a packed set against the inputs its manifest records: each file must still have
    /// the size and SHA-256 it had, and the set made again from them (with the same boundaries,
    /// in a temporary directory) must equal the shards byte for byte.
    ///
    /// An input read from standard input or a pipe cannot be read again; the set is then checked
    /// on its own, and a note says so.
    static func checkInputs(of manifest: Manifest, in outputDirectory: String) -> InputCheck {
        var check = InputCheck()
        guard let inputs = manifest.spec.inputs else {
            // An installed publication: its publisher's list files are not recorded (their paths
            // are the publisher's), and the shards were checked against the signed snapshot.
            check.notes.append(
                "the set records no input files (a set installed by update); the shards were checked on their own."
            )
            return check
        }
        var canRederive = true
        for input in inputs {
            guard input.path != "-" else {
                check.notes.append(
                    "the \(input.kind) input was standard input, which cannot be read again; the shards were checked on their own."
                )
                canRederive = false
                continue
            }
            guard let recorded = input.sha256 else {
                check.notes.append(
                    "\(input.path) has no SHA-256 in the manifest (an older blocklist made it); the shards were checked on their own."
                )
                canRederive = false
                continue
            }
            do {
                switch try FileSystem.kind(input.path) {
                case .missing:
                    check.problems.append(
                        BlocklistError(
                            .manifestMismatch,
                            "input \(input.path) (\(input.kind)) is gone since generate; the set cannot be checked against it."
                        )
                    )
                    canRederive = false
                    continue
                case .file:
                    break
                default:
                    check.notes.append(
                        "\(input.path) is not a regular file (a pipe is read once); the shards were checked on their own."
                    )
                    canRederive = false
                    continue
                }
                let (size, digest) = try fingerprint(input.path)
                if size != input.bytes || digest != recorded {
                    check.problems.append(
                        BlocklistError(
                            .manifestMismatch,
                            "input \(input.path) changed since generate: it was \(input.bytes) bytes with SHA-256 \(recorded.prefix(16))…, and is now \(size) bytes with \(digest.prefix(16))…; run generate again."
                        )
                    )
                    canRederive = false
                }
            } catch {
                check.problems.append(error)
                canRederive = false
            }
        }
        guard canRederive else { return check }
        do {
            try compareWithInputs(manifest, in: outputDirectory, problems: &check.problems)
            check.rederived = true
        } catch {
            check.problems.append(error)
        }
        return check
    }

    /// The size and SHA-256 of a file, read through a fixed buffer.
    static func fingerprint(_ path: String) throws(BlocklistError) -> (bytes: Int64, sha256: String) {
        let file = try FileDescriptor.openForReading(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var hasher = PortableSHA256()
        var offset: Int64 = 0
        while true {
            let n = try file.read(into: buffer, at: offset)
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += Int64(n)
        }
        return (offset, hasher.finish())
    }

    /// Makes the set again from its inputs in a temporary directory and compares each shard.
    private static func compareWithInputs(
        _ manifest: Manifest,
        in outputDirectory: String,
        problems: inout [BlocklistError]
    ) throws(BlocklistError) {
        var list = ListSpec()
        let spec = manifest.spec
        if !spec.patterns.isEmpty { list.spec = try spec.blockSpec() }
        for input in spec.inputs ?? [] {
            switch input.kind {
            case "numbers": list.numbers.append(input.path)
            case "allow": list.allow.append(input.path)
            case "labels": list.labels.append(input.path)
            case "list": list.lists.append(input.path)
            default:
                throw BlocklistError(
                    .manifestMismatch,
                    "the manifest names an input of kind \"\(input.kind)\", which this blocklist does not know."
                )
            }
        }
        list.allowPatterns = spec.allowPatterns ?? []
        list.defaultCountry = spec.defaultCountry
        list.skipInvalid = spec.skipInvalid ?? false
        list.capacity = spec.capacity

        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let producer = PackedProducer(list)
        defer { producer.cleanUp() }
        let bounds = manifest.shards.dropFirst().map { $0.lowerBound ?? 0 }
        let (shardCount, _) = try producer.prepare(staging: temporary.handle) { bounds }
        guard shardCount == manifest.shards.count else {
            problems.append(
                BlocklistError(
                    .manifestMismatch,
                    "its inputs make \(shardCount) shards now, but the manifest lists \(manifest.shards.count); run generate again."
                )
            )
            return
        }
        let encoder = try ShardEncoder()
        for entry in manifest.shards {
            let name = "shard.blk"
            let made = temporary.handle.path(of: name)
            _ = try producer.writeShard(entry.index, path: made, encoder: encoder, sync: false)
            let path = manifest.path(of: entry, in: outputDirectory)
            if try FileSystem.readFile(made) != FileSystem.readFile(path) {
                problems.append(
                    BlocklistError(
                        .manifestMismatch,
                        "\(path) is not what its inputs make, though they are unchanged since generate; run generate again."
                    )
                )
            }
            temporary.removeFile(name)
        }
    }
}

/// A directory of its own under $TMPDIR (or /tmp), removed with what was made in it.
private final class TemporaryDirectory {
    let path: String
    let handle: DirectoryHandle

    init() throws(BlocklistError) {
        path = try FileSystem.makeTemporaryDirectory(prefix: "blocklist-verify")
        do {
            handle = try DirectoryHandle(path: path, followingSymlinks: false)
        } catch {
            rmdir(path)
            throw error
        }
    }

    func removeFile(_ name: String) { try? handle.removeRegularFile(name) }

    /// Removes the directory, which the producer's clean-up has emptied; rmdir refuses a directory
    /// that still holds anything, so nothing else is ever removed.
    func remove() {
        removeFile("shard.blk")
        rmdir(path)
    }
}
