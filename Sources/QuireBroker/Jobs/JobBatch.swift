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
    }

    /// An answer to cancel or close, sent once the write is on disk; `undo` is the job as it was in
    /// memory, put back if the write fails.
    struct Ack: Sendable, Equatable {
        var client: JobClient
        var service: String
        var body: [[UInt8]]
        var undo: JobRecord?
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
