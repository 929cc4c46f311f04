import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireJWT
import QuireStack
import QuireSupport
import QuireTokens
import QuireWire
import QuireWorker
import Synchronization
import ZeroMQ

/// What `quire bench broker` runs, with every default in one place.
public struct BrokerBenchOptions: Sendable, Equatable {
    /// Echo workers, each a connection on its own thread.
    public var workers = 2
    /// Pipelined requests measured against Quire's broker.
    public var requests = 200_000
    /// Requests outstanding at once in the throughput run.
    public var inFlight = 64
    /// Sequential requests (one in flight) for the latency percentiles.
    public var latencyRequests = 5_000
    /// Pipelined requests sent before measuring (repeated until every worker has served one).
    public var warmupRequests = 2_000
    /// The size of the one body frame of each request.
    public var payloadBytes = 16
    /// A Python with majortomo 0.2.0 and six: when set, majortomo's broker is measured too.
    public var majortomoPython: String?
    /// Pipelined requests measured against majortomo's broker (it is much slower).
    public var majortomoRequests = 20_000
    /// One request not answered within this fails the run (the client does not retry).
    public var requestTimeout: Milliseconds = 10_000
    /// The throughput and latency runs send no new request past this and report what they measured;
    /// the warm-up fails past it.
    public var phaseTimeout: Milliseconds = 15_000
    /// One ZeroMQ context (one libzmq I/O thread instead of three) for the broker, the workers and the
    /// client, instead of one each as separate processes would have. Not how Quire is deployed.
    public var sharedContext = false
    /// Publish stats (one snapshot per `statsInterval`) with a subscriber draining them, to measure
    /// what monitoring costs the broker.
    public var stats = false
    /// Auth on: every request carries a token (the same one: a client reuses its token), which the broker
    /// verifies (cached after the first time) and removes before the worker sees the request.
    public var auth = false
    public var statsInterval: Milliseconds = 1_000

    public init() {}
}

/// `quire bench broker`: a broker, echo workers and a client in one process over TCP loopback,
/// measuring pipelined requests/s and sequential round-trip latency; optionally the same against
/// majortomo's Python broker for comparison.
///
/// ``run()`` blocks the calling thread (not a pool thread): the broker and the workers run on their
/// own threads, the client on its I/O thread, and only the awaiting of replies uses the pool.
public final class BrokerBenchmark: Sendable {
    public let options: BrokerBenchOptions
    private let logger: Logger
    private let progress: @Sendable (String) -> Void
    private let children = ChildRegistry()

    static let service = "echo"

