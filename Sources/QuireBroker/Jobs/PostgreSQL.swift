internal import CLibPQ
import Foundation

/// An error from PostgreSQL or libpq, with the server's SQLSTATE kept so callers can tell a full disk
/// from a lost connection from a bug.
struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE the server sent; `nil` for libpq's own failures (no connection).
    let sqlState: String?
    let message: String
    let operation: String
    /// The connection is gone: the server has ended this session (and released what it held), and
    /// what was in flight may or may not have been committed.
    let connectionLost: Bool

    var description: String {
        "\(operation): \(message)" + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }

    /// `disk_full`, `out_of_memory`, `program_limit_exceeded`'s class: more space or a smaller job helps.
    var isFull: Bool { sqlState == "53100" || sqlState == "53200" || sqlState?.hasPrefix("54") == true }
    /// A read-only transaction (a standby, or `default_transaction_read_only`), or no right to write.
    var isReadOnly: Bool { sqlState == "25006" || sqlState == "42501" }
    /// Worth trying again: serialization failure, deadlock, lock not available, too many connections,
    /// a statement cancelled (timeout), the server shutting down.
    var isBusy: Bool {
        ["40001", "40P01", "55P03", "53300", "57014", "57P01", "57P03"].contains(sqlState ?? "")
    }
}

/// One value bound to a statement's parameter. Each case names its PostgreSQL type, so a `nil` is a
/// typed NULL and a statement is prepared with the same types whatever its first call binds.
enum PostgresValue {
    case text(String?)
    case int(Int64?)
    case bytes([UInt8]?)

    static func int(_ value: Int?) -> PostgresValue { .int(value.map(Int64.init)) }

    /// The type's OID: `text` 25, `int8` 20, `bytea` 17.
    var oid: Oid {
        switch self {
        case .text: 25
        case .int: 20
        case .bytes: 17
        }
    }

    /// The value in PostgreSQL's binary format (all parameters are sent binary: no quoting, no
    /// escaping, no text parsing on either side); `nil` for NULL.
    var binary: [UInt8]? {
        switch self {
        case .text(let value): value.map { Array($0.utf8) }
        case .int(let value): value.map { v in (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }
        case .bytes(let value): value
        }
    }
}

/// One PostgreSQL connection, used by one thread (the broker's store thread). Statements are prepared
/// on the server once, named by the order they were first used, and every value travels in binary.
final class PostgresConnection {
    private let handle: OpaquePointer
    private var prepared: [String: String] = [:]

