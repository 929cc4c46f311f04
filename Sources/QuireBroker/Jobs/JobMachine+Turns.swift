import Foundation
import QuireStats
import QuireWire

/// The turn's end and time: writing what a turn changed, answering once it is on disk (or undoing it
/// when it is not), and the time-driven work of ticks.
extension JobMachine {
    // MARK: - Loads

    mutating func loaded(_ load: JobLoad, _ result: JobLoad.Result, now: Int64, random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        switch load {
        case .request(let id):
            requestLoaded(id: id, result, now: now, into: &actions)
        case .key(_, _, let submission):
            switch result {
            case .record(let existing): keyLoaded(existing, for: submission, now: now, random: &random, into: &actions)
            case .frames: keyLoaded(nil, for: submission, now: now, random: &random, into: &actions)
            case .failed(let error): refuse(submission.client, Titanic.request, Self.wireError(error), into: &actions)
            }
        case .job(let id, let lookup):
            switch result {
            case .failed(let error): refuse(lookup.client, lookup.service, Self.wireError(error), into: &actions)
            case .record(let record): answer(lookup, id: id, job: inMemory(id) ?? record, now: now, into: &actions)
            case .frames: answer(lookup, id: id, job: inMemory(id) ?? nil, now: now, into: &actions)
            }
        case .reply(let job, let client):
            switch result {
            case .failed(let error): refuse(client, Titanic.reply, Self.wireError(error), into: &actions)
            case .frames(let frames): reply(to: client, service: Titanic.reply, body: Self.finalReplyBody(job, reply: frames), into: &actions)
            case .record: reply(to: client, service: Titanic.reply, body: Self.finalReplyBody(job, reply: nil), into: &actions)
            }
        }
    }

    // MARK: - The turn's end

    /// Asks for everything this turn changed to be written in one transaction; with nothing to write,
    /// hands ready jobs to idle workers at once.
    mutating func endTurn(_ workers: JobWorkers, now: Int64, into actions: inout [Action]) {
        remember(workers)
        guard !pending.isEmpty else { return pump(workers, now: now, into: &actions) }
        var batch = pending
        batch.now = now
        pending = JobBatch()
        writing.append(batch)
        actions.append(.persist(batch))
    }

    /// The store answered for a new job: its key is the store's to answer from now on; who resubmitted
    /// it while it was being written is answered with its submitters.
    mutating func answered(_ insert: JobBatch.Insert) -> [JobClient] {
        if let key = insert.record.idempotencyKey, insertedKeys[insert.record.owner + "\u{0}" + key] == insert.record.id {
            insertedKeys[insert.record.owner + "\u{0}" + key] = nil
        }
        return lateSubmitters.removeValue(forKey: insert.record.id) ?? []
    }

    /// A batch the store answered for is no longer being written. The store answers them in the order
    /// they were asked for, so it is the oldest (compared by its time alone: a batch's frames may be
    /// megabytes).
    mutating func written(_ batch: JobBatch) {
        if let first = writing.first, first.now == batch.now { writing.removeFirst() }
    }

    /// Services with workers become valid job targets, remembered in the store with this turn's writes.
    mutating func remember(_ workers: JobWorkers) {
        for name in workers.services where !knownServices.contains(name) {
            knownServices.insert(name)
            pending.services.append(name)
        }
    }

    /// The batch is on disk: answer submitters (`200`), cancels and closes, and readers held for jobs
    /// that finished; then hand ready jobs to idle workers. In a shared store, a new job whose key
    /// another broker's job took is that job, and a fenced update the store refused did not happen:
    /// the job is another broker's now.
    mutating func committed(_ batch: JobBatch, outcome: JobWriteOutcome, workers: JobWorkers, now: Int64, into actions: inout [Action]) {
        written(batch)
        for insert in batch.inserts {
            let id = insert.record.id
            let submitters = insert.submitters + answered(insert)
            if let existing = outcome.merged[id] {
                forget(id)
                for submitter in submitters { reply(to: submitter, service: Titanic.request, body: [Array("200".utf8), Array(existing.utf8)], into: &actions) }
                continue
            }
            actions.append(.statistic(.submitted(service: insert.record.service, bytes: insert.record.requestBytes)))
            for submitter in submitters {
                reply(to: submitter, service: Titanic.request, body: [Array("200".utf8), Array(id.utf8)], into: &actions)
            }
            if configuration.shared {
                // The store's queue holds it now; whichever broker has an idle worker claims it.
                forget(id)
                claimDue.insert(insert.record.service)
            } else {
                makeReady(id, now: now, front: false)
            }
        }
        for ack in batch.acks {
            if ack.service == Titanic.status {
                // Told as the job stands now that the write is on disk: the state written, or, where a
                // shared store refused it, the job as the store has it.
                lookUp(JobLookup(client: ack.client, service: ack.service, owner: ack.owner, waitMs: nil), id: ack.job, now: now, into: &actions)
                continue
            }
            if outcome.refused.contains(ack.job) {
                // Finished by another broker first: answered with the job as it is now.
                actions.append(.load(.job(id: ack.job, then: JobLookup(client: ack.client, service: ack.service, owner: ack.owner, waitMs: nil))))
                continue
            }
            reply(to: ack.client, service: ack.service, body: ack.body, into: &actions)
        }
        for (id, update) in batch.updates {
            if outcome.refused.contains(id) {
                // An attempt's outcome that came too late: another broker holds the job now (a cancel
                // of a job already finished is answered above, with the job as it is).
                if case .attempt(let attempt) = update.fence {
                    actions.append(.statistic(.fenceRefused(service: update.record.service)))
                    actions.append(.log(.warning, "a write about a job another broker holds now was refused", ["job.id": id, "service": update.record.service]))
                    if held[id] == attempt { forget(id) }
                }
                continue
            }
            if configuration.shared, update.record.state == .queued {
                if active[id]?.state == .queued { forget(id) }
                claimDue.insert(update.record.service)
            }
            if !update.record.state.isActive && waiters[id] != nil {
                answerWaiters(id, with: Self.finalReplyBody(update.record, reply: update.reply), into: &actions)
            }
        }
        pump(workers, now: now, into: &actions)
    }

