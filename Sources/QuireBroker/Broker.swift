import Foundation
import QuireStats
import QuireSupport
import QuireWire
import Synchronization
import ZeroMQ

/// The running broker: one ROUTER socket, one thread, and ``BrokerState`` deciding everything.
///
/// ``run()`` blocks the calling thread (give it a dedicated `Thread`, never the cooperative pool) until
/// ``stop()`` is called from any thread or the context is shut down.
public final class Broker: Sendable {
    public let configuration: BrokerConfiguration
    private let context: Context
    private let logger: Logger
    private let wakeup: Wakeup
    private let stopRequested = Atomic<Bool>(false)
    private let endpoint = Mutex<String?>(nil)
    private let statsEndpoint = Mutex<String?>(nil)

    public init(configuration: BrokerConfiguration, context: Context, logger: Logger) throws(ZMQError) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.wakeup = try Wakeup()
    }

    /// The endpoint actually bound (with the real port when the configuration said `*` or `0`), once
    /// ``run()`` has bound it.
    public var boundEndpoint: String? { endpoint.withLock { $0 } }

    /// The stats PUB socket's endpoint once bound (with the real port), `nil` when stats are off.
    public var boundStatsEndpoint: String? { statsEndpoint.withLock { $0 } }

    /// Asks the broker to stop: queued and in-flight clients get `shutting_down`, workers DISCONNECT.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// How often time-driven work runs: often enough for the heartbeat, rarely enough to cost nothing.
    private var tickInterval: Milliseconds {
        Milliseconds(min(250, max(5, configuration.heartbeatInterval.value / 4)))
    }

    /// Binds and serves until stopped. Throws if the socket cannot be set up or bound, or the job store
    /// cannot be opened.
    public func run(onBound: (String) -> Void = { _ in }) throws {
        // The job store first: a broker that cannot keep its promises does not start.
        var store: (any JobStorage)?
        var jobs: JobMachine?
        var checkpointer: Checkpointer?
        var lock: DataFolderLock?
        if let jobConfiguration = configuration.jobs, let uri = jobConfiguration.store {
            let opened = try PostgresJobStore(connectionString: uri)
            jobs = try opened.recoverMachine(configuration: jobConfiguration, now: wallClockMilliseconds())
            store = opened
            logger.notice("durable jobs on, in a store brokers share", metadata: [
                "store": opened.location, "schema": String(opened.schemaVersion), "broker": opened.brokerID])
        } else if let jobConfiguration = configuration.jobs {
            lock = try DataFolderLock(directory: jobConfiguration.directory)
            let opened = try SQLiteJobStore(directory: jobConfiguration.directory, maxBytes: jobConfiguration.maxStoreBytes)
            let walCheckpointer = Checkpointer(path: opened.path, interval: 200, logger: logger)
            do {
                jobs = try opened.recoverMachine(configuration: jobConfiguration, now: wallClockMilliseconds())
            } catch {
                walCheckpointer.stop()
                throw error
            }
            store = opened
            checkpointer = walCheckpointer
            let active = jobs?.activeCount ?? 0
            if active > 0 { logger.notice("recovered durable jobs", metadata: ["jobs": String(active), "store": opened.path]) }
            logger.notice("durable jobs on", metadata: ["store": opened.path, "active": String(active)])
        } else {
            logger.notice("durable jobs off: no data folder (--data or QUIRE_DATA) and no store (--store or QUIRE_STORE)")
        }
        defer { withExtendedLifetime(lock) {} }
        // Stops the checkpoint thread once the loop has ended.
        defer { checkpointer?.stop() }
        try serve(jobs: jobs, store: store, onBound: onBound)
    }

    private func serve(jobs: JobMachine?, store: (any JobStorage)?, onBound: (String) -> Void) throws(ZMQError) {
        let socket = try Socket(context: context, type: .router)
        try socket.setRouterMandatory(true)
        try socket.setSendHighWaterMark(100_000)
        try socket.setReceiveHighWaterMark(100_000)
        try socket.setMaxMessageSize(configuration.transportFrameLimit)
        if let curve = configuration.curve {
            try ZAPHandler.requireBound(in: context)
            try socket.setZAPDomain("quire")
            try socket.setCurveServer(secretKey: curve.secretKey)
        }
        try socket.bind(configuration.bind)
        let bound = try socket.lastEndpoint
        endpoint.withLock { $0 = bound }
        let stats = try configuration.statsBind.map { (bind) throws(ZMQError) in
            try StatsPublisher(context: context, bind: bind, interval: configuration.statsInterval, curve: configuration.curve, logger: logger)
        }
        defer { stats?.close() }
        if let stats {
            statsEndpoint.withLock { $0 = stats.endpoint }
            logger.notice("stats publishing", metadata: ["endpoint": stats.endpoint, "interval_ms": String(configuration.statsInterval.value)])
        }
        logger.notice("broker listening", metadata: ["endpoint": bound])
        onBound(bound)

        var state = BrokerState(configuration: configuration)
        state.statistics = BrokerStatistics(startedAtMs: StatsTime.nowUnixMilliseconds(), startedAt: Instant.now(), window: configuration.statsWindow)
        state.statistics.keepsEvents = stats != nil
        state.statistics.isRecording = stats != nil
        if let store { state.statistics.keepStore(kind: store is PostgresJobStore ? "postgresql" : "sqlite") }
        // The store's I/O on a thread of its own: its outcomes ring the same wake-up as stop().
        let storage = store.map { StorageThread(store: $0, wakeup: wakeup, logger: logger) }
        defer { storage?.stop() }
        // A shared store: what the other brokers commit wakes this one (work to claim, jobs finished).
        let listener = (store as? PostgresJobStore).flatMap { shared in
            storage.map { storage in
                StoreListener(connectionString: shared.connectionString, schema: shared.schema, logger: logger) { work, done in
                    storage.post(.notified(work: work, done: done))
                }
            }
        }
        defer { listener?.stop() }
        var loop = Loop(machine: BrokerMachine(broker: state, jobs: jobs), socket: socket, storage: storage, logger: logger)
        let poller = Poller([.socket(socket, .readable), .descriptor(wakeup.descriptor, .readable)])
        var nextTick = Instant.now() + tickInterval
        // Once a second, the allocator's decay goes on even when the loop and the store thread are idle.
        var nextDecay = Instant.now() + Milliseconds(1_000)

        do {
            while !stopRequested.load(ordering: .acquiring) {
                let timeout = Instant.now().milliseconds(until: min(nextTick, stats?.deadline ?? nextTick))
                let ready = try poller.poll(timeoutMilliseconds: Int(timeout))
                if ready[1].contains(.readable) { wakeup.drain() }
                try loop.takeStorageEvents()
                if ready[0].contains(.readable) {
                    // Drain a batch, then give timers a turn so heartbeats never starve under load.
                    var budget = 4_096
                    while budget > 0, let frames = try socket.receive(dontWait: true) {
                        budget -= 1
                        guard frames.count >= 1 else { continue }
                        try loop.handle(.message(peer: frames[0], frames: Array(frames.dropFirst())))
                    }
                    // One commit for the whole batch: submitters hear 200 once their jobs are on disk.
                    try loop.handle(.endOfTurn)
                }
                let now = Instant.now()
                if now >= nextTick {
                    try loop.handle(.tick)
                    nextTick = now + tickInterval
                    if now >= nextDecay {
                        ProcessMemory.advanceDecay()
                        nextDecay = now + Milliseconds(1_000)
                    }
                }
                stats?.publishDue(&loop.machine.broker, now: now)
            }
            // Orderly stop: what the store was asked to do is done and answered (submitters whose jobs
            // are on disk hear 200), then everyone is told, and the goodbyes leave before the socket closes.
            storage?.abandonRecovery()
            try loop.settleStorage()
            try loop.handle(.shutdown)
            try loop.settleStorage()
            try socket.setLinger(milliseconds: 500)
            socket.close()
            logger.notice("broker stopped", metadata: ["endpoint": bound])
        } catch let error where error.isTerminated {
            logger.notice("broker stopped: context terminated", metadata: ["endpoint": bound])
        }
    }

    /// The only place that touches the socket, the job store and the clock: feeds the machine events
    /// with the time and randomness they need, and carries out its actions, which may answer with events.
    private struct Loop {
        var machine: BrokerMachine
        let socket: Socket
        let storage: StorageThread?
        let logger: Logger
        var random = SystemRandomNumberGenerator()

        /// Hands the machine what the store finished since the last turn, then ends the turn (a commit
        /// answered may have changed what must be written next).
        mutating func takeStorageEvents() throws(ZMQError) {
            guard let events = storage?.takeEvents(), !events.isEmpty else { return }
            for event in events { try handle(event) }
            try handle(.endOfTurn)
        }

        /// Waits for the store to finish everything asked of it, answering as it goes, until nothing
        /// more is asked (bounded: each round's answers may ask for one more write).
        mutating func settleStorage() throws(ZMQError) {
            guard let storage else { return }
            for _ in 0..<16 {
                storage.waitUntilIdle()
                let events = storage.takeEvents()
                if events.isEmpty { return }
                for event in events { try handle(event) }
                try handle(.endOfTurn)
            }
        }

        mutating func handle(_ event: BrokerMachine.Event) throws(ZMQError) {
            var pending = machine.handle(event, now: Instant.now(), wallClock: wallClockMilliseconds(), random: &random)
            var index = 0
            while index < pending.count {
                let action = pending[index]
                index += 1
                guard let next = try perform(action) else { continue }
                pending.append(contentsOf: machine.handle(next, now: Instant.now(), wallClock: wallClockMilliseconds(), random: &random))
            }
        }

        /// Carries out one action; returns the event it leads to, if any.
        private func perform(_ action: BrokerMachine.Action) throws(ZMQError) -> BrokerMachine.Event? {
            switch action {
            case .send(let peer, let frames):
                var delivered = false
                do {
                    delivered = try socket.send([peer] + frames, dontWait: true)
                } catch let error where error.isHostUnreachable {
                    delivered = false
                } catch let error where error.isTerminated {
                    throw error
                } catch {
                    logger.error("send failed", metadata: ["error": error.description, "peer": hex(peer)])
                }
                return delivered ? nil : .undeliverable(peer: peer, frames: frames)
            case .log(let level, let message, let metadata):
                logger.log(level, message, metadata: metadata)
                return nil
            // The store's work goes to its thread; what comes of it returns through takeStorageEvents().
            case .persist(let batch):
                guard let storage else { return .commitFailed(batch, JobStoreError(kind: .other, message: "no job store")) }
                storage.submit(.persist(batch))
                return nil
            case .load(let load):
                guard let storage else { return .loaded(load, .failed(JobStoreError(kind: .other, message: "no job store"))) }
                storage.submit(.load(load))
                return nil
            case .sweep(let before):
                storage?.submit(.sweep(before: before))
                return nil
            case .recoverJobs(let configuration):
                storage?.submit(.recover(configuration))
                return nil
            case .claim(let claim):
                guard let storage else { return .claimed(claim, .failure(JobStoreError(kind: .other, message: "no job store")), seconds: 0) }
                storage.submit(.claim(claim))
                return nil
            case .renew(let ids, let until):
                storage?.submit(.renew(ids, until: until))
                return nil
            case .maintain(let now):
                storage?.submit(.maintain(now: now))
                return nil
            }
        }
    }
}

/// Wall-clock milliseconds since 1970.
func wallClockMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000 + Int64(ts.tv_nsec) / 1_000_000
}

/// An exclusive lock on a data folder (`flock` on `broker.lock`), so that two brokers never dispatch the
/// same jobs. Released when the process exits, however it exits.
final class DataFolderLock {
    private let descriptor: Int32

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = (directory as NSString).appendingPathComponent("broker.lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw JobStoreError(kind: .readOnly, message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw JobStoreError(kind: .busy, message: "another broker uses the data folder \(directory)")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }
}
