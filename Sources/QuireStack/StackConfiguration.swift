import QuireBroker
import QuireSupport
import QuireWorker

/// What a ``Stack`` runs: one broker and groups of workers, with every default in one place.
public struct StackConfiguration: Sendable {
    /// The broker's configuration; with ``BrokerConfiguration/jobs`` set it opens its job store.
    /// Bind port `*` (or 0) to let the system choose; ``Stack/endpoint`` says which it chose.
    public var broker: BrokerConfiguration
    /// Started in this order once the broker is bound, each worker on its own thread.
    public var workers: [WorkerGroup]
    /// The broker must bind within this, or ``Stack/start(_:logger:)`` fails.
    public var startTimeout: Milliseconds
    /// How long each worker may take to finish the request in hand when the stack stops.
    public var workerStopTimeout: Milliseconds
    /// How long the broker may take to answer everyone and close once the workers are gone.
    public var brokerStopTimeout: Milliseconds

    public init(broker: BrokerConfiguration, workers: [WorkerGroup] = [], startTimeout: Milliseconds = 10_000,
                workerStopTimeout: Milliseconds = 5_000, brokerStopTimeout: Milliseconds = 10_000) {
        self.broker = broker
        self.workers = workers
        self.startTimeout = startTimeout
        self.workerStopTimeout = workerStopTimeout
        self.brokerStopTimeout = brokerStopTimeout
    }
}

/// `count` workers of one service, each a connection of its own on a thread of its own.
public struct WorkerGroup: Sendable {
    /// Which ZeroMQ context the group's sockets use.
    public enum ContextChoice: Sendable, Equatable {
        /// The broker's, as `quire up` runs them: one libzmq I/O thread for the whole process.
        case broker
        /// One of the group's own, as a separate worker process would have.
        case own
    }

    public var service: WorkerService
    public var count: Int
    /// The workers' settings. Its broker endpoint is replaced by the stack's bound endpoint; its
    /// heartbeat is taken from the broker's configuration unless ``keepsHeartbeat`` says otherwise.
    public var configuration: WorkerConfiguration
    /// Keep ``configuration``'s heartbeat instead of matching the broker's.
    public var keepsHeartbeat: Bool
    public var context: ContextChoice
    /// The threads are named `name-0`, `name-1`, … (what `top -H` and profilers show; Linux keeps 15
    /// characters of a thread's name).
    public var threadName: String

    public init(service: WorkerService, count: Int = 1, configuration: WorkerConfiguration = WorkerConfiguration(),
                keepsHeartbeat: Bool = false, context: ContextChoice = .broker, threadName: String? = nil) {
        self.service = service
        self.count = count
        self.configuration = configuration
        self.keepsHeartbeat = keepsHeartbeat
        self.context = context
        self.threadName = threadName ?? "quire-\(service.name)"
    }
}

/// Why a stack could not start.
public struct StackError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// What the broker or a worker threw, when that is the reason.
    public var cause: (any Error)?
    public init(_ message: String, cause: (any Error)? = nil) {
        self.message = message
        self.cause = cause
    }
    public var description: String { cause.map { "\(message): \($0)" } ?? message }
}
