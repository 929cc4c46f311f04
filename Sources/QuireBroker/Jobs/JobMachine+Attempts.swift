import QuireWire

/// Attempts: the lanes, handing ready jobs to idle workers, and what becomes of a job when an attempt
/// ends (done, failed, retried with backoff, dead).
extension JobMachine {
    // MARK: - Lanes

    /// Puts a queued job in its lane (or with the delayed ones). In a shared store the store's queue is
    /// the lane: the job is forgotten once its write is committed, and claimed again from the store.
    mutating func makeReady(_ id: String, now: Int64, front: Bool) {
        guard !configuration.shared, let record = active[id] else { return }
        if record.notBefore > now {
            delayed.insert(id)
            return
        }
        var serviceLanes = lanes[record.service] ?? [Deque(), Deque(), Deque()]
        if front { serviceLanes[record.priority.rawValue].prepend(id) } else { serviceLanes[record.priority.rawValue].append(id) }
        lanes[record.service] = serviceLanes
    }

    private mutating func nextReady(_ service: String) -> String? {
        guard var serviceLanes = lanes[service] else { return nil }
        defer { lanes[service] = serviceLanes }
        for lane in 0..<serviceLanes.count {
            while let id = serviceLanes[lane].popFirst() {
                if let record = active[id], record.state == .queued, !delayed.contains(id), leases[id] == nil, loading[id] == nil { return id }
            }
        }
        return nil
    }

    /// Takes a job out of every in-memory structure (not the store).
    mutating func forget(_ id: String) {
        if let record = active.removeValue(forKey: id) { activeBytes -= record.requestBytes }
        delayed.remove(id)
        loading[id] = nil
        if let lease = leases.removeValue(forKey: id) { attempts[lease.tag] = nil }
        progress[id] = nil
        held[id] = nil
        // Lanes are cleaned lazily: `nextReady` skips ids that are no longer queued.
    }

    // MARK: - Dispatch

    /// Gives ready jobs to the workers that can take them, highest lane first: each one's request is
    /// loaded, then dispatched. In a shared store: claims from the store's queue instead.
    mutating func pump(_ workers: JobWorkers, now: Int64, into actions: inout [Action]) {
        if configuration.shared { return claimWork(workers, now: now, into: &actions) }
        var taken: [String: Int] = [:]
        for service in loading.values { taken[service, default: 0] += 1 }
        for service in lanes.keys {
            var free = (workers.capacity[service] ?? 0) - (taken[service] ?? 0)
            while free > 0, let id = nextReady(service) {
                free -= 1
                loading[id] = service
                actions.append(.load(.request(id: id)))
            }
        }
    }

    /// A job's request, read for its next attempt.
    mutating func requestLoaded(id: String, _ result: JobLoad.Result, now: Int64, into actions: inout [Action]) {
        guard let service = loading.removeValue(forKey: id), var job = active[id], job.state == .queued else { return }
        let request: [[UInt8]]
        switch result {
        case .frames(let frames?):
            request = frames
        case .frames(nil), .record:
            forget(id)
            return
        case .failed(let error):
            actions.append(.log(.error, "cannot read a job's request", ["job.id": id, "error": error.description]))
            makeReady(id, now: now, front: true)
            return
        }
        let tag = nextTag
        nextTag &+= 1
        let waited = Double(max(0, now - max(job.createdAt, job.notBefore))) / 1_000
        actions.append(.statistic(.waited(service: service, seconds: waited)))
        job.state = .running
        job.attempts += 1
        job.startedAt = now
        job.updatedAt = now
        active[id] = job
        stage(job, reply: nil)
        attempts[tag] = id
        leases[id] = (tag, now + configuration.lease.value)
        actions.append(.dispatch(tag: tag, service: service, body: request))
    }

    // MARK: - Outcomes

    mutating func attemptReplied(tag: UInt64, body: [[UInt8]], now: Int64, random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        guard let id = attempts.removeValue(forKey: tag), let job = active[id] else { return }  // a stale attempt
        leases[id] = nil
        progress[id] = nil
        let ran = Double(max(0, now - (job.startedAt ?? now))) / 1_000
        actions.append(.statistic(.ran(service: job.service, seconds: ran)))
        if let first = body.first, body.count == 1, let error = WireError(jsonFrame: first) {
            if error.retryable {
                retry(job, error: error, now: now, random: &random, into: &actions)
            } else {
                // The service answered, with an error that no retry will change (a corrupt image).
                finish(job, state: .failed, error: error, reply: body, now: now, into: &actions)
            }
            return
        }
        finish(job, state: .done, error: nil, reply: body, now: now, into: &actions)
        actions.append(.statistic(.completed(service: job.service, bytes: body.reduce(0) { $0 + $1.count })))
    }

