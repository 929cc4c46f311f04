import QuireStats
import QuireSupport
import QuireWire

/// Durable jobs as a pure state machine: the `titanic.*` services (RFC 9 and Quire's extensions),
/// priority lanes, leases, retries with backoff, deadlines and result expiry.
///
/// Events in, actions out; it never touches the store, a socket or a clock. Time (wall-clock
/// milliseconds since 1970: jobs outlive the process) and randomness (job ids, retry jitter) are passed
/// in. What it must keep it asks for with ``Action/persist(_:)`` and answers its submitters only once
/// told ``Event/committed(_:_:)``; what lives only in the store (requests, replies, finished jobs) it
/// asks for with ``Action/load(_:)`` and goes on when told ``Event/loaded(_:_:)``. The load carries what
/// the machine was doing, so nothing waits inside it. ``BrokerMachine`` composes it with ``BrokerState``.
struct JobMachine: Sendable {
    enum Event: Sendable {
        /// A request to one of the `titanic.*` services; `owner` is the token subject ("" without auth).
        /// `workers` are the broker's now: a service whose first worker registered earlier in this same
        /// turn is already a valid target.
        case request(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], owner: String, workers: JobWorkers)
        /// The final reply to an attempt (``Action/dispatch(tag:service:body:)``).
        case attemptReplied(tag: UInt64, body: [[UInt8]])
        /// The worker of an attempt says how far it has got (a PARTIAL reply): kept for
        /// `titanic.status`, and the attempt's lease renewed.
        case attemptProgressed(tag: UInt64, JobProgress)
        /// An attempt ended without a reply; `reachedWorker` is false when no worker ever received it.
        case attemptFailed(tag: UInt64, error: WireError, reachedWorker: Bool)
        /// What the store holds for a ``Action/load(_:)``.
        case loaded(JobLoad, JobLoad.Result)
        /// The loop's turn is over: write what it changed (one transaction for the whole turn).
        case endOfTurn(JobWorkers)
        /// A ``Action/persist(_:)`` is on disk; in a shared store, but for what the outcome names.
        case committed(JobBatch, JobWorkers, JobWriteOutcome)
        /// A ``Action/persist(_:)`` did not reach the disk; nothing of it happened.
        case commitFailed(JobBatch, JobStoreError, JobWorkers)
        /// Time passed: retry times, leases, deadlines, held readers, the result sweep; then the turn ends.
        case tick(JobWorkers)
        /// The broker stops: readers held for results are told to ask again.
        case shutdown
        /// A shared store answered a ``Action/claim(_:)``, after `seconds`.
        case claimed(JobClaim, Result<[ClaimedJob], JobStoreError>, seconds: Double, JobWorkers)
        /// A shared store renewed the leases of `held`, of the jobs `asked` for (`nil`: it failed).
        case renewed(asked: [String], held: Set<String>?)
        /// A pass over a shared store is done (``Action/maintain(now:)``; `nil`: it failed).
        case maintained(JobMaintenance?, JobWorkers)
        /// Other brokers committed work for these services, or finished these jobs.
        case notified(work: Set<String>, done: Set<String>, JobWorkers)
    }

    enum Action: Sendable, Equatable {
        /// Write this batch in one transaction, then send ``Event/committed(_:_:)`` or ``Event/commitFailed(_:_:_:)``.
        case persist(JobBatch)
        /// Read this from the store, then send ``Event/loaded(_:_:)``.
        case load(JobLoad)
        /// Delete finished jobs whose results expired at or before this time.
        case sweep(before: Int64)
        /// Hand one attempt of a job to the service's workers; its outcome comes back tagged.
        case dispatch(tag: UInt64, service: String, body: [[UInt8]])
        /// A FINAL reply to a client of the `titanic.*` services.
        case reply(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]])
        case statistic(JobStatistic)
        case log(Logger.Level, String, [String: String])
        /// A shared store: claim queued jobs for idle workers, then send ``Event/claimed(_:_:seconds:_:)``.
        case claim(JobClaim)
        /// A shared store: extend the leases of the jobs this broker holds, then send ``Event/renewed(asked:held:)``.
        case renew([String], until: Int64)
        /// A shared store: a pass for leases run out, deadlines and queue depth; then ``Event/maintained(_:_:)``.
        case maintain(now: Int64)
    }

    let configuration: JobConfiguration

    /// Active (queued or running) jobs, by id. Finished jobs live only in the store.
    var active: [String: JobRecord] = [:]
    /// Ready jobs per service, one lane per priority (high, normal, low), FIFO within a lane.
    var lanes: [String: [Deque<String>]] = [:]
    /// Queued jobs waiting for their retry time.
    var delayed: Set<String> = []
    /// Jobs taken from a lane whose request is being loaded, with their service.
    var loading: [String: String] = [:]
    /// Running attempts: tag → job id, and the lease per job.
    var attempts: [UInt64: String] = [:]
    var leases: [String: (tag: UInt64, until: Int64)] = [:]
    /// What each running job's current attempt last said of its progress (memory only: an attempt
    /// does not outlive the broker).
    var progress: [String: JobProgress] = [:]
    var nextTag: UInt64 = 1
    var activeBytes = 0
    var knownServices: Set<String>
    var lastSequence: Int64
    /// What this turn changed, written at its end.
    var pending = JobBatch()
    /// Idempotency keys of new jobs the store has not answered for yet (owner NUL key → job id): in
    /// this turn's batch or in one being written. A resubmission meanwhile is the same job: it joins
    /// the submitters of an insert still in this turn, or waits in ``lateSubmitters`` for its batch.
    var insertedKeys: [String: String] = [:]
    /// Resubmitters of a job whose insert is being written, answered with its submitters.
    var lateSubmitters: [String: [JobClient]] = [:]
    /// Batches asked to be written and not yet answered (`committed` or `commitFailed`), oldest first:
    /// the store works on a thread of its own, so a read the machine asked for before a turn's batch
    /// can come back before that batch is on disk, and is read in its light.
    var writing: [JobBatch] = []
    /// Requests held for a job to finish (`titanic.reply` with `waitMs`), with who asked.
    var waiters: [String: [(client: JobClient, until: Int64, owner: String)]] = [:]
    var lastSweep: Int64 = 0
    var depthServices: Set<String> = []

    // A store brokers share (``JobConfiguration/shared``): the store owns the queued jobs.
    /// Jobs this broker claimed and holds, with the attempt it claimed (the fence of its writes).
    var held: [String: Int] = [:]
    /// Jobs asked for per service by claims not yet answered.
    var claiming: [String: Int] = [:]
    /// Services the store may have work for: claimed for at the next turn with idle workers.
    var claimDue: Set<String> = []
    /// Idle workers per service when last looked: more of them (a worker joined, or finished a job)
    /// is a reason to claim at once.
    var lastCapacity: [String: Int] = [:]
    var lastPoll: Int64 = 0
    var lastRenew: Int64 = 0
    /// A renewal, or a pass, asked for and not answered yet: no other is asked for meanwhile (a store
    /// that hangs must not pile them up).
    var renewing = false
    var maintaining = false
    /// Queued jobs in the store at the last pass: the queue's bound counts them.
    var storeQueued = 0
    /// The store is lost and being reconnected: nothing is claimed, renewed or maintained meanwhile.
    var paused = false

    /// The longest deadline a submitter may give, in milliseconds: a year.
    static let longestDeadline: Int64 = 365 * 86_400_000

    /// A machine holding the jobs the store recovered (active ones, oldest first), the services ever
    /// seen, and the store's last submission number.
    init(configuration: JobConfiguration, recovered: [JobRecord], knownServices: [String], lastSequence: Int64, now: Int64) {
        self.configuration = configuration
        self.knownServices = Set(knownServices)
        self.lastSequence = lastSequence
        for record in recovered {
            active[record.id] = record
            activeBytes += record.requestBytes
            makeReady(record.id, now: now, front: false)
        }
    }

    var activeCount: Int { active.count }

    mutating func handle(_ event: Event, now: Int64, random: inout some RandomNumberGenerator) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .request(let peer, let dialect, let service, let body, let owner, let workers):
            remember(workers)
            request(JobClient(peer: peer, dialect: dialect), service: service, body: body, owner: owner, now: now, random: &random, into: &actions)
        case .attemptReplied(let tag, let body):
            attemptReplied(tag: tag, body: body, now: now, random: &random, into: &actions)
        case .attemptProgressed(let tag, let progress):
            attemptProgressed(tag: tag, progress, now: now)
        case .attemptFailed(let tag, let error, let reachedWorker):
            attemptFailed(tag: tag, error: error, reachedWorker: reachedWorker, now: now, random: &random, into: &actions)
        case .loaded(let load, let result):
            loaded(load, result, now: now, random: &random, into: &actions)
        case .endOfTurn(let workers):
            endTurn(workers, now: now, into: &actions)
        case .committed(let batch, let workers, let outcome):
            committed(batch, outcome: outcome, workers: workers, now: now, into: &actions)
        case .commitFailed(let batch, let error, let workers):
            commitFailed(batch, error: error, workers: workers, now: now, into: &actions)
        case .tick(let workers):
            tick(now: now, random: &random, into: &actions)
            endTurn(workers, now: now, into: &actions)
        case .shutdown:
            for (_, waiting) in waiters {
                for waiter in waiting { reply(to: waiter.client, service: Titanic.reply, body: [Array("300".utf8)], into: &actions) }
            }
            waiters.removeAll()
        case .claimed(let claim, let result, let seconds, let workers):
            claimed(claim, result, seconds: seconds, workers: workers, now: now, into: &actions)
        case .renewed(let asked, let renewedIDs):
            renewed(asked: asked, held: renewedIDs, into: &actions)
        case .maintained(let found, let workers):
            maintained(found, workers: workers, now: now, into: &actions)
        case .notified(let work, let done, let workers):
            claimDue.formUnion(work)
            recheckWaiters(done, now: now, into: &actions)
            pump(workers, now: now, into: &actions)
        }
        return actions
    }

    // MARK: - Output

    func reply(to client: JobClient, service: String, body: [[UInt8]], into actions: inout [Action]) {
        actions.append(.reply(peer: client.peer, dialect: client.dialect, service: service, body: body))
    }

    /// Refuses a request: `400`/`500` by whether retrying may help, counted in the stats under the
    /// service the job was for (busy, too large, malformed), as the broker counts its own refusals.
    func refuse(_ client: JobClient, _ service: String, _ error: WireError, into actions: inout [Action]) {
        actions.append(.statistic(.refused(service: error.service ?? service, code: error.code)))
        reply(to: client, service: service, body: Titanic.refusal(error), into: &actions)
    }
}

