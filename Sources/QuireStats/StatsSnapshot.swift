import Foundation
import QuireWire

/// The PUB topics of the broker's stats socket. Each message is two frames: the topic, then one JSON
/// object (`proto-json/stats-snapshot.schema.json`, `proto-json/stats-event.schema.json`).
public enum StatsTopic {
    /// A full snapshot, about once per interval.
    public static let snapshot = "quire.stats"
    /// Something worth seeing at once: a worker joined or was lost, a job is dead.
    public static let event = "quire.event"
}

/// One snapshot of the broker, published on ``StatsTopic/snapshot``. Counters are totals since the
/// broker started (`broker.startedAtMs`), so a subscriber that joins late or misses a snapshot needs
/// only the next one; `sequence` rises by one per snapshot and starts again at 1 after a restart.
public struct StatsSnapshot: Codable, Sendable, Equatable {
    /// The schema version of this body (v1).
    public var version: Int
    /// 1 for the first snapshot after the broker started, then +1 per snapshot.
    public var sequence: UInt64
    /// When this snapshot was taken: Unix milliseconds and RFC 3339 UTC.
    public var timeMs: Int64
    public var time: String
    /// How often snapshots are published.
    public var intervalMs: Int64
    /// The span the percentiles cover.
    public var windowSeconds: Double
    public var broker: BrokerInfo
    public var totals: Totals
    /// One entry per service that has had workers, requests or jobs, sorted by name.
    public var services: [ServiceStats]
    /// Every connected worker, sorted by service then id.
    public var workers: [WorkerStats]
    /// The durable job store, when the broker keeps jobs.
    public var store: StoreStats?

    public init(version: Int = 1, sequence: UInt64, timeMs: Int64, intervalMs: Int64, windowSeconds: Double,
                broker: BrokerInfo, totals: Totals, services: [ServiceStats], workers: [WorkerStats], store: StoreStats? = nil) {
        self.version = version
        self.sequence = sequence
        self.timeMs = timeMs
        self.time = StatsTime.rfc3339(unixMilliseconds: timeMs)
        self.intervalMs = intervalMs
        self.windowSeconds = windowSeconds
        self.broker = broker
        self.totals = totals
        self.services = services
        self.workers = workers
        self.store = store
    }

    /// The durable job store as this broker uses it: its writes (one transaction each, many jobs), and
    /// for a store across the network, the connections lost and recovered.
    public struct StoreStats: Codable, Sendable, Equatable {
        /// `sqlite` or `postgresql`.
        public var kind: String
        /// `serving`, or `recovering` while a lost store is reconnected (durable jobs paused).
        public var state: String
        /// Transactions committed, and those that failed (nothing of them written).
        public var commits: Int
        public var commitFailures: Int
        /// Connections to the store lost, and recovered (for SQLite always 0).
        public var connectionsLost: Int
        public var recoveries: Int
        /// How long a write took on the store's thread, its commit included (the store's round trip).
        public var commitSeconds: LatencySummary
        /// A store brokers share (PostgreSQL; 0 for SQLite): claims this broker made and the jobs they
        /// took, claims of silent brokers whose leases this broker found run out, jobs it held that
        /// another broker took after its own lease ran out, and its writes refused by their fence.
        public var claims: Int
        public var claimedJobs: Int
        public var leasesExpired: Int
        public var leasesLost: Int
        public var fencedWritesRefused: Int
        /// How long a claim took (the store's round trip for work).
        public var claimSeconds: LatencySummary

        public init(kind: String, state: String, commits: Int, commitFailures: Int, connectionsLost: Int, recoveries: Int,
                    commitSeconds: LatencySummary, claims: Int = 0, claimedJobs: Int = 0, leasesExpired: Int = 0, leasesLost: Int = 0,
                    fencedWritesRefused: Int = 0, claimSeconds: LatencySummary = LatencySummary()) {
            self.kind = kind
            self.state = state
            self.commits = commits
            self.commitFailures = commitFailures
            self.connectionsLost = connectionsLost
            self.recoveries = recoveries
            self.commitSeconds = commitSeconds
            self.claims = claims
            self.claimedJobs = claimedJobs
            self.leasesExpired = leasesExpired
            self.leasesLost = leasesLost
            self.fencedWritesRefused = fencedWritesRefused
            self.claimSeconds = claimSeconds
        }
    }

    public struct BrokerInfo: Codable, Sendable, Equatable {
        /// When the broker started: a new value means a restart (counters and sequence start over).
        public var startedAtMs: Int64
        public var startedAt: String
        public var uptimeSeconds: Double
        public var pid: Int32

        public init(startedAtMs: Int64, uptimeSeconds: Double, pid: Int32) {
            self.startedAtMs = startedAtMs
            self.startedAt = StatsTime.rfc3339(unixMilliseconds: startedAtMs)
            self.uptimeSeconds = uptimeSeconds
            self.pid = pid
        }
    }

