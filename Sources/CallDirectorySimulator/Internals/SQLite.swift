import BlocklistCore
import CSQLite

// Every SQLite call the simulator makes goes through here; each return code other than the one
// expected becomes a thrown `BlocklistError` naming the store file and the statement.

/// A connection to one SQLite file, closed when dropped.
final class SQLiteDatabase {
    let path: String
    private(set) var handle: OpaquePointer?

    /// Process-wide settings, applied once before the first connection opens.
    private static let configured: Int32 = csqlite_disable_memory_statistics()

    /// How long a write waits for another connection's write lock before failing with SQLITE_BUSY.
    let busyTimeoutMilliseconds: Int32

    init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws(BlocklistError) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        _ = Self.configured
        var handle: OpaquePointer?
        let mode = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let code = sqlite3_open_v2(path, &handle, mode | SQLITE_OPEN_NOMUTEX, nil)
        self.handle = handle
        guard code == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(code)"
            sqlite3_close_v2(handle)
            self.handle = nil
            throw BlocklistError(.io, "Opening the store \(path) failed: \(message).")
        }
        if !readOnly {
            // Keep the -wal and -shm files when the last writer closes, so that a read-only opener
            // (status, lookup) finds them and creates nothing.
            var persist: Int32 = 1
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        }
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    func error(_ what: String, _ code: Int32) -> BlocklistError {
        error(what, code, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// SQLITE_BUSY after the busy timeout means another process holds the store's write lock.
    private func error(_ what: String, _ code: Int32, message: String) -> BlocklistError {
        if code & 0xFF == SQLITE_BUSY {
            let waited =
                busyTimeoutMilliseconds % 1000 == 0
                ? "\(busyTimeoutMilliseconds / 1000) s" : "\(busyTimeoutMilliseconds) ms"
            return BlocklistError(
                .busy,
                "\(what) in the store \(path) failed: another process has been writing to it for \(waited) (a load in progress?); try again when it finishes."
            )
        }
        return BlocklistError(.io, "\(what) in the store \(path) failed: \(message) (SQLite code \(code)).")
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(BlocklistError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error \(code)"
            sqlite3_free(message)
            throw error("Running \"\(sql.prefix(60))\"", code, message: text)
        }
    }

    func prepare(_ sql: String) throws(BlocklistError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error("Preparing \"\(sql.prefix(60))\"", code) }
        return SQLiteStatement(statement, database: self, sql: sql)
    }

    var changes: Int { Int(sqlite3_changes64(handle)) }
    /// Whether the connection's last error was a constraint violation, such as a repeated key.
    var isConstraintError: Bool { isConstraintViolation(sqlite3_extended_errcode(handle)) }

    /// The result of `PRAGMA integrity_check`: "ok" or the problems SQLite found.
    func integrityCheck() throws(BlocklistError) -> String {
        let statement = try prepare("PRAGMA integrity_check")
        var lines: [String] = []
        while try statement.step() { lines.append(statement.text(0) ?? "") }
        return lines.joined(separator: "\n")
    }
}

/// A prepared statement, finalized when dropped.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase
    private let sql: String

    init(_ statement: OpaquePointer, database: SQLiteDatabase, sql: String) {
        self.statement = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(statement) }

    /// Binds values to ?1, ?2, … after resetting the statement.
    @discardableResult
    func bind(_ values: SQLiteValue...) throws(BlocklistError) -> SQLiteStatement {
        sqlite3_reset(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let number): code = sqlite3_bind_int64(statement, index, number)
            case .text(let text): code = sqlite3_bind_text(statement, index, text, -1, csqlite_transient())
            case .null: code = sqlite3_bind_null(statement, index)
            }
            guard code == SQLITE_OK else { throw database.error("Binding ?\(index) of \"\(sql.prefix(60))\"", code) }
        }
        return self
    }

    /// Binds one integer to parameter `index`, keeping the other bindings, and runs the statement;
    /// returns SQLite's result code so that callers can tell a constraint violation from a failure.
    /// (sqlite3_reset's own code repeats the previous step's, which its caller has seen.)
    @inline(__always)
    func runReturningCode(binding value: Int64, at index: Int32) -> Int32 {
        sqlite3_reset(statement)
        let bound = sqlite3_bind_int64(statement, index, value)
        return bound == SQLITE_OK ? sqlite3_step(statement) : bound
    }

    /// Binds `values` to ?`first`, ?`first`+1, … keeping the other bindings, and runs the statement;
    /// returns SQLite's result code (a binding's, if one fails).
    func runReturningCode(binding values: UnsafeBufferPointer<Int64>, from first: Int32) -> Int32 {
        sqlite3_reset(statement)
        for (offset, value) in values.enumerated() {
            let bound = sqlite3_bind_int64(statement, first + Int32(offset), value)
            if bound != SQLITE_OK { return bound }
        }
        return sqlite3_step(statement)
    }

    /// The message of the connection's last error.
    var lastErrorMessage: String { String(cString: sqlite3_errmsg(database.handle)) }

    /// Steps once; true if a row is ready.
    func step() throws(BlocklistError) -> Bool {
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error("Running \"\(sql.prefix(60))\"", code)
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(BlocklistError) {
        while try step() {}
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func text(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: text)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    /// Whether the column holds an integer (SQLite's type of the value, not of the column).
    func isInteger(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_INTEGER }
}

enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case null
}

/// Whether an (extended) result code is a constraint violation, such as a repeated primary key.
func isConstraintViolation(_ code: Int32) -> Bool { code & 0xFF == SQLITE_CONSTRAINT }
let sqliteDone = SQLITE_DONE