/// Who asked: a client peer and its Majordomo dialect.
struct JobClient: Sendable, Equatable {
    var peer: [UInt8]
    var dialect: Dialect
}

/// What the broker's workers can take now, for the job machine's dispatch.
struct JobWorkers: Sendable, Equatable {
    /// Services that have workers now (remembered in the store, so that jobs may target them later).
    var services: [String] = []
    /// Jobs each service would hand to a worker at once.
    var capacity: [String: Int] = [:]
}

/// A figure for the stats snapshot.
enum JobStatistic: Sendable, Equatable {
    case submitted(service: String, bytes: Int)
    case waited(service: String, seconds: Double)
    case ran(service: String, seconds: Double)
    case completed(service: String, bytes: Int)
    case failed(service: String)
    case retried(service: String)
    case expired(service: String)
    case dead(service: String, job: String, reason: String?)
    case queueDepth(service: String, PriorityDepth)
    case refused(service: String, code: WireError.Code)
    /// A shared store: a claim that took `count` jobs in `seconds`.
    case claimed(service: String, count: Int, seconds: Double)
    /// A shared store: jobs whose broker stopped renewing its lease, found by this broker's pass.
    case leasesExpired(service: String, count: Int)
    /// A shared store: a job this broker held that another broker has now (its lease ran out).
    case leaseLost(service: String)
    /// A shared store: a fenced write about a job that changed meanwhile, refused.
    case fenceRefused(service: String)
}
