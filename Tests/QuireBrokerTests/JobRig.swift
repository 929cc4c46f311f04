import QuireStats
import QuireSupport
import QuireTestSupport
import QuireWire
import Testing

@testable import QuireBroker

/// A job store in memory: dictionaries that keep a batch, answer loads and recover as SQLite does
/// (`JobStorageConformanceTests` holds both to the same promises). `shared`: as PostgreSQL does for
/// brokers that serve it together, with claims, leases and fenced writes (`SharedStoreTests` holds
/// both to those).
final class MemoryJobStorage: JobStorage {
    struct Row {
        var record: JobRecord
        var request: [[UInt8]]
        var reply: [[UInt8]]?
        var leaseUntil: Int64?
        var claimedBy: String?
    }

    /// The rows, which brokers on one shared store see alike.
    final class Table {
        var rows: [String: Row] = [:]
        var services: Set<String> = []
        var sequence: Int64 = 0
    }

    private let table: Table
    var rows: [String: Row] {
        get { table.rows }
        set { table.rows = newValue }
    }
    var services: Set<String> {
        get { table.services }
        set { table.services = newValue }
    }
    private var sequence: Int64 {
        get { table.sequence }
        set { table.sequence = newValue }
    }
    let shared: Bool
    /// The broker whose claims these are, in a shared store.
    let broker: String

    init(shared: Bool = false, broker: String = "a", table: Table = Table()) {
        self.shared = shared
        self.broker = broker
        self.table = table
    }

    /// The same rows, as another broker that serves them (its claims its own).
    func asBroker(_ name: String) -> MemoryJobStorage {
        MemoryJobStorage(shared: shared, broker: name, table: table)
    }

    func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine {
        if shared { return JobMachine(configuration: configuration, recovered: [], knownServices: services.sorted(), lastSequence: 0, now: now) }
        for (id, row) in rows where row.record.state == .running {
            rows[id]?.record.state = .queued
            rows[id]?.record.updatedAt = now
        }
        let active = rows.values.map(\.record).filter(\.state.isActive).sorted { $0.sequence < $1.sequence }
        return JobMachine(configuration: configuration, recovered: active, knownServices: services.sorted(),
                          lastSequence: rows.values.map(\.record.sequence).max() ?? 0, now: now)
    }

    @discardableResult
    func write(_ batches: [JobBatch]) throws(JobStoreError) -> JobWriteOutcome {
        var outcome = JobWriteOutcome()
        for batch in batches {
            for change in batch.rowChanges {
                switch change {
                case .service(let name): services.insert(name)
                case .delete(let id): rows[id] = nil
                case .insert(let insert):
                    var record = insert.record
                    if shared {
                        if let key = record.idempotencyKey,
                           let existing = rows.values.first(where: { $0.record.owner == record.owner && $0.record.idempotencyKey == key }) {
                            outcome.merged[record.id] = existing.record.id
                            continue
                        }
                        sequence += 1
                        record.sequence = sequence
                    }
                    rows[record.id] = Row(record: record, request: insert.request, reply: nil)
                case .update(let update):
                    let id = update.record.id
                    guard let row = rows[id] else {
                        if update.fence != .none { outcome.refused.insert(id) }
                        continue
                    }
                    switch update.fence {
                    case .none: break
                    case .attempt(let attempt):
                        guard row.record.attempts == attempt, row.record.state == .running else { outcome.refused.insert(id); continue }
                    case .active:
                        guard row.record.state.isActive else { outcome.refused.insert(id); continue }
                    }
                    rows[id]?.record = update.record
                    if update.fence != .none {
                        rows[id]?.leaseUntil = nil
                        rows[id]?.claimedBy = nil
                    }
                    if let reply = update.reply { rows[id]?.reply = reply }
                    // An ended job's request is dropped, as the stores on disk drop it.
                    if !update.record.state.isActive { rows[id]?.request = [] }
                }
            }
        }
        return outcome
    }

    func claim(_ claim: JobClaim) throws(JobStoreError) -> [ClaimedJob] {
        let ready = rows.values.filter {
            $0.record.service == claim.service && $0.record.state == .queued && $0.record.notBefore <= claim.now && ($0.record.deadline ?? .max) > claim.now
        }.sorted { ($0.record.priority.rawValue, $0.record.sequence) < ($1.record.priority.rawValue, $1.record.sequence) }
        return ready.prefix(claim.count).map { row in
            var record = row.record
            record.state = .running
            record.attempts += 1
            record.startedAt = claim.now
            record.updatedAt = claim.now
            rows[record.id]?.record = record
            rows[record.id]?.leaseUntil = claim.until
            rows[record.id]?.claimedBy = broker
            return ClaimedJob(record: record, request: row.request)
        }
    }

