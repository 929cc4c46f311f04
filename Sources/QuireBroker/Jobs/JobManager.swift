import Foundation
import QuireStats
import QuireSupport
import QuireWire

/// The broker's durable jobs: the `titanic.*` services (RFC 9 and Quire's extensions), priority lanes,
/// leases, retries with backoff, deadlines, result expiry, and the SQLite store under all of it.
///
/// It lives on the broker's thread next to ``BrokerState``. Writes are buffered while a loop turn
/// handles its messages and committed together by ``commit(state:now:)`` (one transaction, one fsync);
/// only then do submitters hear `200`. Jobs reach workers through ``BrokerState/submitJob(tag:service:body:now:)``
/// one at a time, only when a worker is idle, so that the lanes and not a FIFO decide the order.
///
/// Time is wall-clock milliseconds since 1970, passed in: jobs outlive the process.
final class JobManager {
    let configuration: JobConfiguration
    let store: JobStore
    private let logger: Logger

    /// Active (queued or running) jobs, by id. Finished jobs live only in the store.
    private var active: [String: JobRecord] = [:]
    /// Ready jobs per service, one lane per priority (high, normal, low), FIFO within a lane.
    private var lanes: [String: [Deque<String>]] = [:]
    /// Queued jobs waiting for their retry time.
    private var delayed: Set<String> = []
    /// Running attempts: the tag given to ``BrokerState`` → job id, and the lease per job.
    private var attempts: [UInt64: String] = [:]
    private var leases: [String: (tag: UInt64, until: Int64)] = [:]
    private var nextTag: UInt64 = 1
    private var activeBytes = 0
    private var knownServices: Set<String> = []

