import QuireSupport
import QuireWire

/// The whole broker as one pure state machine: ``BrokerState`` (Majordomo: peers, queues, workers,
/// tokens) and, with a data folder, ``JobMachine`` (durable jobs), composed the way async-http-client's
/// `HTTPConnectionPool.StateMachine` composes its HTTP/1 and HTTP/2 machines.
///
/// The loop sees one event type and one action type. Each inner machine speaks its own: a `.titanic`
/// action of the broker becomes a request event of the job machine, a job's `.dispatch` becomes an
/// attempt submitted to the broker, and so on, until only what needs the outside world is left
/// (sockets, the store, logs). Time — monotonic for the broker, wall-clock for jobs — and randomness are
/// passed in with every event.
struct BrokerMachine: Sendable {
    enum Event: Sendable {
        /// A message arrived on the ROUTER.
        case message(peer: [UInt8], frames: [[UInt8]])
        /// A send to `peer` failed: the peer is gone or its queue is full.
        case undeliverable(peer: [UInt8], frames: [[UInt8]])
        /// The loop drained a batch of messages: what they changed in the job store is written now.
        case endOfTurn
        case tick
        case shutdown
        /// What the store held for a ``Action/load(_:)``.
        case loaded(JobLoad, JobLoad.Result)
        /// A ``Action/persist(_:)`` is on disk (in a shared store, but for what the outcome names).
        case committed(JobBatch, JobWriteOutcome)
        /// A ``Action/persist(_:)`` failed; nothing of it was written.
        case commitFailed(JobBatch, JobStoreError)
        /// The store's connection is gone: durable jobs pause until ``jobsRecovered(_:)`` (new ones are
        /// refused; a shared store's jobs this broker's workers run stay its own while their leases last).
        case storeLost(JobStoreError)
        /// The store is back: durable jobs go on (a shared store's machine as it was; the services the
        /// store knows are added).
        case jobsRecovered(JobMachine)
        /// A write on the store's thread (one transaction): how long it took, whether it committed.
        case storeWrote(seconds: Double, committed: Bool)
        /// A shared store answered a ``Action/claim(_:)``.
        case claimed(JobClaim, Result<[ClaimedJob], JobStoreError>, seconds: Double)
        /// A shared store renewed the leases of `held`, of the jobs `asked` for (`nil`: it failed).
        case renewed(asked: [String], held: Set<String>?)
        /// A pass over a shared store is done (`nil`: it failed).
        case maintained(JobMaintenance?)
        /// Other brokers of a shared store committed work for these services, or finished these jobs.
        case notified(work: Set<String>, done: Set<String>)
    }

    enum Action: Sendable, Equatable {
        case send(peer: [UInt8], frames: [[UInt8]])
        case log(Logger.Level, String, [String: String])
        /// Write the batch in one transaction, then send ``Event/committed(_:)`` or ``Event/commitFailed(_:_:)``.
        case persist(JobBatch)
        /// Read from the store, then send ``Event/loaded(_:_:)``.
        case load(JobLoad)
        /// Delete finished jobs whose results expired at or before this wall-clock time.
        case sweep(before: Int64)
        /// Reconnect to the store (backing off while it cannot), and send ``Event/jobsRecovered(_:)``.
        case recoverJobs(JobConfiguration)
        /// A shared store: claim jobs, renew leases, or make a pass (``JobMachine/Action``).
        case claim(JobClaim)
        case renew([String], until: Int64)
        case maintain(now: Int64)
    }

    var broker: BrokerState
    /// `nil` without a data folder or store (`titanic.*` then answers `service_unavailable`), or while
    /// a lost store of one broker is being recovered (a shared store's machine stays, paused).
    var jobs: JobMachine?
    /// Durable jobs are paused: the store was lost and is being recovered.
    private(set) var jobsPaused = false
    /// Attempt tags the machine before a recovery handed out: the next machine's come after them, so
    /// that a late reply to an old attempt can never be taken for a new one.
    private var tagFloor: UInt64 = 1

    init(broker: BrokerState, jobs: JobMachine?) {
        self.broker = broker
        self.jobs = jobs
        self.broker.servesJobs = jobs != nil
    }

