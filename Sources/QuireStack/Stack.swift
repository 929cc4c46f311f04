import Dispatch
import Foundation
import QuireBroker
import QuireSupport
import QuireWorker
import Synchronization
import ZeroMQ

/// One process's whole stack: a broker (with its job store when configured), workers of any kind and
/// the token worker, started in order and stopped in order.
///
/// `quire up`, the benchmarks and the in-process end-to-end tests all assemble their stack this way,
/// as hummingbird's applications do: ``start(_:logger:)`` returns once the broker is bound and every
/// worker runs, and the returned stack reports the bound endpoint; ``stop()`` drains the workers, then
/// stops the broker, then ends the ZeroMQ contexts. Blocking: call it from a thread of its own or the
/// main thread, never from the cooperative pool.
public final class Stack: Sendable {
    public let configuration: StackConfiguration
    /// The endpoint the broker bound, with the real port when the configuration said `*`.
    public let endpoint: String
    /// Where clients on this machine connect: ``endpoint`` with a wildcard address replaced by loopback.
    public let connectEndpoint: String
    /// The stats PUB socket's endpoint, `nil` when stats are off.
    public let statsEndpoint: String?
    public let broker: Broker
    /// Every worker, group after group in the configuration's order.
    public let workers: [Worker]
    /// The broker's context first, then each group's own.
    public let contexts: [Context]
    private let brokerThread: LoopThread
    private let workerThreads: [LoopThread]
    private let logger: Logger
    /// The outcome of the first ``stop()``.
    private let stopOutcome = Mutex<Bool?>(nil)

    private init(configuration: StackConfiguration, endpoint: String, statsEndpoint: String?, broker: Broker, workers: [Worker],
                 contexts: [Context], brokerThread: LoopThread, workerThreads: [LoopThread], logger: Logger) {
        self.configuration = configuration
        self.endpoint = endpoint
        self.connectEndpoint = Self.connectable(endpoint)
        self.statsEndpoint = statsEndpoint
        self.broker = broker
        self.workers = workers
        self.contexts = contexts
        self.brokerThread = brokerThread
        self.workerThreads = workerThreads
        self.logger = logger
    }

    /// Starts the broker on a thread of its own and waits until it is bound; then the workers, each on
    /// its own thread, connected to the bound endpoint. Throws ``StackError`` when the broker fails or
    /// does not bind in time; whatever was started is stopped again first.
    /// The number before the broker's ZeroMQ threads' names (`ZMQbg/IO/0`), to tell them from the
    /// workers' and clients' in one process.
    public static let brokerThreadNamePrefix: Int32 = 1

    public static func start(_ configuration: StackConfiguration, logger: Logger) throws -> Stack {
        let brokerContext = try Context(threadNamePrefix: brokerThreadNamePrefix)
        var contexts = [brokerContext]
        let broker: Broker
        do {
            broker = try Broker(configuration: configuration.broker, context: brokerContext, logger: logger)
        } catch {
            brokerContext.terminate()
            throw error
        }
        let bound = DispatchSemaphore(value: 0)
        let brokerThread = LoopThread(name: "quire-broker") { try broker.run(onBound: { _ in bound.signal() }) }
        func abandon() {
            broker.stop()
            let stopped = brokerThread.join(timeout: configuration.brokerStopTimeout)
            for context in contexts { if stopped { context.terminate() } else { context.shutdown() } }
        }
        let deadline = Instant.now() + configuration.startTimeout
        while bound.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if brokerThread.hasFinished {
                brokerContext.terminate()
                throw StackError("the broker failed to start", cause: brokerThread.error)
            }
            if Instant.now() >= deadline {
                abandon()
                throw StackError("the broker did not bind within \(configuration.startTimeout.value) ms")
            }
        }
        guard let endpoint = broker.boundEndpoint else {
            abandon()
            throw StackError("the broker has no bound endpoint")
        }
        let target = connectable(endpoint)

