import QuireStats
import QuireWire

/// A store several brokers serve at once (``JobConfiguration/shared``, PostgreSQL). The store owns the
/// queued jobs; this machine holds the new jobs until they are committed, and the jobs it claimed for
/// its own workers while they run:
/// - a service whose workers are idle claims queued jobs from the store when work may be there (its
///   own commit, another broker's notification, a full claim, or the poll);
/// - it renews its claims' leases while it holds them, and lets go of those the store no longer says
///   are its own (another broker took the job after the lease ran out, or a client closed it);
/// - a job it sends back to the queue (a retry, a lost worker) is the store's again once committed;
/// - it answers `titanic.*` for any job from the store, and rereads those its readers wait for when
///   the store says they finished (or at the poll).
extension JobMachine {
    /// Claims queued jobs for the services whose workers are idle and that may have work.
    mutating func claimWork(_ workers: JobWorkers, now: Int64, into actions: inout [Action]) {
        for (service, capacity) in workers.capacity where capacity > (lastCapacity[service] ?? 0) { claimDue.insert(service) }
        lastCapacity = workers.capacity
        guard !paused else { return }
        for (service, capacity) in workers.capacity.sorted(by: { $0.key < $1.key }) where claimDue.contains(service) {
            let free = capacity - (claiming[service] ?? 0)
            guard free > 0 else { continue }
            claimDue.remove(service)
            claiming[service, default: 0] += free
            actions.append(.claim(JobClaim(service: service, count: free, now: now, until: now + configuration.storeLease.value)))
        }
    }

    /// The store's answer to a claim: each job taken starts its attempt on this broker's workers.
    mutating func claimed(_ claim: JobClaim, _ result: Result<[ClaimedJob], JobStoreError>, seconds: Double, workers: JobWorkers, now: Int64,
                          into actions: inout [Action]) {
        claiming[claim.service] = max(0, (claiming[claim.service] ?? 0) - claim.count)
        switch result {
        case .failure(let error):
            actions.append(.log(.error, "claiming jobs failed", ["service": claim.service, "error": error.description]))
            claimDue.insert(claim.service)
            return
        case .success(let jobs):
            actions.append(.statistic(.claimed(service: claim.service, count: jobs.count, seconds: seconds)))
            for job in jobs { start(job, now: now, into: &actions) }
            // A claim that got all it asked for may have left more behind.
            if jobs.count == claim.count { claimDue.insert(claim.service) }
        }
        // The workers as they are once these jobs are theirs (`workers` was counted before).
        var workers = workers
        if case .success(let jobs) = result, let free = workers.capacity[claim.service] {
            workers.capacity[claim.service] = max(0, free - jobs.count)
            lastCapacity[claim.service] = workers.capacity[claim.service]
        }
        pump(workers, now: now, into: &actions)
    }

    /// A claimed job's attempt, handed to the service's workers.
    private mutating func start(_ claimed: ClaimedJob, now: Int64, into actions: inout [Action]) {
        let job = claimed.record
        // An earlier attempt of this broker's, whose lease ran out before it ended, is over.
        if active[job.id] != nil { forget(job.id) }
        active[job.id] = job
        activeBytes += job.requestBytes
        held[job.id] = job.attempts
        let tag = nextTag
        nextTag &+= 1
        attempts[tag] = job.id
        leases[job.id] = (tag, now + configuration.lease.value)
        let waited = Double(max(0, now - max(job.createdAt, job.notBefore))) / 1_000
        actions.append(.statistic(.waited(service: job.service, seconds: waited)))
        actions.append(.dispatch(tag: tag, service: job.service, body: claimed.request))
    }

    /// Jobs whose lease the store did not renew are no longer this broker's: their attempts end here,
    /// and a late reply from their workers is dropped.
    mutating func renewed(asked: [String], held renewedIDs: Set<String>?, into actions: inout [Action]) {
        renewing = false
        guard let stillHeld = renewedIDs else { return }
        for id in asked where !stillHeld.contains(id) && held[id] != nil {
            let service = active[id]?.service ?? ""
            actions.append(.log(.warning, "the store gave a job this broker held to another broker, or it was closed", ["job.id": id, "service": service]))
            actions.append(.statistic(.leaseLost(service: service)))
            forget(id)
        }
    }

