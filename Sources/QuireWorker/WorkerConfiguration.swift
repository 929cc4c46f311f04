import QuireSupport
import QuireWire
import ZeroMQ

/// How a worker finds and talks to its broker.
public struct WorkerConfiguration: Sendable, Equatable {
    /// The broker's endpoint. Workers connect; only the broker binds.
    public var broker: String
    /// The Majordomo dialect to speak (MDP/0.2 unless talking to an older broker).
    public var dialect: Dialect
    /// How often to send HEARTBEAT when otherwise quiet, also while busy. Must match the broker's.
    public var heartbeatInterval: Milliseconds
    /// The broker is taken for gone after `heartbeatInterval × heartbeatLiveness` of silence.
    public var heartbeatLiveness: Int
    /// The first pause before reconnecting to a broker that went away; it doubles up to the maximum.
    public var reconnectInitial: Milliseconds
    public var reconnectMax: Milliseconds
    /// Whether HEARTBEATs carry the worker's own figures (jobs done, engine time, memory) in one extra
    /// frame for the broker's stats (`HeartbeatExtension.swift`). Off for a broker that rejects it.
    public var sendsReports: Bool
    /// CURVE towards a broker that has it on (`--curve-server-key`, `--curve-key`); `nil`: plain TCP.
    public var curve: CurveClientSettings?

    public init(
        broker: String = "tcp://127.0.0.1:5555",
        dialect: Dialect = .mdp02,
        heartbeatInterval: Milliseconds = 2_500,
        heartbeatLiveness: Int = 4,
        reconnectInitial: Milliseconds = 250,
        reconnectMax: Milliseconds = 8_000,
        sendsReports: Bool = true,
        curve: CurveClientSettings? = nil
    ) {
        self.broker = broker
        self.dialect = dialect
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.reconnectInitial = reconnectInitial
        self.reconnectMax = reconnectMax
        self.sendsReports = sendsReports
        self.curve = curve
    }

    /// The defaults, overridden by the `QUIRE_*` variables of ``settings`` where set.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        try Self.settings.applyEnvironment(environment, to: &self)
    }

    /// What `quire worker` lets its users set about the connection, each setting declared once.
    public static let settings: [Setting<WorkerConfiguration>] = [
        .broker(\.broker),
        Setting(\.dialect, flag: "dialect", .choice(noun: "dialect", placeholder: "D"), help: "the Majordomo dialect to speak"),
        .heartbeatInterval(\.heartbeatInterval),
        .heartbeatLiveness(\.heartbeatLiveness),
        Setting(\.sendsReports, variable: "QUIRE_WORKER_REPORTS", .onOff, help: "the worker's figures in an extra HEARTBEAT frame, for the broker's stats"),
    ]
}

/// One request as a handler sees it.
public struct WorkerRequest: Sendable {
    /// The body frames after the envelope.
    public let body: [[UInt8]]
    /// The broker this worker serves, and its CURVE settings: for a handler that sends requests of its
    /// own through the same broker (`ocr.document` submits its pages as jobs).
    public let broker: String
    public let curve: CurveClientSettings?
    private let partial: @Sendable ([[UInt8]]) -> Void

    init(body: [[UInt8]], broker: String, curve: CurveClientSettings?, partial: @escaping @Sendable ([[UInt8]]) -> Void) {
        self.body = body
        self.broker = broker
        self.curve = curve
        self.partial = partial
    }

    /// Sends a PARTIAL reply (progress) to the client ahead of the final one. Dropped for MDP/0.1, which
    /// has no partial replies.
    public func sendPartial(_ frames: [[UInt8]]) { partial(frames) }
}

/// Serves requests for one service on one thread. It is created on the thread that uses it, so it may
/// hold thread-bound resources such as a Tesseract engine.
public protocol RequestHandler: AnyObject {
    /// Returns the FINAL reply's frames. A thrown ``WireError`` becomes the error reply; any other error
    /// becomes `internal`.
    func handle(_ request: WorkerRequest) throws -> [[UInt8]]
}

/// A kind of worker: the service it serves and how to make a handler for each worker thread.
public struct WorkerService: Sendable {
    public var name: String
    /// When set, the first body frame must be a UTF-8 JSON object; others get `invalid_json` without
    /// reaching the handler.
    public var requiresJSONFrame: Bool
    /// When set, the handler runs on the I/O thread itself: only for handlers that never block and
    /// finish in microseconds (echo), where the hand-off to an execution thread would cost more than
    /// the work. Heartbeats pause while such a handler runs.
    public var runsInline: Bool
    public var makeHandler: @Sendable () throws -> any RequestHandler

    public init(name: String, requiresJSONFrame: Bool = false, runsInline: Bool = false, makeHandler: @escaping @Sendable () throws -> any RequestHandler) {
        self.name = name
        self.requiresJSONFrame = requiresJSONFrame
        self.runsInline = runsInline
        self.makeHandler = makeHandler
    }
}
