import Foundation
import QuireStats
import QuireSupport

/// Where a durable job is in its life. `queued` and `running` are active; the rest are final.
public enum JobState: String, Sendable, Codable, CaseIterable {
    case queued, running, done, failed, dead, cancelled, expired

    public var isActive: Bool { self == .queued || self == .running }
}

/// The three dispatch lanes. A queued job of a higher lane always goes before a lower one.
public enum JobPriority: Int, Sendable, Codable, CaseIterable, Comparable {
    case high = 0, normal = 1, low = 2

    public init?(name: String) {
        switch name {
        case "high": self = .high
        case "normal": self = .normal
        case "low": self = .low
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .high: "high"
        case .normal: "normal"
        case .low: "low"
        }
    }

    public static func < (a: JobPriority, b: JobPriority) -> Bool { a.rawValue < b.rawValue }
}

extension PriorityDepth {
    /// Counts `count` more jobs waiting in `priority`'s lane.
    mutating func add(_ priority: JobPriority, _ count: Int = 1) {
        switch priority {
        case .high: high += count
        case .normal: normal += count
        case .low: low += count
        }
    }
}

/// A job as the store keeps it (without its request and reply frames, which are read on demand).
public struct JobRecord: Sendable, Equatable {
    public var id: String
    public var service: String
    /// The token subject that submitted it; "" when auth is off.
    public var owner: String
    public var idempotencyKey: String?
    public var priority: JobPriority
    public var state: JobState
    public var attempts: Int
    public var maxAttempts: Int
    /// Wall-clock milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64
    public var startedAt: Int64?
    public var finishedAt: Int64?
    /// A retried job waits until then.
    public var notBefore: Int64
    public var deadline: Int64?
    public var resultTTL: Int64
    /// When a finished job is swept.
    public var expiresAt: Int64?
    /// Submission order, for FIFO within a lane.
    public var sequence: Int64
    public var requestBytes: Int
    /// The last error, as its JSON frame.
    public var lastError: [UInt8]?

    /// Whether the result is past its TTL at `now`: the job is gone, even before the sweep deletes its row.
    public func isExpired(at now: Int64) -> Bool { (expiresAt ?? .max) <= now }

    /// What a job that has ended keeps of its request: no frames. Only its result is asked for from then
    /// on, for as long as its TTL; under Azure Read's operations, kept a day, the images were 40 % of the
    /// store's bytes.
    static let endedRequest = FrameCoding.encode([])
}

/// A failure of the job store, by kind: what the client is told depends on it.
public struct JobStoreError: Error, Sendable, CustomStringConvertible {
    /// `lost`: the connection to a store across the network is gone, and with it the broker's claim to
    /// the store; the broker stops (``PostgresJobStore``).
    public enum Kind: String, Sendable { case full, readOnly = "read_only", busy, lost, other }
    public var kind: Kind
    public var message: String

    public var description: String { "job store (\(kind.rawValue)): \(message)" }

    init(_ error: SQLiteError) {
        kind = error.isFull ? .full : error.isReadOnly ? .readOnly : error.isBusy ? .busy : .other
        message = error.description
    }

    init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }
}

/// The durable job store: SQLite in WAL mode in the broker's data folder.
///
/// A job's row, with its request frames, is committed (fsynced: `synchronous=FULL`) before its submitter
/// hears `200`. Commits are grouped: the broker writes everything one loop turn produced in one
/// transaction, so one fsync covers many submissions. Request bodies live in the row: at the ≤ 64 MB
/// sizes Quire accepts and the ~100 KB typical of a photo, one write beats a row plus a file (one fsync,
/// nothing to clean up on a crash between the two).
final class SQLiteJobStore {
    static let fileName = "jobs.sqlite3"
    /// Every migration, in order; `PRAGMA user_version` is the number applied. Never edit one that shipped.
    static let migrations: [String] = [
        """
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            service TEXT NOT NULL,
            owner TEXT NOT NULL,
            idempotency_key TEXT,
            priority INTEGER NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            max_attempts INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            started_at INTEGER,
            finished_at INTEGER,
            not_before INTEGER NOT NULL,
            deadline INTEGER,
            result_ttl INTEGER NOT NULL,
            expires_at INTEGER,
            sequence INTEGER NOT NULL,
            request_bytes INTEGER NOT NULL,
            request BLOB NOT NULL,
            reply BLOB,
            last_error BLOB
        );
        CREATE UNIQUE INDEX jobs_idempotency ON jobs(owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
        CREATE INDEX jobs_active ON jobs(state) WHERE state IN ('queued', 'running');
        CREATE INDEX jobs_expiry ON jobs(expires_at) WHERE expires_at IS NOT NULL;
        CREATE TABLE services (name TEXT PRIMARY KEY, first_seen INTEGER NOT NULL);
        """,
    ]

    private let database: SQLiteDatabase
    let path: String
    private(set) var lastSequence: Int64 = 0

