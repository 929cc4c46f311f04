import Foundation
import QuireStats
import QuireSupport
import QuireWire
import Synchronization
import Testing
import ZeroMQ

@testable import QuireBroker

/// The promises every job store keeps, held against each: SQLite on disk (``SQLiteJobStore``), PostgreSQL
/// (``PostgresJobStore``, on the server `scripts/test` starts) and the one in memory the machine's tests
/// run on (``MemoryJobStorage``), alone and as a store brokers share. Stores of one broker recover
/// every job at a restart; shared ones keep the store's queue, claimed from with leases and fences.
@Suite("Job storage: every store keeps the same promises")
struct JobStorageConformanceTests {
    enum Kind: String, CaseIterable, Sendable {
        case sqlite, postgresql, memory, sharedMemory
        static let oneBroker: [Kind] = [.sqlite, .memory]
        static let shared: [Kind] = [.postgresql, .sharedMemory]
    }

    /// A fresh store of `kind`, and a way to open it again as a restarted broker would.
    final class Subject {
        let kind: Kind
        let directory = NSTemporaryDirectory() + "quire-jobstorage-\(UUID().uuidString)"
        private var memory: MemoryJobStorage?
        private var schema: TestSchema?
        private(set) var store: any JobStorage

        init(_ kind: Kind) throws {
            self.kind = kind
            switch kind {
            case .sqlite: store = try SQLiteJobStore(directory: directory)
            case .postgresql:
                let made = try TestSchema()
                schema = made
                store = try made.servingStore()
            case .memory, .sharedMemory:
                let made = MemoryJobStorage(shared: kind == .sharedMemory)
                memory = made
                store = made
            }
        }

        /// A second broker on the same store (a shared one).
        func otherBroker() throws -> any JobStorage {
            switch kind {
            case .postgresql: return try schema!.servingStore()
            default: return memory!.asBroker("b")
            }
        }

        /// The store as a broker restarted on it finds it.
        func reopen() throws -> any JobStorage {
            switch kind {
            case .sqlite:
                store = try SQLiteJobStore(directory: directory)
            case .postgresql:
                store = try schema!.servingStore()
            case .memory, .sharedMemory:
                break  // the same dictionaries: what memory keeps across a "restart" is what it held
            }
            return store
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    static let configuration = JobRig.configuration

    func record(_ id: String, state: JobState = .queued, sequence: Int64, key: String? = nil, owner: String = "",
                expiresAt: Int64? = nil) -> JobRecord {
        JobRecord(id: id, service: "ocr", owner: owner, idempotencyKey: key, priority: .normal, state: state, attempts: 0, maxAttempts: 3,
                  createdAt: 1_000, updatedAt: 1_000, startedAt: nil, finishedAt: nil, notBefore: 1_000, deadline: nil, resultTTL: 60_000,
                  expiresAt: expiresAt, sequence: sequence, requestBytes: 4, lastError: nil)
    }

    func insert(_ records: JobRecord..., into store: any JobStorage, services: [String] = []) throws {
        var batch = JobBatch()
        batch.services = services
        batch.now = 1_000
        batch.inserts = records.map { JobBatch.Insert(record: $0, request: [Array("{}".utf8), Array($0.id.utf8)], submitters: []) }
        try store.write([batch])
    }

    func recordOf(_ result: JobLoad.Result) -> JobRecord? {
        if case .record(let record) = result { return record }
        return nil
    }

    func framesOf(_ result: JobLoad.Result) -> [[UInt8]]? {
        if case .frames(let frames) = result { return frames }
        return nil
    }

    static let client = JobClient(peer: Array("c".utf8), dialect: .mdp02)
    static let lookup = JobLookup(client: client, service: Titanic.status, owner: "", waitMs: nil)

    @Test("a batch's jobs are read back by id, by owner and key, with their requests", arguments: Kind.allCases)
    func readBack(kind: Kind) throws {
        let subject = try Subject(kind)
        let store = subject.store
        try insert(record("a", sequence: 1, key: "k1", owner: "alice"), record("b", sequence: 2), into: store)
        #expect(recordOf(store.load(.job(id: "a", then: Self.lookup))) == record("a", sequence: 1, key: "k1", owner: "alice"))
        #expect(recordOf(store.load(.job(id: "zz", then: Self.lookup))) == nil)
        let submission = JobSubmission(client: Self.client, owner: "alice", target: "ocr", request: [], priority: .normal, idempotencyKey: "k1",
                                       maxAttempts: 3, deadlineMs: nil, ttlSeconds: 60)
        #expect(recordOf(store.load(.key(owner: "alice", key: "k1", then: submission)))?.id == "a")
        #expect(recordOf(store.load(.key(owner: "bob", key: "k1", then: submission))) == nil, "a key is its owner's")
        #expect(framesOf(store.load(.request(id: "b"))) == [Array("{}".utf8), Array("b".utf8)])
    }

    @Test("a restart finds the active jobs, running ones queued again, the services seen and the last sequence", arguments: Kind.oneBroker)
    func recovery(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("first", sequence: 1), record("second", sequence: 2), record("third", sequence: 3), into: subject.store, services: ["ocr"])
        var batch = JobBatch()
        var running = record("second", state: .running, sequence: 2)
        running.attempts = 1
        batch.updates["second"] = JobBatch.Update(record: running, reply: nil)
        var done = record("third", state: .done, sequence: 3, expiresAt: 90_000)
        done.finishedAt = 2_000
        batch.updates["third"] = JobBatch.Update(record: done, reply: [Array("result".utf8)])
        try subject.store.write([batch])
        let machine = try subject.reopen().recoverMachine(configuration: Self.configuration, now: 5_000)
        #expect(Set(machine.active.keys) == ["first", "second"])
        #expect(machine.active["second"]?.state == .queued && machine.active["second"]?.attempts == 1)
        #expect(machine.knownServices.contains("ocr"))
        #expect(machine.lastSequence >= 3, "new jobs come after every stored one")
        #expect(framesOf(subject.store.load(.reply(done, to: Self.client))) == [Array("result".utf8)])
    }

