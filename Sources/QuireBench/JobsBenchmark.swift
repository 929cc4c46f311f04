import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireStack
import QuireSupport
import QuireWire
import QuireWorker
import ZeroMQ

/// What `quire bench jobs` runs, with every default in one place.
public struct JobsBenchOptions: Sendable, Equatable {
    /// Durable submissions measured for submits/s.
    public var submits = 3_000
    /// Bytes of each job's request body (a phone photo is about this size after JPEG compression).
    public var payloadBytes = 100_000
    /// Submissions outstanding at once.
    public var inFlight = 64
    /// Echo workers for the latency run.
    public var workers = 2
    /// Let the echo workers drain the throughput run's jobs as they come (their 100 KB replies are
    /// stored too, doubling the writes). By default those jobs go to a service no worker serves, so the
    /// run measures submissions alone, as when OCR workers (about one page per second each) lag far behind.
    public var drain = false
    /// Jobs submitted one at a time, each awaited, for the submit-to-result percentiles.
    public var latencyJobs = 200
    /// The store's folder; a fresh temporary one (deleted afterwards) when `nil`.
    public var directory: String?
    /// A PostgreSQL server (`postgresql://…`): the run's store is a fresh schema in its database
    /// (dropped afterwards) instead of SQLite in ``directory``.
    public var postgres: String?
    /// Brokers serving the PostgreSQL store together, each with its own echo workers and a client of
    /// its own; the submissions are spread over them. SQLite has one broker.
    public var brokers = 2
    public var phaseTimeout: Milliseconds = 120_000

    public init() {}
}

/// The numbers of one `quire bench jobs` run.
public struct JobsBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    /// `sqlite`, or `postgresql`.
    public var store: String
    /// Brokers serving the store together.
    public var brokers: Int
    public var payloadBytes: Int
    public var inFlight: Int
    public var workers: Int
    public var drain: Bool
    public var submits: Int
    public var seconds: Double
    public var submitsPerSecond: Double
    public var megabytesPerSecond: Double
    /// One submission (until `200`), at low load.
    public var submitP50Microseconds: Double
    public var submitP99Microseconds: Double
    /// From sending the submission to holding the result (`titanic.reply` held until the job finishes).
    public var latencyJobs: Int
    public var resultP50Microseconds: Double
    public var resultP90Microseconds: Double
    public var resultP99Microseconds: Double
    public var storeBytes: Int64
    /// CPU milliseconds per durable submission during the throughput run, from /proc: the brokers'
    /// threads (loop, store, their ZeroMQ I/O), the client's (its loop and ZeroMQ I/O), and
    /// PostgreSQL's server processes (every `postgres` process on the machine).
    public var brokerCPUMillisecondsPerJob: Double
    /// The brokers' share by thread: the Majordomo loop, the job store's thread, ZeroMQ's I/O thread.
    /// One broker's rate is bounded by the busiest of the three (each is one thread).
    public var brokerLoopCPUMillisecondsPerJob: Double
    public var brokerStoreCPUMillisecondsPerJob: Double
    public var brokerIOThreadCPUMillisecondsPerJob: Double
    public var clientCPUMillisecondsPerJob: Double
    public var postgresCPUMillisecondsPerJob: Double?
    /// Transactions that wrote (transaction ids assigned) and WAL bytes written per submission, read
    /// from the server's own counters (`pg_current_snapshot`, `pg_current_wal_lsn`), exact at once.
    public var postgresCommitsPerJob: Double?
    public var postgresWALBytesPerJob: Double?

    public func markdown() -> String {
        func f(_ value: Double) -> String { String(format: "%.0f", value) }
        return """
            | durable jobs in \(store == "sqlite" ? "SQLite" : "PostgreSQL"), \(brokers == 1 ? "one broker" : "\(brokers) brokers") (\(payloadBytes / 1_000) KB bodies) | value |
            | --- | ---: |
            | submits/s, \(inFlight) in flight (\(submits) jobs\(drain ? ", \(workers) echo workers draining" : "")) | \(f(submitsPerSecond)) (\(String(format: "%.1f", megabytesPerSecond)) MB/s) |
            | one submit at low load, p50 / p99 | \(f(submitP50Microseconds)) µs / \(f(submitP99Microseconds)) µs |
            | submit → result at low load, \(workers) echo workers\(brokers > 1 ? " per broker" : ""), p50 / p90 / p99 (\(latencyJobs) jobs) | \(f(resultP50Microseconds)) µs / \(f(resultP90Microseconds)) µs / \(f(resultP99Microseconds)) µs |
            | store size afterwards | \(storeBytes / 1_000_000) MB |
            | CPU per submission in the brokers' loop / store / ZeroMQ I/O threads | \(String(format: "%.3f ms / %.3f ms / %.3f ms", brokerLoopCPUMillisecondsPerJob, brokerStoreCPUMillisecondsPerJob, brokerIOThreadCPUMillisecondsPerJob)) |
            | CPU per submission: brokers / client\(postgresCPUMillisecondsPerJob == nil ? "" : " / PostgreSQL") | \(String(format: "%.3f", brokerCPUMillisecondsPerJob)) ms / \(String(format: "%.3f", clientCPUMillisecondsPerJob)) ms\(postgresCPUMillisecondsPerJob.map { String(format: " / %.3f ms", $0) } ?? "") |
            \(postgresCommitsPerJob.map { commits in String(format: "| PostgreSQL per submission: commits / WAL | %.3f / %.0f bytes |\n", commits, postgresWALBytesPerJob ?? 0) } ?? "")

            Machine: \(machine.summary).
            """
    }

    /// The report as one JSON object (snake_case keys, as the other benchmarks).
    public func json() -> String { benchJSON(self) }
}

