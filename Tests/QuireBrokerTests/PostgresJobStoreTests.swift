import Foundation
import QuireSupport
import Testing

@testable import QuireBroker

/// A schema of its own on the test server (`QUIRE_TEST_POSTGRES`, which `scripts/test` starts with
/// `scripts/test-postgres`), dropped when done: every test's store starts empty, and tests run in
/// parallel without seeing each other's jobs or locks.
final class TestSchema {
    let scratch: PostgresScratchSchema
    var name: String { scratch.name }
    var uri: String { scratch.uri }

    init() throws {
        guard let server = ProcessInfo.processInfo.environment["QUIRE_TEST_POSTGRES"], !server.isEmpty else {
            throw JobStoreError(kind: .other, message: "QUIRE_TEST_POSTGRES is not set: run the tests with scripts/test, which starts a PostgreSQL server for them (scripts/test-postgres)")
        }
        scratch = try PostgresScratchSchema(server: server, prefix: "test")
    }

    /// A store on the schema, as a broker that serves it opens it (migrated at once).
    func servingStore() throws -> PostgresJobStore {
        try PostgresJobStore(connectionString: uri)
    }

    /// Runs SQL on the server as the test's administrator (not the store's connection).
    func execute(_ sql: String) throws { try scratch.execute(sql) }
}

@Suite("PostgreSQL job store: brokers serve it together, claims never overlap, a lost connection says so")
struct PostgresJobStoreTests {
    func record(_ id: String, sequence: Int64) -> JobRecord {
        JobRecord(id: id, service: "ocr", owner: "", idempotencyKey: nil, priority: .normal, state: .queued, attempts: 0, maxAttempts: 3,
                  createdAt: 1_000, updatedAt: 1_000, startedAt: nil, finishedAt: nil, notBefore: 1_000, deadline: nil, resultTTL: 60_000,
                  expiresAt: nil, sequence: sequence, requestBytes: 1, lastError: nil)
    }

    func batch(_ records: JobRecord...) -> [JobBatch] {
        var batch = JobBatch()
        batch.now = 1_000
        batch.inserts = records.map { JobBatch.Insert(record: $0, request: [[0, 1, 2], []], submitters: []) }
        return [batch]
    }

    /// Queued jobs in the store, as a broker's pass counts them.
    func queued(_ store: PostgresJobStore) throws -> Int {
        try store.maintain(now: 1_000).depth.values.reduce(0) { $0 + $1.total }
    }