    /// Opens (creating when needed) the store in `directory`, and migrates it to the current schema.
    init(directory: String, maxBytes: Int? = nil) throws(JobStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw JobStoreError(kind: .readOnly, message: "cannot create the data folder \(directory): \(error.localizedDescription)")
        }
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        do {
            database = try SQLiteDatabase(path: path)
            // Large pages for large rows: a 100 KB photo spans 2 pages instead of 25 (fewer WAL frames
            // and overflow-chain steps). Takes effect only when the file is created.
            try database.execute("PRAGMA page_size=65536")
            try database.execute("PRAGMA journal_mode=WAL")
            try database.execute("PRAGMA synchronous=FULL")
            // Checkpoints run on their own thread (``Checkpointer``); this is only a safety net.
            try database.execute("PRAGMA wal_autocheckpoint=16384")
            // When the WAL restarts, cut the file back to this size instead of keeping its peak.
            try database.execute("PRAGMA journal_size_limit=67108864")
            try migrate()
            if let maxBytes {
                let pageSize = try database.scalarInt("PRAGMA page_size") ?? 4_096
                try database.execute("PRAGMA max_page_count = \(max(16, Int64(maxBytes) / pageSize))")
            }
            lastSequence = try database.scalarInt("SELECT COALESCE(MAX(sequence), 0) FROM jobs") ?? 0
        } catch {
            throw JobStoreError(error)
        }
    }

    private func migrate() throws(SQLiteError) {
        let version = Int(try database.scalarInt("PRAGMA user_version") ?? 0)
        guard version <= Self.migrations.count else {
            throw SQLiteError(code: 1, message: "the job store has schema version \(version), newer than this broker's \(Self.migrations.count)", operation: "migrate")
        }
        for index in version..<Self.migrations.count {
            try database.transaction { () throws(SQLiteError) in
                try database.execute(Self.migrations[index])
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    var schemaVersion: Int { Int((try? database.scalarInt("PRAGMA user_version")) ?? 0) }

    /// Runs `body` in one transaction: one commit (one fsync) for everything in it.
    func batch<T>(_ body: () throws(SQLiteError) -> T) throws(JobStoreError) -> T {
        do {
            return try database.transaction(body)
        } catch {
            throw JobStoreError(error)
        }
    }

    // MARK: - Writes (call inside `batch`)

    private static let columns = """
        id, service, owner, idempotency_key, priority, state, attempts, max_attempts, created_at, updated_at,
        started_at, finished_at, not_before, deadline, result_ttl, expires_at, sequence, request_bytes, last_error
        """

    func insert(_ record: JobRecord, request: [[UInt8]]) throws(SQLiteError) {
        let statement = try database.statement("""
            INSERT INTO jobs (\(Self.columns), request) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """)
        bind(record, to: statement)
        statement.bind(20, blob: FrameCoding.encode(request))
        try statement.run()
        lastSequence = max(lastSequence, record.sequence)
    }

    func nextSequence() -> Int64 {
        lastSequence += 1
        return lastSequence
    }

    /// Writes every field of `record`; the reply when given. A job that has ended no longer needs its
    /// request (no attempt is left to hand it to): it is dropped, its size kept in `request_bytes`.
    func update(_ record: JobRecord, reply: [[UInt8]]? = nil) throws(SQLiteError) {
        let statement = try database.statement("""
            UPDATE jobs SET state = ?, attempts = ?, updated_at = ?, started_at = ?, finished_at = ?, not_before = ?,
                expires_at = ?, last_error = ?, reply = COALESCE(?, reply), request = COALESCE(?, request) WHERE id = ?
            """)
        statement.bind(1, record.state.rawValue).bind(2, record.attempts).bind(3, record.updatedAt).bind(4, record.startedAt)
            .bind(5, record.finishedAt).bind(6, record.notBefore).bind(7, record.expiresAt).bind(8, blob: record.lastError)
            .bind(9, blob: reply.map(FrameCoding.encode)).bind(10, blob: record.state.isActive ? nil : JobRecord.endedRequest).bind(11, record.id)
        try statement.run()
    }

    func delete(id: String) throws(SQLiteError) {
        try database.statement("DELETE FROM jobs WHERE id = ?").bind(1, id).run()
    }

    /// Deletes finished jobs whose results have expired; returns how many.
    func sweep(now: Int64) throws(SQLiteError) -> Int {
        try database.statement("DELETE FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ?").bind(1, now).run()
        return database.changes
    }

    func rememberService(_ name: String, now: Int64) throws(SQLiteError) {
        try database.statement("INSERT OR IGNORE INTO services (name, first_seen) VALUES (?, ?)").bind(1, name).bind(2, now).run()
    }

    /// Jobs left `running` by a broker that stopped (or crashed) go back to the queue; returns every
    /// active job, oldest first.
    func recover(now: Int64) throws(SQLiteError) -> [JobRecord] {
        try database.statement("UPDATE jobs SET state = 'queued', updated_at = ? WHERE state = 'running'").bind(1, now).run()
        let statement = try database.statement("SELECT \(Self.columns) FROM jobs WHERE state IN ('queued', 'running') ORDER BY sequence")
        var records: [JobRecord] = []
        while try statement.step() { records.append(Self.record(from: statement)) }
        return records
    }

    // MARK: - Reads

    func record(id: String) throws(SQLiteError) -> JobRecord? {
        let statement = try database.statement("SELECT \(Self.columns) FROM jobs WHERE id = ?")
        defer { statement.reset() }
        statement.bind(1, id)
        return try statement.step() ? Self.record(from: statement) : nil
    }

    func record(owner: String, idempotencyKey: String) throws(SQLiteError) -> JobRecord? {
        let statement = try database.statement("SELECT \(Self.columns) FROM jobs WHERE owner = ? AND idempotency_key = ?")
        defer { statement.reset() }
        statement.bind(1, owner).bind(2, idempotencyKey)
        return try statement.step() ? Self.record(from: statement) : nil
    }

    func request(id: String) throws(SQLiteError) -> [[UInt8]]? {
        try frames(in: "SELECT request FROM jobs WHERE id = ?", id: id)
    }

    func reply(id: String) throws(SQLiteError) -> [[UInt8]]? {
        try frames(in: "SELECT reply FROM jobs WHERE id = ?", id: id)
    }

    /// The frames stored in the one blob column `sql` selects for job `id`.
    private func frames(in sql: String, id: String) throws(SQLiteError) -> [[UInt8]]? {
        let statement = try database.statement(sql)
        defer { statement.reset() }
        statement.bind(1, id)
        guard try statement.step(), let blob = statement.blob(0) else { return nil }
        return FrameCoding.decode(blob)
    }

    func knownServices() throws(SQLiteError) -> [String] {
        let statement = try database.statement("SELECT name FROM services")
        defer { statement.reset() }
        var names: [String] = []
        while try statement.step() { if let name = statement.text(0) { names.append(name) } }
        return names
    }

    // MARK: - Rows

    private func bind(_ r: JobRecord, to s: SQLiteStatement) {
        s.bind(1, r.id).bind(2, r.service).bind(3, r.owner).bind(4, r.idempotencyKey).bind(5, r.priority.rawValue)
            .bind(6, r.state.rawValue).bind(7, r.attempts).bind(8, r.maxAttempts).bind(9, r.createdAt).bind(10, r.updatedAt)
            .bind(11, r.startedAt).bind(12, r.finishedAt).bind(13, r.notBefore).bind(14, r.deadline).bind(15, r.resultTTL)
            .bind(16, r.expiresAt).bind(17, r.sequence).bind(18, r.requestBytes).bind(19, blob: r.lastError)
    }

    private static func record(from s: SQLiteStatement) -> JobRecord {
        JobRecord(
            id: s.text(0) ?? "", service: s.text(1) ?? "", owner: s.text(2) ?? "", idempotencyKey: s.text(3),
            priority: JobPriority(rawValue: Int(s.int(4))) ?? .normal, state: JobState(rawValue: s.text(5) ?? "") ?? .queued,
            attempts: Int(s.int(6)), maxAttempts: Int(s.int(7)), createdAt: s.int(8), updatedAt: s.int(9),
            startedAt: s.optionalInt(10), finishedAt: s.optionalInt(11), notBefore: s.int(12), deadline: s.optionalInt(13),
            resultTTL: s.int(14), expiresAt: s.optionalInt(15), sequence: s.int(16), requestBytes: Int(s.int(17)),
            lastError: s.blob(18))
    }
}

/// Frames in one blob: a 4-byte big-endian count, then each frame as a 4-byte length and its bytes.
enum FrameCoding {
    static func encode(_ frames: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 + frames.reduce(0) { $0 + 4 + $1.count })
        append(UInt32(frames.count), to: &out)
        for frame in frames {
            append(UInt32(frame.count), to: &out)
            out.append(contentsOf: frame)
        }
        return out
    }

    static func decode(_ blob: [UInt8]) -> [[UInt8]]? {
        var index = 0
        func read() -> Int? {
            guard index + 4 <= blob.count else { return nil }
            let value = blob[index..<index + 4].reduce(0) { ($0 << 8) | Int($1) }
            index += 4
            return value
        }
        guard let count = read() else { return nil }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(min(count, 1_024))
        for _ in 0..<count {
            guard let length = read(), index + length <= blob.count else { return nil }
            frames.append(Array(blob[index..<index + length]))
            index += length
        }
        return index == blob.count ? frames : nil
    }

    private static func append(_ value: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(value >> 24)); out.append(UInt8((value >> 16) & 0xff))
        out.append(UInt8((value >> 8) & 0xff)); out.append(UInt8(value & 0xff))
    }
}
