import QuireSupport
import QuireWire

@testable import QuireBroker

/// A deterministic random number generator (SplitMix64), so that job ids and retry jitter repeat.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// A job store in memory: dictionaries that keep a batch, answer loads and recover as SQLite does
/// (`JobStorageConformanceTests` holds both to the same promises).
final class MemoryJobStorage: JobStorage {
    struct Row {
        var record: JobRecord
        var request: [[UInt8]]
        var reply: [[UInt8]]?
    }

    var rows: [String: Row] = [:]
    var services: Set<String> = []

    func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine {
        for (id, row) in rows where row.record.state == .running {
            rows[id]?.record.state = .queued
            rows[id]?.record.updatedAt = now
        }
        let active = rows.values.map(\.record).filter(\.state.isActive).sorted { $0.sequence < $1.sequence }
        return JobMachine(configuration: configuration, recovered: active, knownServices: services.sorted(),
                          lastSequence: rows.values.map(\.record.sequence).max() ?? 0, now: now)
    }

    func write(_ batches: [JobBatch]) throws(JobStoreError) {
        for batch in batches {
            for change in batch.rowChanges {
                switch change {
                case .service(let name): services.insert(name)
                case .delete(let id): rows[id] = nil
                case .insert(let insert): rows[insert.record.id] = Row(record: insert.record, request: insert.request, reply: nil)
                case .update(let update):
                    rows[update.record.id]?.record = update.record
                    if let reply = update.reply { rows[update.record.id]?.reply = reply }
                }
            }
        }
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
    var random = SeededRandom(state: 42)
    var workers = JobWorkers(services: ["ocr"], capacity: [:])
    let storage = MemoryJobStorage()
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

    static let configuration = JobConfiguration(
        directory: "/nonexistent", services: ["ocr"], maxActiveJobs: 100, maxActiveBytes: 1 << 20, defaultMaxAttempts: 3,
        defaultResultTTL: 60_000, maxResultTTL: 3_600_000, retryBase: 1_000, retryCap: 60_000, lease: 10_000, sweepInterval: 10_000,
        maxWait: 30_000)

    init(configuration: JobConfiguration = JobRig.configuration, recovered: [JobRecord] = []) {
        machine = JobMachine(configuration: configuration, recovered: recovered, knownServices: [], lastSequence: 0, now: now)
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
                    try? storage.write([batch])
                    pending += machine.handle(.committed(batch, workers), now: now, random: &random)
                }
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