    @Test("brokers claiming at the same moment take different jobs (SKIP LOCKED), and together every one")
    func concurrentClaims() async throws {
        let schema = try TestSchema()
        let writer = try schema.servingStore()
        var many = JobBatch()
        many.now = 1_000
        many.inserts = (1...200).map { JobBatch.Insert(record: record("job-\($0)", sequence: 0), request: [[1]], submitters: []) }
        try writer.write([many])
        let uri = schema.uri
        // Four brokers, each claiming 10 at a time on its own connection and thread until none is left.
        let taken = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let store = try PostgresJobStore(connectionString: uri)
                    var mine: [String] = []
                    while true {
                        let jobs = try store.claim(JobClaim(service: "ocr", count: 10, now: 2_000, until: 60_000))
                        if jobs.isEmpty { return mine }
                        #expect(jobs.allSatisfy { $0.record.state == .running && $0.record.attempts == 1 && $0.request == [[1]] })
                        mine += jobs.map(\.record.id)
                    }
                }
            }
            var all: [[String]] = []
            for try await ids in group { all.append(ids) }
            return all
        }
        let every = taken.flatMap { $0 }
        #expect(every.count == 200, "no job claimed twice")
        #expect(Set(every) == Set((1...200).map { "job-\($0)" }), "every job claimed")
        #expect(try queued(writer) == 0)
    }

    @Test("brokers starting at the same moment on an empty schema migrate it once, one after the other")
    func migrateTogether() async throws {
        let schema = try TestSchema()
        let uri = schema.uri
        let versions = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try PostgresJobStore(connectionString: uri).schemaVersion } }
            var all: [Int] = []
            for try await version in group { all.append(version) }
            return all
        }
        #expect(versions == Array(repeating: PostgresJobStore.migrations.count, count: 4))
    }

    @Test("stores in different schemas of one database are served by brokers of their own")
    func schemasApart() throws {
        let one = try TestSchema()
        let two = try TestSchema()
        let a = try one.servingStore()
        let b = try two.servingStore()
        try a.write(batch(record("in-one", sequence: 1)))
        #expect(try b.claim(JobClaim(service: "ocr", count: 10, now: 2_000, until: 60_000)).isEmpty)
        #expect(try a.claim(JobClaim(service: "ocr", count: 10, now: 2_000, until: 60_000)).map(\.record.id) == ["in-one"])
    }

    @Test("a connection the server ends is a lost store: writes, reads and sweeps say so, and nothing lands")
    func lostConnection() throws {
        let schema = try TestSchema()
        let store = try schema.servingStore()
        try store.write(batch(record("before", sequence: 1)))
        // The server ends the store's session (an administrator, a failover, a network cut noticed).
        try schema.execute("SELECT pg_terminate_backend(\(store.serverProcess))")
        var failure: JobStoreError?
        do {
            try store.write(batch(record("after", sequence: 2)))
        } catch {
            failure = error
        }
        #expect(failure?.kind == .lost)
        if case .failed(let error) = store.load(.request(id: "before")) { #expect(error.kind == .lost) } else { Issue.record("the read did not fail") }
        #expect(throws: JobStoreError.self) { try store.sweepExpired(now: 5_000) }

        let next = try schema.servingStore()
        #expect(try next.claim(JobClaim(service: "ocr", count: 10, now: 2_000, until: 60_000)).map(\.record.id) == ["before"],
                "the write after the loss did not land")
    }

    @Test("the schema is migrated once, recorded, and a newer schema than the broker knows is refused")
    func migrations() throws {
        let schema = try TestSchema()
        do {
            let store = try schema.servingStore()
            #expect(store.schemaVersion == PostgresJobStore.migrations.count)
        }
        #expect(try schema.servingStore().schemaVersion == PostgresJobStore.migrations.count, "a second start changes nothing")
        // A newer broker migrated the store since: this one must not write a schema it does not know.
        try schema.execute("UPDATE \(schema.name).quire_schema SET version = 99")
        #expect(throws: JobStoreError.self) { _ = try schema.servingStore() }
    }

    @Test("values travel as they are: any bytes in frames, quotes and non-ASCII in text, 64-bit numbers")
    func values() throws {
        let schema = try TestSchema()
        let store = try schema.servingStore()
        var odd = record("it's \"odd\"; DROP TABLE quire_jobs; -- é 中", sequence: Int64.max - 1)
        odd.idempotencyKey = "key with 'quotes'"
        odd.createdAt = -1
        odd.lastError = Array(0...255)
        var changes = JobBatch()
        changes.inserts = [JobBatch.Insert(record: odd, request: [Array(0...255), [], [0]], submitters: [])]
        try store.write([changes])
        guard case .record(let read) = store.load(.job(id: odd.id, then: JobStorageConformanceTests.lookup)) else {
            Issue.record("not read back"); return
        }
        #expect(read?.sequence == 1, "the order is the store's")
        odd.sequence = 1
        #expect(read == odd)
        guard case .frames(let frames) = store.load(.request(id: odd.id)) else { Issue.record("no request"); return }
        #expect(frames == [Array(0...255), [], [0]])
    }

    @Test("a batch is all or nothing though its statements go in a pipeline, in chunks; the store goes on after a failure")
    func pipelinedBatches() throws {
        let schema = try TestSchema()
        let store = try schema.servingStore()
        // More statements than one chunk of the pipeline (256): every one lands.
        let many = (1...600).map { record("job-\($0)", sequence: Int64($0)) }
        var big = JobBatch()
        big.inserts = many.map { JobBatch.Insert(record: $0, request: [Array($0.id.utf8)], submitters: []) }
        try store.write([big])
        #expect(try queued(store) == 600)

        // A batch whose 300th statement fails (a job id already stored): the 299 before it are undone.
        var failing = JobBatch()
        failing.inserts = (601...899).map { JobBatch.Insert(record: record("job-\($0)", sequence: Int64($0)), request: [[1]], submitters: []) }
            + [JobBatch.Insert(record: record("job-1", sequence: 900), request: [[1]], submitters: [])]
        #expect(throws: JobStoreError.self) { try store.write([failing]) }
        if case .record(let found) = store.load(.job(id: "job-601", then: JobStorageConformanceTests.lookup)) {
            #expect(found == nil, "nothing of the failed batch was written")
        } else {
            Issue.record("the read after a failed batch failed")
        }
        // The connection left pipeline mode and its transaction: the next batch is written.
        try store.write(batch(record("after", sequence: 901)))
        #expect(try queued(store) == 601)
    }

    @Test("where the store is, for logs, names no password")
    func locationHidesPassword() throws {
        let schema = try TestSchema()
        let store = try PostgresJobStore(connectionString: schema.uri.replacingOccurrences(of: "quire@", with: "quire:s3cret@"))
        #expect(!store.location.contains("s3cret"))
        #expect(store.location.hasPrefix("postgresql://quire@"))
    }

    @Test("a server that cannot be reached is a lost store, with libpq's reason")
    func unreachable() {
        #expect {
            _ = try PostgresJobStore(connectionString: "postgresql://nobody@/quire?host=/nonexistent-quire-socket-dir&connect_timeout=2")
        } throws: { error in
            (error as? JobStoreError)?.kind == .lost && "\(error)".contains("nonexistent-quire-socket-dir")
        }
    }
}
