import QuireWire

/// The `titanic.*` services: submitting, and asking about, cancelling and closing one job.
extension JobMachine {
    mutating func request(_ client: JobClient, service: String, body: [[UInt8]], owner: String, now: Int64,
                          random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        switch service {
        case Titanic.request:
            submit(client, body: body, owner: owner, now: now, random: &random, into: &actions)
        case Titanic.reply, Titanic.close, Titanic.status, Titanic.cancel:
            guard let first = body.first else {
                return refuse(client, service, WireError(.badRequest, "\(service) takes the job id in frame 1", service: service), into: &actions)
            }
            let id = String(decoding: first, as: UTF8.self).lowercased()
            guard Titanic.isJobID(id) else {
                return refuse(client, service, WireError(.unknownJob, "'\(String(id.prefix(64)))' is not a job id (32 hexadecimal characters)", service: service),
                              into: &actions)
            }
            var envelope = BrokerEnvelope()
            if body.count > 1 {
                switch BrokerEnvelope.split(body[1]) {
                case .success(let (parsed, _)): envelope = parsed
                case .failure(let error): return refuse(client, service, error, into: &actions)
                }
            }
            lookUp(JobLookup(client: client, service: service, owner: owner, waitMs: envelope.waitMs), id: id, now: now, into: &actions)
        default:
            refuse(client, service, WireError(.unknownService, "the broker serves titanic.request, .reply, .close, .status and .cancel", service: service),
                   into: &actions)
        }
    }

    /// Answers `lookup` about job `id` from memory where the machine knows the job, else once the store
    /// has read it.
    mutating func lookUp(_ lookup: JobLookup, id: String, now: Int64, into actions: inout [Action]) {
        if let job = inMemory(id) {
            answer(lookup, id: id, job: job, now: now, into: &actions)
        } else {
            actions.append(.load(.job(id: id, then: lookup)))
        }
    }

    /// The job as the machine knows it ahead of the store: `.some(nil)` when closed (this turn, or in a
    /// batch still being written), `nil` when only the store knows.
    func inMemory(_ id: String) -> JobRecord?? {
        if isDeleted(id) { return .some(nil) }
        if let record = active[id] ?? pending.updates[id]?.record ?? writing.last(where: { $0.updates[id] != nil })?.updates[id]?.record {
            return .some(record)
        }
        return nil
    }

    /// Forgets the job and deletes its row with this turn's batch, whose deletions are written before
    /// its inserts (a new job may take the deleted one's idempotency key in the same turn).
    mutating func delete(_ id: String) {
        forget(id)
        pending.deletions.insert(id)
        pending.updates[id] = nil
    }

    /// Closed this turn, or in a batch not yet on disk.
    func isDeleted(_ id: String) -> Bool {
        pending.deletions.contains(id) || writing.contains { $0.deletions.contains(id) }
    }

    /// Updated this turn, or in a batch not yet on disk.
    func hasUnwrittenUpdate(_ id: String) -> Bool {
        pending.updates[id] != nil || writing.contains { $0.updates[id] != nil }
    }