    /// The batch did not reach the disk: submitters hear `500`, and what it would have changed is undone.
    mutating func commitFailed(_ batch: JobBatch, error: JobStoreError, workers: JobWorkers, now: Int64, into actions: inout [Action]) {
        written(batch)
        actions.append(.log(.error, "job store write failed", ["error": error.description]))
        let wire = Self.wireError(error)
        for insert in batch.inserts {
            if active.removeValue(forKey: insert.record.id) != nil { activeBytes -= insert.record.requestBytes }
            for submitter in insert.submitters + answered(insert) {
                reply(to: submitter, service: Titanic.request, body: Titanic.refusal(wire), into: &actions)
            }
        }
        // A cancel or close that did not reach the disk did not happen: the job is back as it was (a
        // running one queued again), and the client hears 500.
        for ack in batch.acks {
            reply(to: ack.client, service: ack.service, body: Titanic.refusal(wire), into: &actions)
            guard !configuration.shared, var job = ack.undo, active[job.id] == nil else { continue }
            job.state = .queued
            active[job.id] = job
            activeBytes += job.requestBytes
            makeReady(job.id, now: now, front: true)
        }
        // In a shared store, the store still has such a job running under this broker's lease: it is
        // let go, and runs again once the lease runs out.
        if configuration.shared {
            for (id, update) in batch.updates {
                if case .attempt(let attempt) = update.fence, held[id] == attempt || active[id]?.state == .queued { forget(id) }
            }
        }
        // Changes to jobs that did not reach the disk: keep the jobs active so that they are tried
        // again; a restart recovers them from what the disk holds.
        for (id, update) in batch.updates where !configuration.shared && !update.record.state.isActive && active[id] == nil {
            var job = update.record
            job.state = .queued
            job.finishedAt = nil
            job.expiresAt = nil
            job.notBefore = now + configuration.retryBase.value
            active[id] = job
            activeBytes += job.requestBytes
            makeReady(id, now: now, front: false)
        }
        knownServices.subtract(batch.services)
        pump(workers, now: now, into: &actions)
    }

    // MARK: - Time

    /// Retry times, leases, deadlines, held readers and the result sweep.
    mutating func tick(now: Int64, random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        for id in delayed {
            if let record = active[id], record.notBefore <= now {
                delayed.remove(id)
                makeReady(id, now: now, front: true)
            }
        }
        for (id, lease) in leases where lease.until <= now {
            attempts[lease.tag] = nil
            leases[id] = nil
            progress[id] = nil
            if let job = active[id] {
                actions.append(.log(.warning, "job lease expired", ["job.id": id, "service": job.service]))
                retry(job, error: WireError(.timeout, "the worker held the job past its lease of \(configuration.lease.value) ms", service: job.service),
                      now: now, random: &random, into: &actions)
            }
        }
        // One pass over the active jobs: deadlines, and the queue depth per lane for the stats.
        var depth: [String: PriorityDepth] = [:]
        for job in active.values {
            if let deadline = job.deadline, deadline <= now {
                finish(job, state: .expired, error: WireError(.deadlineExceeded, "the job's deadline passed before it finished", service: job.service),
                       reply: nil, now: now, into: &actions)
                continue
            }
            guard job.state == .queued, !configuration.shared else { continue }
            depth[job.service, default: PriorityDepth()].add(job.priority)
        }
        if !configuration.shared {
            for service in depthServices.union(depth.keys) {
                actions.append(.statistic(.queueDepth(service: service, depth[service] ?? PriorityDepth())))
            }
            depthServices = Set(depth.keys)
        }
        for (id, waiting) in waiters {
            let expired = waiting.filter { $0.until <= now }
            guard !expired.isEmpty else { continue }
            waiters[id] = waiting.filter { $0.until > now }
            for waiter in expired { reply(to: waiter.client, service: Titanic.reply, body: [Array("300".utf8)], into: &actions) }
        }
        if now - lastSweep >= configuration.sweepInterval.value {
            lastSweep = now
            actions.append(.sweep(before: now))
        }
        if configuration.shared { sharedTick(now: now, into: &actions) }
    }

    // MARK: - Helpers

    static func wireError(_ error: JobStoreError) -> WireError {
        switch error.kind {
        case .full: WireError(.storageFailure, "the job store's disk is full; nothing was stored")
        case .readOnly: WireError(.storageFailure, "the broker's job store is read-only; nothing was stored")
        case .busy: WireError(.storageFailure, "the job store is busy; nothing was stored")
        case .other: WireError(.storageFailure, "the job store failed; nothing was stored")
        case .lost: WireError(.storageFailure, "the broker lost its job store; whether this was stored is not known: send it again with its idempotency key once the store is back (to this broker or another that serves it)")
        }
    }

    static func status(of job: JobRecord) -> JobStatus {
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