/// `quire bench jobs`: a broker with a job store, echo workers and a client in one process over TCP
/// loopback (on PostgreSQL, possibly several brokers serving one store, each with its own). Measures
/// durable submissions per second (each acknowledged only once on disk) and the time from submission
/// to result at low load.
public final class JobsBenchmark: Sendable {
    public let options: JobsBenchOptions
    private let logger: Logger
    private let progress: @Sendable (String) -> Void

    public init(options: JobsBenchOptions, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    public func run() throws -> JobsBenchReport {
        let temporary = options.directory == nil
        let directory = options.directory ?? NSTemporaryDirectory() + "quire-bench-jobs-\(getpid())"
        defer { if temporary { try? FileManager.default.removeItem(atPath: directory) } }
        let scratch: PostgresScratchSchema?
        do {
            scratch = try options.postgres.map { server throws(JobStoreError) in try PostgresScratchSchema(server: server, prefix: "quire_bench") }
        } catch {
            throw BenchError("cannot make a schema for the run: \(error)")
        }
        defer { scratch?.drop() }
        let rig = Rig(logger: logger)
        defer { rig.tearDown() }

        var configuration = BrokerConfiguration(bind: "tcp://127.0.0.1:*")
        configuration.jobs = JobConfiguration(directory: directory, store: scratch?.uri, services: ["echo", "bench.sink"])
        let brokers = scratch == nil ? 1 : options.brokers
        progress("starting \(brokers == 1 ? "the broker" : "\(brokers) brokers") with the job store in \(scratch.map { "PostgreSQL, schema \($0.name)" } ?? directory)")
        var stacks: [Stack] = []
        for _ in 0..<brokers {
            // Echo workers with a context of their own, as a separate process would have.
            let echo = WorkerGroup(service: EchoService.make(name: "echo"), count: options.workers, keepsHeartbeat: true, context: .own,
                                   threadName: "bench-worker")
            do {
                stacks.append(try Stack.start(StackConfiguration(broker: configuration, workers: [echo]), logger: logger))
            } catch let error as StackError {
                throw BenchError(error.description)
            }
            rig.stopBroker = { [stacks] in stacks.reversed().map { $0.stop() }.allSatisfy { $0 } }
        }

        let clientContext = try Context(threadNamePrefix: Self.clientThreadNamePrefix)
        rig.contexts.append(clientContext)
        // A client per broker; the submissions in flight are shared out among them.
        let clients = try stacks.map { stack in
            try QuireClient(configuration: ClientConfiguration(broker: stack.endpoint, timeout: 30_000, retries: 0, maxInFlight: options.inFlight),
                            context: clientContext)
        }
        rig.clients += clients

        // Bytes no store can compress, as a JPEG's are (PostgreSQL compresses large values; SQLite does not).
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let payload = (0..<options.payloadBytes).map { _ -> UInt8 in
            state &+= 0x9E37_79B9_7F4A_7C15  // SplitMix64
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
        let target = options.drain ? "echo" : "bench.sink"
        let submits = options.submits
        let inFlight = options.inFlight

        progress("\(submits) durable submissions of \(options.payloadBytes) bytes, \(inFlight) in flight")
        let threadsBefore = CPUTime.threads()
        let postgresBefore = scratch == nil ? [:] : CPUTime.processes(named: "postgres")
        let countersBefore = scratch?.statistics()
        let (completed, seconds) = try awaitBlocking("the submission run", timeout: options.phaseTimeout) {
            let tickets = TicketCounter()
            let answered = TicketCounter()
            let start = Instant.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<min(inFlight, submits) {
                    let client = clients[index % clients.count]
                    group.addTask {
                        while tickets.take() < submits {
                            _ = try await Self.submit(payload, to: target, through: client)
                            _ = answered.take()
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (answered.count, max(Instant.now().seconds(since: start), 1e-9))
        }

        let threadsAfter = CPUTime.threads()
        let postgresAfter = scratch == nil ? [:] : CPUTime.processes(named: "postgres")
        let countersAfter = scratch?.statistics()
        let cpu = Self.cpuPerJob(before: threadsBefore, after: threadsAfter, jobs: completed)
        let counters = countersBefore.flatMap { before in countersAfter.map { (commits: $0.commits - before.commits, walBytes: $0.walBytes - before.walBytes) } }
        progress("\(options.latencyJobs) jobs one at a time: submit, then wait for the result")
        let latencyClients = try stacks.map { stack in
            try QuireClient(configuration: ClientConfiguration(broker: stack.endpoint, timeout: 30_000, retries: 0, maxInFlight: 1),
                            context: clientContext)
        }
        rig.clients += latencyClients
        let latencyClient = latencyClients[0]
        let latencyJobs = options.latencyJobs
        let (submitSamples, resultSamples) = try awaitBlocking("the latency run", timeout: options.phaseTimeout) {
            // The backlog from the first run must drain first, or it would be measured too.
            var idle = false
            while !idle {
                let probe = try await Self.submit(payload, to: "echo", through: latencyClient)
                switch try await latencyClient.jobs.result(of: probe, wait: 60_000) {
                case .done, .failed: idle = true
                case .pending, .unknown, .ended: break
                }
            }
            var submitTimes: [UInt64] = []
            var resultTimes: [UInt64] = []
            for index in 0..<latencyJobs {
                // Each job to the next broker; its result asked of the broker it went to.
                let latencyClient = latencyClients[index % latencyClients.count]
                let start = Instant.now()
                let id = try await Self.submit(payload, to: "echo", through: latencyClient)
                let submitted = Instant.now()
                guard case .done(let reply) = try await latencyClient.jobs.result(of: id, wait: 20_000), reply.last == payload else {
                    throw BenchError("a job's result is not its echo")
                }
                submitTimes.append(submitted.nanoseconds - start.nanoseconds)
                resultTimes.append(Instant.now().nanoseconds - start.nanoseconds)
            }
            return (submitTimes, resultTimes)
        }
        let submitLatency = LatencySummary(nanoseconds: submitSamples)
        let resultLatency = LatencySummary(nanoseconds: resultSamples)
        // The store's size: PostgreSQL's tables, or SQLite's file with its WAL.
        let storePath = (directory as NSString).appendingPathComponent("jobs.sqlite3")
        let storeBytes = scratch?.bytes() ?? ["", "-wal"].reduce(Int64(0)) { sum, suffix in
            sum + ((try? FileManager.default.attributesOfItem(atPath: storePath + suffix)[.size] as? NSNumber)?.int64Value ?? 0)
        }
        return JobsBenchReport(
            machine: MachineInfo.current(), store: scratch == nil ? "sqlite" : "postgresql", brokers: brokers, payloadBytes: options.payloadBytes, inFlight: inFlight, workers: options.workers, drain: options.drain,
            submits: completed, seconds: (seconds * 1_000).rounded() / 1_000, submitsPerSecond: (Double(completed) / seconds).rounded(),
            megabytesPerSecond: Double(completed * options.payloadBytes) / seconds / 1e6,
            submitP50Microseconds: submitLatency.p50.rounded(), submitP99Microseconds: submitLatency.p99.rounded(),
            latencyJobs: resultSamples.count, resultP50Microseconds: resultLatency.p50.rounded(),
            resultP90Microseconds: resultLatency.p90.rounded(), resultP99Microseconds: resultLatency.p99.rounded(), storeBytes: storeBytes,
            brokerCPUMillisecondsPerJob: cpu.broker, brokerLoopCPUMillisecondsPerJob: cpu.loop, brokerStoreCPUMillisecondsPerJob: cpu.store,
            brokerIOThreadCPUMillisecondsPerJob: cpu.io, clientCPUMillisecondsPerJob: cpu.client,
            postgresCPUMillisecondsPerJob: scratch == nil ? nil : Self.rounded(CPUTime.spent(postgresBefore, postgresAfter) * 1_000 / Double(max(1, completed))),
            postgresCommitsPerJob: counters.map { Self.rounded(Double($0.commits) / Double(max(1, completed))) },
            postgresWALBytesPerJob: counters.map { (Double($0.walBytes) / Double(max(1, completed))).rounded() })
    }

    private static func rounded(_ value: Double) -> Double { (value * 1_000).rounded() / 1_000 }

    /// The number before the clients' ZeroMQ threads' names, to tell them from the echo workers'.
    static let clientThreadNamePrefix: Int32 = 2

    /// CPU milliseconds per job of the brokers' threads (their loops, job stores, and the ZeroMQ I/O
    /// threads of their contexts, named with ``Stack/brokerThreadNamePrefix``) and of the clients'
    /// (their executors and the client context's I/O, named with ``clientThreadNamePrefix``); the echo
    /// workers' are neither.
    static func cpuPerJob(before: [Int: (name: String, seconds: Double)], after: [Int: (name: String, seconds: Double)], jobs: Int)
        -> (broker: Double, loop: Double, store: Double, io: Double, client: Double) {
        let brokerIO = "\(Stack.brokerThreadNamePrefix)/ZMQbg"
        func group(_ member: (String) -> Bool) -> Double {
            let was = before.filter { member($0.value.name) }.mapValues(\.seconds)
            let now = after.filter { member($0.value.name) }.mapValues(\.seconds)
            return rounded(CPUTime.spent(was, now) * 1_000 / Double(max(1, jobs)))
        }
        let loop = group { $0.hasPrefix("quire-broker") }
        let store = group { $0.hasPrefix("quire-job-store") || $0.hasPrefix("quire-checkpnt") || $0.hasPrefix("quire-store-lsn") }
        let io = group { $0.hasPrefix(brokerIO) }
        let client = group { $0.hasPrefix("quire-client") || $0.hasPrefix("\(clientThreadNamePrefix)/ZMQbg") }
        return (rounded(loop + store + io), loop, store, io, client)
    }

    /// One durable job of `payload` for `service`: its id; a refusal ends the run.
    private static func submit(_ payload: [UInt8], to service: String, through client: QuireClient) async throws -> String {
        do {
            return try await client.jobs.submit(service: service, body: [payload])
        } catch let refusal as Titanic.Refusal {
            throw BenchError("a submission was refused: \(refusal.statusText) \(refusal)")
        }
    }
}