    private mutating func submit(_ client: JobClient, body: [[UInt8]], owner: String, now: Int64,
                                 random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        let service = Titanic.request
        guard body.count >= 2 else {
            return refuse(client, service, WireError(.badRequest, "titanic.request takes the target service in frame 1 and the request body after it", service: service),
                          into: &actions)
        }
        guard case .success(let target) = MajordomoCodec.validateServiceName(body[0]) else {
            return refuse(client, service, WireError(.badRequest, "frame 1 is not a valid service name", service: service), into: &actions)
        }
        if ServiceClass(target).isServedByBroker {
            return refuse(client, service, WireError(.unknownService, "'\(target)' is one of the broker's own services; it cannot be a job", service: target),
                          into: &actions)
        }
        guard knownServices.contains(target) || configuration.services.contains(target) else {
            return refuse(client, service, WireError(.unknownService, "no worker has ever served '\(target)' on this broker", service: target), into: &actions)
        }
        var request = Array(body.dropFirst())
        var options = JobOptions()
        switch BrokerEnvelope.split(request[0]) {
        case .success(let (envelope, frame)):
            request[0] = frame
            options = envelope.job ?? JobOptions()
        case .failure(let error):
            return refuse(client, service, error, into: &actions)
        }
        // Options, each checked with its reason.
        var priority = JobPriority.normal
        if let name = options.priority {
            guard let value = JobPriority(name: name) else {
                return refuse(client, service, WireError(.badRequest, "priority must be high, normal or low, not '\(name)'", service: target), into: &actions)
            }
            priority = value
        }
        if let key = options.idempotencyKey, key.isEmpty || key.utf8.count > 256 {
            return refuse(client, service, WireError(.badRequest, "idempotencyKey must be 1 to 256 bytes", service: target), into: &actions)
        }
        let maxAttempts = options.maxAttempts ?? configuration.defaultMaxAttempts
        guard (1...20).contains(maxAttempts) else {
            return refuse(client, service, WireError(.badRequest, "maxAttempts must be 1…20", service: target), into: &actions)
        }
        // Bounds before arithmetic: a number near Int64.max must be refused, not overflow.
        if let deadline = options.deadlineMs, !(1...Self.longestDeadline).contains(deadline) {
            return refuse(client, service, WireError(.badRequest, "deadlineMs must be 1…\(Self.longestDeadline) (a year)", service: target), into: &actions)
        }
        let ttlSeconds = options.resultTTLSeconds ?? configuration.defaultResultTTL.value / 1_000
        guard ttlSeconds >= 1, ttlSeconds <= configuration.maxResultTTL.value / 1_000 else {
            return refuse(client, service, WireError(.badRequest, "resultTtlSeconds must be 1…\(configuration.maxResultTTL.value / 1_000)", service: target),
                          into: &actions)
        }
        let submission = JobSubmission(client: client, owner: owner, target: target, request: request, priority: priority,
                                       idempotencyKey: options.idempotencyKey, maxAttempts: maxAttempts, deadlineMs: options.deadlineMs,
                                       ttlSeconds: ttlSeconds)
        // Idempotency: the same key from the same submitter is the same job, whatever its state.
        if let key = options.idempotencyKey {
            if joinInsert(ofKey: owner + "\u{0}" + key, client) { return }
            actions.append(.load(.key(owner: owner, key: key, then: submission)))
            return
        }
        admit(submission, now: now, random: &random, into: &actions)
    }

    /// A resubmission of a key whose new job the store has not answered for yet: answered with the
    /// job's submitters once it has. False when no such job is waiting.
    mutating func joinInsert(ofKey ownerKey: String, _ client: JobClient) -> Bool {
        guard let id = insertedKeys[ownerKey] else { return false }
        if let index = pending.inserts.firstIndex(where: { $0.record.id == id }) {
            pending.inserts[index].submitters.append(client)
        } else {
            lateSubmitters[id, default: []].append(client)
        }
        return true
    }

    /// The store's answer to an idempotency key: the job it names, or a new one.
    mutating func keyLoaded(_ existing: JobRecord?, for submission: JobSubmission, now: Int64,
                            random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        if let existing, !isDeleted(existing.id) {
            // A job whose result is past its TTL is gone even before the sweep deletes its row: its key
            // is free again, as a closed job's is, and its row goes with the new job's insert.
            guard existing.isExpired(at: now) else {
                return reply(to: submission.client, service: Titanic.request, body: [Array("200".utf8), Array(existing.id.utf8)], into: &actions)
            }
            delete(existing.id)
        }
        // Another submission of the key, looked up at the same time, may have made the job meanwhile.
        if let key = submission.idempotencyKey, joinInsert(ofKey: submission.owner + "\u{0}" + key, submission.client) { return }
        admit(submission, now: now, random: &random, into: &actions)
    }

    /// A new job, if the queue has room: active at once, answered once it is on disk.
    private mutating func admit(_ submission: JobSubmission, now: Int64, random: inout some RandomNumberGenerator, into actions: inout [Action]) {
        let (service, target) = (Titanic.request, submission.target)
        let bytes = submission.request.reduce(0) { $0 + $1.count }
        if active.count + storeQueued >= configuration.maxActiveJobs {
            return refuse(submission.client, service, WireError(.busy, "the job queue is full (\(configuration.maxActiveJobs) jobs)", service: target,
                                                                limit: configuration.maxActiveJobs), into: &actions)
        }
        if activeBytes + bytes > configuration.maxActiveBytes {
            return refuse(submission.client, service, WireError(.busy, "the job queue is full (\(configuration.maxActiveBytes) bytes)", service: target,
                                                                limit: configuration.maxActiveBytes), into: &actions)
        }
        lastSequence += 1
        let record = JobRecord(
            id: Self.newID(&random), service: target, owner: submission.owner, idempotencyKey: submission.idempotencyKey,
            priority: submission.priority, state: .queued, attempts: 0, maxAttempts: submission.maxAttempts, createdAt: now, updatedAt: now,
            startedAt: nil, finishedAt: nil, notBefore: now, deadline: submission.deadlineMs.map { now + $0 },
            resultTTL: submission.ttlSeconds * 1_000, expiresAt: nil, sequence: lastSequence, requestBytes: bytes, lastError: nil)
        pending.inserts.append(JobBatch.Insert(record: record, request: submission.request, submitters: [submission.client]))
        if let key = submission.idempotencyKey { insertedKeys[submission.owner + "\u{0}" + key] = record.id }
        active[record.id] = record
        activeBytes += bytes
    }

