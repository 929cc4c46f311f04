import Foundation
import QuireSupport

/// The durable job store in PostgreSQL: the store several machines can reach, so that losing the
/// broker's machine loses no accepted job (with synchronous replication, not even the database's).
///
/// One broker serves a store at a time: it holds a session advisory lock for as long as its connection
/// lives, and every write goes through that connection. A second broker started on the same store waits
/// as a standby until the lock is free (the first stopped, crashed, or its session was ended), then
/// recovers the jobs and serves. A broker that loses its connection has lost the lock with it
/// (``JobStoreError/Kind/lost``): it cannot tell whether its last commit landed, and another broker may
/// already be serving, so it drops every job it held in memory, pauses durable jobs, and starts over
/// from the store once it is back and its own again (``reopen(keepWaiting:onWait:)``). That is the
/// fence: no write of a broker cut off can land after another broker took over, since its writes went
/// through the session that ended.
final class PostgresJobStore: JobStorage {
    /// Every migration, in order; `quire_schema.version` is the number applied. Never edit one that shipped.
    static let migrations: [String] = [
        """
        CREATE TABLE quire_jobs (
            id text PRIMARY KEY,
            service text NOT NULL,
            owner text NOT NULL,
            idempotency_key text,
            priority bigint NOT NULL,
            state text NOT NULL,
            attempts bigint NOT NULL,
            max_attempts bigint NOT NULL,
            created_at bigint NOT NULL,
            updated_at bigint NOT NULL,
            started_at bigint,
            finished_at bigint,
            not_before bigint NOT NULL,
            deadline bigint,
            result_ttl bigint NOT NULL,
            expires_at bigint,
            sequence bigint NOT NULL,
            request_bytes bigint NOT NULL,
            request bytea NOT NULL,
            reply bytea,
            last_error bytea
        );
        CREATE UNIQUE INDEX quire_jobs_idempotency ON quire_jobs (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
        CREATE INDEX quire_jobs_active ON quire_jobs (state) WHERE state IN ('queued', 'running');
        CREATE INDEX quire_jobs_expiry ON quire_jobs (expires_at) WHERE expires_at IS NOT NULL;
        CREATE TABLE quire_services (name text PRIMARY KEY, first_seen bigint NOT NULL);
        """,
    ]

    /// The advisory lock's first key ("QUIR"); the second is the schema's name hashed, so deployments
    /// in different schemas of one database each have their broker.
    static let lockClass: Int64 = 0x5155_4952

    private var connection: PostgresConnection
    private let connectionString: String
    /// Where the store is, for logs (no password).
    let location: String
    private(set) var lastSequence: Int64 = 0

    /// The server process of this store's session, whose end is the end of its lock.
    var serverProcess: Int32 { connection.serverProcess }

    /// Connects; nothing is read or written before ``takeOver(interval:keepWaiting:onWait:)``.
    init(connectionString: String) throws(JobStoreError) {
        connection = try Self.connect(connectionString)
        location = connection.location
        self.connectionString = connectionString
    }

    /// After the connection was lost: a new one, which takes the store over as at start (a standby
    /// while another broker serves it). The jobs are then recovered as at start.
    func reopen(keepWaiting: () -> Bool, onWait: () -> Void) throws(JobStoreError) -> Bool {
        connection = try Self.connect(connectionString)
        return try takeOver(keepWaiting: keepWaiting, onWait: onWait)
    }

    private static func connect(_ connectionString: String) throws(JobStoreError) -> PostgresConnection {
        do {
            return try PostgresConnection(connectionString, applicationName: "quire broker")
        } catch {
            throw JobStoreError(error)
        }
    }

    /// Waits until this broker holds the store's lock (polling every `interval` while `keepWaiting()`
    /// says so; `onWait` is told once, when another broker holds it), then migrates the schema.
    /// Returns false when it stopped waiting.
    func takeOver(interval: Milliseconds = 500, keepWaiting: () -> Bool, onWait: () -> Void) throws(JobStoreError) -> Bool {
        var told = false
        do {
            while true {
                let rows = try connection.query(
                    "SELECT pg_try_advisory_lock($1::bigint::int4, hashtext(current_schema()))", [.int(Self.lockClass)])
                if rows.bool(0, 0) == true { break }
                if !told { onWait(); told = true }
                guard keepWaiting() else { return false }
                Thread.sleep(forTimeInterval: Double(interval.value) / 1_000)
                guard keepWaiting() else { return false }
            }
            try migrate()
            lastSequence = try connection.query("SELECT COALESCE(MAX(sequence), 0) FROM quire_jobs").int(0, 0) ?? 0
        } catch {
            throw JobStoreError(error)
        }
        return true
    }