    /// Broker-wide figures, including messages that named no service.
    public struct Totals: Codable, Sendable, Equatable {
        public var requestsReceived: Int
        public var repliesSent: Int
        public var bytesIn: Int
        public var bytesOut: Int
        /// Messages that did not decode as Majordomo, from any peer.
        public var malformedMessages: Int
        public var workersJoined: Int
        public var workersLost: Int
        public var rejections: Rejections

        public init(requestsReceived: Int = 0, repliesSent: Int = 0, bytesIn: Int = 0, bytesOut: Int = 0,
                    malformedMessages: Int = 0, workersJoined: Int = 0, workersLost: Int = 0, rejections: Rejections = Rejections()) {
            self.requestsReceived = requestsReceived
            self.repliesSent = repliesSent
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.malformedMessages = malformedMessages
            self.workersJoined = workersJoined
            self.workersLost = workersLost
            self.rejections = rejections
        }
    }
}

/// Requests and jobs turned away before any worker saw them, by reason.
public struct Rejections: Codable, Sendable, Equatable {
    /// The queue was full.
    public var busy = 0
    /// Over the size or frame limit.
    public var tooLarge = 0
    /// Missing, invalid or insufficient credentials.
    public var auth = 0
    /// Did not follow the protocol or the body's schema.
    public var malformed = 0

    public init(busy: Int = 0, tooLarge: Int = 0, auth: Int = 0, malformed: Int = 0) {
        self.busy = busy
        self.tooLarge = tooLarge
        self.auth = auth
        self.malformed = malformed
    }

    public var total: Int { busy + tooLarge + auth + malformed }
}

/// Percentiles over the sliding window (seconds; `null` when the window holds no sample) and the
/// all-time sample count and sum.
public struct LatencySummary: Codable, Sendable, Equatable {
    public var p50: Double?
    public var p90: Double?
    public var p99: Double?
    public var max: Double?
    public var windowCount: Int
    public var count: Int
    public var sum: Double

    public init(p50: Double? = nil, p90: Double? = nil, p99: Double? = nil, max: Double? = nil, windowCount: Int = 0, count: Int = 0, sum: Double = 0) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.max = max
        self.windowCount = windowCount
        self.count = count
        self.sum = sum
    }

    // Percentiles are always present, `null` when unknown, so that readers see the same shape.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(p50, forKey: .p50)
        try c.encode(p90, forKey: .p90)
        try c.encode(p99, forKey: .p99)
        try c.encode(max, forKey: .max)
        try c.encode(windowCount, forKey: .windowCount)
        try c.encode(count, forKey: .count)
        try c.encode(sum, forKey: .sum)
    }
}

/// Waiting work by durable-job priority.
public struct PriorityDepth: Codable, Sendable, Equatable {
    public var high: Int
    public var normal: Int
    public var low: Int

    public init(high: Int = 0, normal: Int = 0, low: Int = 0) {
        self.high = high
        self.normal = normal
        self.low = low
    }

    public var total: Int { high + normal + low }
}

/// One service's figures.
public struct ServiceStats: Codable, Sendable, Equatable {
    public var name: String
    public var queue: Queue
    public var workers: Workers
    /// Direct (non-durable) requests.
    public var requests: RequestCounters
    /// Durable (Titanic) jobs.
    public var jobs: JobCounters
    public var rejections: Rejections
    /// From arrival to the moment a worker received the request or job.
    public var waitSeconds: LatencySummary
    /// From dispatch to the worker's final reply.
    public var runSeconds: LatencySummary
    /// Request bytes accepted for the service, and reply bytes forwarded from its workers.
    public var bytesIn: Int
    public var bytesOut: Int

    public init(name: String, queue: Queue = Queue(), workers: Workers = Workers(), requests: RequestCounters = RequestCounters(),
                jobs: JobCounters = JobCounters(), rejections: Rejections = Rejections(), waitSeconds: LatencySummary = LatencySummary(),
                runSeconds: LatencySummary = LatencySummary(), bytesIn: Int = 0, bytesOut: Int = 0) {
        self.name = name
        self.queue = queue
        self.workers = workers
        self.requests = requests
        self.jobs = jobs
        self.rejections = rejections
        self.waitSeconds = waitSeconds
        self.runSeconds = runSeconds
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
    }

    public struct Queue: Codable, Sendable, Equatable {
        /// Everything waiting for a worker: `requests + jobs.total`.
        public var depth: Int
        /// Direct requests waiting.
        public var requests: Int
        /// Durable jobs queued, by priority.
        public var jobs: PriorityDepth

        public init(requests: Int = 0, jobs: PriorityDepth = PriorityDepth()) {
            self.depth = requests + jobs.total
            self.requests = requests
            self.jobs = jobs
        }
    }

    public struct Workers: Codable, Sendable, Equatable {
        public var idle: Int
        public var busy: Int
        public init(idle: Int = 0, busy: Int = 0) {
            self.idle = idle
            self.busy = busy
        }
    }

