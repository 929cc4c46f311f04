import QuireStats
import QuireSupport
import QuireWire

/// The broker's statistics: per-service and per-worker records, latency histograms and events.
///
/// A pure value inside ``BrokerState``: the state machine calls its recording methods (one line at
/// each place where something countable happens), time is passed in, nothing here reads a clock or
/// touches a socket. ``BrokerState/statisticsSnapshot(now:wallClockMs:)`` combines it with the live
/// queues and workers. The durable-jobs code records jobs through the `job…` methods and sets the
/// queued jobs per priority with ``setJobQueueDepth(service:_:)``.
public struct BrokerStatistics: Sendable {
    struct ServiceRecord: Sendable {
        var requests = ServiceStats.RequestCounters()
        var jobs = ServiceStats.JobCounters()
        var rejections = Rejections()
        var wait: LatencyHistogram
        var run: LatencyHistogram
        var bytesIn = 0
        var bytesOut = 0
        var jobQueue = PriorityDepth()
    }

    struct WorkerRecord: Sendable {
        let service: String
        let joined: Instant
        var lastSeen: Instant
        var jobsDone = 0
        var report: WorkerReport?
        /// It sent DISCONNECT: its removal is a goodbye, not a loss.
        var saidGoodbye = false
    }

    /// How much history the percentiles cover.
    public let window: Milliseconds
    /// When the broker started, in Unix milliseconds (identifies a broker run to subscribers).
    public let startedAtMs: Int64
    /// When the broker started, on the monotonic clock (for uptime).
    public let startedAt: Instant

    var services: [String: ServiceRecord] = [:]
    var workers: [[UInt8]: WorkerRecord] = [:]
    /// Direct requests by id: when they were queued (waiting) or dispatched (running).
    var queuedAt: [UInt64: Instant] = [:]
    var dispatchedAt: [UInt64: Instant] = [:]
    public private(set) var workersJoined = 0
    public private(set) var workersLost = 0
    public private(set) var totalRejections = Rejections()
    public private(set) var snapshotSequence: UInt64 = 0
    var eventSequence: UInt64 = 0
    /// Events not yet published; the broker loop takes them with ``takeEvents()``.
    public private(set) var pendingEvents: [StatsEvent] = []
    /// Events are kept only when someone publishes them (the stats socket is on).
    public var keepsEvents = false
    /// Whether the state machine's hooks record anything. The broker turns it off when no stats socket
    /// is configured, so that a broker without stats does none of this work.
    public var isRecording = true

    /// The job store's figures; `nil` for a broker without durable jobs.
    struct StoreRecord: Sendable {
        var kind: String
        var recovering = false
        var commits = 0
        var commitFailures = 0
        var connectionsLost = 0
        var recoveries = 0
        var commitTime: LatencyHistogram
        // A store brokers share.
        var claims = 0
        var claimedJobs = 0
        var leasesExpired = 0
        var leasesLost = 0
        var fencedWritesRefused = 0
        var claimTime: LatencyHistogram
    }

    var store: StoreRecord?

    /// Counts the job store from now on (`kind`: `sqlite`, `postgresql`).
    mutating func keepStore(kind: String) {
        store = StoreRecord(kind: kind, commitTime: LatencyHistogram(window: window), claimTime: LatencyHistogram(window: window))
    }

    /// A claim on a shared store that took `jobs` in `seconds`.
    mutating func storeClaimed(jobs: Int, seconds: Double, now: Instant) {
        guard store != nil else { return }
        store?.claims += 1
        store?.claimedJobs += jobs
        store?.claimTime.record(seconds: seconds, now: now)
    }

    /// A write on the store's thread: one transaction that took `seconds`, committed or not.
    mutating func storeWrote(seconds: Double, committed: Bool, now: Instant) {
        guard store != nil else { return }
        if committed { store?.commits += 1 } else { store?.commitFailures += 1 }
        store?.commitTime.record(seconds: seconds, now: now)
    }

    mutating func storeLost() {
        store?.connectionsLost += 1
        store?.recovering = true
    }

    mutating func storeRecovered() {
        store?.recoveries += 1
        store?.recovering = false
    }

    public init(startedAtMs: Int64 = 0, startedAt: Instant = Instant(nanoseconds: 0), window: Milliseconds = 60_000) {
        self.startedAtMs = startedAtMs
        self.startedAt = startedAt
        self.window = window
    }

    // MARK: - Direct requests