    private func migrate() throws(PostgresError) {
        try connection.execute("CREATE TABLE IF NOT EXISTS quire_schema (version bigint NOT NULL)")
        try connection.transaction { () throws(PostgresError) in
            // Brokers of other schemas may migrate theirs at the same moment; this one's waits on none of them.
            try connection.execute("LOCK TABLE quire_schema IN EXCLUSIVE MODE")
            let version = Int(try connection.query("SELECT COALESCE(MAX(version), 0) FROM quire_schema").int(0, 0) ?? 0)
            guard version <= Self.migrations.count else {
                throw PostgresError(sqlState: nil, message: "the job store has schema version \(version), newer than this broker's \(Self.migrations.count)",
                                    operation: "migrate", connectionLost: false)
            }
            for index in version..<Self.migrations.count {
                try connection.execute(Self.migrations[index])
            }
            if version < Self.migrations.count {
                try connection.query("DELETE FROM quire_schema")
                try connection.query("INSERT INTO quire_schema (version) VALUES ($1)", [.int(Self.migrations.count)])
            }
        }
    }

    var schemaVersion: Int {
        Int((try? connection.query("SELECT COALESCE(MAX(version), 0) FROM quire_schema").int(0, 0)) ?? 0)
    }

    // MARK: - JobStorage

    func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine {
        do {
            let (records, services) = try connection.transaction { () throws(PostgresError) -> ([JobRecord], [String]) in
                try connection.query("UPDATE quire_jobs SET state = 'queued', updated_at = $1 WHERE state = 'running'", [.int(now)])
                let rows = try connection.query("SELECT \(Self.columns) FROM quire_jobs WHERE state IN ('queued', 'running') ORDER BY sequence")
                let names = try connection.query("SELECT name FROM quire_services")
                return ((0..<rows.count).map { Self.record(rows, $0) }, (0..<names.count).compactMap { names.text($0, 0) })
            }
            return JobMachine(configuration: configuration, recovered: records, knownServices: services, lastSequence: lastSequence, now: now)
        } catch {
            throw JobStoreError(error)
        }
    }

