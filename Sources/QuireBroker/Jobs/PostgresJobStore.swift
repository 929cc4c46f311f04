import Foundation
import QuireStats
import QuireSupport
import QuireWire

/// The durable job store in PostgreSQL: the store several brokers, on several machines, serve at the
/// same time, so that losing any broker's machine loses no accepted job (with synchronous replication,
/// not even the database's).
///
/// The store owns the jobs; each broker holds in memory only what its own workers run. A broker claims
/// queued jobs when its workers are idle (`FOR UPDATE SKIP LOCKED`: two brokers claiming at once take
/// different jobs), each claim a lease in the row that it renews while it holds the job. It writes an
/// attempt's outcome fenced by the attempt number (`WHERE id = … AND attempts = … AND state =
/// 'running'`): a broker cut off past its lease, whose job another broker took, cannot overwrite the
/// newer attempt. Any broker's pass over the store (``maintain(now:)``) queues again what a silent
/// broker held. Job order comes from the store's sequence, idempotency keys from its unique index.
/// Commits notify the other brokers (`NOTIFY quire_jobs`): work to claim, jobs finished.
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
        // Brokers serving the store together: claims with leases, job order from the store. Jobs a
        // broker of schema 1 left running have no lease: the first pass queues them again.
        """
        CREATE SEQUENCE quire_job_sequence;
        SELECT setval('quire_job_sequence', (SELECT COALESCE(MAX(sequence), 0) + 1 FROM quire_jobs), false);
        ALTER TABLE quire_jobs ADD COLUMN lease_until bigint, ADD COLUMN claimed_by text;
        UPDATE quire_jobs SET lease_until = 0 WHERE state = 'running';
        CREATE INDEX quire_jobs_ready ON quire_jobs (service, priority, sequence) WHERE state = 'queued';
        CREATE INDEX quire_jobs_leases ON quire_jobs (lease_until) WHERE state = 'running';
        CREATE INDEX quire_jobs_deadlines ON quire_jobs (deadline) WHERE state = 'queued' AND deadline IS NOT NULL;
        """,
    ]

    /// The channel commits notify on; the payload names the schema first, since brokers of other
    /// schemas of the database hear it too: `<schema> work <service>` or `<schema> done <job id>`.
    static let channel = "quire_jobs"

    private var connection: PostgresConnection
    /// The store's connection string, for the connection that listens (``StoreListener``).
    let connectionString: String
    /// Where the store is, for logs (no password).
    let location: String
    /// This broker in the rows it claims (`claimed_by`): its host, process and a random part.
    let brokerID: String
    /// The schema the store lives in (the first of the search path).
    private(set) var schema = ""

    /// The server process of this store's session.
    var serverProcess: Int32 { connection.serverProcess }

    /// Connects, and migrates the schema to this broker's version (refusing a newer one).
    init(connectionString: String) throws(JobStoreError) {
        connection = try Self.connect(connectionString)
        location = connection.location
        self.connectionString = connectionString
        // The host's own name (gethostname: no DNS lookup at start), the process and a random part.
        var host = [UInt8](repeating: 0, count: 256)
        let named = host.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, $0.count - 1) == 0 }
        }
        let hostName = named ? String(decoding: host.prefix { $0 != 0 }, as: UTF8.self) : "?"
        var random = SystemRandomNumberGenerator()
        brokerID = "\(hostName) \(getpid()) \(String(UInt32.random(in: 0...UInt32.max, using: &random), radix: 16))"
        do {
            try migrate()
            schema = try connection.query("SELECT current_schema()::text").text(0, 0) ?? ""
        } catch {
            throw JobStoreError(error)
        }
    }

    /// After the connection was lost: a new one. The jobs this broker held stay its own while their
    /// leases last; its writes about them are fenced.
    func reopen() throws(JobStoreError) {
        connection = try Self.connect(connectionString)
    }

    private static func connect(_ connectionString: String) throws(JobStoreError) -> PostgresConnection {
        do {
            return try PostgresConnection(connectionString, applicationName: "quire broker")
        } catch {
            throw JobStoreError(error)
        }
    }

    /// The advisory lock brokers take while they migrate ("QUIR"; the second key is the schema's name
    /// hashed, so that brokers of other schemas wait on none of them).
    static let migrationLock: Int64 = 0x5155_4952

    private func migrate() throws(PostgresError) {
        try connection.transaction { () throws(PostgresError) in
            // Brokers starting together migrate one at a time: even `CREATE TABLE IF NOT EXISTS` may fail
            // when two sessions run it at once. The lock ends with the transaction.
            try connection.query("SELECT pg_advisory_xact_lock($1::bigint::int4, hashtext(current_schema()))", [.int(Self.migrationLock)])
            try connection.execute("CREATE TABLE IF NOT EXISTS quire_schema (version bigint NOT NULL)")
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

    /// The machine a broker starts with: no job of its own (the store holds them, and other brokers may
    /// be running some), the services ever seen. Jobs a stopped broker left running go back to the
    /// queue when their lease runs out (``maintain(now:)``).
    func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine {
        do {
            let names = try connection.query("SELECT name FROM quire_services")
            let services = (0..<names.count).compactMap { names.text($0, 0) }
            return JobMachine(configuration: configuration, recovered: [], knownServices: services, lastSequence: 0, now: now)
        } catch {
            throw JobStoreError(error)
        }
    }

    /// Writes the batches, in order, in one transaction (one commit: with synchronous replication,
    /// on the standby too before it returns). The statements go to the server in a pipeline. Fenced
    /// updates that find their row changed, and new jobs whose key another broker's job took first,
    /// are not written; the outcome names them. The other brokers are notified at the commit.
    @discardableResult
    func write(_ batches: [JobBatch]) throws(JobStoreError) -> JobWriteOutcome {
        enum Check { case none, fenced(String), keyed(JobRecord) }
        var statements: [(sql: String, parameters: [PostgresValue])] = []
        var checks: [Check] = []
        var notices: Set<String> = []
        func add(_ sql: String, _ parameters: [PostgresValue], _ check: Check = .none) {
            statements.append((sql, parameters))
            checks.append(check)
        }
        for changes in batches {
            for change in changes.rowChanges {
                switch change {
                case .service(let name):
                    add("INSERT INTO quire_services (name, first_seen) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.text(name), .int(changes.now)])
                case .delete(let id):
                    add("DELETE FROM quire_jobs WHERE id = $1", [.text(id)])
                    notices.insert("done " + id)
                case .insert(let insert):
                    add("INSERT INTO quire_jobs (\(Self.insertColumns), request, sequence) VALUES (\(Self.placeholders(19)), nextval('quire_job_sequence')) "
                        + "ON CONFLICT (owner, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING",
                        Self.insertValues(insert.record) + [.bytes(FrameCoding.encode(insert.request))], .keyed(insert.record))
                    notices.insert("work " + insert.record.service)
                case .update(let update):
                    let r = update.record
                    var sql = """
                        UPDATE quire_jobs SET state = $1, attempts = $2, updated_at = $3, started_at = $4, finished_at = $5, not_before = $6,
                            expires_at = $7, last_error = $8, reply = COALESCE($9, reply), request = COALESCE($10, request),
                            lease_until = NULL, claimed_by = NULL WHERE id = $11
                        """
                    // A job that has ended no longer needs its request (``JobRecord/endedRequest``).
                    var parameters: [PostgresValue] = [
                        .text(r.state.rawValue), .int(r.attempts), .int(r.updatedAt), .int(r.startedAt), .int(r.finishedAt), .int(r.notBefore),
                        .int(r.expiresAt), .bytes(r.lastError), .bytes(update.reply.map(FrameCoding.encode)),
                        .bytes(r.state.isActive ? nil : JobRecord.endedRequest), .text(r.id),
                    ]
                    switch update.fence {
                    case .none: break
                    case .attempt(let attempt):
                        sql += " AND attempts = $12 AND state = 'running'"
                        parameters.append(.int(attempt))
                    case .active:
                        sql += " AND state IN ('queued', 'running')"
                    }
                    add(sql, parameters, update.fence == .none ? .none : .fenced(r.id))
                    notices.insert(r.state.isActive ? "work " + r.service : "done " + r.id)
                }
            }
        }
        guard !statements.isEmpty else { return JobWriteOutcome() }
        for notice in notices.sorted() {
            add("SELECT pg_notify($1, $2)", [.text(Self.channel), .text(schema + " " + notice)])
        }
        do {
            return try connection.transaction { () throws(PostgresError) -> JobWriteOutcome in
                let results = try connection.pipeline(statements)
                var outcome = JobWriteOutcome()
                for (check, rows) in zip(checks, results) {
                    switch check {
                    case .none: break
                    case .fenced(let id):
                        if rows.affected == 0 { outcome.refused.insert(id) }
                    case .keyed(let record):
                        // Another broker's job took the key first (its commit came while this one waited).
                        guard rows.affected == 0, let key = record.idempotencyKey else { continue }
                        let existing = try connection.query("SELECT id FROM quire_jobs WHERE owner = $1 AND idempotency_key = $2",
                                                            [.text(record.owner), .text(key)])
                        if let id = existing.text(0, 0) { outcome.merged[record.id] = id }
                    }
                }
                return outcome
            }
        } catch {
            throw JobStoreError(error)
        }
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

    // MARK: - Claims and leases

    func claim(_ claim: JobClaim) throws(JobStoreError) -> [ClaimedJob] {
        let sql = """
            UPDATE quire_jobs j SET state = 'running', attempts = j.attempts + 1, started_at = $2, updated_at = $2, lease_until = $3, claimed_by = $4
            FROM (SELECT id FROM quire_jobs WHERE service = $1 AND state = 'queued' AND not_before <= $2 AND (deadline IS NULL OR deadline > $2)
                  ORDER BY priority, sequence LIMIT $5 FOR UPDATE SKIP LOCKED) c
            WHERE j.id = c.id
            RETURNING \(Self.columns.split(separator: ",").map { "j." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")), j.request
            """
        do {
            let rows = try connection.query(sql, [.text(claim.service), .int(claim.now), .int(claim.until), .text(brokerID), .int(claim.count)])
            let jobs = (0..<rows.count).map { row in
                ClaimedJob(record: Self.record(rows, row), request: rows.bytes(row, Self.columnCount).flatMap(FrameCoding.decode) ?? [])
            }
            return jobs.sorted { ($0.record.priority.rawValue, $0.record.sequence) < ($1.record.priority.rawValue, $1.record.sequence) }
        } catch {
            throw JobStoreError(error)
        }
    }

    func renew(_ ids: [String], until: Int64) throws(JobStoreError) -> Set<String> {
        guard !ids.isEmpty else { return [] }
        do {
            // The ids travel as one text parameter, split by the server: job ids are hexadecimal.
            let rows = try connection.query(
                "UPDATE quire_jobs SET lease_until = $1 WHERE state = 'running' AND claimed_by = $2 AND id = ANY(string_to_array($3, ',')) RETURNING id",
                [.int(until), .text(brokerID), .text(ids.joined(separator: ","))])
            return Set((0..<rows.count).compactMap { rows.text($0, 0) })
        } catch {
            throw JobStoreError(error)
        }
    }

    func maintain(now: Int64) throws(JobStoreError) -> JobMaintenance {
        let silent = WireError(.timeout, "the broker that held the job stopped renewing its lease")
        let dead = WireError(.jobDead, JobMaintenance.deadOfSilence)
        let late = WireError(.deadlineExceeded, "the job's deadline passed before it finished")
        do {
            return try connection.transaction { () throws(PostgresError) -> JobMaintenance in
                var found = JobMaintenance()
                let expired = try connection.query("""
                    UPDATE quire_jobs SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, updated_at = $1,
                        finished_at = CASE WHEN attempts >= max_attempts THEN $1 END,
                        expires_at = CASE WHEN attempts >= max_attempts THEN $1 + result_ttl END,
                        last_error = CASE WHEN attempts >= max_attempts THEN $3 ELSE $2 END, lease_until = NULL, claimed_by = NULL,
                        request = CASE WHEN attempts >= max_attempts THEN $4 ELSE request END
                    WHERE state = 'running' AND lease_until < $1
                    RETURNING id, service, state
                    """, [.int(now), .bytes(silent.jsonFrame), .bytes(dead.jsonFrame), .bytes(JobRecord.endedRequest)])
                for row in 0..<expired.count {
                    guard let id = expired.text(row, 0), let service = expired.text(row, 1) else { continue }
                    found.leasesExpired[service, default: 0] += 1
                    if expired.text(row, 2) == JobState.dead.rawValue {
                        found.finished.append(id)
                        found.dead[id] = service
                    }
                }
                let late = try connection.query("""
                    UPDATE quire_jobs SET state = 'expired', updated_at = $1, finished_at = $1, expires_at = $1 + result_ttl, last_error = $2,
                        request = $3
                    WHERE state = 'queued' AND deadline <= $1 RETURNING id
                    """, [.int(now), .bytes(late.jsonFrame), .bytes(JobRecord.endedRequest)])
                found.finished += (0..<late.count).compactMap { late.text($0, 0) }
                let depth = try connection.query("SELECT service, priority, count(*) FROM quire_jobs WHERE state = 'queued' GROUP BY service, priority")
                for row in 0..<depth.count {
                    guard let service = depth.text(row, 0) else { continue }
                    let priority = JobPriority(rawValue: Int(depth.int(row, 1) ?? 1)) ?? .normal
                    found.depth[service, default: PriorityDepth()].add(priority, Int(depth.int(row, 2) ?? 0))
                }
                let names = try connection.query("SELECT name FROM quire_services")
                found.services = Set((0..<names.count).compactMap { names.text($0, 0) })
                var notices = found.finished.map { "done " + $0 }
                notices += found.leasesExpired.keys.map { "work " + $0 }
                for notice in notices {
                    try connection.query("SELECT pg_notify($1, $2)", [.text(Self.channel), .text(schema + " " + notice)])
                }
                return found
            }
        } catch {
            throw JobStoreError(error)
        }
    }

    // MARK: - Rows

    private static let columns = """
        id, service, owner, idempotency_key, priority, state, attempts, max_attempts, created_at, updated_at,
        started_at, finished_at, not_before, deadline, result_ttl, expires_at, sequence, request_bytes, last_error
        """

    private static let columnCount = 19

    /// A new row's columns but its sequence, which the store's sequence gives.
    private static let insertColumns = """
        id, service, owner, idempotency_key, priority, state, attempts, max_attempts, created_at, updated_at,
        started_at, finished_at, not_before, deadline, result_ttl, expires_at, request_bytes, last_error
        """

    private static func placeholders(_ count: Int) -> String { (1...count).map { "$\($0)" }.joined(separator: ", ") }

    private static func insertValues(_ r: JobRecord) -> [PostgresValue] {
        [.text(r.id), .text(r.service), .text(r.owner), .text(r.idempotencyKey), .int(r.priority.rawValue), .text(r.state.rawValue),
         .int(r.attempts), .int(r.maxAttempts), .int(r.createdAt), .int(r.updatedAt), .int(r.startedAt), .int(r.finishedAt),
         .int(r.notBefore), .int(r.deadline), .int(r.resultTTL), .int(r.expiresAt), .int(r.requestBytes), .bytes(r.lastError)]
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

    /// The server's transaction ids assigned so far (one per transaction that wrote: the next id,
    /// `pg_current_snapshot`'s xmax) and its WAL position in bytes (`pg_current_wal_lsn`): both exact at
    /// once, where the statistics views lag by up to 10 s. nil where they cannot be read.
    public func statistics() -> (commits: Int64, walBytes: Int64)? {
        guard let row = try? admin.query("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint, "
                                         + "pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"),
              let transactions = row.int(0, 0), let wal = row.int(0, 1) else { return nil }
        return (transactions, wal)
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