    /// What a pass over the store found: claims run out (their jobs are work to claim), jobs finished
    /// (readers may wait for them), the queue's depth (the stats, and the queue's bound), and the
    /// services every broker has seen.
    mutating func maintained(_ found: JobMaintenance?, workers: JobWorkers, now: Int64, into actions: inout [Action]) {
        maintaining = false
        guard let found else { return }
        for (service, count) in found.leasesExpired.sorted(by: { $0.key < $1.key }) {
            actions.append(.log(.warning, "queued again jobs whose broker stopped renewing its lease", ["service": service, "jobs": String(count)]))
            actions.append(.statistic(.leasesExpired(service: service, count: count)))
            claimDue.insert(service)
        }
        for (id, service) in found.dead.sorted(by: { $0.key < $1.key }) {
            actions.append(.log(.warning, "job dead", ["job.id": id, "service": service, "reason": JobMaintenance.deadOfSilence]))
            actions.append(.statistic(.dead(service: service, job: id, reason: JobMaintenance.deadOfSilence)))
        }
        // Services another broker's workers serve are targets here too.
        knownServices.formUnion(found.services)
        storeQueued = found.depth.values.reduce(0) { $0 + $1.total }
        for service in depthServices.union(found.depth.keys).sorted() {
            actions.append(.statistic(.queueDepth(service: service, found.depth[service] ?? PriorityDepth())))
        }
        depthServices = Set(found.depth.keys)
        recheckWaiters(Set(found.finished), now: now, into: &actions)
        pump(workers, now: now, into: &actions)
    }

    /// The poll and the leases, at a tick: a pass over the store and a claim for every service with
    /// idle workers each ``JobConfiguration/storePoll``; leases renewed every third of their length.
    mutating func sharedTick(now: Int64, into actions: inout [Action]) {
        guard !paused else { return }
        if now - lastPoll >= configuration.storePoll.value, !maintaining {
            lastPoll = now
            maintaining = true
            actions.append(.maintain(now: now))
            claimDue.formUnion(knownServices)
            recheckWaiters(nil, now: now, into: &actions)
        }
        if !held.isEmpty, now - lastRenew >= configuration.storeLease.value / 3, !renewing {
            lastRenew = now
            renewing = true
            actions.append(.renew(held.keys.sorted(), until: now + configuration.storeLease.value))
        }
    }

    /// Readers held for jobs this broker does not hold (`ids`, or all of them) read the job again from
    /// the store: answered if it finished, held again for the rest of their wait if not.
    mutating func recheckWaiters(_ ids: Set<String>?, now: Int64, into actions: inout [Action]) {
        guard configuration.shared else { return }
        for id in (ids ?? Set(waiters.keys)).sorted() where active[id] == nil && inMemory(id) == nil {
            guard let waiting = waiters.removeValue(forKey: id) else { continue }
            for waiter in waiting {
                let lookup = JobLookup(client: waiter.client, service: Titanic.reply, owner: waiter.owner, waitMs: max(0, waiter.until - now))
                actions.append(.load(.job(id: id, then: lookup)))
            }
        }
    }

    /// The broker stops: the jobs it holds go back to the store's queue at once (their attempts
    /// counted), for the other brokers, instead of waiting for their leases to run out.
    mutating func releaseHeld(now: Int64) {
        for id in held.keys.sorted() {
            guard var job = active[id], job.state == .running else { continue }
            job.state = .queued
            job.updatedAt = now
            stage(job, reply: nil)
        }
    }

    /// The store was lost (`true`) or is back (`false`): while lost nothing is claimed, renewed or
    /// maintained; once back, leases are renewed and work looked for at once.
    mutating func pause(_ lost: Bool) {
        paused = lost
        claiming.removeAll()
        renewing = false
        maintaining = false
        if !lost {
            lastPoll = 0
            lastRenew = 0
        }
    }
}