    /// Writes the batches, in order, in one transaction (one commit: with synchronous replication,
    /// on the standby too before it returns). The statements go to the server in a pipeline.
    func write(_ batches: [JobBatch]) throws(JobStoreError) {
        var statements: [(sql: String, parameters: [PostgresValue])] = []
        var sequence = lastSequence
        for changes in batches {
            for change in changes.rowChanges {
                switch change {
                case .service(let name):
                    statements.append(("INSERT INTO quire_services (name, first_seen) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.text(name), .int(changes.now)]))
                case .delete(let id):
                    statements.append(("DELETE FROM quire_jobs WHERE id = $1", [.text(id)]))
                case .insert(let insert):
                    statements.append(("INSERT INTO quire_jobs (\(Self.columns), request) VALUES (\(Self.placeholders(20)))",
                                       Self.values(insert.record) + [.bytes(FrameCoding.encode(insert.request))]))
                    sequence = max(sequence, insert.record.sequence)
                case .update(let update):
                    let r = update.record
                    statements.append(("""
                        UPDATE quire_jobs SET state = $1, attempts = $2, updated_at = $3, started_at = $4, finished_at = $5, not_before = $6,
                            expires_at = $7, last_error = $8, reply = COALESCE($9, reply) WHERE id = $10
                        """, [.text(r.state.rawValue), .int(r.attempts), .int(r.updatedAt), .int(r.startedAt), .int(r.finishedAt),
                              .int(r.notBefore), .int(r.expiresAt), .bytes(r.lastError), .bytes(update.reply.map(FrameCoding.encode)), .text(r.id)]))
                }
            }
        }
        guard !statements.isEmpty else { return }
        do {
            try connection.transaction { () throws(PostgresError) in try connection.pipeline(statements) }
        } catch {
            throw JobStoreError(error)
        }
        lastSequence = sequence
    }

    func load(_ load: JobLoad) -> JobLoad.Result {
        do {
            switch load {
            case .key(let owner, let key, _):
                return .record(try record(where: "owner = $1 AND idempotency_key = $2", [.text(owner), .text(key)]))
            case .job(let id, _):
                return .record(try record(where: "id = $1", [.text(id)]))
            case .reply(let job, _):
                return .frames(try frames("reply", id: job.id))
            case .request(let id):
                return .frames(try frames("request", id: id))
            }
        } catch {
            return .failed(JobStoreError(error))
        }
    }

    func sweepExpired(now: Int64) throws(JobStoreError) -> Int {
        do {
            return try connection.query("DELETE FROM quire_jobs WHERE expires_at IS NOT NULL AND expires_at <= $1", [.int(now)]).affected
        } catch {
            throw JobStoreError(error)
        }
    }

    // MARK: - Rows

    private static let columns = """
        id, service, owner, idempotency_key, priority, state, attempts, max_attempts, created_at, updated_at,
        started_at, finished_at, not_before, deadline, result_ttl, expires_at, sequence, request_bytes, last_error
        """

    private static func placeholders(_ count: Int) -> String { (1...count).map { "$\($0)" }.joined(separator: ", ") }

    private static func values(_ r: JobRecord) -> [PostgresValue] {
        [.text(r.id), .text(r.service), .text(r.owner), .text(r.idempotencyKey), .int(r.priority.rawValue), .text(r.state.rawValue),
         .int(r.attempts), .int(r.maxAttempts), .int(r.createdAt), .int(r.updatedAt), .int(r.startedAt), .int(r.finishedAt),
         .int(r.notBefore), .int(r.deadline), .int(r.resultTTL), .int(r.expiresAt), .int(r.sequence), .int(r.requestBytes), .bytes(r.lastError)]
    }

    private func record(where condition: String, _ parameters: [PostgresValue]) throws(PostgresError) -> JobRecord? {
        let rows = try connection.query("SELECT \(Self.columns) FROM quire_jobs WHERE \(condition)", parameters)
        return rows.count > 0 ? Self.record(rows, 0) : nil
    }

    private func frames(_ column: String, id: String) throws(PostgresError) -> [[UInt8]]? {
        let rows = try connection.query("SELECT \(column) FROM quire_jobs WHERE id = $1", [.text(id)])
        guard rows.count > 0, let blob = rows.bytes(0, 0) else { return nil }
        return FrameCoding.decode(blob)
    }

    private static func record(_ s: PostgresRows, _ row: Int) -> JobRecord {
        func int(_ column: Int) -> Int64 { s.int(row, column) ?? 0 }
        return JobRecord(
            id: s.text(row, 0) ?? "", service: s.text(row, 1) ?? "", owner: s.text(row, 2) ?? "", idempotencyKey: s.text(row, 3),
            priority: JobPriority(rawValue: Int(int(4))) ?? .normal, state: JobState(rawValue: s.text(row, 5) ?? "") ?? .queued,
            attempts: Int(int(6)), maxAttempts: Int(int(7)), createdAt: int(8), updatedAt: int(9),
            startedAt: s.int(row, 10), finishedAt: s.int(row, 11), notBefore: int(12), deadline: s.int(row, 13),
            resultTTL: int(14), expiresAt: s.int(row, 15), sequence: int(16), requestBytes: Int(int(17)),
            lastError: s.bytes(row, 18))
    }
}

extension JobStoreError {
    init(_ error: PostgresError) {
        kind = error.connectionLost ? .lost : error.isFull ? .full : error.isReadOnly ? .readOnly : error.isBusy ? .busy : .other
        message = error.description
    }
}

/// A schema of its own in a PostgreSQL database, dropped with everything in it by ``drop()``: a fresh,
/// empty store for one benchmark run or one test, beside whatever else the database holds.
public final class PostgresScratchSchema {
    public let name: String
    /// The store's URI: the server's, with this schema first in the search path.
    public let uri: String
    private let admin: PostgresConnection
    private var dropped = false

    /// Creates the schema `prefix_<random hex>` on the server `server` names (a `postgresql://` URI).
    public init(server: String, prefix: String) throws(JobStoreError) {
        name = prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        uri = server + (server.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(name)"
        do {
            admin = try PostgresConnection(server, applicationName: "quire scratch")
            try admin.execute("CREATE SCHEMA \(name)")
        } catch {
            throw JobStoreError(error)
        }
    }

    /// The bytes the schema's tables take on the server (their TOAST and indexes included).
    public func bytes() -> Int64 {
        let sql = "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            + "WHERE n.nspname = $1 AND c.relkind = 'r'"
        return (try? admin.query(sql, [.text(name)]).int(0, 0)) ?? 0
    }

    /// Runs SQL as the schema's creator, on a connection of its own.
    func execute(_ sql: String) throws(PostgresError) { try admin.execute(sql) }

    public func drop() {
        guard !dropped else { return }
        dropped = true
        try? admin.execute("DROP SCHEMA \(name) CASCADE")
    }

    deinit { drop() }
}