    func renew(_ ids: [String], until: Int64) throws(JobStoreError) -> Set<String> {
        var held: Set<String> = []
        for id in ids where rows[id]?.record.state == .running && rows[id]?.claimedBy == broker {
            rows[id]?.leaseUntil = until
            held.insert(id)
        }
        return held
    }

    func maintain(now: Int64) throws(JobStoreError) -> JobMaintenance {
        var found = JobMaintenance(services: services)
        for (id, row) in rows.sorted(by: { $0.key < $1.key }) {
            var record = row.record
            if record.state == .running, let until = row.leaseUntil, until < now {
                found.leasesExpired[record.service, default: 0] += 1
                if record.attempts >= record.maxAttempts {
                    record.state = .dead
                    record.finishedAt = now
                    record.expiresAt = now + record.resultTTL
                    found.finished.append(id)
                    found.dead[id] = record.service
                } else {
                    record.state = .queued
                }
                record.updatedAt = now
                rows[id]?.leaseUntil = nil
                rows[id]?.claimedBy = nil
            } else if record.state == .queued, let deadline = record.deadline, deadline <= now {
                record.state = .expired
                record.finishedAt = now
                record.expiresAt = now + record.resultTTL
                found.finished.append(id)
            }
            rows[id]?.record = record
            if !record.state.isActive { rows[id]?.request = [] }
            if record.state == .queued {
                found.depth[record.service, default: PriorityDepth()].add(record.priority)
            }
        }
        return found
    }

    func load(_ load: JobLoad) -> JobLoad.Result {
        switch load {
        case .key(let owner, let key, _):
            return .record(rows.values.first { $0.record.owner == owner && $0.record.idempotencyKey == key }?.record)
        case .job(let id, _): return .record(rows[id]?.record)
        case .reply(let job, _): return .frames(rows[job.id]?.reply)
        case .request(let id): return .frames(rows[id]?.request)
        }
    }

    func sweepExpired(now: Int64) throws(JobStoreError) -> Int {
        let expired = rows.values.filter { ($0.record.expiresAt ?? .max) <= now }.map(\.record.id)
        for id in expired { rows[id] = nil }
        return expired.count
    }
}

/// Drives a ``JobMachine`` by hand: the clock is a number, randomness is seeded, and the store is one
/// in memory (``MemoryJobStorage``) that answers the machine's persists and loads at once, as the broker's
/// store thread does in order.
struct JobRig {
    typealias Row = MemoryJobStorage.Row

    var machine: JobMachine
    var now: Int64 = 1_700_000_000_000
    var random = SplitMix64(seed: 42)
    var workers = JobWorkers(services: ["ocr"], capacity: [:])
    let storage: MemoryJobStorage
    var rows: [String: Row] {
        get { storage.rows }
        nonmutating set { storage.rows = newValue }
    }
    var services: Set<String> { storage.services }
    /// When set, the next writes fail as on a full disk.
    var failWrites = false
    /// Everything the rig carried out itself, for tests that look at the plumbing.
    var persisted: [JobBatch] = []
    var loads: [JobLoad] = []
    var claims: [JobClaim] = []

    static let configuration = JobConfiguration(
        directory: "/nonexistent", services: ["ocr"], maxActiveJobs: 100, maxActiveBytes: 1 << 20, defaultMaxAttempts: 3,
        defaultResultTTL: 60_000, maxResultTTL: 3_600_000, retryBase: 1_000, retryCap: 60_000, lease: 10_000, sweepInterval: 10_000,
        maxWait: 30_000)

    init(configuration: JobConfiguration = JobRig.configuration, recovered: [JobRecord] = [], storage: MemoryJobStorage = MemoryJobStorage()) {
        machine = JobMachine(configuration: configuration, recovered: recovered, knownServices: [], lastSequence: 0, now: now)
        self.storage = storage
    }

    mutating func advance(ms: Int64) { now += ms }