    /// Connects with a libpq connection string or URI (`postgresql://user@host/db?sslmode=verify-full`).
    /// What the string leaves out libpq takes from its environment (`PGHOST`, `PGSSLMODE`, …) and the
    /// password from `PGPASSWORD` or the password file (`~/.pgpass`, `PGPASSFILE`), as `psql` does.
    /// `applicationName` is what `pg_stat_activity` shows for it; a connection attempt ends after 10 s
    /// and a silent peer is noticed within about 30 s, unless the string says otherwise.
    init(_ connectionString: String, applicationName: String = "quire") throws(PostgresError) {
        // The string is expanded in place of `dbname`: what it says overrides the defaults given before
        // it. A server that does not answer is given up after 10 s, not the system's minutes; over TCP,
        // a connection whose other end went silent (a cut network, a machine gone) is noticed within
        // about 30 s by keepalives and by data left unacknowledged, instead of a write hanging for
        // the kernel's 15 minutes.
        let keywords = ["application_name", "connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "dbname"]
        let values = [applicationName, "10", "10", "5", "3", "30000", connectionString]
        let made: OpaquePointer? = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection = made else {
            throw PostgresError(sqlState: nil, message: "out of memory", operation: "connect", connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: message, operation: "connect", connectionLost: true)
        }
        handle = connection
        // The server's notices (an `IF NOT EXISTS` that skipped) are not the broker's to print.
        try execute("SET client_min_messages = warning")
    }

    deinit { PQfinish(handle) }

    var isAlive: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The server process serving this connection (`pg_stat_activity.pid`).
    var serverProcess: Int32 { PQbackendPID(handle) }

    /// Where this connection went, for logs: user, host (or socket folder), port and database, never
    /// the password.
    var location: String {
        func string(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        let host = string(PQhost(handle))
        let shownHost = host.hasPrefix("/") ? "[\(host)]" : host
        return "postgresql://\(string(PQuser(handle)))@\(shownHost):\(string(PQport(handle)))/\(string(PQdb(handle)))"
    }

    /// Runs SQL that returns no rows and takes no parameters, several statements at once allowed
    /// (schema migrations, `BEGIN`, `COMMIT`).
    func execute(_ sql: String) throws(PostgresError) {
        let result = PQexec(handle, sql)
        try check(result, operation: String(sql.prefix(40)))
        PQclear(result)
    }

    /// Waits up to `timeout` milliseconds for notifications on the channels this connection listens to
    /// (`LISTEN`); those that came, as channel and payload. Throws when the connection is gone.
    func notifications(timeout: Int32) throws(PostgresError) -> [(channel: String, payload: String)] {
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, timeout) > 0, PQconsumeInput(handle) != 1 || PQstatus(handle) != CONNECTION_OK {
            throw PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), operation: "listen", connectionLost: true)
        }
        var found: [(channel: String, payload: String)] = []
        while let notice = PQnotifies(handle) {
            found.append((String(cString: notice.pointee.relname), String(cString: notice.pointee.extra)))
            PQfreemem(notice)
        }
        return found
    }