    /// `progress` receives one line per phase (for standard error); `logger` is given to the broker,
    /// the workers and the benchmark's own warnings.
    public init(options: BrokerBenchOptions, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    /// Kills the majortomo subprocess at once, from any thread (for a signal handler; exit afterwards).
    public func killSubprocesses() { children.killAll() }

    /// Runs every measurement and tears everything down, also when one fails.
    public func run() throws -> BrokerBenchReport {
        let machine = MachineInfo.current()
        // Check the Python first, so that a wrong path fails before the long Quire run.
        let majortomo = try options.majortomoPython.map { python in (python, try majortomoVersion(python: python)) }
        var results = [try runQuire()]
        if let (python, version) = majortomo {
            results.append(try runMajortomo(python: python, version: version))
        }
        return BrokerBenchReport(machine: machine, payloadBytes: options.payloadBytes, sharedContext: options.sharedContext,
                                 results: results)
    }

    // MARK: - Brokers

    private func runQuire() throws -> BrokerBenchResult {
        let rig = Rig(logger: logger)
        defer { rig.tearDown() }
        var configuration = BrokerConfiguration(bind: "tcp://127.0.0.1:*")
        if options.stats {
            configuration.statsBind = "tcp://127.0.0.1:*"
            configuration.statsInterval = options.statsInterval
        }
        var token: String?
        var groups: [WorkerGroup] = []
        let authDirectory = NSTemporaryDirectory() + "quire-bench-auth-\(getpid())"
        defer { if options.auth { try? FileManager.default.removeItem(atPath: authDirectory) } }
        if options.auth {
            // A token worker's keys and one client, in a temporary folder; no rate limit in the way.
            configuration.auth = AuthConfiguration(rateLimit: 1e9, burst: 1e9)
            let authority = try TokenAuthority(dataDirectory: authDirectory)
            _ = try KeyStore(dataDirectory: authDirectory).ensureKey(now: epochSeconds())
            let (client, secret) = try ClientRegistry(dataDirectory: authDirectory).add(name: "bench", scopes: [Self.service], now: epochSeconds())
            token = try authority.issue(.credentials(Credentials(clientID: client.id, clientSecret: secret))).get().accessToken
            // The broker fetches the JWKS from auth.jwks when this worker registers.
            groups.append(WorkerGroup(service: TokenService.jwks(authority: authority), keepsHeartbeat: true, context: .own, threadName: "bench-jwks"))
        }
        // Workers and client get a context each, as separate processes would, unless --shared-context.
        groups.append(WorkerGroup(service: EchoService.make(name: Self.service), count: options.workers, keepsHeartbeat: true,
                                  context: options.sharedContext ? .broker : .own, threadName: "bench-worker"))
        progress("Quire: starting the broker")
        let stack: Stack
        do {
            stack = try Stack.start(StackConfiguration(broker: configuration, workers: groups), logger: logger)
        } catch let error as StackError {
            throw BenchError("the Quire \(error)")
        }
        rig.stopBroker = { stack.stop() }
        let subscriber = try stack.statsEndpoint.map { try StatsDrain(endpoint: $0) }
        defer {
            if let subscriber {
                let received = subscriber.stop()
                progress("Quire: the stats subscriber received \(received) snapshots")
            }
        }
        let payload = Array(repeating: UInt8(ascii: "q"), count: options.payloadBytes)
        var body: [[UInt8]] = [payload]
        var expected = body
        if let token {
            body = [Array(#"{"token":"\#(token)"}"#.utf8), payload]
            expected = [Array("{}".utf8), payload]
        }
        let name = ["Quire"] + (options.stats ? ["stats on"] : []) + (options.auth ? ["auth on"] : [])
        let echoWorkers = stack.workers.filter { $0.service.name == Self.service }
        let clientContext = options.sharedContext ? stack.contexts[0] : try Context()
        if !options.sharedContext { rig.contexts.append(clientContext) }
        return try measure(rig: rig, name: name.count == 1 ? "Quire" : "Quire (\(name.dropFirst().joined(separator: ", ")))", endpoint: stack.endpoint,
                           dialect: .mdp02, requests: options.requests, body: body, expected: expected,
                           workers: echoWorkers, endedWorker: { stack.endedWorker.map { $0.error.map { String(describing: $0) } ?? "it returned" } },
                           clientContext: clientContext)
    }

    /// The majortomo version `python` imports; throws when it cannot import majortomo and six.
    private func majortomoVersion(python: String) throws -> String {
        progress("majortomo: checking \(python)")
        let probe = try runBriefly(python, ["-c", "import six, majortomo.broker, importlib.metadata as m; print(m.version('majortomo'))"], timeout: 20_000)
        guard probe.status == 0 else {
            throw BenchError("'\(python)' cannot import majortomo and six (pip install majortomo==0.2.0 six):\n\(probe.output)")
        }
        let version = probe.output.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"
        if version != "0.2.0" { logger.warning("majortomo is not 0.2.0; its dialect may differ", metadata: ["version": version]) }
        return version
    }

    private func runMajortomo(python: String, version: String) throws -> BrokerBenchResult {
        let rig = Rig(logger: logger)
        defer { rig.tearDown() }
        let port = try freeLoopbackPort()
        let endpoint = "tcp://127.0.0.1:\(port)"
        progress("majortomo: starting its broker on \(endpoint)")
        let child = try ChildProcess(executable: python, arguments: ["-m", "majortomo.broker", "--bind-url", endpoint])
        children.add(child)
        rig.stopBroker = { [children] in
            child.stop()
            children.remove(pid: child.pid)
            return true
        }
        let deadline = Instant.now() + Milliseconds(15_000)
        while !loopbackPortAccepts(port) {
            guard child.isRunning else {
                throw BenchError("majortomo's broker exited with status \(child.process.terminationStatus):\n\(child.outputTail())")
            }
            guard Instant.now() < deadline else {
                throw BenchError("majortomo's broker did not listen on \(endpoint) within 15 s:\n\(child.outputTail())")
            }
            usleep(20_000)
        }
        do {
            // Quire's echo workers against majortomo's broker: a context for them and one for the client,
            // or one for both with --shared-context.
            let shared = options.sharedContext ? try Context() : nil
            let workerContext = try shared ?? Context()
            rig.contexts.append(workerContext)
            let configuration = WorkerConfiguration(broker: endpoint, dialect: .majortomo)
            for index in 0..<options.workers {
                let worker = try Worker(configuration: configuration, service: EchoService.make(name: Self.service), context: workerContext, logger: logger)
                rig.workers.append(worker)
                rig.workerThreads.append(LoopThread(name: "bench-worker-\(index)") { try worker.run() })
            }
            let threads = rig.workerThreads
            let clientContext = try shared ?? Context()
            if shared == nil { rig.contexts.append(clientContext) }
            return try measure(rig: rig, name: "majortomo \(version)", endpoint: endpoint, dialect: .majortomo,
                               requests: options.majortomoRequests, workers: rig.workers,
                               endedWorker: { threads.first(where: \.hasFinished).map { $0.error.map { String(describing: $0) } ?? "it returned" } },
                               clientContext: clientContext)
        } catch {
            guard child.isRunning else {
                throw BenchError("\(error)\nmajortomo's broker exited with status \(child.process.terminationStatus):\n\(child.outputTail())")
            }
            throw error
        }
    }

    // MARK: - Measuring

    /// Starts the client against `endpoint` (on `clientContext`), warms up until each of `workers` has
    /// served, then measures. `endedWorker` says why a worker stopped, if one did.
    private func measure(rig: Rig, name: String, endpoint: String, dialect: Dialect, requests: Int, body: [[UInt8]]? = nil, expected: [[UInt8]]? = nil,
                         workers: [Worker], endedWorker: @escaping @Sendable () -> String?, clientContext: Context) throws -> BrokerBenchResult {
        let clientConfiguration = ClientConfiguration(broker: endpoint, dialect: dialect, timeout: options.requestTimeout,
                                                      retries: 0, maxInFlight: options.inFlight)
        let client = try QuireClient(configuration: clientConfiguration, context: clientContext)
        rig.clients.append(client)

        let body = body ?? [Array(repeating: UInt8(ascii: "q"), count: options.payloadBytes)]
        let expected = expected ?? body
        let inFlight = options.inFlight
        let warmup = options.warmupRequests

        progress("\(name): warm-up (\(warmup) requests, until all \(workers.count) workers have served)")
        try awaitBlocking("\(name): the warm-up", timeout: options.phaseTimeout) {
            repeat {
                if let why = endedWorker() { throw BenchError("a worker stopped: \(why)") }
                _ = try await Self.pipelined(client, body: body, expected: expected, requests: warmup, inFlight: inFlight)
            } while workers.contains(where: { $0.requestsServed == 0 })
        }

        // The measured phases stop sending at the phase deadline and report what they did by then; the
        // hard limit behind it covers a request stuck until its own timeout.
        let phase = options.phaseTimeout
        let hardLimit = Milliseconds(phase.value + options.requestTimeout.value + 5_000)

        progress("\(name): \(requests) requests, \(inFlight) in flight")
        let stopThroughput = Instant.now() + phase
        let (completed, seconds) = try awaitBlocking("\(name): the throughput run", timeout: hardLimit) {
            try await Self.pipelined(client, body: body, expected: expected, requests: requests, inFlight: inFlight, stopAt: stopThroughput)
        }
        if completed < requests {
            progress("\(name): stopped at the \(phase.value) ms phase limit after \(completed) requests")
        }

        // The latency run gets a client of its own, so that it measures one request in flight and not
        // also the connections the throughput run left open (the client keeps them for reuse).
        let latencyClient = try QuireClient(configuration: clientConfiguration, context: clientContext)
        rig.clients.append(latencyClient)
        let latencyRequests = options.latencyRequests
        progress("\(name): \(latencyRequests) requests, one in flight")
        let samples = try awaitBlocking("\(name): the latency run", timeout: hardLimit) {
            // A few unmeasured round trips first: the connection is made on the first request.
            _ = try await Self.sequential(latencyClient, body: body, expected: expected, requests: min(100, latencyRequests), stopAt: Instant.now() + phase)
            return try await Self.sequential(latencyClient, body: body, expected: expected, requests: latencyRequests, stopAt: Instant.now() + phase)
        }
        if samples.count < latencyRequests {
            progress("\(name): stopped at the \(phase.value) ms phase limit after \(samples.count) sequential requests")
        }
        let latency = LatencySummary(nanoseconds: samples)

        return BrokerBenchResult(
            broker: name, dialect: dialect.rawValue, workers: options.workers, inFlight: inFlight, requests: completed,
            seconds: (seconds * 1_000).rounded() / 1_000,
            requestsPerSecond: (Double(completed) / seconds).rounded(),
            latencyRequests: samples.count,
            p50Microseconds: (latency.p50 * 10).rounded() / 10, p90Microseconds: (latency.p90 * 10).rounded() / 10,
            p99Microseconds: (latency.p99 * 10).rounded() / 10, maxMicroseconds: (latency.max * 10).rounded() / 10,
            stoppedAtPhaseLimit: completed < requests || samples.count < latencyRequests)
    }

    /// `requests` echo requests with `inFlight` outstanding, no new one sent after `stopAt`; how many
    /// were answered and the seconds they took. Any error or a reply that is not the request fails the
    /// run: a number with failures in it would mislead.
    static func pipelined(_ client: QuireClient, body: [[UInt8]], expected: [[UInt8]]? = nil, requests: Int, inFlight: Int,
                          stopAt: Instant = Instant(nanoseconds: .max)) async throws -> (completed: Int, seconds: Double) {
        let tickets = TicketCounter()
        let answered = TicketCounter()
        let start = Instant.now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<min(inFlight, requests) {
                group.addTask {
                    while tickets.take() < requests, Instant.now() < stopAt {
                        let reply = try await client.request(service: service, body: body)
                        guard reply == (expected ?? body) else { throw BenchError("an echo reply differs from its request") }
                        _ = answered.take()
                    }
                }
            }
            try await group.waitForAll()
        }
        return (answered.count, max(Instant.now().seconds(since: start), 1e-9))
    }

    /// `requests` echo requests one after the other, none sent after `stopAt`; each round trip in
    /// nanoseconds.
    static func sequential(_ client: QuireClient, body: [[UInt8]], expected: [[UInt8]]? = nil, requests: Int, stopAt: Instant) async throws -> [UInt64] {
        var samples: [UInt64] = []
        samples.reserveCapacity(requests)
        for _ in 0..<requests {
            let start = Instant.now()
            if start >= stopAt { break }
            let reply = try await client.request(service: service, body: body)
            samples.append(Instant.now().nanoseconds &- start.nanoseconds)
            guard reply == (expected ?? body) else { throw BenchError("an echo reply differs from its request") }
        }
        return samples
    }
}
