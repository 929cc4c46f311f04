import QuireStats
import QuireWire

/// Everything one loop turn changed in the job store, written in one transaction (one fsync), with
/// whom to answer once it is on disk.
struct JobBatch: Sendable, Equatable {
    struct Insert: Sendable, Equatable {
        var record: JobRecord
        var request: [[UInt8]]
        /// The submitter, and any resubmitter of the same key in the same turn: each hears `200`.
        var submitters: [JobClient]
    }

    struct Update: Sendable, Equatable {
        var record: JobRecord
        /// The worker's reply, for a finished job.
        var reply: [[UInt8]]?
        /// What the row must still be for the update to land, in a store brokers share.
        var fence: Fence = .none
    }

    /// The condition a shared store writes an update under, so that a broker never overwrites what
    /// another did meanwhile. A store of one broker (SQLite) has nobody to fence off.
    enum Fence: Sendable, Equatable {
        /// Unconditional: the broker owns every job (SQLite).
        case none
        /// The job is still running the attempt this broker claimed: its outcome, a retry, a requeue.
        case attempt(Int)
        /// The job is still queued or running, whoever holds it: a cancel.
        case active
    }

    /// An answer to cancel or close, sent once the write is on disk; `undo` is the job as it was in
    /// memory, put back if the write fails. A status asked while the job's state was being written has
    /// no body and no undo: it is answered with the job as it stands once the write is on disk.
    struct Ack: Sendable, Equatable {
        var client: JobClient
        var service: String
        var body: [[UInt8]]
        var undo: JobRecord?
        /// The job, and who asked: a cancel a shared store refused (another broker finished the job
        /// first) is answered with the job as it is.
        var job = ""
        var owner = ""
    }

    /// Services seen with workers for the first time.
    var services: [String] = []
    /// Written before the inserts (``rowChanges``).
    var deletions: Set<String> = []
    var inserts: [Insert] = []
    var updates: [String: Update] = [:]
    var acks: [Ack] = []
    /// When the turn ended (the time services are remembered with).
    var now: Int64 = 0

    var isEmpty: Bool { services.isEmpty && deletions.isEmpty && inserts.isEmpty && updates.isEmpty && acks.isEmpty }

    /// One row a store writes for the batch.
    enum RowChange {
        case service(String)
        case delete(id: String)
        case insert(Insert)
        case update(Update)
    }

    /// The rows to write, in the order every store writes them: services, then deletions (first, for a
    /// job closed and resubmitted with its key in the same turn), then inserts, then updates.
    var rowChanges: [RowChange] {
        services.map(RowChange.service) + deletions.map { .delete(id: $0) } + inserts.map(RowChange.insert) + updates.values.map(RowChange.update)
    }
}

/// What a write did beyond its rows, in a store brokers share.
struct JobWriteOutcome: Sendable, Equatable {
    /// Fenced updates that found the row changed (another broker's attempt, a cancel, a close): not written.
    var refused: Set<String> = []
    /// New jobs whose idempotency key another broker's job took first (new id → that job's id): not written.
    var merged: [String: String] = [:]
}

/// A claim on queued jobs of one service, for a broker's idle workers (a store brokers share).
struct JobClaim: Sendable, Equatable {
    var service: String
    var count: Int
    var now: Int64
    /// The claim's lease, renewed while the broker holds the job.
    var until: Int64
}

/// A job a claim took: running its next attempt, with its request.
struct ClaimedJob: Sendable, Equatable {
    var record: JobRecord
    var request: [[UInt8]]
}

/// What a broker's pass over a shared store found and did (``JobStorage/maintain(now:)``).
struct JobMaintenance: Sendable, Equatable {
    /// Claims that ran out (their broker stopped renewing them): jobs queued again or, with no attempt
    /// left, dead; by service.
    var leasesExpired: [String: Int] = [:]
    /// Jobs this pass finished (dead, or expired at their deadline), whose readers may be waiting.
    var finished: [String] = []
    /// Of those, the jobs that died (no attempt left when their lease ran out), with their service.
    var dead: [String: String] = [:]

    /// Why a job whose broker went silent on its last attempt is dead.
    static let deadOfSilence = "no attempt left; the last: timeout: the broker that held the job stopped renewing its lease"
    /// Queued jobs per service and priority, as the store counts them.
    var depth: [String: PriorityDepth] = [:]
    /// Services any broker of the store has seen with workers: valid job targets at every broker.
    var services: Set<String> = []
}

/// Something only the store holds, and what the machine will do with it.
enum JobLoad: Sendable, Equatable {
    /// The job an idempotency key names, before the submission goes on.
    case key(owner: String, key: String, then: JobSubmission)
    /// A job no longer in memory, for a `titanic.reply`, `.status`, `.cancel` or `.close`.
    case job(id: String, then: JobLookup)
    /// A finished job's reply, for a `titanic.reply`.
    case reply(JobRecord, to: JobClient)
    /// The request of a job about to be dispatched.
    case request(id: String)

    enum Result: Sendable {
        case record(JobRecord?)
        case frames([[UInt8]]?)
        case failed(JobStoreError)
    }
}

/// A checked `titanic.request`, waiting for its idempotency key to be looked up.
struct JobSubmission: Sendable, Equatable {
    var client: JobClient
    var owner: String
    var target: String
    var request: [[UInt8]]
    var priority: JobPriority
    var idempotencyKey: String?
    var maxAttempts: Int
    var deadlineMs: Int64?
    var ttlSeconds: Int64
}

/// A request about one job, waiting for the job to be read.
struct JobLookup: Sendable, Equatable {
    var client: JobClient
    var service: String
    var owner: String
    var waitMs: Int64?
}