    mutating func requestQueued(id: UInt64, service: String, body: [[UInt8]], now: Instant) {
        guard isRecording else { return }
        var bytes = 0
        for frame in body { bytes += frame.count }
        update(service) { $0.requests.submitted += 1; $0.bytesIn += bytes }
        queuedAt[id] = now
    }

    mutating func requestDispatched(id: UInt64, service: String, now: Instant) {
        guard isRecording else { return }
        if let queued = queuedAt.removeValue(forKey: id) {
            update(service) { $0.wait.record(seconds: now.seconds(since: queued), now: now) }
        }
        dispatchedAt[id] = now
    }

    /// A worker's FINAL reply. A reply whose first frame is a JSON error body counts as failed.
    mutating func requestCompleted(id: UInt64, service: String, worker: [UInt8], body: [[UInt8]], now: Instant) {
        guard isRecording else { return }
        var bytes = 0
        for frame in body { bytes += frame.count }
        let failed = Self.isErrorBody(body.first)
        let started = dispatchedAt.removeValue(forKey: id)
        update(service) {
            $0.requests.completed += 1
            if failed { $0.requests.failed += 1 }
            $0.bytesOut += bytes
            if let started { $0.run.record(seconds: now.seconds(since: started), now: now) }
        }
        workers[worker]?.jobsDone += 1
    }

    /// A PARTIAL reply forwarded to the client.
    mutating func partialForwarded(service: String, body: [[UInt8]]) {
        guard isRecording else { return }
        var bytes = 0
        for frame in body { bytes += frame.count }
        update(service) { $0.bytesOut += bytes }
    }

    /// A request lost with its worker and queued again.
    mutating func requestRequeued(id: UInt64, service: String, now: Instant) {
        guard isRecording else { return }
        dispatchedAt[id] = nil
        queuedAt[id] = now
        update(service) { $0.requests.retried += 1 }
    }

    /// A request that leaves without a worker's reply (expired, lost for good, shutdown): forget it.
    /// What it counts as comes from the error sent (``errorSent(service:code:)``).
    mutating func requestAbandoned(id: UInt64) {
        queuedAt[id] = nil
        dispatchedAt[id] = nil
    }

    /// Every error the broker itself sends to a client, by code: rejections, expiries, lost requests.
    mutating func errorSent(service: String, code: WireError.Code) {
        guard isRecording else { return }
        var rejection: WritableKeyPath<Rejections, Int>?
        switch code {
        case .busy, .rateLimited: rejection = \.busy
        case .tooLarge: rejection = \.tooLarge
        case .badRequest, .invalidJSON: rejection = \.malformed
        case .timeout, .serviceUnavailable:
            if !service.isEmpty { update(service) { $0.requests.expired += 1 } }
        case .workerLost:
            if !service.isEmpty { update(service) { $0.requests.failed += 1 } }
        default:
            if Self.authCodes.contains(code.rawValue) { rejection = \.auth }
        }
        if let rejection {
            totalRejections[keyPath: rejection] += 1
            if !service.isEmpty { update(service) { $0.rejections[keyPath: rejection] += 1 } }
        }
    }

    /// Error codes that mean "credentials missing or not good enough" (added with the token worker).
    static let authCodes: Set<String> = [WireError.Code.unauthenticated.rawValue, WireError.Code.tokenExpired.rawValue, WireError.Code.forbidden.rawValue]

    /// A rejection for a reason the broker's own errors do not cover (e.g. auth checked elsewhere).
    public mutating func recordRejection(service: String, reason: WritableKeyPath<Rejections, Int>) {
        totalRejections[keyPath: reason] += 1
        if !service.isEmpty { update(service) { $0.rejections[keyPath: reason] += 1 } }
    }

    // MARK: - Durable jobs (called by the job code)

    public mutating func jobSubmitted(service: String, bytes: Int = 0) { update(service) { $0.jobs.submitted += 1; $0.bytesIn += bytes } }
    public mutating func jobCompleted(service: String, bytes: Int = 0) { update(service) { $0.jobs.completed += 1; $0.bytesOut += bytes } }
    public mutating func jobFailed(service: String) { update(service) { $0.jobs.failed += 1 } }
    public mutating func jobRetried(service: String) { update(service) { $0.jobs.retried += 1 } }
    public mutating func jobExpired(service: String) { update(service) { $0.jobs.expired += 1 } }