    @Test("a job that ends keeps its result and drops its request; one still queued or running keeps it", arguments: Kind.allCases)
    func endedJobsDropTheirRequests(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("done", sequence: 1), record("retried", sequence: 2), record("cancelled", sequence: 3), into: subject.store)
        var batch = JobBatch()
        var done = record("done", state: .done, sequence: 1, expiresAt: 90_000)
        done.finishedAt = 2_000
        batch.updates["done"] = JobBatch.Update(record: done, reply: [Array("result".utf8)])
        var retried = record("retried", state: .queued, sequence: 2)
        retried.attempts = 1
        batch.updates["retried"] = JobBatch.Update(record: retried, reply: nil)
        batch.updates["cancelled"] = JobBatch.Update(record: record("cancelled", state: .cancelled, sequence: 3, expiresAt: 90_000), reply: nil)
        try subject.store.write([batch])
        #expect(framesOf(subject.store.load(.request(id: "done"))) == [])
        #expect(framesOf(subject.store.load(.request(id: "cancelled"))) == [])
        #expect(framesOf(subject.store.load(.request(id: "retried"))) == [Array("{}".utf8), Array("retried".utf8)])
        #expect(framesOf(subject.store.load(.reply(done, to: Self.client))) == [Array("result".utf8)])
        #expect(recordOf(subject.store.load(.job(id: "done", then: Self.lookup)))?.requestBytes == record("done", sequence: 1).requestBytes,
                "the request's size is still told")
    }

    @Test("deletions come first in a batch: a job closed and resubmitted with its key in one turn", arguments: Kind.allCases)
    func deleteThenInsert(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("old", sequence: 1, key: "same"), into: subject.store)
        var batch = JobBatch()
        batch.deletions = ["old"]
        batch.inserts = [JobBatch.Insert(record: record("new", sequence: 2, key: "same"), request: [[1]], submitters: [])]
        try subject.store.write([batch])
        #expect(recordOf(subject.store.load(.job(id: "old", then: Self.lookup))) == nil)
        let submission = JobSubmission(client: Self.client, owner: "", target: "ocr", request: [], priority: .normal, idempotencyKey: "same",
                                       maxAttempts: 3, deadlineMs: nil, ttlSeconds: 60)
        #expect(recordOf(subject.store.load(.key(owner: "", key: "same", then: submission)))?.id == "new")
    }

    @Test("the sweep deletes finished jobs whose results expired, and nothing else", arguments: Kind.allCases)
    func sweep(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("active", sequence: 1), record("expired", state: .done, sequence: 2, expiresAt: 3_000),
                   record("kept", state: .done, sequence: 3, expiresAt: 9_000), into: subject.store)
        #expect(try subject.store.sweepExpired(now: 3_000) == 1)
        #expect(recordOf(subject.store.load(.job(id: "expired", then: Self.lookup))) == nil)
        #expect(recordOf(subject.store.load(.job(id: "kept", then: Self.lookup)))?.id == "kept")
        #expect(recordOf(subject.store.load(.job(id: "active", then: Self.lookup)))?.id == "active")
        #expect(try subject.store.sweepExpired(now: 3_000) == 0)
    }

    // MARK: - Stores brokers share

    func claim(_ store: any JobStorage, _ count: Int, at now: Int64 = 2_000, lease: Int64 = 10_000) throws -> [String] {
        try store.claim(JobClaim(service: "ocr", count: count, now: now, until: now + lease)).map(\.record.id)
    }

    @Test("a shared store's broker starts holding no job: the store keeps the queue, and the services seen", arguments: Kind.shared)
    func sharedStart(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("first", sequence: 1), into: subject.store, services: ["ocr"])
        let machine = try subject.reopen().recoverMachine(configuration: Self.configuration, now: 5_000)
        #expect(machine.active.isEmpty && machine.knownServices.contains("ocr"))
        #expect(try claim(subject.store, 5) == ["first"])
    }

    @Test("claims take high priority first, then the oldest; never a job waiting for its retry or past its deadline; each once", arguments: Kind.shared)
    func claims(kind: Kind) throws {
        let subject = try Subject(kind)
        var high = record("high", sequence: 0)
        high.priority = .high
        var later = record("later", sequence: 0)
        later.notBefore = 9_000
        var late = record("late", sequence: 0)
        late.deadline = 1_500
        try insert(record("old", sequence: 0), record("new", sequence: 0), high, later, late, into: subject.store)
        let first = try subject.store.claim(JobClaim(service: "ocr", count: 2, now: 2_000, until: 12_000))
        #expect(first.map(\.record.id) == ["high", "old"])
        #expect(first.allSatisfy { $0.record.state == .running && $0.record.attempts == 1 && $0.record.startedAt == 2_000 })
        #expect(first.first?.request == [Array("{}".utf8), Array("high".utf8)])
        #expect(try claim(subject.otherBroker(), 5) == ["new"], "another broker takes what is left, not what was claimed")
        #expect(try claim(subject.store, 5, at: 9_000) == ["later"], "a retry is claimed once its time came")
    }

    @Test("an update fenced by its attempt lands while the attempt is the job's; a newer attempt, a cancel or a close refuse it", arguments: Kind.shared)
    func fences(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("a", sequence: 0), record("b", sequence: 0), record("c", sequence: 0), into: subject.store)
        let claimed = try subject.store.claim(JobClaim(service: "ocr", count: 3, now: 2_000, until: 3_000))
        func finished(_ id: String, _ state: JobState = .done) -> JobRecord {
            var job = claimed.first { $0.record.id == id }!.record
            job.state = state
            job.finishedAt = 2_500
            job.expiresAt = 90_000
            return job
        }
        // b's lease runs out; another broker's pass queues it again and claims it: attempt 2.
        #expect(try subject.otherBroker().renew(["b"], until: 9_000).isEmpty, "only the claiming broker renews")
        #expect(try subject.store.renew(["a", "c"], until: 9_000) == ["a", "c"])
        #expect(try subject.otherBroker().maintain(now: 3_500).leasesExpired == ["ocr": 1])
        _ = try claim(subject.otherBroker(), 1, at: 3_600)
        var batch = JobBatch()
        batch.updates["b"] = JobBatch.Update(record: finished("b"), reply: [Array("late".utf8)], fence: .attempt(1))
        batch.updates["a"] = JobBatch.Update(record: finished("a", .cancelled), reply: nil, fence: .active)
        try insert(record("d", sequence: 0), into: subject.store)
        var close = JobBatch()
        close.deletions = ["d"]
        try subject.store.write([close])
        batch.updates["d"] = JobBatch.Update(record: record("d", state: .cancelled, sequence: 0), reply: nil, fence: .active)
        let outcome = try subject.store.write([batch])
        #expect(outcome.refused == ["b", "d"], "b is attempt 2's, d was closed; a's cancel landed")
        let b = recordOf(subject.store.load(.job(id: "b", then: Self.lookup)))
        #expect(b?.state == .running && b?.attempts == 2, "the late write of attempt 1 did not overwrite attempt 2")
        #expect(recordOf(subject.store.load(.job(id: "a", then: Self.lookup)))?.state == .cancelled)
    }

    @Test("a pass queues again jobs whose lease ran out (dead with no attempt left), expires queued jobs past their deadline, counts the queue", arguments: Kind.shared)
    func maintenance(kind: Kind) throws {
        let subject = try Subject(kind)
        var once = record("once", sequence: 0)
        once.maxAttempts = 1
        var soon = record("soon", sequence: 0)
        soon.deadline = 50_000
        var low = record("low", sequence: 0)
        low.priority = .low
        try insert(record("twice", sequence: 0), once, into: subject.store)
        #expect(try claim(subject.store, 2).count == 2)
        try insert(soon, low, into: subject.store)
        #expect(try subject.store.renew(["twice", "once"], until: 20_000) == ["twice", "once"])
        let early = try subject.otherBroker().maintain(now: 19_000)
        #expect(early.leasesExpired.isEmpty && early.finished.isEmpty, "leases renewed are held")
        #expect(early.depth["ocr"] == PriorityDepth(high: 0, normal: 1, low: 1))
        let found = try subject.otherBroker().maintain(now: 50_000)
        #expect(found.leasesExpired == ["ocr": 2])
        #expect(Set(found.finished) == ["once", "soon"])
        #expect(found.dead == ["once": "ocr"])
        #expect(found.depth["ocr"] == PriorityDepth(high: 0, normal: 1, low: 1), "twice is queued again, soon expired")
        #expect(recordOf(subject.store.load(.job(id: "once", then: Self.lookup)))?.state == .dead)
        #expect(recordOf(subject.store.load(.job(id: "soon", then: Self.lookup)))?.state == .expired)
        #expect(recordOf(subject.store.load(.job(id: "twice", then: Self.lookup)))?.attempts == 1, "the attempt counts")
        // The jobs that ended drop their requests; the one queued again keeps its own.
        #expect(framesOf(subject.store.load(.request(id: "once"))) == [] && framesOf(subject.store.load(.request(id: "soon"))) == [])
        #expect(framesOf(subject.store.load(.request(id: "twice"))) == [Array("{}".utf8), Array("twice".utf8)])
    }

    @Test("a new job whose key another broker's job took is that job: not written, named in the outcome", arguments: Kind.shared)
    func keysAcrossBrokers(kind: Kind) throws {
        let subject = try Subject(kind)
        try insert(record("theirs", sequence: 0, key: "k", owner: "alice"), into: subject.otherBroker())
        var batch = JobBatch()
        batch.inserts = [JobBatch.Insert(record: record("mine", sequence: 0, key: "k", owner: "alice"), request: [[1]], submitters: []),
                         JobBatch.Insert(record: record("bobs", sequence: 0, key: "k", owner: "bob"), request: [[1]], submitters: [])]
        let outcome = try subject.store.write([batch])
        #expect(outcome.merged == ["mine": "theirs"])
        #expect(recordOf(subject.store.load(.job(id: "mine", then: Self.lookup))) == nil)
        #expect(recordOf(subject.store.load(.job(id: "bobs", then: Self.lookup)))?.id == "bobs")
    }
}