    /// Answers a request about one job, now that the job (or its absence) is known.
    mutating func answer(_ lookup: JobLookup, id: String, job record: JobRecord?, now: Int64, into actions: inout [Action]) {
        let (client, service) = (lookup.client, lookup.service)
        // Someone else's job is reported as unknown, not as forbidden: ids are not an oracle. A result
        // past its TTL is gone even before the sweep deletes the row.
        guard let job = record, job.owner == lookup.owner, !job.isExpired(at: now) else {
            if service == Titanic.close { return reply(to: client, service: service, body: [Array("200".utf8)], into: &actions) }
            return refuse(client, service, WireError(.unknownJob, "no job \(id)", service: service), into: &actions)
        }
        switch service {
        case Titanic.reply:
            if job.state.isActive {
                if let wait = lookup.waitMs, wait > 0 {
                    waiters[id, default: []].append((client, now + min(wait, configuration.maxWait.value), lookup.owner))
                    return
                }
                return reply(to: client, service: service, body: [Array("300".utf8)], into: &actions)
            }
            // An outcome not yet on disk is not handed out: the reader waits for the write (a turn,
            // milliseconds), so that what a reader has seen no crash takes back, and every broker on
            // the store reads the same job as that reader did.
            if hasUnwrittenUpdate(id) {
                waiters[id, default: []].append((client, now + configuration.maxWait.value, lookup.owner))
                return
            }
            finalReply(job, to: client, into: &actions)
        case Titanic.status:
            var status = Self.status(of: job)
            if job.state == .running { status.progress = progress[id] }
            // A state not yet on disk (a job just dispatched, finished, retried) is not told: the reader
            // is answered once the write is, as titanic.reply's outcome is, so that no crash takes back
            // what it was told.
            if hasUnwrittenUpdate(id) {
                return pending.acks.append(JobBatch.Ack(client: client, service: service, body: [], undo: nil, job: id, owner: lookup.owner))
            }
            reply(to: client, service: service, body: [Array("200".utf8), status.jsonFrame], into: &actions)
        case Titanic.cancel:
            guard job.state.isActive else {
                return reply(to: client, service: service, body: [Array("200".utf8), Self.status(of: job).jsonFrame], into: &actions)
            }
            let before = active[id]
            let cancelled = finish(job, state: .cancelled, error: WireError(.jobCancelled, "the job was cancelled", service: job.service),
                                   reply: nil, now: now, into: &actions)
            // Answered once the cancellation is on disk.
            pending.acks.append(JobBatch.Ack(client: client, service: service, body: [Array("200".utf8), Self.status(of: cancelled).jsonFrame], undo: before,
                                             job: id, owner: lookup.owner))
        case Titanic.close:
            let before = active[id]
            delete(id)
            answerWaiters(id, with: Titanic.refusal(WireError(.unknownJob, "the job was closed", service: job.service)), into: &actions)
            pending.acks.append(JobBatch.Ack(client: client, service: service, body: [Array("200".utf8)], undo: before, job: id, owner: lookup.owner))
        default:
            break
        }
    }

    /// The reply to `titanic.reply` for a finished job on disk: `200` and the worker's reply when the
    /// service answered (a worker's own error reply included), `400` and the reason when it never will.
    private func finalReply(_ job: JobRecord, to client: JobClient, into actions: inout [Action]) {
        guard job.state == .done || job.state == .failed else {
            return reply(to: client, service: Titanic.reply, body: Self.finalReplyBody(job, reply: nil), into: &actions)
        }
        actions.append(.load(.reply(job, to: client)))
    }

    static func finalReplyBody(_ job: JobRecord, reply: [[UInt8]]?) -> [[UInt8]] {
        switch job.state {
        case .done, .failed:
            return [Array("200".utf8)] + (reply ?? [])
        default:
            let error = job.lastError.flatMap { WireError(jsonFrame: $0) } ?? WireError(.jobDead, "the job \(job.state.rawValue)")
            return [Array("400 \(job.state.rawValue)".utf8), error.jsonFrame]
        }
    }

    mutating func answerWaiters(_ id: String, with body: [[UInt8]], into actions: inout [Action]) {
        guard let waiting = waiters.removeValue(forKey: id) else { return }
        for waiter in waiting { reply(to: waiter.client, service: Titanic.reply, body: body, into: &actions) }
    }

    /// 32 lowercase hexadecimal digits from `random`.
    static func newID(_ random: inout some RandomNumberGenerator) -> String {
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
}
