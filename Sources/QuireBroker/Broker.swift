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
        var jobs: JobManager?
        var lock: DataFolderLock?
        if let jobConfiguration = configuration.jobs {
            lock = try DataFolderLock(directory: jobConfiguration.directory)
            jobs = try JobManager(configuration: jobConfiguration, logger: logger, now: wallClockMilliseconds())
            logger.notice("durable jobs on", metadata: ["store": jobs?.store.path ?? "", "active": String(jobs?.activeCount ?? 0)])
        } else {
            logger.notice("durable jobs off: no data folder (--data or QUIRE_DATA)")
        }
        defer { withExtendedLifetime(lock) {} }
        defer { jobs?.close() }
        try serve(jobs: jobs, onBound: onBound)
    }

    private func serve(jobs: JobManager?, onBound: (String) -> Void) throws(ZMQError) {
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
        let poller = Poller([.socket(socket, .readable), .descriptor(wakeup.descriptor, .readable)])
        var nextTick = Instant.now() + tickInterval

        do {
            while !stopRequested.load(ordering: .acquiring) {
                let timeout = Instant.now().milliseconds(until: min(nextTick, stats?.deadline ?? nextTick))
                let ready = try poller.poll(timeoutMilliseconds: Int(timeout))
                if ready[1].contains(.readable) { wakeup.drain() }
                // Token times are wall-clock seconds: once per wake-up is precise enough.
                state.wallClockSeconds = wallClockMilliseconds() / 1_000
                if ready[0].contains(.readable) {
                    // Drain a batch, then give timers a turn so heartbeats never starve under load.
                    var budget = 4_096
                    while budget > 0, let frames = try socket.receive(dontWait: true) {
                        budget -= 1
                        guard frames.count >= 1 else { continue }
                        let peer = frames[0]
                        let actions = state.handle(.message(peer: peer, frames: Array(frames.dropFirst())), now: Instant.now())
                        try perform(actions, on: socket, state: &state, jobs: jobs)
                    }
                    // One commit for the whole batch: submitters hear 200 once their jobs are on disk.
                    if let jobs { try perform(jobs.commit(state: &state, now: wallClockMilliseconds()), on: socket, state: &state, jobs: jobs) }
                }
                let now = Instant.now()
                if now >= nextTick {
                    try perform(state.handle(.tick, now: now), on: socket, state: &state, jobs: jobs)
                    if let jobs { try perform(jobs.tick(state: &state, now: wallClockMilliseconds()), on: socket, state: &state, jobs: jobs) }
                    nextTick = now + tickInterval
                }
                stats?.publishDue(&state, now: now)
            }
            // Orderly stop: tell everyone, and let the goodbyes leave before the socket closes. Jobs stay
            // in the store; those running now are queued again at the next start.
            // The state machine stops first, so that the last commit hands no job to a leaving worker.
            try perform(state.handle(.shutdown, now: Instant.now()), on: socket, state: &state, jobs: nil)
            if let jobs {
                try perform(jobs.shutdown(state: &state), on: socket, state: &state, jobs: jobs)
                try perform(jobs.commit(state: &state, now: wallClockMilliseconds()), on: socket, state: &state, jobs: nil)
            }
            try socket.setLinger(milliseconds: 500)
            socket.close()
            logger.notice("broker stopped", metadata: ["endpoint": bound])
        } catch let error where error.isTerminated {
            logger.notice("broker stopped: context terminated", metadata: ["endpoint": bound])
        }
    }

    private func perform(_ initial: [BrokerAction], on socket: Socket, state: inout BrokerState, jobs: JobManager?) throws(ZMQError) {
        var pending = initial
        var index = 0
        while index < pending.count {
            let action = pending[index]
            index += 1
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
                if !delivered {
                    pending.append(contentsOf: state.handle(.undeliverable(peer: peer, frames: frames), now: Instant.now()))
                }
            case .log(let level, let message, let metadata):
                logger.log(level, message, metadata: metadata)
            case .titanic(let peer, let dialect, let service, let body, let owner):
                if let jobs {
                    pending.append(contentsOf: jobs.handle(peer: peer, dialect: dialect, service: service, body: body, owner: owner,
                                                           state: &state, now: wallClockMilliseconds()))
                } else {
                    let error = WireError(.serviceUnavailable, "this broker keeps no durable jobs: it was started without a data folder (--data)", service: service)
                    pending.append(contentsOf: state.reply(to: peer, dialect: dialect, service: service,
                                                           body: Titanic.refusal(error)))
                }
            case .jobReply(let tag, let body):
                jobs?.jobReplied(tag: tag, body: body, state: &state, now: wallClockMilliseconds())
            case .jobFailed(let tag, let error, let reachedWorker):
                jobs?.jobFailed(tag: tag, error: error, reachedWorker: reachedWorker, now: wallClockMilliseconds())
            }
        }
    }
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