    /// `now` is monotonic (heartbeats, timeouts); `wallClock` is milliseconds since 1970 (token times,
    /// jobs, which outlive the process).
    mutating func handle(_ event: Event, now: Instant, wallClock: Int64, random: inout some RandomNumberGenerator) -> [Action] {
        var actions: [Action] = []
        broker.wallClockSeconds = wallClock / 1_000
        switch event {
        case .message(let peer, let frames):
            absorb(broker.handle(.message(peer: peer, frames: frames), now: now), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .undeliverable(let peer, let frames):
            absorb(broker.handle(.undeliverable(peer: peer, frames: frames), now: now), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .endOfTurn:
            guard jobs != nil else { break }
            let workers = broker.jobWorkers
            job(.endOfTurn(workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .tick:
            absorb(broker.handle(.tick, now: now), now: now, wallClock: wallClock, random: &random, into: &actions)
            guard jobs != nil else { break }
            let workers = broker.jobWorkers
            job(.tick(workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .shutdown:
            // The broker stops first, so that the last commit hands no job to a leaving worker. Jobs
            // stay in the store; those running now are queued again at the next start (in a shared
            // store, at once: the last commit gives them back to the other brokers).
            absorb(broker.handle(.shutdown, now: now), now: now, wallClock: wallClock, random: &random, into: &actions)
            guard jobs != nil else { break }
            job(.shutdown, now: now, wallClock: wallClock, random: &random, into: &actions)
            if jobs?.configuration.shared == true, !jobsPaused { jobs?.releaseHeld(now: wallClock) }
            let workers = broker.jobWorkers
            job(.endOfTurn(workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .loaded(let load, let result):
            job(.loaded(load, result), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .committed(let batch, let outcome):
            let workers = broker.jobWorkers
            job(.committed(batch, workers, outcome), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .commitFailed(let batch, let error):
            let workers = broker.jobWorkers
            job(.commitFailed(batch, error, workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .storeLost(let error):
            guard let lost = jobs, !jobsPaused else { break }
            // Whatever is still being written can no longer be promised: its submitters hear so now.
            // (A shared store's machine stays: the store's thread answers for those batches itself.)
            let workers = broker.jobWorkers
            if !lost.configuration.shared {
                for batch in lost.writing { job(.commitFailed(batch, error, workers), now: now, wallClock: wallClock, random: &random, into: &actions) }
            }
            // Readers held waiting for a result hear `300` (not yet), as at a shutdown, and ask again.
            job(.shutdown, now: now, wallClock: wallClock, random: &random, into: &actions)
            if lost.configuration.shared {
                // The jobs this broker's workers run stay its own while their leases last: their
                // outcomes are written, fenced, once the store is back.
                jobs?.pause(true)
            } else {
                tagFloor = max(tagFloor, jobs?.nextTag ?? tagFloor)
                jobs = nil
            }
            jobsPaused = true
            broker.servesJobs = false
            broker.statistics.storeLost()
            actions.append(.log(.error, "lost the job store: durable jobs paused while it is recovered", ["error": error.description]))
            actions.append(.recoverJobs(lost.configuration))
        case .jobsRecovered(var recovered):
            if jobs?.configuration.shared == true {
                jobs?.pause(false)
                jobs?.knownServices.formUnion(recovered.knownServices)
            } else {
                recovered.nextTag = max(recovered.nextTag, tagFloor)
                jobs = recovered
            }
            jobsPaused = false
            broker.servesJobs = true
            broker.statistics.storeRecovered()
            actions.append(.log(.notice, "job store recovered: durable jobs resumed", ["active": String(jobs?.activeCount ?? 0)]))
        case .storeWrote(let seconds, let committed):
            broker.statistics.storeWrote(seconds: seconds, committed: committed, now: now)
        case .claimed(let claim, let result, let seconds):
            let workers = broker.jobWorkers
            job(.claimed(claim, result, seconds: seconds, workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .renewed(let asked, let held):
            job(.renewed(asked: asked, held: held), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .maintained(let found):
            let workers = broker.jobWorkers
            job(.maintained(found, workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        case .notified(let work, let done):
            guard !jobsPaused else { break }
            let workers = broker.jobWorkers
            job(.notified(work: work, done: done, workers), now: now, wallClock: wallClock, random: &random, into: &actions)
        }
        return actions
    }

    /// Carries out what the broker machine asked for that concerns the job machine; passes the rest on.
    private mutating func absorb(_ brokerActions: [BrokerAction], now: Instant, wallClock: Int64, random: inout some RandomNumberGenerator,
                                 into actions: inout [Action]) {
        for action in brokerActions {
            switch action {
            case .send(let peer, let frames):
                actions.append(.send(peer: peer, frames: frames))
            case .log(let level, let message, let metadata):
                actions.append(.log(level, message, metadata))
            case .titanic(let peer, let dialect, let service, let body, let owner):
                guard jobs != nil, !jobsPaused else {
                    let error = jobsPaused
                        ? WireError(.serviceUnavailable, "durable jobs are paused at this broker: it lost its job store and is recovering it "
                                    + "(another broker may serve it meanwhile); nothing was stored", service: service)
                        : WireError(.serviceUnavailable, "this broker keeps no durable jobs: it was started without a data folder (--data) or a store (--store)", service: service)
                    absorb(broker.reply(to: peer, dialect: dialect, service: service, body: Titanic.refusal(error)), now: now, wallClock: wallClock,
                           random: &random, into: &actions)
                    continue
                }
                let workers = broker.jobWorkers
                job(.request(peer: peer, dialect: dialect, service: service, body: body, owner: owner, workers: workers), now: now, wallClock: wallClock,
                    random: &random, into: &actions)
            case .jobReply(let tag, let body):
                job(.attemptReplied(tag: tag, body: body), now: now, wallClock: wallClock, random: &random, into: &actions)
            case .jobPartial(let tag, let body):
                if let progress = JobProgress(partial: body) {
                    job(.attemptProgressed(tag: tag, progress), now: now, wallClock: wallClock, random: &random, into: &actions)
                }
            case .jobFailed(let tag, let error, let reachedWorker):
                job(.attemptFailed(tag: tag, error: error, reachedWorker: reachedWorker), now: now, wallClock: wallClock, random: &random, into: &actions)
            }
        }
    }

    /// Hands an event to the job machine (modified in place) and carries out what it asks of the broker.
    private mutating func job(_ event: JobMachine.Event, now: Instant, wallClock: Int64, random: inout some RandomNumberGenerator,
                              into actions: inout [Action]) {
        guard let jobActions = jobs?.handle(event, now: wallClock, random: &random) else { return }
        for action in jobActions {
            switch action {
            case .persist(let batch):
                actions.append(.persist(batch))
            case .load(let load):
                actions.append(.load(load))
            case .sweep(let before):
                actions.append(.sweep(before: before))
            case .claim(let claim):
                actions.append(.claim(claim))
            case .renew(let ids, let until):
                actions.append(.renew(ids, until: until))
            case .maintain(let now):
                actions.append(.maintain(now: now))
            case .log(let level, let message, let metadata):
                actions.append(.log(level, message, metadata))
            case .dispatch(let tag, let service, let body):
                absorb(broker.submitJob(tag: tag, service: service, body: body, now: now), now: now, wallClock: wallClock, random: &random, into: &actions)
            case .reply(let peer, let dialect, let service, let body):
                absorb(broker.reply(to: peer, dialect: dialect, service: service, body: body), now: now, wallClock: wallClock, random: &random, into: &actions)
            case .statistic(let statistic):
                broker.statistics.record(statistic, now: now)
            }
        }
    }
}

extension BrokerState {
    /// What the workers can take now, for the job machine.
    var jobWorkers: JobWorkers {
        var workers = JobWorkers()
        for (name, record) in services where record.workerCount > 0 {
            workers.services.append(name)
            let capacity = jobCapacity(service: name)
            if capacity > 0 { workers.capacity[name] = capacity }
        }
        return workers
    }
}

extension BrokerStatistics {
    /// Applies one of the job machine's figures.
    mutating func record(_ statistic: JobStatistic, now: Instant) {
        switch statistic {
        case .submitted(let service, let bytes): jobSubmitted(service: service, bytes: bytes)
        case .waited(let service, let seconds): jobWaited(service: service, seconds: seconds, now: now)
        case .ran(let service, let seconds): jobRan(service: service, seconds: seconds, now: now)
        case .completed(let service, let bytes): jobCompleted(service: service, bytes: bytes)
        case .failed(let service): jobFailed(service: service)
        case .retried(let service): jobRetried(service: service)
        case .expired(let service): jobExpired(service: service)
        case .dead(let service, let job, let reason): jobDead(service: service, job: job, reason: reason)
        case .queueDepth(let service, let depth): setJobQueueDepth(service: service, depth)
        case .refused(let service, let code): errorSent(service: service, code: code)
        case .claimed(_, let count, let seconds): storeClaimed(jobs: count, seconds: seconds, now: now)
        case .leasesExpired(_, let count): store?.leasesExpired += count
        case .leaseLost: store?.leasesLost += 1
        case .fenceRefused: store?.fencedWritesRefused += 1
        }
    }
}