    /// Runs one statement with its parameters, prepared on first use; its rows in binary.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresRows {
        let name = try statementName(for: sql, parameters: parameters)
        let result: OpaquePointer? = Self.withBinary(parameters) { count, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 1)
        }
        try check(result, operation: String(sql.prefix(40)))
        return PostgresRows(result!)
    }

    /// Runs the statements in order inside the open transaction, sent without waiting for each answer
    /// (libpq's pipeline mode: one round trip per `chunk` statements instead of one each); each
    /// statement's rows (or rows affected), in order. Throws the first statement's error, after which
    /// the rest did not run and the transaction must roll back.
    @discardableResult
    func pipeline(_ statements: [(sql: String, parameters: [PostgresValue])], chunk: Int = 256) throws(PostgresError) -> [PostgresRows] {
        // Statements are prepared first, outside the pipeline (each on its first use, as for query).
        var names: [String] = []
        for statement in statements { names.append(try statementName(for: statement.sql, parameters: statement.parameters)) }
        var start = 0
        var rows: [PostgresRows] = []
        while start < statements.count {
            // Chunks bound what the server answers before the client reads: the answers to a few hundred
            // statements fit the socket's buffers, so neither side can block the other.
            let end = min(start + chunk, statements.count)
            rows += try runPipeline(statements[start..<end], names: names[start..<end])
            start = end
        }
        return rows
    }

    private func runPipeline(_ statements: ArraySlice<(sql: String, parameters: [PostgresValue])>,
                             names: ArraySlice<String>) throws(PostgresError) -> [PostgresRows] {
        func failure(_ operation: String) -> PostgresError {
            PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), operation: operation, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
        guard PQenterPipelineMode(handle) == 1 else { throw failure("pipeline") }
        var sent = 0
        for (statement, name) in zip(statements, names) {
            let queued = Self.withBinary(statement.parameters) { count, values, lengths, formats in
                PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
            }
            guard queued == 1 else { break }
            sent += 1
        }
        let synced = PQpipelineSync(handle) == 1
        // Each statement's answer is its results, then a NULL; then the sync's own result.
        var firstError: PostgresError?
        var rows: [PostgresRows] = []
        for statement in statements.prefix(sent) {
            while let result = PQgetResult(handle) {
                let status = PQresultStatus(result)
                if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && firstError == nil {
                    if status == PGRES_PIPELINE_ABORTED {
                        PQclear(result)
                    } else {
                        do { try check(result, operation: String(statement.sql.prefix(40))) } catch { firstError = error }
                        continue  // check freed it
                    }
                } else if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                    rows.append(PostgresRows(result))
                } else {
                    PQclear(result)
                }
            }
        }
        if synced {
            while let result = PQgetResult(handle) {
                let done = PQresultStatus(result) == PGRES_PIPELINE_SYNC
                PQclear(result)
                if done { break }
            }
        }
        // A connection left in pipeline mode could run nothing else: it counts as lost (the broker then
        // connects again and starts over from the store).
        guard PQexitPipelineMode(handle) == 1 else {
            throw PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), operation: "pipeline end", connectionLost: true)
        }
        if let firstError { throw firstError }
        guard sent == statements.count, synced else { throw failure("pipeline send") }
        return rows
    }

    /// `parameters` in PostgreSQL's binary format, as libpq's arrays, for the length of `body`.
    private static func withBinary<T>(_ parameters: [PostgresValue],
                                      _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> T) -> T {
        let values = parameters.map(\.binary)
        // Every value lives in one buffer for the call; libpq copies what it sends before returning.
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        for value in values {
            offsets.append(buffer.count)
            buffer.append(contentsOf: value ?? [])
        }
        buffer.append(0)  // never empty: a zero-length value still gets a pointer (empty, not NULL)
        let lengths = values.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: values.count)
        return buffer.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!)
            let pointers: [UnsafePointer<CChar>?] = values.indices.map { index in
                values[index] == nil ? nil : base.advanced(by: offsets[index]).assumingMemoryBound(to: CChar.self)
            }
            return body(Int32(values.count), pointers, lengths, formats)
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if !error.connectionLost { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func statementName(for sql: String, parameters: [PostgresValue]) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        let name = "quire_\(prepared.count + 1)"
        let types = parameters.map(\.oid)
        let result = PQprepare(handle, name, sql, Int32(types.count), types)
        try check(result, operation: "prepare \(sql.prefix(40))")
        PQclear(result)
        prepared[sql] = name
        return name
    }

    /// Throws the error `result` carries (freeing it); returns quietly for a command or rows.
    private func check(_ result: OpaquePointer?, operation: String) throws(PostgresError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return }
        var sqlState: String?
        var message = Self.trimmed(PQerrorMessage(handle))
        if let result {
            if let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) { sqlState = String(cString: code) }
            let text = Self.trimmed(PQresultErrorMessage(result))
            if !text.isEmpty { message = text }
            PQclear(result)
        }
        let lost = PQstatus(handle) != CONNECTION_OK || sqlState?.hasPrefix("08") == true
        throw PostgresError(sqlState: sqlState, message: message.isEmpty ? "no result" : message, operation: operation, connectionLost: lost)
    }

    private static func trimmed(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        (pointer.map { String(cString: $0) } ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// `strings` as a NULL-terminated array of C strings, for the length of `body`.
private func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

/// The rows of one statement, in binary, read by column number; freed with it.
final class PostgresRows {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }

    deinit { PQclear(result) }

    var count: Int { Int(PQntuples(result)) }

    /// Rows an `INSERT`, `UPDATE` or `DELETE` touched.
    var affected: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) != 0 }

    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column), let value = PQgetvalue(result, Int32(row), Int32(column)) else { return nil }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    func text(_ row: Int, _ column: Int) -> String? { bytes(row, column).map { String(decoding: $0, as: UTF8.self) } }

    /// An integer column (`int2`, `int4`, `int8`) or a `bool`; `nil` for NULL.
    func int(_ row: Int, _ column: Int) -> Int64? {
        guard let bytes = bytes(row, column), !bytes.isEmpty else { return nil }
        var value = Int64(Int8(bitPattern: bytes[0]))  // sign-extended from the first byte
        for byte in bytes.dropFirst() { value = (value << 8) | Int64(byte) }
        return value
    }

    func bool(_ row: Int, _ column: Int) -> Bool? { int(row, column).map { $0 != 0 } }
}