        var workers: [Worker] = []
        var names: [String] = []
        do {
            for group in configuration.workers where group.count > 0 {
                let context: Context
                switch group.context {
                case .broker: context = brokerContext
                case .own:
                    context = try Context()
                    contexts.append(context)
                }
                var workerConfiguration = group.configuration
                workerConfiguration.broker = target
                if !group.keepsHeartbeat {
                    workerConfiguration.heartbeatInterval = configuration.broker.heartbeatInterval
                    workerConfiguration.heartbeatLiveness = configuration.broker.heartbeatLiveness
                }
                for index in 0..<group.count {
                    workers.append(try Worker(configuration: workerConfiguration, service: group.service, context: context, logger: logger))
                    names.append("\(group.threadName)-\(index)")
                }
            }
        } catch {
            abandon()
            throw error
        }
        // A worker that fails stops the others: a stack with a broken part says so rather than
        // limping on (`quire up` then exits 1).
        let all = workers
        let threads = zip(workers, names).map { worker, name in
            LoopThread(name: name) {
                do {
                    try worker.run()
                } catch {
                    logger.error("worker failed", metadata: ["error": String(describing: error), "service": worker.service.name])
                    for other in all { other.stop() }
                    throw error
                }
            }
        }
        return Stack(configuration: configuration, endpoint: endpoint, statsEndpoint: broker.boundStatsEndpoint, broker: broker,
                     workers: workers, contexts: contexts, brokerThread: brokerThread, workerThreads: threads, logger: logger)
    }

    /// Asks every worker to finish the request in hand and leave. From any thread (a signal handler).
    public func stopWorkers() {
        for worker in workers { worker.stop() }
    }

    /// Blocks until every worker has ended; `false` when one failed.
    @discardableResult
    public func waitForWorkers() -> Bool {
        for thread in workerThreads { thread.join() }
        return workerThreads.allSatisfy { $0.error == nil }
    }

    /// The first worker that has ended on its own (failed or returned), with what it threw.
    public var endedWorker: (index: Int, error: (any Error)?)? {
        guard let index = workerThreads.firstIndex(where: \.hasFinished) else { return nil }
        return (index, workerThreads[index].error)
    }

    /// What the broker threw if it stopped on its own.
    public var brokerError: (any Error)? { brokerThread.error }

    /// Stops everything in order: the workers (each given ``StackConfiguration/workerStopTimeout`` to
    /// finish what it holds), then the broker (queued clients hear `shutting_down`), then the
    /// contexts. `true` when every part stopped in time; a part that did not still has sockets open,
    /// so its context is shut down (every blocking call fails with ETERM) instead of terminated.
    /// Calling it again returns the first outcome.
    @discardableResult
    public func stop() -> Bool {
        stopOutcome.withLock { outcome in
            if let outcome { return outcome }
            var clean = true
            stopWorkers()
            for (index, thread) in workerThreads.enumerated() where !thread.join(timeout: configuration.workerStopTimeout) {
                logger.warning("a worker did not stop in time", metadata: [
                    "worker": String(index), "service": workers[index].service.name, "timeout_ms": String(configuration.workerStopTimeout.value),
                ])
                clean = false
            }
            broker.stop()
            if !brokerThread.join(timeout: configuration.brokerStopTimeout) {
                logger.warning("the broker did not stop in time", metadata: ["timeout_ms": String(configuration.brokerStopTimeout.value)])
                clean = false
            }
            // Terminating a context waits for its sockets; the DISCONNECTs and the goodbyes leave first.
            for context in contexts {
                if clean { context.terminate() } else { context.shutdown() }
            }
            outcome = clean
            return clean
        }
    }

    /// `tcp://*:5555` and `tcp://0.0.0.0:5555` are where a broker listens, not where to connect.
    static func connectable(_ endpoint: String) -> String {
        endpoint.replacingOccurrences(of: "://0.0.0.0:", with: "://127.0.0.1:").replacingOccurrences(of: "://*:", with: "://127.0.0.1:")
    }
}
