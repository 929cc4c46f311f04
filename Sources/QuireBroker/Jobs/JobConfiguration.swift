import Foundation
import QuireSupport

/// Durable jobs' settings, with every default in one place. The broker serves `titanic.*` only with a
/// data folder; without one those services answer `500 service_unavailable`.
public struct JobConfiguration: Sendable, Equatable {
    /// The folder that holds `jobs.sqlite3` (and its WAL). One broker per folder: a lock file keeps a
    /// second broker out.
    public var directory: String
    /// A PostgreSQL connection string (`postgresql://…`) for a store several brokers serve together
    /// (``PostgresJobStore``); `nil`: SQLite in ``directory``.
    public var store: String?
    /// Services jobs may target before any worker for them has been seen (a worker that has registered
    /// once is remembered in the store).
    public var services: Set<String>
    /// Active (queued or running) jobs; past it submissions get `500 busy` at once.
    public var maxActiveJobs: Int
    /// Bytes of active jobs' requests; past it submissions get `500 busy` at once.
    public var maxActiveBytes: Int
    /// Attempts when the submitter names none.
    public var defaultMaxAttempts: Int
    /// How long results are kept when the submitter names no TTL.
    public var defaultResultTTL: Milliseconds
    /// The longest TTL a submitter may ask for.
    public var maxResultTTL: Milliseconds
    /// Retry backoff: the first retry waits about this long, doubling each attempt (full jitter), up to `retryCap`.
    public var retryBase: Milliseconds
    public var retryCap: Milliseconds
    /// How long one attempt may run before it counts as failed and the job is retried. Dead workers are
    /// noticed sooner, by their heartbeats; the lease catches a worker that heartbeats but never answers.
    public var lease: Milliseconds
    /// How often expired results are deleted.
    public var sweepInterval: Milliseconds
    /// In a store brokers share: how long a broker's claim on a running job holds without being renewed
    /// (it renews its claims every third of this). A broker that stops renewing, killed or cut off, loses
    /// its jobs to the other brokers after it.
    public var storeLease: Milliseconds
    /// In a store brokers share: how often a broker looks for work its workers could take, for claims
    /// that ran out and for deadlines, when no notification woke it sooner.
    public var storePoll: Milliseconds
    /// The longest `titanic.reply` may be held waiting for a result (`waitMs`).
    public var maxWait: Milliseconds
    /// A ceiling on the store's file size (SQLite's `max_page_count`); past it writes fail as on a full
    /// disk, and submitters get `500 storage_failure`. `nil`: the disk is the limit.
    public var maxStoreBytes: Int?

    public init(
        directory: String,
        store: String? = nil,
        services: Set<String> = [],
        maxActiveJobs: Int = 100_000,
        maxActiveBytes: Int = 4 << 30,
        defaultMaxAttempts: Int = 3,
        defaultResultTTL: Milliseconds = 86_400_000,
        maxResultTTL: Milliseconds = 2_592_000_000,
        retryBase: Milliseconds = 1_000,
        retryCap: Milliseconds = 60_000,
        lease: Milliseconds = 600_000,
        sweepInterval: Milliseconds = 10_000,
        storeLease: Milliseconds = 15_000,
        storePoll: Milliseconds = 1_000,
        maxWait: Milliseconds = 60_000,
        maxStoreBytes: Int? = nil
    ) {
        self.directory = directory
        self.store = store
        self.services = services
        self.maxActiveJobs = maxActiveJobs
        self.maxActiveBytes = maxActiveBytes
        self.defaultMaxAttempts = defaultMaxAttempts
        self.defaultResultTTL = defaultResultTTL
        self.maxResultTTL = maxResultTTL
        self.retryBase = retryBase
        self.retryCap = retryCap
        self.lease = lease
        self.sweepInterval = sweepInterval
        self.storeLease = storeLease
        self.storePoll = storePoll
        self.maxWait = maxWait
        self.maxStoreBytes = maxStoreBytes
    }