    // Buffered until commit.
    private var inserts: [(record: JobRecord, request: [[UInt8]], peer: [UInt8], dialect: Dialect)] = []
    private var insertedKeys: [String: String] = [:]
    private var updates: [String: (record: JobRecord, reply: [[UInt8]]?)] = [:]
    private var deletions: Set<String> = []
    /// Answers to cancel and close, sent once their writes are committed; `undo` is the job as it was
    /// in memory, put back if the write fails.
    private var acks: [(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], undo: JobRecord?)] = []
    /// Requests held for a job to finish (`titanic.reply` with `waitMs`).
    private var waiters: [String: [(peer: [UInt8], dialect: Dialect, until: Int64)]] = [:]
    private var lastSweep: Int64 = 0
    /// Figures for the stats snapshot, applied to ``BrokerState/statistics`` at the turn's end.
    private var statEvents: [(inout BrokerStatistics) -> Void] = []
    private var depthServices: Set<String> = []
    private var random = SystemRandomNumberGenerator()

    private let checkpointer: Checkpointer

    init(configuration: JobConfiguration, logger: Logger, now: Int64) throws(JobStoreError) {
        self.configuration = configuration
        self.logger = logger
        store = try JobStore(directory: configuration.directory, maxBytes: configuration.maxStoreBytes)
        checkpointer = Checkpointer(path: store.path, interval: 200, logger: logger)
        do {
            let recovered = try store.batch { () throws(SQLiteError) in try store.recover(now: now) }
            knownServices = Set(try store.knownServices())
            for record in recovered {
                active[record.id] = record
                activeBytes += record.requestBytes
                makeReady(record.id, now: now, front: false)
            }
            if !recovered.isEmpty {
                logger.notice("recovered durable jobs", metadata: ["jobs": String(recovered.count), "store": store.path])
            }
        } catch let error as SQLiteError {
            checkpointer.stop()
            throw JobStoreError(error)
        } catch {
            checkpointer.stop()
            throw JobStoreError(kind: .other, message: "\(error)")
        }
    }

    var activeCount: Int { active.count }

    /// The longest deadline a submitter may give, in milliseconds: a year.
    static let longestDeadline: Int64 = 365 * 86_400_000

    // MARK: - Requests to titanic.*

    /// Handles one request to a `titanic.*` service. Replies that depend on a write are sent by ``commit``.
    /// `owner` is the authenticated submitter ("" without auth).
    func handle(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], owner: String,
                state: inout BrokerState, now: Int64) -> [BrokerAction] {
        switch service {
        case Titanic.request:
            return submit(peer: peer, dialect: dialect, body: body, owner: owner, state: &state, now: now)
        case Titanic.reply, Titanic.close, Titanic.status, Titanic.cancel:
            guard let first = body.first else {
                return refuse(peer, dialect, service, WireError(.badRequest, "\(service) takes the job id in frame 1", service: service), state: &state)
            }
            let id = String(decoding: first, as: UTF8.self).lowercased()
            guard Titanic.isJobID(id) else {
                return refuse(peer, dialect, service, WireError(.unknownJob, "'\(String(id.prefix(64)))' is not a job id (32 hexadecimal characters)", service: service), state: &state)
            }
            var envelope = BrokerEnvelope()
            if body.count > 1 {
                switch BrokerEnvelope.split(body[1]) {
                case .success(let (parsed, _)): envelope = parsed
                case .failure(let error): return refuse(peer, dialect, service, error, state: &state)
                }
            }
            return lookup(peer: peer, dialect: dialect, service: service, id: id, envelope: envelope, owner: owner, state: &state, now: now)
        default:
            return refuse(peer, dialect, service,
                          WireError(.unknownService, "the broker serves titanic.request, .reply, .close, .status and .cancel", service: service), state: &state)
        }
    }

    private func submit(peer: [UInt8], dialect: Dialect, body: [[UInt8]], owner: String, state: inout BrokerState, now: Int64) -> [BrokerAction] {
        let service = Titanic.request
        guard body.count >= 2 else {
            return refuse(peer, dialect, service, WireError(.badRequest, "titanic.request takes the target service in frame 1 and the request body after it", service: service), state: &state)
        }
        guard case .success(let target) = MajordomoCodec.validateServiceName(body[0]) else {
            return refuse(peer, dialect, service, WireError(.badRequest, "frame 1 is not a valid service name", service: service), state: &state)
        }
        if target.hasPrefix("titanic.") || target.hasPrefix("mmi.") {
            return refuse(peer, dialect, service, WireError(.unknownService, "'\(target)' is one of the broker's own services; it cannot be a job", service: target), state: &state)
        }
        guard knownServices.contains(target) || configuration.services.contains(target) else {
            return refuse(peer, dialect, service,
                          WireError(.unknownService, "no worker has ever served '\(target)' on this broker", service: target), state: &state)
        }
        var request = Array(body.dropFirst())
        var options = JobOptions()
        switch BrokerEnvelope.split(request[0]) {
        case .success(let (envelope, frame)):
            request[0] = frame
            options = envelope.job ?? JobOptions()
        case .failure(let error):
            return refuse(peer, dialect, service, error, state: &state)
        }
        // Options, each checked with its reason.
        var priority = JobPriority.normal
        if let name = options.priority {
            guard let value = JobPriority(name: name) else {
                return refuse(peer, dialect, service, WireError(.badRequest, "priority must be high, normal or low, not '\(name)'", service: target), state: &state)
            }
            priority = value
        }
        if let key = options.idempotencyKey, key.isEmpty || key.utf8.count > 256 {
            return refuse(peer, dialect, service, WireError(.badRequest, "idempotencyKey must be 1 to 256 bytes", service: target), state: &state)
        }
        let maxAttempts = options.maxAttempts ?? configuration.defaultMaxAttempts
        guard (1...20).contains(maxAttempts) else {
            return refuse(peer, dialect, service, WireError(.badRequest, "maxAttempts must be 1…20", service: target), state: &state)
        }
        // Bounds before arithmetic: a number near Int64.max must be refused, not overflow.
        if let deadline = options.deadlineMs, !(1...Self.longestDeadline).contains(deadline) {
            return refuse(peer, dialect, service,
                          WireError(.badRequest, "deadlineMs must be 1…\(Self.longestDeadline) (a year)", service: target), state: &state)
        }
        let ttlSeconds = options.resultTTLSeconds ?? configuration.defaultResultTTL.value / 1_000
        guard ttlSeconds >= 1, ttlSeconds <= configuration.maxResultTTL.value / 1_000 else {
            return refuse(peer, dialect, service,
                          WireError(.badRequest, "resultTtlSeconds must be 1…\(configuration.maxResultTTL.value / 1_000)", service: target), state: &state)
        }
        // Idempotency: the same key from the same submitter is the same job, whatever its state.
        if let key = options.idempotencyKey {
            if let id = insertedKeys[owner + "\u{0}" + key] {
                return deferredAccept(id: id, peer: peer, dialect: dialect)
            }
            do {
                if let existing = try store.record(owner: owner, idempotencyKey: key), !deletions.contains(existing.id) {
                    return state.reply(to: peer, dialect: dialect, service: service, body: [Array("200".utf8), Array(existing.id.utf8)])
                }
            } catch {
                return refuse(peer, dialect, service, storageError(error), state: &state)
            }
        }
        let bytes = request.reduce(0) { $0 + $1.count }
        if active.count >= configuration.maxActiveJobs {
            return refuse(peer, dialect, service,
                          WireError(.busy, "the job queue is full (\(configuration.maxActiveJobs) jobs)", service: target, limit: configuration.maxActiveJobs), state: &state)
        }
        if activeBytes + bytes > configuration.maxActiveBytes {
            return refuse(peer, dialect, service,
                          WireError(.busy, "the job queue is full (\(configuration.maxActiveBytes) bytes)", service: target, limit: configuration.maxActiveBytes), state: &state)
        }
        let record = JobRecord(
            id: newID(), service: target, owner: owner, idempotencyKey: options.idempotencyKey, priority: priority, state: .queued,
            attempts: 0, maxAttempts: maxAttempts, createdAt: now, updatedAt: now, startedAt: nil, finishedAt: nil, notBefore: now,
            deadline: options.deadlineMs.map { now + $0 }, resultTTL: ttlSeconds * 1_000, expiresAt: nil,
            sequence: store.nextSequence(), requestBytes: bytes, lastError: nil)
        inserts.append((record, request, peer, dialect))
        if let key = options.idempotencyKey { insertedKeys[owner + "\u{0}" + key] = record.id }
        active[record.id] = record
        activeBytes += bytes
        return []
    }

    /// A resubmission of a key first seen in this same turn: answered after the commit like the first.
    private func deferredAccept(id: String, peer: [UInt8], dialect: Dialect) -> [BrokerAction] {
        if let original = inserts.first(where: { $0.record.id == id }) {
            inserts.append((original.record, [], peer, dialect))
        }
        return []
    }

    private func lookup(peer: [UInt8], dialect: Dialect, service: String, id: String, envelope: BrokerEnvelope, owner: String,
                        state: inout BrokerState, now: Int64) -> [BrokerAction] {
        let record: JobRecord?
        do {
            record = try current(id)
        } catch {
            return refuse(peer, dialect, service, storageError(error), state: &state)
        }
        // Someone else's job is reported as unknown, not as forbidden: ids are not an oracle. A result
        // past its TTL is gone even before the sweep deletes the row.
        guard var job = record, job.owner == owner, (job.expiresAt ?? .max) > now else {
            if service == Titanic.close { return state.reply(to: peer, dialect: dialect, service: service, body: [Array("200".utf8)]) }
            return refuse(peer, dialect, service, WireError(.unknownJob, "no job \(id)", service: service), state: &state)
        }
        switch service {
        case Titanic.reply:
            if job.state.isActive {
                if let wait = envelope.waitMs, wait > 0 {
                    let until = now + min(wait, configuration.maxWait.value)
                    waiters[id, default: []].append((peer, dialect, until))
                    return []
                }
                return state.reply(to: peer, dialect: dialect, service: service, body: [Array("300".utf8)])
            }
            return finalReply(job, peer: peer, dialect: dialect, state: &state)
        case Titanic.status:
            return state.reply(to: peer, dialect: dialect, service: service, body: [Array("200".utf8), status(of: job).jsonFrame])
        case Titanic.cancel:
            guard job.state.isActive else {
                return state.reply(to: peer, dialect: dialect, service: service, body: [Array("200".utf8), status(of: job).jsonFrame])
            }
            let before = active[id]
            job = finish(job, state: .cancelled, error: WireError(.jobCancelled, "the job was cancelled", service: job.service), reply: nil, now: now)
            // Answered once the cancellation is on disk (``commit``).
            acks.append((peer, dialect, service, [Array("200".utf8), status(of: job).jsonFrame], before))
            return []
        case Titanic.close:
            let before = active[id]
            forget(id)
            deletions.insert(id)
            updates[id] = nil
            answerWaiters(id, with: Titanic.refusal(WireError(.unknownJob, "the job was closed", service: job.service)), state: &state)
            acks.append((peer, dialect, service, [Array("200".utf8)], before))
            return []
        default:
            return []
        }
    }

    /// The reply to `titanic.reply` for a finished job: `200` and the worker's reply when the service
    /// answered (a worker's own error reply included), `400` and the reason when it never will.
    private func finalReply(_ job: JobRecord, peer: [UInt8], dialect: Dialect, state: inout BrokerState) -> [BrokerAction] {
        var reply: [[UInt8]]?
        if job.state == .done || job.state == .failed {
            do {
                reply = try pendingReply(job.id) ?? store.reply(id: job.id)
            } catch {
                return refuse(peer, dialect, Titanic.reply, storageError(error), state: &state)
            }
        }
        return state.reply(to: peer, dialect: dialect, service: Titanic.reply, body: finalReplyBody(job, reply: reply))
    }

    private func pendingReply(_ id: String) -> [[UInt8]]? { updates[id]?.reply }

    private func stat(_ record: @escaping (inout BrokerStatistics) -> Void) { statEvents.append(record) }

    /// The job as it is now: in memory when active or changed this turn, else in the store.
    private func current(_ id: String) throws(SQLiteError) -> JobRecord? {
        if deletions.contains(id) { return nil }
        if let record = active[id] ?? updates[id]?.record { return record }
        return try store.record(id: id)
    }

    // MARK: - Replies from workers

    func jobReplied(tag: UInt64, body: [[UInt8]], state: inout BrokerState, now: Int64) {
        guard let id = attempts.removeValue(forKey: tag), var job = active[id] else { return }  // a stale attempt
        leases[id] = nil
        let ran = Double(max(0, now - (job.startedAt ?? now))) / 1_000
        let service = job.service
        let monotonic = Instant.now()
        stat { $0.jobRan(service: service, seconds: ran, now: monotonic) }
        if let first = body.first, body.count == 1, let error = WireError(jsonFrame: first) {
            if error.retryable {
                retry(job, error: error, now: now)
            } else {
                // The service answered, with an error that no retry will change (a corrupt image).
                job = finish(job, state: .failed, error: error, reply: body, now: now)
            }
            return
        }
        job = finish(job, state: .done, error: nil, reply: body, now: now)
        let bytes = body.reduce(0) { $0 + $1.count }
        stat { $0.jobCompleted(service: service, bytes: bytes) }
    }

    func jobFailed(tag: UInt64, error: WireError, reachedWorker: Bool, now: Int64) {
        guard let id = attempts.removeValue(forKey: tag), var job = active[id] else { return }
        leases[id] = nil
        if !reachedWorker {
            job.attempts = max(0, job.attempts - 1)
            job.state = .queued
            job.updatedAt = now
            active[id] = job
            updates[id] = (job, nil)
            makeReady(id, now: now, front: true)
            return
        }
        if error.code == .workerLost {
            // A lost worker is not the job's fault: straight back to the front of its lane, but the
            // attempt counts, so that a job that kills every worker ends dead.
            if job.attempts >= job.maxAttempts {
                _ = finish(job, state: .dead, error: WireError(.jobDead, "\(job.attempts) attempts; the last: \(error.message)", service: job.service, attempts: job.attempts), reply: nil, now: now)
            } else {
                job.state = .queued
                job.updatedAt = now
                job.lastError = error.jsonFrame
                active[id] = job
                updates[id] = (job, nil)
                makeReady(id, now: now, front: true)
            }
            return
        }
        retry(job, error: error, now: now)
    }

    /// A retryable failure: back off (exponential, full jitter) or, with no attempts left, dead.
    private func retry(_ job: JobRecord, error: WireError, now: Int64) {
        var job = job
        guard job.attempts < job.maxAttempts else {
            _ = finish(job, state: .dead, error: WireError(.jobDead, "\(job.attempts) attempts; the last: \(error.code.rawValue): \(error.message)",
                                                           service: job.service, attempts: job.attempts), reply: nil, now: now)
            return
        }
        let service = job.service
        stat { $0.jobRetried(service: service) }
        let ceiling = min(configuration.retryCap.value, configuration.retryBase.value << min(job.attempts - 1, 20))
        let delay = ceiling / 2 + Int64.random(in: 0...max(1, ceiling / 2), using: &random)
        job.state = .queued
        job.notBefore = now + delay
        job.updatedAt = now
        job.lastError = error.jsonFrame
        active[job.id] = job
        updates[job.id] = (job, nil)
        makeReady(job.id, now: now, front: false)
    }

    /// Moves a job to a final state; its result expires after its TTL.
    @discardableResult
    private func finish(_ job: JobRecord, state final: JobState, error: WireError?, reply: [[UInt8]]?, now: Int64) -> JobRecord {
        var job = job
        job.state = final
        job.updatedAt = now
        job.finishedAt = now
        job.expiresAt = now + job.resultTTL
        if let error { job.lastError = error.jsonFrame }
        forget(job.id)
        updates[job.id] = (job, reply)
        let (service, id, reason) = (job.service, job.id, error?.message)
        switch final {
        case .dead:
            logger.warning("job dead", metadata: ["job.id": job.id, "service": job.service, "attempts": String(job.attempts)])
            stat { $0.jobDead(service: service, job: id, reason: reason) }
        case .failed: stat { $0.jobFailed(service: service) }
        case .expired: stat { $0.jobExpired(service: service) }
        default: break
        }
        return job
    }

    /// Takes a job out of every in-memory structure (not the store).
    private func forget(_ id: String) {
        if let record = active.removeValue(forKey: id) { activeBytes -= record.requestBytes }
        delayed.remove(id)
        if let lease = leases.removeValue(forKey: id) { attempts[lease.tag] = nil }
        // Lanes are cleaned lazily: `nextReady` skips ids that are no longer queued.
    }

    private func makeReady(_ id: String, now: Int64, front: Bool) {
        guard let record = active[id] else { return }
        if record.notBefore > now {
            delayed.insert(id)
            return
        }
        var serviceLanes = lanes[record.service] ?? [Deque(), Deque(), Deque()]
        if front { serviceLanes[record.priority.rawValue].prepend(id) } else { serviceLanes[record.priority.rawValue].append(id) }
        lanes[record.service] = serviceLanes
    }

    private func nextReady(_ service: String) -> String? {
        guard var serviceLanes = lanes[service] else { return nil }
        defer { lanes[service] = serviceLanes }
        for lane in 0..<serviceLanes.count {
            while let id = serviceLanes[lane].popFirst() {
                if let record = active[id], record.state == .queued, !delayed.contains(id), leases[id] == nil { return id }
            }
        }
        return nil
    }

    // MARK: - The turn's end

    /// Writes everything this turn buffered in one transaction, then answers submitters (`200`, or
    /// `500` when the store failed) and readers held for finished jobs, then hands ready jobs to idle
    /// workers.
    func commit(state: inout BrokerState, now: Int64) -> [BrokerAction] {
        var actions: [BrokerAction] = []
        for name in state.servicesWithWorkers where !knownServices.contains(name) {
            knownServices.insert(name)
            newServices.append(name)
        }
        if !inserts.isEmpty || !updates.isEmpty || !deletions.isEmpty || !newServices.isEmpty || !acks.isEmpty {
            let inserts = self.inserts, updates = self.updates, deletions = self.deletions, newServices = self.newServices
            let acks = self.acks
            self.inserts = []; self.insertedKeys = [:]; self.updates = [:]; self.deletions = []; self.newServices = []; self.acks = []
            do {
                try store.batch { () throws(SQLiteError) in
                    for name in newServices { try store.rememberService(name, now: now) }
                    // Deletions first: a job closed and resubmitted with its key in the same turn.
                    for id in deletions { try store.delete(id: id) }
                    for insert in inserts where !insert.request.isEmpty { try store.insert(insert.record, request: insert.request) }
                    for (_, update) in updates { try store.update(update.record, reply: update.reply) }
                }
                for insert in inserts {
                    if !insert.request.isEmpty { state.statistics.jobSubmitted(service: insert.record.service, bytes: insert.record.requestBytes) }
                    actions += state.reply(to: insert.peer, dialect: insert.dialect, service: Titanic.request,
                                           body: [Array("200".utf8), Array(insert.record.id.utf8)])
                    if !insert.request.isEmpty { makeReady(insert.record.id, now: now, front: false) }
                }
                for ack in acks {
                    actions += state.reply(to: ack.peer, dialect: ack.dialect, service: ack.service, body: ack.body)
                }
                for (id, update) in updates where !update.record.state.isActive && waiters[id] != nil {
                    answerWaiters(id, with: finalReplyBody(update.record, reply: update.reply), state: &state)
                }
            } catch {
                let failure = error
                logger.error("job store write failed", metadata: ["error": failure.description])
                let wire = wireError(failure)
                for insert in inserts {
                    if active.removeValue(forKey: insert.record.id) != nil { activeBytes -= insert.record.requestBytes }
                    actions += state.reply(to: insert.peer, dialect: insert.dialect, service: Titanic.request,
                                           body: Titanic.refusal(wire))
                }
                // A cancel or close that did not reach the disk did not happen: the job is back as it
                // was (a running one queued again), and the client hears 500.
                for ack in acks {
                    actions += state.reply(to: ack.peer, dialect: ack.dialect, service: ack.service,
                                           body: Titanic.refusal(wire))
                    guard var job = ack.undo, active[job.id] == nil else { continue }
                    job.state = .queued
                    active[job.id] = job
                    activeBytes += job.requestBytes
                    makeReady(job.id, now: now, front: true)
                }
                // Changes to jobs that did not reach the disk: keep the jobs active so that they are
                // tried again; a restart recovers them from what the disk holds.
                for (id, update) in updates where !update.record.state.isActive && active[id] == nil {
                    var job = update.record
                    job.state = .queued
                    job.finishedAt = nil
                    job.expiresAt = nil
                    job.notBefore = now + configuration.retryBase.value
                    active[id] = job
                    activeBytes += job.requestBytes
                    makeReady(id, now: now, front: false)
                }
                knownServices.subtract(newServices)
            }
        }
        actions += pump(state: &state, now: now)
        for record in statEvents { record(&state.statistics) }
        statEvents.removeAll()
        return actions
    }

    private var newServices: [String] = []
    private var pendingWaiterActions: [BrokerAction] = []

    private func finalReplyBody(_ job: JobRecord, reply: [[UInt8]]?) -> [[UInt8]] {
        switch job.state {
        case .done, .failed:
            return [Array("200".utf8)] + (reply ?? [])
        default:
            let error = job.lastError.flatMap { WireError(jsonFrame: $0) } ?? WireError(.jobDead, "the job \(job.state.rawValue)")
            return [Array("400 \(job.state.rawValue)".utf8), error.jsonFrame]
        }
    }

    private func answerWaiters(_ id: String, with body: [[UInt8]], state: inout BrokerState) {
        guard let waiting = waiters.removeValue(forKey: id) else { return }
        for waiter in waiting {
            pendingWaiterActions += state.reply(to: waiter.peer, dialect: waiter.dialect, service: Titanic.reply, body: body)
        }
    }

    /// Gives ready jobs to idle workers, highest lane first.
    private func pump(state: inout BrokerState, now: Int64) -> [BrokerAction] {
        var actions = pendingWaiterActions
        pendingWaiterActions = []
        for service in lanes.keys {
            while state.canTakeJob(service: service), let id = nextReady(service), var job = active[id] {
                let request: [[UInt8]]
                do {
                    guard let stored = try store.request(id: id) else {
                        forget(id)
                        continue
                    }
                    request = stored
                } catch {
                    logger.error("cannot read a job's request", metadata: ["job.id": id, "error": "\(error)"])
                    makeReady(id, now: now, front: true)
                    break
                }
                let tag = nextTag
                nextTag &+= 1
                let waited = Double(max(0, now - max(job.createdAt, job.notBefore))) / 1_000
                state.statistics.jobWaited(service: service, seconds: waited, now: Instant.now())
                job.state = .running
                job.attempts += 1
                job.startedAt = now
                job.updatedAt = now
                active[id] = job
                updates[id] = (job, nil)
                attempts[tag] = id
                leases[id] = (tag, now + configuration.lease.value)
                actions += state.submitJob(tag: tag, service: service, body: request, now: Instant.now())
            }
        }
        return actions
    }

    // MARK: - Time

    /// Retry times, leases, deadlines, held readers and the result sweep.
    func tick(state: inout BrokerState, now: Int64) -> [BrokerAction] {
        for id in delayed {
            if let record = active[id], record.notBefore <= now {
                delayed.remove(id)
                makeReady(id, now: now, front: true)
            }
        }
        for (id, lease) in leases where lease.until <= now {
            attempts[lease.tag] = nil
            leases[id] = nil
            if let job = active[id] {
                logger.warning("job lease expired", metadata: ["job.id": id, "service": job.service])
                retry(job, error: WireError(.timeout, "the worker held the job past its lease of \(configuration.lease.value) ms", service: job.service), now: now)
            }
        }
        // One pass over the active jobs: deadlines, and the queue depth per lane for the stats.
        var depth: [String: PriorityDepth] = [:]
        for job in active.values {
            if let deadline = job.deadline, deadline <= now {
                finish(job, state: .expired, error: WireError(.deadlineExceeded, "the job's deadline passed before it finished", service: job.service), reply: nil, now: now)
                continue
            }
            guard job.state == .queued else { continue }
            var d = depth[job.service] ?? PriorityDepth()
            switch job.priority {
            case .high: d.high += 1
            case .normal: d.normal += 1
            case .low: d.low += 1
            }
            depth[job.service] = d
        }
        for service in depthServices.union(depth.keys) {
            state.statistics.setJobQueueDepth(service: service, depth[service] ?? PriorityDepth())
        }
        depthServices = Set(depth.keys)
        var actions: [BrokerAction] = []
        for (id, waiting) in waiters {
            let expired = waiting.filter { $0.until <= now }
            guard !expired.isEmpty else { continue }
            waiters[id] = waiting.filter { $0.until > now }
            for waiter in expired {
                actions += state.reply(to: waiter.peer, dialect: waiter.dialect, service: Titanic.reply, body: [Array("300".utf8)])
            }
        }
        if now - lastSweep >= configuration.sweepInterval.value {
            lastSweep = now
            do {
                let swept = try store.batch { () throws(SQLiteError) in try store.sweep(now: now) }
                if swept > 0 { logger.info("swept expired job results", metadata: ["jobs": String(swept)]) }
            } catch {
                logger.error("job sweep failed", metadata: ["error": error.description])
            }
        }
        return actions + commit(state: &state, now: now)
    }

    /// Stops the checkpoint thread (the broker calls this once its loop has ended).
    func close() { checkpointer.stop() }

    /// Readers held for results are told `300` (ask again) when the broker stops.
    func shutdown(state: inout BrokerState) -> [BrokerAction] {
        var actions: [BrokerAction] = []
        for (_, waiting) in waiters {
            for waiter in waiting {
                actions += state.reply(to: waiter.peer, dialect: waiter.dialect, service: Titanic.reply, body: [Array("300".utf8)])
            }
        }
        waiters.removeAll()
        return actions
    }

    // MARK: - Helpers

    /// Refuses a request: `400`/`500` by whether retrying may help, counted in the stats under the
    /// service the job was for (busy, too large, malformed), as the broker counts its own refusals.
    private func refuse(_ peer: [UInt8], _ dialect: Dialect, _ service: String, _ error: WireError,
                        state: inout BrokerState) -> [BrokerAction] {
        state.statistics.errorSent(service: error.service ?? service, code: error.code)
        return state.reply(to: peer, dialect: dialect, service: service, body: Titanic.refusal(error))
    }

    private func storageError(_ error: any Error) -> WireError {
        if let error = error as? SQLiteError { return wireError(JobStoreError(error)) }
        return WireError(.storageFailure, "the job store failed: \(error)")
    }

    private func wireError(_ error: JobStoreError) -> WireError {
        switch error.kind {
        case .full: WireError(.storageFailure, "the broker's disk is full; nothing was stored")
        case .readOnly: WireError(.storageFailure, "the broker's job store is read-only; nothing was stored")
        case .busy: WireError(.storageFailure, "the job store is busy; nothing was stored")
        case .other: WireError(.storageFailure, "the job store failed; nothing was stored")
        }
    }

    private func newID() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<16 {
            let b = UInt8.random(in: 0...255, using: &random)
            bytes.append(digits[Int(b >> 4)])
            bytes.append(digits[Int(b & 0xf)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func status(of job: JobRecord) -> JobStatus {
        JobStatus(id: job.id, service: job.service, state: job.state.rawValue, priority: job.priority.name, attempts: job.attempts,
                  maxAttempts: job.maxAttempts, createdAt: rfc3339(job.createdAt), updatedAt: rfc3339(job.updatedAt),
                  startedAt: job.startedAt.map(rfc3339), finishedAt: job.finishedAt.map(rfc3339), deadline: job.deadline.map(rfc3339),
                  expiresAt: job.expiresAt.map(rfc3339), idempotencyKey: job.idempotencyKey,
                  error: job.lastError.flatMap { WireError(jsonFrame: $0) }?.body)
    }
}

/// Milliseconds since 1970 as RFC 3339 UTC with milliseconds.
func rfc3339(_ milliseconds: Int64) -> String {
    var seconds = time_t(milliseconds / 1_000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    let ms = Int(milliseconds % 1_000)
    func pad(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ms), 3))Z"
}

/// Wall-clock milliseconds since 1970.
func wallClockMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000 + Int64(ts.tv_nsec) / 1_000_000
}