    public struct RequestCounters: Codable, Sendable, Equatable {
        /// Accepted into the queue.
        public var submitted = 0
        /// Answered by a worker (its FINAL reply), errors included.
        public var completed = 0
        /// Answered with an error: by the worker, or `worker_lost` from the broker.
        public var failed = 0
        /// Given to another worker after one was lost.
        public var retried = 0
        /// Waited in the queue past the request timeout.
        public var expired = 0
        public init(submitted: Int = 0, completed: Int = 0, failed: Int = 0, retried: Int = 0, expired: Int = 0) {
            self.submitted = submitted
            self.completed = completed
            self.failed = failed
            self.retried = retried
            self.expired = expired
        }
    }

    public struct JobCounters: Codable, Sendable, Equatable {
        public var submitted = 0
        public var completed = 0
        public var failed = 0
        public var retried = 0
        public var dead = 0
        public var expired = 0
        public init(submitted: Int = 0, completed: Int = 0, failed: Int = 0, retried: Int = 0, dead: Int = 0, expired: Int = 0) {
            self.submitted = submitted
            self.completed = completed
            self.failed = failed
            self.retried = retried
            self.dead = dead
            self.expired = expired
        }
    }
}

/// One connected worker.
public struct WorkerStats: Codable, Sendable, Equatable {
    /// The worker's connection identity in hex (changes when it reconnects).
    public var id: String
    public var service: String
    /// `idle` or `busy`.
    public var state: String
    /// The Majordomo dialect it speaks.
    public var dialect: String
    /// Final replies the broker received from it on this connection.
    public var jobsDone: Int
    public var connectedSeconds: Double
    /// Seconds since the broker last heard from it (any message counts as a heartbeat).
    public var lastHeartbeatSecondsAgo: Double
    /// The worker's own figures from its last heartbeat; `null` for workers that send none.
    public var report: WorkerReport?

    public init(id: String, service: String, state: String, dialect: String, jobsDone: Int, connectedSeconds: Double,
                lastHeartbeatSecondsAgo: Double, report: WorkerReport?) {
        self.id = id
        self.service = service
        self.state = state
        self.dialect = dialect
        self.jobsDone = jobsDone
        self.connectedSeconds = connectedSeconds
        self.lastHeartbeatSecondsAgo = lastHeartbeatSecondsAgo
        self.report = report
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(service, forKey: .service)
        try c.encode(state, forKey: .state)
        try c.encode(dialect, forKey: .dialect)
        try c.encode(jobsDone, forKey: .jobsDone)
        try c.encode(connectedSeconds, forKey: .connectedSeconds)
        try c.encode(lastHeartbeatSecondsAgo, forKey: .lastHeartbeatSecondsAgo)
        try c.encode(report, forKey: .report)
    }
}

/// Something worth seeing at once, published on ``StatsTopic/event``.
public struct StatsEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case workerJoined = "worker.joined"
        case workerLost = "worker.lost"
        case jobDead = "job.dead"
    }

    /// 1 for the broker's first event, then +1 per event (its own sequence, not the snapshots').
    public var sequence: UInt64
    public var kind: Kind
    public var timeMs: Int64
    public var time: String
    public var brokerStartedAtMs: Int64
    public var service: String
    /// The worker's id (worker events).
    public var worker: String?
    /// The job's id (`job.dead`).
    public var job: String?
    /// Why: for `worker.lost`, `left` (it said DISCONNECT), `unreachable` (its connection is gone) or
    /// `dropped` (the broker dropped it: missed heartbeats or a protocol violation); for `job.dead`,
    /// the last error.
    public var reason: String?

    public init(sequence: UInt64, kind: Kind, timeMs: Int64, brokerStartedAtMs: Int64, service: String,
                worker: String? = nil, job: String? = nil, reason: String? = nil) {
        self.sequence = sequence
        self.kind = kind
        self.timeMs = timeMs
        self.time = StatsTime.rfc3339(unixMilliseconds: timeMs)
        self.brokerStartedAtMs = brokerStartedAtMs
        self.service = service
        self.worker = worker
        self.job = job
        self.reason = reason
    }
}

/// The JSON encoder every stats body uses: one line, sorted keys.
public enum StatsJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        (try? Array(encoder().encode(value))) ?? Array("{}".utf8)
    }
}

/// Wall-clock helpers (the only clock reading is the caller's).
public enum StatsTime {
    /// Now, in Unix milliseconds.
    public static func nowUnixMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// `2026-11-29T16:40:02.123Z`.
    public static func rfc3339(unixMilliseconds ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - seconds * 1000)
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int64(secondOfDay / 3600), 2)):\(pad(Int64(secondOfDay / 60 % 60), 2)):\(pad(Int64(secondOfDay % 60), 2)).\(pad(Int64(millis), 3))Z"
    }
}