    mutating func attemptProgressed(tag: UInt64, _ reported: JobProgress, now: Int64) {
        guard let id = attempts[tag], active[id]?.state == .running else { return }  // a stale attempt
        progress[id] = reported
        // A worker that reports progress is working: a long document is not taken from it at the
        // lease's end while its pages keep coming.
        leases[id] = (tag, now + configuration.lease.value)
    }

    mutating func attemptFailed(tag: UInt64, error: WireError, reachedWorker: Bool, now: Int64,
                                random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        guard let id = attempts.removeValue(forKey: tag), var job = active[id] else { return }
        leases[id] = nil
        progress[id] = nil
        if !reachedWorker {
            job.attempts = max(0, job.attempts - 1)
            job.state = .queued
            job.updatedAt = now
            active[id] = job
            stage(job, reply: nil)
            makeReady(id, now: now, front: true)
            return
        }
        if error.code == .workerLost {
            // A lost worker is not the job's fault: straight back to the front of its lane, but the
            // attempt counts, so that a job that kills every worker ends dead.
            if job.attempts >= job.maxAttempts {
                finish(job, state: .dead, error: WireError(.jobDead, "\(job.attempts) attempts; the last: \(error.message)", service: job.service, attempts: job.attempts),
                       reply: nil, now: now, into: &actions)
            } else {
                job.state = .queued
                job.updatedAt = now
                job.lastError = error.jsonFrame
                active[id] = job
                stage(job, reply: nil)
                makeReady(id, now: now, front: true)
            }
            return
        }
        retry(job, error: error, now: now, random: &random, into: &actions)
    }

    /// A retryable failure: back off (exponential, full jitter) or, with no attempts left, dead.
    mutating func retry(_ job: JobRecord, error: WireError, now: Int64, random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        var job = job
        guard job.attempts < job.maxAttempts else {
            finish(job, state: .dead, error: WireError(.jobDead, "\(job.attempts) attempts; the last: \(error.code.rawValue): \(error.message)",
                                                       service: job.service, attempts: job.attempts), reply: nil, now: now, into: &actions)
            return
        }
        actions.append(.statistic(.retried(service: job.service)))
        let ceiling = min(configuration.retryCap.value, configuration.retryBase.value << min(job.attempts - 1, 20))
        let delay = ceiling / 2 + Int64.random(in: 0...max(1, ceiling / 2), using: &random)
        job.state = .queued
        job.notBefore = now + delay
        job.updatedAt = now
        job.lastError = error.jsonFrame
        active[job.id] = job
        stage(job, reply: nil)
        makeReady(job.id, now: now, front: false)
    }

    /// The job's change, written at the turn's end: in a shared store fenced by the attempt this
    /// broker holds, or, for a job it does not hold (a cancel), by the job still being active.
    mutating func stage(_ job: JobRecord, reply: [[UInt8]]?) {
        let fence: JobBatch.Fence = !configuration.shared ? .none : held[job.id].map { .attempt($0) } ?? .active
        pending.updates[job.id] = JobBatch.Update(record: job, reply: reply, fence: fence)
    }

    /// Moves a job to a final state; its result expires after its TTL.
    @discardableResult
    mutating func finish(_ job: JobRecord, state final: JobState, error: WireError?, reply: [[UInt8]]?, now: Int64,
                         into actions: inout [Action]) -> JobRecord {
        var job = job
        job.state = final
        job.updatedAt = now
        job.finishedAt = now
        job.expiresAt = now + job.resultTTL
        if let error { job.lastError = error.jsonFrame }
        stage(job, reply: reply)
        forget(job.id)
        switch final {
        case .dead:
            actions.append(.log(.warning, "job dead", ["job.id": job.id, "service": job.service, "attempts": String(job.attempts)]))
            actions.append(.statistic(.dead(service: job.service, job: job.id, reason: error?.message)))
        case .failed: actions.append(.statistic(.failed(service: job.service)))
        case .expired: actions.append(.statistic(.expired(service: job.service)))
        default: break
        }
        return job
    }
}
