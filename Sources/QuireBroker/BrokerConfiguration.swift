import QuireSupport

/// Everything the broker can be told, with every default in one place.
public struct BrokerConfiguration: Sendable, Equatable {
    /// Where the ROUTER socket binds. Clients and workers connect; only the broker binds.
    public var bind: String
    /// How often the broker sends HEARTBEAT to each worker, busy or idle (RFC 18 §Heartbeating).
    /// 2,500 ms matches majortomo's default, so its workers and Quire's agree out of the box.
    public var heartbeatInterval: Milliseconds
    /// A worker that sends nothing for `heartbeatInterval × heartbeatLiveness` is dead (RFC: 3–5).
    public var heartbeatLiveness: Int
    /// How long a worker of a dialect that stays silent while busy (MDP/0.1, majortomo) may hold one
    /// request before it is taken for dead. MDP/0.2 workers heartbeat while busy instead.
    public var busyWorkerTimeout: Milliseconds
    /// How long a request may wait in a queue for a worker before it is answered with an error.
    public var requestTimeout: Milliseconds
    /// How many workers may take one request in turn when they die holding it, before the client
    /// gets `worker_lost`. Requests are replayed only because Quire's services are idempotent.
    public var maxAttempts: Int
    /// Requests waiting per service; past it new requests get `busy` at once.
    public var maxQueuedRequests: Int
    /// The largest message (all frames together) the broker accepts; larger ones get `too_large`.
    public var maxMessageBytes: Int
    /// The most frames one message may have.
    public var maxFrames: Int
    /// Durable jobs (`titanic.*`): on when a data folder is given.
    public var jobs: JobConfiguration?
    /// Token checks on every protected service; `nil`: off (the library default; `quire broker` and
    /// `quire up` turn it on unless told `--auth off`).
    public var auth: AuthConfiguration?
    /// Where the stats PUB socket binds (`quire.stats` snapshots, `quire.event` events); `nil`: no stats socket.
    public var statsBind: String?
    /// How often a stats snapshot is published.
    public var statsInterval: Milliseconds
    /// How much history the wait and run percentiles cover.
    public var statsWindow: Milliseconds
    /// CURVE encryption and client authentication on the broker's socket; `nil`: plain TCP. The
    /// broker refuses to start with CURVE on unless a ``ZAPHandler`` is bound in its context.
    public var curve: CurveServerSettings?

    public init(
        bind: String = "tcp://*:5555",
        heartbeatInterval: Milliseconds = 2_500,
        heartbeatLiveness: Int = 4,
        busyWorkerTimeout: Milliseconds = 900_000,
        requestTimeout: Milliseconds = 30_000,
        maxAttempts: Int = 3,
        maxQueuedRequests: Int = 10_000,
        maxMessageBytes: Int = 64 << 20,
        maxFrames: Int = 64,
        jobs: JobConfiguration? = nil,
        auth: AuthConfiguration? = nil,
        statsBind: String? = nil,
        statsInterval: Milliseconds = 1_000,
        statsWindow: Milliseconds = 60_000,
        curve: CurveServerSettings? = nil
    ) {
        self.bind = bind
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.busyWorkerTimeout = busyWorkerTimeout
        self.requestTimeout = requestTimeout
        self.maxAttempts = maxAttempts
        self.maxQueuedRequests = maxQueuedRequests
        self.maxMessageBytes = maxMessageBytes
        self.maxFrames = maxFrames
        self.jobs = jobs
        self.auth = auth
        self.statsBind = statsBind
        self.statsInterval = statsInterval
        self.statsWindow = statsWindow
        self.curve = curve
    }

    /// The defaults, overridden by the `QUIRE_*` variables of ``settings`` (and of
    /// ``JobConfiguration/settings`` when `QUIRE_DATA` names a folder) where set. Values that do not
    /// parse are reported, not ignored.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        try Self.settings.applyEnvironment(environment, to: &self)
        jobs = try JobConfiguration(environment: environment)
    }

    /// What `quire broker` and `quire up` let their users set, each setting declared once.
    public static let settings: [Setting<BrokerConfiguration>] = [
        Setting(\.bind, flag: "bind", variable: "QUIRE_BIND", .string("ENDPOINT"), help: "where the broker listens"),
        .heartbeatInterval(\.heartbeatInterval),
        .heartbeatLiveness(\.heartbeatLiveness),
        Setting(\.busyWorkerTimeout, flag: "busy-worker-timeout-ms", variable: "QUIRE_BUSY_WORKER_TIMEOUT_MS", .milliseconds(1...604_800_000),
                help: "longest request for workers that are silent while busy (MDP/0.1, majortomo)"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", variable: "QUIRE_REQUEST_TIMEOUT_MS", .milliseconds(1...604_800_000),
                help: "longest wait in a queue for a worker"),
        Setting(\.maxAttempts, flag: "max-attempts", variable: "QUIRE_MAX_ATTEMPTS", .integer(1...100),
                help: "workers that may lose one request in turn"),
        Setting(\.maxQueuedRequests, flag: "max-queued", variable: "QUIRE_MAX_QUEUED_REQUESTS", .integer(1...10_000_000),
                help: "queued requests per service before 'busy'; each holds its image in memory"),
        Setting(\.maxMessageBytes, flag: "max-message-bytes", variable: "QUIRE_MAX_MESSAGE_BYTES", .integer(1024...(1 << 31)),
                help: "the largest request accepted"),
        Setting(\.statsBind, flag: "stats", variable: "QUIRE_STATS_BIND", SettingValue.string("ENDPOINT").optional(none: "off", offWord: "off"),
                help: "publish stats snapshots and events on a PUB socket bound here, e.g. tcp://*:5556"),
        Setting(\.statsInterval, flag: "stats-interval-ms", variable: "QUIRE_STATS_INTERVAL_MS", .milliseconds(10...3_600_000),
                help: "one stats snapshot every N ms"),
    ]

    /// The hard per-frame limit given to libzmq (`ZMQ_MAXMSGSIZE`): above the broker's own limit so that
    /// a message a little too large still gets a typed `too_large` answer; a frame past this one makes
    /// libzmq drop the connection instead.
    public var transportFrameLimit: Int64 { Int64(maxMessageBytes) * 2 + 65_536 }

    /// The idle time after which a worker is dead.
    public var workerExpiry: Milliseconds { heartbeatInterval * heartbeatLiveness }
}
