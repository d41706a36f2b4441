import BlocklistCore
import BlocklistSystem

/// What blocklist may touch in an output directory, and the proof it asks before it does.
///
/// blocklist deletes or replaces only entries it can prove it wrote, and never follows a symlink
/// to get there:
///
/// | entry | it is blocklist's when |
/// |---|---|
/// | `manifest.json` | a regular file whose first 4 KiB hold the line `"format" : "blocklist-shard-set",` |
/// | `set-<16 hex>/`, `.staging-<16 hex>/` | a real directory holding the regular file `.blocklist-generation` that names that same generation (or a prefix of that line: a run killed while writing it); or (sets written before markers existed) a `set-` directory holding only regular `shard-*.blk` files that start with the shard magic |
/// | `.manifest-<16 hex>.json` | a regular file (an older version's temporary manifest) with the manifest line above |
/// | `.blocklist.lock` | always (it is only ever locked, never removed) |
///
/// Everything else is foreign: a `set-up/` folder, a symlink named `set-0123456789abcdef`, a
/// `manifest.json` of another program. Foreign entries are never removed, and a directory that
/// holds foreign entries but no blocklist set is refused unless the caller forces it.
package enum OutputDirectory {
    /// The marker in every generation directory: proof of ownership, and the readers' lock.
    package static let markerName = ".blocklist-generation"
    /// The App Group's download cache (`blocklist update`): partial and finished downloads of the
    /// update under way, kept across runs so that an interrupted one resumes. Proved ours by
    /// `downloadsMarkerName` inside, with `downloadsMarkerContent`.
    package static let downloadsName = ".blocklist-downloads"
    package static let downloadsMarkerName = ".blocklist-downloads-marker"
    package static let downloadsMarkerContent = Array("blocklist downloads\n".utf8)
    /// Entries any directory may hold without making it "not empty" (placeholders that version
    /// control needs to keep an empty folder).
    static let placeholders: Set<String> = [".gitignore", ".gitkeep"]
    /// The line every manifest blocklist writes holds, whatever its key order.
    static let manifestSignature = Array("\n  \"format\" : \"\(Manifest.formatName)\",\n".utf8)

    /// The marker's content for `generation`.
    static func markerContent(_ generation: String) -> [UInt8] { Array("blocklist generation \(generation)\n".utf8) }

    /// A generation name: 16 lowercase hex digits.
    static func isGeneration(_ text: Substring) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// What one entry of an output directory is to blocklist.
    enum Entry: Equatable {
        /// `manifest.json`, written by blocklist.
        case manifest
        /// `.blocklist.lock`.
        case lock
        /// A generation directory blocklist wrote; `legacy` when it has no marker.
        case generation(String, legacy: Bool)
        /// An older version's temporary manifest.
        case temporaryManifest
        /// `.gitignore`, `.gitkeep`.
        case placeholder
        /// The download cache an update keeps (`downloadsName`, marked).
        case downloads
        /// Anything else; `why` says what it is when it looks like one of ours but is not.
        case foreign(why: String?)
    }

    /// Whether `name` in `directory` is the download cache blocklist made (marked).
    package static func isDownloadCache(_ name: String, in directory: DirectoryHandle) throws(BlocklistError) -> Bool {
        try classify(name, in: directory) == .downloads
    }

    /// Classifies `name` in `directory`, reading only what the proof needs and following nothing.
    static func classify(_ name: String, in directory: DirectoryHandle) throws(BlocklistError) -> Entry {
        let kind = try directory.kind(of: name)
        if name == Manifest.fileName {
            guard kind == .file else {
                return .foreign(why: "\(directory.path(of: name)) is \(describe(kind)), not a manifest blocklist wrote")
            }
            return try hasManifestSignature(name, in: directory)
                ? .manifest
                : .foreign(
                    why:
                        "\(directory.path(of: name)) was not written by blocklist (it lacks \"format\": \"\(Manifest.formatName)\")"
                )
        }
        if name == ShardSet.lockFileName {
            return kind == .file ? .lock : .foreign(why: "\(directory.path(of: name)) is \(describe(kind))")
        }
        if placeholders.contains(name) { return .placeholder }
        if name == downloadsName, kind == .directory {
            let child = try directory.openDirectory(name)
            if try child.kind(of: downloadsMarkerName) == .file,
                let marker = try? child.readFile(downloadsMarkerName, limit: 64), marker == downloadsMarkerContent
            {
                return .downloads
            }
            return .foreign(why: "\(directory.path(of: name)) has no \(downloadsMarkerName)")
        }
        for prefix in [ShardSet.setPrefix, ShardSet.stagingPrefix] where name.hasPrefix(prefix) {
            let generation = name.dropFirst(prefix.count)
            guard isGeneration(generation) else { return .foreign(why: nil) }
            guard kind == .directory else {
                return .foreign(why: "\(directory.path(of: name)) is \(describe(kind)), not a directory blocklist made")
            }
            let child = try directory.openDirectory(name)
            // A run killed while writing the marker leaves a prefix of it (even an empty file).
            if try child.kind(of: markerName) == .file, let marker = try? child.readFile(markerName, limit: 64),
                markerContent(String(generation)).starts(with: marker)
            {
                return .generation(String(generation), legacy: false)
            }
            if prefix == ShardSet.setPrefix, try isLegacySet(child) {
                return .generation(String(generation), legacy: true)
            }
            return .foreign(why: "\(directory.path(of: name)) has no \(markerName) naming generation \(generation)")
        }
        if name.hasPrefix(ShardSet.temporaryManifestPrefix), name.hasSuffix(".json"),
            isGeneration(name.dropFirst(ShardSet.temporaryManifestPrefix.count).dropLast(5)), kind == .file,
            try hasManifestSignature(name, in: directory)
        {
            return .temporaryManifest
        }
        return .foreign(why: nil)
    }

    /// Whether the regular file `name` starts like a manifest blocklist wrote.
    static func hasManifestSignature(_ name: String, in directory: DirectoryHandle) throws(BlocklistError) -> Bool {
        let head = try directory.readPrefix(name, count: 4096)
        guard head.first == UInt8(ascii: "{") else { return false }
        return head.indices.contains { offset in
            head[offset...].starts(with: manifestSignature)
        }
    }

    /// A set written before generation markers: only regular `shard-*.blk` files with the magic.
    static func isLegacySet(_ directory: DirectoryHandle) throws(BlocklistError) -> Bool {
        let names = try directory.entries()
        guard !names.isEmpty else { return false }
        for name in names {
            guard name.hasPrefix("shard-"), name.hasSuffix(".blk"), try directory.kind(of: name) == .file,
                try directory.readPrefix(name, count: 8) == ShardHeader.magic
            else { return false }
        }
        return true
    }

    static func describe(_ kind: FileSystem.Kind) -> String {
        switch kind {
        case .missing: "missing"
        case .file: "a file"
        case .directory: "a directory"
        case .symlink: "a symbolic link"
        case .other: "a special file"
        }
    }

    /// Removes generation directory `name` if it is blocklist's and no reader holds it.
    ///
    /// Takes the generation's marker lock exclusively without waiting (a reader holds it shared
    /// for as long as it reads the set), removes the shard files and the temporary manifest,
    /// then the marker, then the directory. Anything else inside keeps the directory in place.
    ///
    /// - Returns: `nil` when removed, or a sentence saying why it was kept.
    static func removeGeneration(_ name: String, legacy: Bool, in directory: DirectoryHandle) -> String? {
        do throws(BlocklistError) {
            let child = try directory.openDirectory(name)
            var lock: FileLock?
            if !legacy {
                do {
                    lock = try child.lock(markerName, exclusive: true, create: false, what: "The set \(child.path)")
                } catch  where error.code == .busy {
                    return "kept \(child.path): a reader (load or verify) is using it; the next generate removes it."
                }
            }
            defer { lock?.unlock() }
            var foreign: [String] = []
            for entry in try child.entries() where entry != markerName {
                let temporary = !legacy && entry.hasPrefix(".sort-") && entry.hasSuffix(".tmp")
                if (entry.hasPrefix("shard-") && entry.hasSuffix(".blk")) || entry == ShardSet.pendingManifestName
                    || entry == ShardSet.publicationStateName || entry == ShardSet.trustedRootsName
                    || temporary,
                    try child.kind(of: entry) == .file
                {
                    try child.removeRegularFile(entry)
                } else {
                    foreign.append(entry)
                }
            }
            guard foreign.isEmpty else {
                return
                    "kept \(child.path): it holds \(foreign.prefix(3).joined(separator: ", ")), which blocklist did not write."
            }
            // The marker goes last and while locked: a reader that opened it and then gets the
            // lock sees it unlinked and reads the manifest again.
            if !legacy { try child.removeRegularFile(markerName) }
            try directory.removeEmptyDirectory(name)
            return nil
        } catch {
            return "kept \(directory.path(of: name)): \(error.message)"
        }
    }
}

extension DirectoryHandle {
    /// The first `count` bytes (or fewer) of the regular file `name`, never through a symlink.
    func readPrefix(_ name: String, count: Int) throws(BlocklistError) -> [UInt8] {
        try readFile(name, limit: Int.max, prefix: count)
    }
}
