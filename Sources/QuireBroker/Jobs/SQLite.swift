internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// An error from SQLite, with its result code kept so callers can tell a full disk from a bug.
struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_FULL`, `SQLITE_READONLY`, …), extended bits masked off.
    let code: Int32
    let message: String
    let operation: String

    var description: String { "\(operation): \(message) (sqlite \(code))" }

    var isFull: Bool { code == SQLITE_FULL }
    var isReadOnly: Bool { code == SQLITE_READONLY || code == SQLITE_PERM || code == SQLITE_CANTOPEN }
    var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
}

/// One SQLite connection, used by one thread (the broker's). Statements are prepared once and cached.
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]

    init(path: String) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc & 0xff, message: message, operation: "open \(path)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 0)
        sqlite3_busy_timeout(db, 5_000)
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs SQL that returns no rows (schema, pragmas, `BEGIN`/`COMMIT`).
    func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw SQLiteError(code: rc & 0xff, message: message, operation: String(sql.prefix(40)))
        }
    }

    /// A prepared statement for `sql`, reset and with its bindings cleared. A caller that reads rows
    /// must reset it when done (`defer { statement.reset() }`) or step it to the end: a statement left
    /// on a row holds a read transaction, and in WAL mode that pins a snapshot no checkpoint can pass,
    /// so the WAL would grow for ever.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        var pointer: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &pointer, nil)
        guard rc == SQLITE_OK, let pointer else {
            throw SQLiteError(code: rc & 0xff, message: String(cString: sqlite3_errmsg(handle)), operation: "prepare")
        }
        let statement = SQLiteStatement(pointer, database: handle)
        cache[sql] = statement
        return statement
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int(0) : nil
    }
}

/// A prepared statement. Bind with 1-based indices, read columns with 0-based ones (SQLite's own).
final class SQLiteStatement {
    private let pointer: OpaquePointer
    private let database: OpaquePointer?

    init(_ pointer: OpaquePointer, database: OpaquePointer?) {
        self.pointer = pointer
        self.database = database
    }

    deinit { sqlite3_finalize(pointer) }

    func reset() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }

    @discardableResult
    func bind(_ index: Int32, _ value: Int64?) -> SQLiteStatement {
        if let value { sqlite3_bind_int64(pointer, index, value) } else { sqlite3_bind_null(pointer, index) }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, _ value: Int) -> SQLiteStatement { bind(index, Int64(value)) }

    @discardableResult
    func bind(_ index: Int32, _ value: String?) -> SQLiteStatement {
        if let value {
            // SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
            sqlite3_bind_text(pointer, index, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        } else {
            sqlite3_bind_null(pointer, index)
        }
        return self
    }

    @discardableResult
    func bind(_ index: Int32, blob: [UInt8]?) -> SQLiteStatement {
        if let blob {
            blob.withUnsafeBytes { raw in
                _ = sqlite3_bind_blob64(pointer, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(raw.count),
                                        unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        } else {
            sqlite3_bind_null(pointer, index)
        }
        return self
    }

    /// Steps once: `true` when a row is ready, `false` when done.
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(pointer)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = String(cString: sqlite3_errmsg(database))
            sqlite3_reset(pointer)
            throw SQLiteError(code: rc & 0xff, message: message, operation: "step")
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(SQLiteError) {
        while try step() {}
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(pointer, column) == SQLITE_NULL }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(pointer, column) }

    func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(pointer, column) else { return nil }
        return String(cString: bytes)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(pointer, column))
        guard count > 0, let base = sqlite3_column_blob(pointer, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
