import BlocklistCore
import BlocklistSystem
internal import LibC
import SetStorage

/// The simulator's stand-in for CallKit's CallDirectory.db: one SQLite file holding the registered
/// extensions, their Settings switch and load state, and every blocking entry.
///
/// Entries live in a `WITHOUT ROWID` table keyed by (extension, number): one B-tree, appended to in
/// order as shards load, deleted per extension as a key range. "Who blocks this number" is one key
/// probe per registered extension.
package final class CallDirectoryStore {
    /// The schema this code reads and writes (`PRAGMA user_version`).
    /// Version 2 added identification entries; a version 1 store gains their table when opened
    /// for writing.
    package static let schemaVersion: Int64 = 2

    /// Where an extension's last reload left it, as the store's `state` column spells it.
    package enum ExtensionState: String, Hashable, Sendable, Codable, CustomStringConvertible {
        /// Never loaded.
        case registered
        /// Its last reload committed.
        case loaded
        /// Its last reload failed; the next one starts over (non-incremental).
        case failed

        package var description: String { rawValue }
    }

    /// An extension's row.
    package struct Extension: Hashable, Sendable, Codable {
        package var identifier: String
        package var index: Int
        /// The Settings switch.
        package var enabled: Bool
        package var state: ExtensionState
        /// Whether the next request must be non-incremental (first load, re-enabled, after a failure).
        package var needsFullReload: Bool
        package var loadedChecksum: String?
        /// Blocking entries held.
        package var loadedCount: Int64
        package var lastLoadAt: Int64?
        package var lastDurationMilliseconds: Int64?
        package var peakMemoryKiB: Int64?
        package var lastError: String?
        /// Identification entries held (numbers with a label), counted apart.
        package var identificationCount: Int64 = 0
    }

    package let path: String
    let database: SQLiteDatabase

    /// Opens the store at `path`, creating it with the current schema if it does not exist.
    ///
    /// - Throws: `BlocklistError` naming the file if it cannot be opened, is not a store, or has a
    ///   newer schema.
    ///   Another process's write (a load holds the write lock for a whole request) is waited for
    ///   up to `busyTimeoutMilliseconds`, then refused with `.busy`.
    ///   With `readOnly`, a missing store is an error that says how to make one, and nothing is
    ///   created or changed: `status` and `lookup` open it so.
    /// The database's `user_version`, and the names of up to 4 of its tables, indexes and views.
    private static func schema(of database: SQLiteDatabase) throws(BlocklistError) -> (version: Int64, names: [String])
    {
        let statement = try database.prepare("PRAGMA user_version")
        _ = try statement.step()
        let version = statement.integer(0)
        let objects = try database.prepare(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 4"
        )
        var names: [String] = []
        while try objects.step() { names.append(objects.text(0) ?? "?") }
        return (version, names)
    }

    /// Refuses a file that is not empty and does not start with SQLite's header: named as what it is
    /// before SQLite reports "file is not a database" on some statement.
    static func refuseNonSQLite(_ path: String) throws(BlocklistError) {
        let file = try FileDescriptor.openForReading(path)
        let header = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { header.deallocate() }
        let read = try file.read(into: header, at: 0)
        // SQLite makes a new database in an empty file.
        if read == 0 || (read == 16 && header.elementsEqual("SQLite format 3\0".utf8)) { return }
        throw BlocklistError(
            .io,
            "\(path) is not an SQLite database, so not a blocklist store; it is left as it is. Give --store a store blocklist made, or a new path."
        )
    }

    package init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws(BlocklistError) {
        self.path = path
        switch try FileSystem.kind(path) {
        case .file: try Self.refuseNonSQLite(path)
        case .missing:
            if readOnly {
                throw BlocklistError(
                    .io,
                    "There is no store at \(path); `blocklist enable all DIR` makes one beside the set in DIR (`--store \(path)` here), and `blocklist load DIR` fills it."
                )
            }
        default:
            throw BlocklistError(.io, "The store \(path) is not a regular file; refusing to open it.")
        }
        database = try SQLiteDatabase(path: path, readOnly: readOnly, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // Read in statements finished before the journal mode changes (it cannot inside a read).
        let (version, names) = try Self.schema(of: database)
        if version == 0 {
            // A database without blocklist's schema that holds anything is someone else's: no
            // table of ours goes into it, and its journal mode stays as it is.
            if !names.isEmpty {
                let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
                throw BlocklistError(
                    .io,
                    "\(path) is an SQLite database that blocklist did not make (it holds \(shown)); it is left as it is. Give --store a store blocklist made, or a new path."
                )
            }
            if readOnly {
                throw BlocklistError(
                    .io,
                    "\(path) is an empty SQLite database, not a blocklist store yet; `blocklist enable all DIR --store \(path)` makes it one."
                )
            }
        }
        // The WAL persists (readers create nothing) but shrinks to nothing when it is reset.
        if !readOnly {
            try database.execute(
                "PRAGMA journal_mode=WAL; PRAGMA journal_size_limit=0; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;"
            )
        }
        if version == 0 && !readOnly {
            try database.execute(
                """
                BEGIN IMMEDIATE;
                CREATE TABLE IF NOT EXISTS extensions (
                    id INTEGER PRIMARY KEY,
                    identifier TEXT NOT NULL UNIQUE,
                    shard_index INTEGER NOT NULL,
                    enabled INTEGER NOT NULL DEFAULT 0,
                    state TEXT NOT NULL DEFAULT 'registered',
                    needs_full_reload INTEGER NOT NULL DEFAULT 1,
                    loaded_checksum TEXT,
                    loaded_count INTEGER NOT NULL DEFAULT 0,
                    last_load_at INTEGER,
                    last_duration_ms INTEGER,
                    peak_memory_kib INTEGER,
                    last_error TEXT
                );
                CREATE TABLE IF NOT EXISTS blocking_entries (
                    extension_id INTEGER NOT NULL REFERENCES extensions(id),
                    number INTEGER NOT NULL,
                    PRIMARY KEY (extension_id, number)
                ) WITHOUT ROWID;
                \(Self.identificationTable)
                PRAGMA user_version = \(Self.schemaVersion);
                COMMIT;
                """
            )
        } else if version == 1 && !readOnly {
            try database.execute(
                "BEGIN IMMEDIATE; \(Self.identificationTable) PRAGMA user_version = \(Self.schemaVersion); COMMIT;"
            )
        } else if version > Self.schemaVersion {
            throw BlocklistError(
                .unsupportedVersion,
                "The store \(path) has schema version \(version), newer than the \(Self.schemaVersion) this tool knows; update blocklist."
            )
        }
    }

    static let identificationTable = """
        CREATE TABLE IF NOT EXISTS identification_entries (
            extension_id INTEGER NOT NULL REFERENCES extensions(id),
            number INTEGER NOT NULL,
            label TEXT NOT NULL,
            PRIMARY KEY (extension_id, number)
        ) WITHOUT ROWID;
        """

    /// Whether the store has the identification table (a version 1 store opened read-only has not).
    var hasIdentification: Bool {
        guard let statement = try? database.prepare("SELECT 1 FROM sqlite_master WHERE name = 'identification_entries'")
        else { return false }
        return (try? statement.step()) ?? false
    }

    /// The enabled extensions that identify `number`, with the label each gives.
    package func identify(_ number: Int64) throws(BlocklistError) -> [(identifier: String, label: String)] {
        guard hasIdentification else { return [] }
        let probe = try database.prepare(
            "SELECT e.identifier, i.label FROM extensions e JOIN identification_entries i ON i.extension_id = e.id WHERE e.enabled = 1 AND i.number = ?1 ORDER BY e.shard_index"
        )
        try probe.bind(.integer(number))
        var result: [(identifier: String, label: String)] = []
        while try probe.step() { result.append((probe.text(0) ?? "", probe.text(1) ?? "")) }
        return result
    }

    /// Every identification entry stored for `identifier`, ascending.
    package func identificationEntries(of identifier: String) throws(BlocklistError) -> [(number: Int64, label: String)]
    {
        guard hasIdentification else { return [] }
        let query = try database.prepare(
            "SELECT i.number, i.label FROM identification_entries i JOIN extensions e ON e.id = i.extension_id WHERE e.identifier = ?1 ORDER BY i.number"
        )
        try query.bind(.text(identifier))
        var result: [(number: Int64, label: String)] = []
        while try query.step() { result.append((query.integer(0), query.text(1) ?? "")) }
        return result
    }

    /// The directory where the system keeps each extension's last loaded shard (the App Group copy).
    package var appGroupDirectory: String { path + ".appgroup" }

    /// The identifier of shard `index` in a set of `count`: "extension-01".
    package static func identifier(ofShard index: Int, of count: Int) -> String {
        let width = max(2, String(count).count)
        let digits = String(index)
        return "extension-" + String(repeating: "0", count: width - digits.count) + digits
    }

    /// Registers every shard of `manifest` as an extension, disabled, as installing the app does.
    /// Extensions already registered keep their state.
    ///
    /// - Returns: how many were new.
    @discardableResult
    package func register(_ manifest: Manifest) throws(BlocklistError) -> Int {
        // Reading first keeps a registered app's commands off the write lock, which a load holds.
        let find = try database.prepare("SELECT 1 FROM extensions WHERE identifier = ?1")
        var missing = false
        for shard in manifest.shards where !missing {
            missing = try !find.bind(.text(Self.identifier(ofShard: shard.index, of: manifest.shards.count))).step()
        }
        guard missing else { return 0 }
        let insert = try database.prepare("INSERT OR IGNORE INTO extensions (identifier, shard_index) VALUES (?1, ?2)")
        var added = 0
        try database.execute("BEGIN IMMEDIATE")
        do throws(BlocklistError) {
            for shard in manifest.shards {
                try insert.bind(
                    .text(Self.identifier(ofShard: shard.index, of: manifest.shards.count)),
                    .integer(Int64(shard.index))
                ).run()
                added += database.changes
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        return added
    }

    /// Deletes `identifier`'s entries and its row in one transaction.
    ///
    /// - Returns: how many entries it held.
    func unregister(_ identifier: String) throws(BlocklistError) -> Int64 {
        let count = try entryCount(of: identifier)
        try database.execute("BEGIN IMMEDIATE")
        do throws(BlocklistError) {
            let find = try database.prepare("SELECT id FROM extensions WHERE identifier = ?1")
            try find.bind(.text(identifier))
            if try find.step() {
                let id = find.integer(0)
                try database.prepare("DELETE FROM blocking_entries WHERE extension_id = ?1").bind(.integer(id)).run()
                try database.prepare("DELETE FROM identification_entries WHERE extension_id = ?1").bind(.integer(id))
                    .run()
                try database.prepare("DELETE FROM extensions WHERE id = ?1").bind(.integer(id)).run()
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        return count
    }

    /// Flips the Settings switch. Turning an extension on makes its next load non-incremental.
    package func setEnabled(_ enabled: Bool, identifiers: [String]) throws(BlocklistError) {
        let update = try database.prepare(
            "UPDATE extensions SET enabled = ?1, needs_full_reload = CASE WHEN ?1 = 1 AND enabled = 0 THEN 1 ELSE needs_full_reload END WHERE identifier = ?2"
        )
        try database.execute("BEGIN IMMEDIATE")
        do throws(BlocklistError) {
            for identifier in identifiers {
                try update.bind(.integer(enabled ? 1 : 0), .text(identifier)).run()
                guard database.changes == 1 else {
                    throw BlocklistError(
                        .invalidInput,
                        "No extension \(identifier) is registered in the store \(path)."
                    )
                }
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    /// Every registered extension, by index.
    package func extensions() throws(BlocklistError) -> [Extension] {
        let query = try database.prepare(
            """
            SELECT identifier, shard_index, enabled, state, needs_full_reload, loaded_checksum, loaded_count,
                   last_load_at, last_duration_ms, peak_memory_kib, last_error,
                   (SELECT COUNT(*) FROM identification_entries AS i WHERE i.extension_id = e.id)
            FROM extensions AS e ORDER BY shard_index, identifier
            """
        )
        var result: [Extension] = []
        while try query.step() {
            let identifier = query.text(0) ?? "?"
            /// Column `column` as a whole number in `range`; another program's NULL, text, real or
            /// out-of-range value is refused by name rather than read as 0 or used as it is.
            func whole(_ column: Int32, _ name: String, _ range: ClosedRange<Int64>, optional: Bool = false)
                throws(BlocklistError) -> Int64?
            {
                if optional && query.isNull(column) { return nil }
                guard query.isInteger(column), range.contains(query.integer(column)) else {
                    let shown = query.isNull(column) ? "NULL" : "\"\(query.text(column) ?? "")\""
                    let wanted =
                        range.upperBound == .max
                        ? "a whole number of \(range.lowerBound) or more"
                        : "a whole number from \(range.lowerBound) to \(range.upperBound)"
                    throw BlocklistError(
                        .invalidInput,
                        "\(path): extension \(identifier) has \(name) \(shown), which is not \(wanted); the store was changed by another program."
                    )
                }
                return query.integer(column)
            }
            let text = query.text(3) ?? ""
            guard let state = ExtensionState(rawValue: text) else {
                throw BlocklistError(
                    .invalidInput,
                    "\(path): extension \(identifier) has state \"\(text)\", which is none of registered, loaded and failed; the store was changed by another program."
                )
            }
            let counts: ClosedRange<Int64> = 0...Int64.max
            result.append(
                Extension(
                    identifier: query.text(0) ?? "",
                    index: Int(try whole(1, "shard_index", 1...10_000)!),
                    enabled: try whole(2, "enabled", 0...1)! != 0,
                    state: state,
                    needsFullReload: try whole(4, "needs_full_reload", 0...1)! != 0,
                    loadedChecksum: query.text(5),
                    loadedCount: try whole(6, "loaded_count", counts)!,
                    lastLoadAt: try whole(7, "last_load_at", counts, optional: true),
                    lastDurationMilliseconds: try whole(8, "last_duration_ms", counts, optional: true),
                    peakMemoryKiB: try whole(9, "peak_memory_kib", counts, optional: true),
                    lastError: query.text(10),
                    identificationCount: query.integer(11)
                )
            )
        }
        return result
    }

    /// One extension, or `nil`.
    package func `extension`(_ identifier: String) throws(BlocklistError) -> Extension? {
        try extensions().first { $0.identifier == identifier }
    }

    /// The enabled extensions whose stored entries include `number`: who blocks it.
    package func lookup(_ number: Int64) throws(BlocklistError) -> [String] {
        let probe = try database.prepare(
            "SELECT e.identifier FROM extensions e WHERE e.enabled = 1 AND EXISTS (SELECT 1 FROM blocking_entries b WHERE b.extension_id = e.id AND b.number = ?1) ORDER BY e.shard_index"
        )
        try probe.bind(.integer(number))
        var result: [String] = []
        while try probe.step() { result.append(probe.text(0) ?? "") }
        return result
    }

    /// Every number stored for `identifier`, ascending.
    package func entries(of identifier: String) throws(BlocklistError) -> [Int64] {
        let query = try database.prepare(
            "SELECT b.number FROM blocking_entries b JOIN extensions e ON e.id = b.extension_id WHERE e.identifier = ?1 ORDER BY b.number"
        )
        try query.bind(.text(identifier))
        var result: [Int64] = []
        while try query.step() { result.append(query.integer(0)) }
        return result
    }

    /// How many entries the store holds for `identifier`, counted.
    package func entryCount(of identifier: String) throws(BlocklistError) -> Int64 {
        let query = try database.prepare(
            "SELECT count(*) FROM blocking_entries b JOIN extensions e ON e.id = b.extension_id WHERE e.identifier = ?1"
        )
        try query.bind(.text(identifier))
        _ = try query.step()
        return query.integer(0)
    }

    /// How many identification entries the store holds for `identifier`, counted.
    package func identificationCount(of identifier: String) throws(BlocklistError) -> Int64 {
        guard hasIdentification else { return 0 }
        let query = try database.prepare(
            "SELECT count(*) FROM identification_entries i JOIN extensions e ON e.id = i.extension_id WHERE e.identifier = ?1"
        )
        try query.bind(.text(identifier))
        _ = try query.step()
        return query.integer(0)
    }

    /// `PRAGMA integrity_check`: "ok", or what SQLite found.
    package func integrityCheck() throws(BlocklistError) -> String { try database.integrityCheck() }
}