    /// A job used up its attempts: counted, and published at once as a `job.dead` event.
    public mutating func jobDead(service: String, job: String, reason: String?) {
        update(service) { $0.jobs.dead += 1 }
        event(.jobDead, service: service, job: job, reason: reason)
    }

    /// A job's time in the queue, from submission (or its last retry) to its lease.
    public mutating func jobWaited(service: String, seconds: Double, now: Instant) {
        update(service) { $0.wait.record(seconds: seconds, now: now) }
    }

    /// A job's time from lease to result.
    public mutating func jobRan(service: String, seconds: Double, now: Instant) {
        update(service) { $0.run.record(seconds: seconds, now: now) }
    }

    /// Queued durable jobs by priority for `service`, as the job store counts them (set it per tick
    /// or whenever it changes; it is shown as is).
    public mutating func setJobQueueDepth(service: String, _ depth: PriorityDepth) {
        update(service) { $0.jobQueue = depth }
    }

    // MARK: - Workers

    mutating func workerJoined(_ identity: [UInt8], service: String, now: Instant) {
        guard isRecording else { return }
        workers[identity] = WorkerRecord(service: service, joined: now, lastSeen: now)
        workersJoined += 1
        update(service) { _ in }
        event(.workerJoined, service: service, worker: hex(identity))
    }

    /// `dropped`: the broker disconnected it (missed heartbeats, protocol violation); otherwise it said
    /// DISCONNECT (`left`) or its connection is gone (`unreachable`).
    mutating func workerLost(_ identity: [UInt8], service: String, dropped: Bool) {
        guard isRecording else { return }
        guard let record = workers.removeValue(forKey: identity) else { return }
        workersLost += 1
        let reason = dropped ? "dropped" : record.saidGoodbye ? "left" : "unreachable"
        event(.workerLost, service: service, worker: hex(identity), reason: reason)
    }

    /// Any message from a registered worker; a HEARTBEAT may carry its report in an extra frame.
    mutating func workerMessage(_ identity: [UInt8], command: WorkerCommand, frames: [[UInt8]], now: Instant) {
        guard isRecording else { return }
        guard workers[identity] != nil else { return }
        workers[identity]?.lastSeen = now
        if case .disconnect = command { workers[identity]?.saidGoodbye = true }
        if case .heartbeat = command, let frame = MajordomoCodec.heartbeatExtension(frames), let report = WorkerReport(jsonFrame: frame) {
            workers[identity]?.report = report
        }
    }

    // MARK: - Events and snapshots

    private mutating func event(_ kind: StatsEvent.Kind, service: String, worker: String? = nil, job: String? = nil,
                                reason: String? = nil) {
        guard keepsEvents else { return }
        eventSequence += 1
        // A stats socket nobody drains must not grow without bound.
        if pendingEvents.count >= 10_000 { pendingEvents.removeFirst(pendingEvents.count - 9_999) }
        pendingEvents.append(StatsEvent(sequence: eventSequence, kind: kind, timeMs: 0, brokerStartedAtMs: startedAtMs,
                                        service: service, worker: worker, job: job, reason: reason))
    }

    /// The events since the last call, stamped with the wall-clock time they are published at (the
    /// state machine reads no clock; the loop publishes them within one pass).
    public mutating func takeEvents(wallClockMs: Int64) -> [StatsEvent] {
        defer { pendingEvents.removeAll(keepingCapacity: true) }
        return pendingEvents.map { event in
            var stamped = event
            stamped.timeMs = wallClockMs
            stamped.time = StatsTime.rfc3339(unixMilliseconds: wallClockMs)
            return stamped
        }
    }

    mutating func nextSnapshotSequence() -> UInt64 {
        snapshotSequence += 1
        return snapshotSequence
    }

    private mutating func update(_ service: String, _ body: (inout ServiceRecord) -> Void) {
        body(&services[service, default: ServiceRecord(wait: LatencyHistogram(window: window), run: LatencyHistogram(window: window))])
    }

    /// Whether a reply's first frame is a JSON error body (`{"error":…`), without parsing it.
    static func isErrorBody(_ frame: [UInt8]?) -> Bool {
        guard let frame, frame.count >= 9, frame[0] == UInt8(ascii: "{") else { return false }
        var index = 1
        while index < frame.count, frame[index] == 0x20 || frame[index] == 0x0A || frame[index] == 0x0D || frame[index] == 0x09 { index += 1 }
        return frame[index...].starts(with: Self.errorKey)
    }

    static let errorKey: [UInt8] = Array("\"error\"".utf8)
}