/// The store's thread: work done in the order handed over, its outcomes rung back, everything finished
/// before it stops.
@Suite("The job store's thread")
struct StorageThreadTests {
    /// A store that records the order of what it was asked, and fails the writes of turns ending at 2.
    final class Recording: JobStorage, @unchecked Sendable {
        let calls = Mutex<[String]>([])
        /// The write of the turn ending at 10 says it has begun, then waits for the gate.
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)

        func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine {
            JobMachine(configuration: configuration, recovered: [], knownServices: [], lastSequence: 0, now: now)
        }

        func write(_ batches: [JobBatch]) throws(JobStoreError) -> JobWriteOutcome {
            if batches.contains(where: { $0.now == 10 }) {
                entered.signal()
                gate.wait()
            }
            calls.withLock { $0.append("write " + batches.map { String($0.now) }.joined(separator: "+")) }
            if batches.contains(where: { $0.now == 2 }) { throw JobStoreError(kind: .full, message: "disk full") }
            return JobWriteOutcome()
        }

        func load(_ load: JobLoad) -> JobLoad.Result {
            calls.withLock { $0.append("load") }
            return .frames(nil)
        }

        func sweepExpired(now: Int64) throws(JobStoreError) -> Int {
            calls.withLock { $0.append("sweep \(now)") }
            return 0
        }
    }

    @Test("work is done in order, off the caller's thread, and its events come back once the wake-up rings")
    func order() throws {
        let store = Recording()
        let wakeup = try Wakeup()
        let thread = StorageThread(store: store, wakeup: wakeup, logger: Logger(label: "test", level: .error))
        var first = JobBatch()
        first.now = 1
        var second = JobBatch()
        second.now = 2
        thread.submit(.persist(first))
        thread.submit(.load(.request(id: "x")))
        thread.submit(.sweep(before: 9))
        thread.submit(.persist(second))
        thread.waitUntilIdle()
        #expect(store.calls.withLock { $0 } == ["write 1", "load", "sweep 9", "write 2"])
        let answered = thread.takeEvents()
        // Each write is timed for the store's statistics, whether it committed or not.
        let timings = answered.compactMap { event -> Bool? in if case .storeWrote(_, let committed) = event { committed } else { nil } }
        #expect(timings == [true, false])
        let events = answered.filter { if case .storeWrote = $0 { false } else { true } }
        #expect(events.count == 3, "a sweep answers nothing")
        guard events.count == 3 else { return }
        if case .committed(let batch, _) = events[0] { #expect(batch.now == 1) } else { Issue.record("not committed: \(events[0])") }
        if case .loaded(.request(let id), .frames(nil)) = events[1] { #expect(id == "x") } else { Issue.record("not loaded: \(events[1])") }
        if case .commitFailed(let batch, let error) = events[2] { #expect(batch.now == 2 && error.kind == .full) } else {
            Issue.record("not a failed commit: \(events[2])")
        }
        #expect(thread.takeEvents().isEmpty)
        // The wake-up rang: a poll on it returns at once.
        let ready = try Poller([.descriptor(wakeup.descriptor, .readable)]).poll(timeoutMilliseconds: 0)
        #expect(ready[0].contains(.readable))
        thread.stop()
    }

    @Test("batches that queue up behind a running commit are written together, each answered")
    func groupCommit() throws {
        let store = Recording()
        let thread = StorageThread(store: store, wakeup: try Wakeup(), logger: Logger(label: "test", level: .error))
        func persist(_ now: Int64) {
            var batch = JobBatch()
            batch.now = now
            thread.submit(.persist(batch))
        }
        persist(10)
        store.entered.wait()
        for now in [11, 12, 13] as [Int64] { persist(now) }
        store.gate.signal()
        thread.waitUntilIdle()
        #expect(store.calls.withLock { $0 } == ["write 10", "write 11+12+13"])
        let committed = thread.takeEvents().compactMap { event -> Int64? in if case .committed(let batch, _) = event { batch.now } else { nil } }
        #expect(committed == [10, 11, 12, 13])
        thread.stop()
    }

    @Test("stopping finishes what was handed over")
    func stopFinishes() throws {
        let store = Recording()
        let thread = StorageThread(store: store, wakeup: try Wakeup(), logger: Logger(label: "test", level: .error))
        for n in 0..<50 {
            var batch = JobBatch()
            batch.now = Int64(100 + n)
            thread.submit(.persist(batch))
        }
        thread.stop()
        let written = store.calls.withLock { $0 }.flatMap { $0.dropFirst("write ".count).split(separator: "+") }
        #expect(written.count == 50)
        #expect(thread.takeEvents().filter { if case .committed = $0 { true } else { false } }.count == 50)
    }
}