    /// Hands the machine an event and carries out its persists and loads at once, as the loop does;
    /// returns the rest (replies, dispatches, statistics, logs, sweeps).
    mutating func handle(_ event: JobMachine.Event) -> [JobMachine.Action] {
        var pending = machine.handle(event, now: now, random: &random)
        var out: [JobMachine.Action] = []
        var index = 0
        while index < pending.count {
            let action = pending[index]
            index += 1
            switch action {
            case .persist(let batch):
                persisted.append(batch)
                if failWrites {
                    pending += machine.handle(.commitFailed(batch, JobStoreError(kind: .full, message: "disk full"), workers), now: now, random: &random)
                } else {
                    let outcome = (try? storage.write([batch])) ?? JobWriteOutcome()
                    pending += machine.handle(.committed(batch, workers, outcome), now: now, random: &random)
                }
            case .claim(let claim):
                claims.append(claim)
                let taken = Result<[ClaimedJob], JobStoreError> { () throws(JobStoreError) -> [ClaimedJob] in try storage.claim(claim) }
                pending += machine.handle(.claimed(claim, taken, seconds: 0.001, workers), now: now, random: &random)
            case .renew(let ids, let until):
                let held = (try? storage.renew(ids, until: until)) ?? []
                pending += machine.handle(.renewed(asked: ids, held: held), now: now, random: &random)
            case .maintain(let at):
                let found = (try? storage.maintain(now: at)) ?? JobMaintenance()
                pending += machine.handle(.maintained(found, workers), now: now, random: &random)
            case .load(let load):
                loads.append(load)
                pending += machine.handle(.loaded(load, storage.load(load)), now: now, random: &random)
            case .dispatch(_, let service, _):
                // A worker now holds it: one less free.
                if let free = workers.capacity[service] { workers.capacity[service] = max(0, free - 1) }
                out.append(action)
            default:
                out.append(action)
            }
        }
        return out
    }

    // MARK: - Conversations

    /// A `titanic.*` request from client `peer`, and the end of the turn.
    mutating func ask(_ service: String, _ body: [[UInt8]], from peer: String = "c", owner: String = "") -> [JobMachine.Action] {
        var actions = handle(.request(peer: Array(peer.utf8), dialect: .mdp02, service: service, body: body, owner: owner, workers: workers))
        actions += endTurn()
        return actions
    }

    mutating func endTurn() -> [JobMachine.Action] { handle(.endOfTurn(workers)) }

    mutating func tick() -> [JobMachine.Action] { handle(.tick(workers)) }

    /// Submits a job for `ocr` with these job options (JSON members); returns its id.
    mutating func submit(_ options: String = "", from peer: String = "c", owner: String = "") -> (id: String?, actions: [JobMachine.Action]) {
        let frame = options.isEmpty ? #"{"image":1}"# : #"{"image":1,"job":{\#(options)}}"#
        let actions = ask(Titanic.request, [Array("ocr".utf8), Array(frame.utf8), [0xff, 0xd8]], from: peer, owner: owner)
        let reply = Self.replies(actions).first { $0.peer == peer && $0.service == Titanic.request }
        guard let reply, reply.body.count == 2, reply.status == "200" else { return (nil, actions) }
        return (String(decoding: reply.body[1], as: UTF8.self), actions)
    }

    /// Frees one `ocr` worker and submits a job with these job options, which goes to that worker: the
    /// job's id and the tag its attempt's reply or failure names.
    mutating func dispatchedJob(_ options: String = "") throws -> (id: String, tag: UInt64) {
        free(1)
        let (id, actions) = submit(options)
        let jobID = try #require(id)
        let tag = try #require(Self.dispatches(actions).first?.tag)
        return (jobID, tag)
    }

    /// The job's state, in memory or in the "store".
    func state(of id: String) -> JobState? { machine.active[id]?.state ?? rows[id]?.record.state }

    /// Workers for `ocr` free to take this many jobs.
    mutating func free(_ count: Int) { workers.capacity["ocr"] = count }

    // MARK: - Reading actions

    struct Reply: Equatable {
        var peer: String
        var service: String
        var body: [[UInt8]]
        var status: String { body.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }
        var error: WireError? { body.count > 1 ? WireError(jsonFrame: body[1]) : nil }
    }

    static func replies(_ actions: [JobMachine.Action]) -> [Reply] {
        actions.compactMap {
            if case .reply(let peer, _, let service, let body) = $0 { return Reply(peer: String(decoding: peer, as: UTF8.self), service: service, body: body) }
            return nil
        }
    }

    static func dispatches(_ actions: [JobMachine.Action]) -> [(tag: UInt64, body: [[UInt8]])] {
        actions.compactMap {
            if case .dispatch(let tag, _, let body) = $0 { return (tag, body) }
            return nil
        }
    }

    static func statistics(_ actions: [JobMachine.Action]) -> [JobStatistic] {
        actions.compactMap {
            if case .statistic(let statistic) = $0 { return statistic }
            return nil
        }
    }
}