    /// `QUIRE_DATA` names the folder, `QUIRE_STORE` a PostgreSQL store; with neither, `nil` (no
    /// durable jobs). The other variables of ``settings`` override the defaults.
    public init?(environment: [String: String]) throws(ConfigurationError) {
        let directory = environment["QUIRE_DATA"] ?? ""
        let store = environment["QUIRE_STORE"].flatMap { $0.isEmpty ? nil : $0 }
        guard !directory.isEmpty || store != nil else { return nil }
        if let store, !Self.isPostgreSQL(store) {
            throw ConfigurationError(source: "QUIRE_STORE", message: Self.storeExpectation)
        }
        self.init(directory: directory, store: store)
        try Self.settings.applyEnvironment(environment, to: &self)
        if store != nil, maxStoreBytes != nil {
            throw ConfigurationError(source: "QUIRE_MAX_STORE_BYTES", message: Self.storeBytesWithPostgreSQL)
        }
    }

    /// Why a size cap and a PostgreSQL store are refused together.
    public static let storeBytesWithPostgreSQL = "caps the SQLite store; a PostgreSQL store's limits are its server's"

    /// What `--store` takes.
    public static let storeExpectation = "a PostgreSQL URI: postgresql://[user@]host[:port]/database[?sslmode=…] (the password from PGPASSWORD or a password file, not the URI)"

    /// How `--store` is read: a PostgreSQL URI, or refused with ``storeExpectation``.
    public static let storeValue = SettingValue<String>(placeholder: "URI", expectation: storeExpectation,
                                                        parse: { isPostgreSQL($0) ? $0 : nil }, format: { $0 })

    /// A `postgresql://` or `postgres://` URI, the forms libpq takes as a URI.
    /// The store is one that several brokers share (PostgreSQL): it owns the queued jobs, and each
    /// broker holds only what it claimed for its workers.
    public var shared: Bool { store != nil }

    public static func isPostgreSQL(_ store: String) -> Bool {
        store.hasPrefix("postgresql://") || store.hasPrefix("postgres://")
    }

    /// What `quire broker` and `quire up` let their users set about durable jobs, each setting declared
    /// once. The data folder itself is the command line's (`--data`, `QUIRE_DATA`): it turns jobs on.
    public static let settings: [Setting<JobConfiguration>] = [
        Setting(\.maxActiveJobs, flag: "max-jobs", variable: "QUIRE_MAX_JOBS", .integer(1...100_000_000),
                help: "queued + running jobs before '500 busy'"),
        Setting(\.maxActiveBytes, flag: "max-job-bytes", variable: "QUIRE_MAX_JOB_BYTES", .integer(1...(1 << 50)),
                help: "bytes of queued + running jobs before '500 busy'"),
        Setting(\.defaultMaxAttempts, flag: "job-attempts", variable: "QUIRE_JOB_ATTEMPTS", .integer(1...20),
                help: "attempts when the submitter names none"),
        Setting(\.retryBase, flag: "job-retry-ms", variable: "QUIRE_JOB_RETRY_MS", .milliseconds(1...3_600_000),
                help: "first retry backoff, doubling, jittered, up to 60 s"),
        Setting(\.lease, flag: "job-lease-ms", variable: "QUIRE_JOB_LEASE_MS", .milliseconds(1...86_400_000),
                help: "longest one attempt may run"),
        Setting(\.storeLease, flag: "store-lease-ms", variable: "QUIRE_STORE_LEASE_MS", .milliseconds(1_000...600_000),
                help: "a broker's claim on a running job in a PostgreSQL store, renewed every third of it"),
        Setting(\.storePoll, flag: "store-poll-ms", variable: "QUIRE_STORE_POLL_MS", .milliseconds(50...60_000),
                help: "how often a broker on a PostgreSQL store looks for work without being notified"),
        Setting(\.defaultResultTTL, flag: "result-ttl-s", variable: "QUIRE_RESULT_TTL_S", .seconds(1...2_592_000),
                help: "results kept this long by default"),
        Setting(\.maxStoreBytes, flag: "max-store-bytes", variable: "QUIRE_MAX_STORE_BYTES",
                SettingValue.integer(65_536...(1 << 50)).optional(none: "none: the disk is the limit"),
                help: "cap on the job store's size; past it, '500 storage_failure'"),
        Setting(\.services, flag: "job-services", variable: "QUIRE_JOB_SERVICES", .serviceNames,
                help: "services jobs may name before a worker for them has been seen", defaultNote: "none; services seen once are remembered"),
    ]
}

extension SettingValue where Value == Set<String> {
    /// Service names separated by commas; none: the empty set.
    static var serviceNames: Self {
        Self(placeholder: "A,B", expectation: "service names separated by commas",
             parse: { Set($0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }) },
             format: { $0.sorted().joined(separator: ",") })
    }
}
