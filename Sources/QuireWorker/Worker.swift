import Dispatch
import Foundation
import QuireSupport
import QuireWire
import Synchronization
import ZeroMQ

/// One Majordomo worker: a DEALER connection to the broker on an I/O thread, and an execution thread
/// that runs the handler.
///
/// The I/O thread keeps heartbeating while the handler works (RFC 18 wants heartbeats from busy
/// workers too), reconnects with backoff when the broker goes silent or restarts, and on ``stop()``
/// drains: it finishes the request in hand, sends DISCONNECT and returns.
public final class Worker: Sendable {
    public let configuration: WorkerConfiguration
    public let service: WorkerService
    private let context: Context
    private let logger: Logger
    private let wakeup: Wakeup
    private let stopRequested = Atomic<Bool>(false)
    /// Results from the execution thread to the I/O thread.
    private let outbox = Mutex<[Outgoing]>([])
    /// Requests from the I/O thread to the execution thread.
    private let inbox = Mutex<[Job]>([])
    private let jobReady = DispatchSemaphore(value: 0)
    private let served = Atomic<Int>(0)
    /// Time spent inside the handler, for the heartbeat report.
    private let engineNanoseconds = Atomic<UInt64>(0)

    struct Job: Sendable {
        let generation: Int
        let address: [UInt8]
        let body: [[UInt8]]
    }

    struct Outgoing: Sendable {
        let generation: Int
        let address: [UInt8]
        let kind: ReplyKind
        let frames: [[UInt8]]
    }

    public init(configuration: WorkerConfiguration, service: WorkerService, context: Context, logger: Logger) throws(ZMQError) {
        self.configuration = configuration
        self.service = service
        self.context = context
        self.logger = logger
        self.wakeup = try Wakeup()
    }

    /// Requests answered so far.
    public var requestsServed: Int { served.load(ordering: .relaxed) }

    /// Starts draining: the request in hand is finished and answered, then the worker says DISCONNECT
    /// and ``run()`` returns. Safe from any thread, any number of times.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    private var stopping: Bool { stopRequested.load(ordering: .acquiring) }

    /// Runs the worker on the calling thread until stopped. The handler is created on a new execution
    /// thread; if that fails, the error is thrown before the worker registers.
    public func run() throws {
        if service.runsInline {
            try ioLoop(inline: try service.makeHandler())
            return
        }
        let handlerResult = Mutex<Result<Void, any Error>?>(nil)
        let handlerMade = DispatchSemaphore(value: 0)
        let executionDone = DispatchSemaphore(value: 0)
        let name = "quire-\(service.name)-exec"
        let thread = Thread { [self] in
            // Foundation on Linux passes a name to the kernel only when set from the running thread.
            Thread.current.name = name
            let handler: any RequestHandler
            do {
                handler = try service.makeHandler()
                handlerResult.withLock { $0 = .success(()) }
                handlerMade.signal()
            } catch {
                handlerResult.withLock { $0 = .failure(error) }
                handlerMade.signal()
                executionDone.signal()
                return
            }
            executionLoop(handler)
            executionDone.signal()
        }
        thread.name = "quire-\(service.name)-exec"
        thread.start()
        handlerMade.wait()
        if case .failure(let error) = handlerResult.withLock({ $0 }) { throw error }
        defer {
            // Release the execution thread and wait for it, so the handler is freed on its own thread.
            inbox.withLock { $0.removeAll() }
            jobReady.signal()
            executionDone.wait()
        }
        try ioLoop(inline: nil)
    }

    // MARK: - Execution thread

    private func executionLoop(_ handler: any RequestHandler) {
        while true {
            jobReady.wait()
            guard let job = inbox.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
            let frames = execute(job, handler)
            post(Outgoing(generation: job.generation, address: job.address, kind: .final, frames: frames))
        }
    }

    private func execute(_ job: Job, _ handler: any RequestHandler) -> [[UInt8]] {
        if service.requiresJSONFrame, let problem = Self.jsonProblem(job.body) {
            return [problem.jsonFrame]
        }
        let request = WorkerRequest(body: job.body, broker: configuration.broker, curve: configuration.curve) { [self] frames in
            post(Outgoing(generation: job.generation, address: job.address, kind: .partial, frames: frames))
        }
        let started = Instant.now()
        ProcessMemory.requests.started()
        defer {
            engineNanoseconds.add(Instant.now().nanoseconds &- started.nanoseconds, ordering: .relaxed)
            ProcessMemory.requests.finished()
            if let kept = ProcessMemory.releaseKeptPagesOverLimit() {
                logger.info("freed pages past the limit handed back", metadata: ["service": service.name, "kept_mb": String(kept >> 20)])
            }
        }
        do {
            return try handler.handle(request)
        } catch let error as WireError {
            return [error.jsonFrame]
        } catch {
            logger.error("handler failed", metadata: ["service": service.name, "error": String(describing: error)])
            return [WireError(.internal, "the \(service.name) handler failed: \(error)").jsonFrame]
        }
    }

    /// Why a body's first frame is not a JSON object, or `nil` when it is one.
    static func jsonProblem(_ body: [[UInt8]]) -> WireError? {
        guard let first = body.first else {
            return WireError(.badRequest, "the request has no frames; the first must be a JSON object")
        }
        guard !first.isEmpty else {
            return WireError(.invalidJSON, "the JSON frame is empty")
        }
        guard String(validating: first, as: UTF8.self) != nil else {
            return WireError(.invalidJSON, "the JSON frame is not valid UTF-8")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(first), options: [.fragmentsAllowed]) else {
            return WireError(.invalidJSON, "the JSON frame does not parse as JSON")
        }
        guard object is [String: Any] else {
            return WireError(.invalidJSON, "the JSON frame must be an object")
        }
        return nil
    }

    private func post(_ outgoing: Outgoing) {
        outbox.withLock { $0.append(outgoing) }
        wakeup.signal()
    }

    // MARK: - I/O thread

    private func ioLoop(inline: (any RequestHandler)?) throws {
        let interval = configuration.heartbeatInterval
        let expiry = interval * configuration.heartbeatLiveness
        let dialect = configuration.dialect
        var generation = 0
        var backoff = configuration.reconnectInitial
        /// The request the execution thread is working on, for the current connection.
        var busyAddress: [UInt8]?
        /// A job is running, whatever connection it came from.
        var executing = false
        var readySent = false

        // Several brokers (`--broker a,b`): the worker serves one, and moves on to the next each time
        // it has to reconnect (its broker went silent or said goodbye).
        let endpoints = BrokerEndpoints.split(configuration.broker)
        var endpoint = endpoints.first ?? configuration.broker
        var socket = try openSocket(endpoint)
        var poller = Poller([.socket(socket, .readable), .descriptor(wakeup.descriptor, .readable)])
        var lastReceived = Instant.now()
        var lastSent = Instant.now()
        var lastReport = Instant.now()

        func send(_ frames: [[UInt8]]) throws(ZMQError) {
            // DEALER sends block only when the pipe to the broker is full; never wait on that.
            _ = try socket.send(frames, dontWait: true)
            lastSent = Instant.now()
        }

        func reconnect(_ reason: String, sayGoodbye: Bool) throws {
            if endpoints.count > 1, let index = endpoints.firstIndex(of: endpoint) { endpoint = endpoints[(index + 1) % endpoints.count] }
            logger.warning("reconnecting to the broker", metadata: ["reason": reason, "broker": endpoint, "backoff_ms": String(backoff.value)])
            // A broker that only seemed silent should forget this connection rather than dispatch to
            // it; after the broker's own DISCONNECT nothing more may be sent (RFC 18).
            if sayGoodbye && readySent { _ = try? socket.send(MajordomoCodec.workerDisconnect(dialect), dontWait: true) }
            socket.close()
            generation += 1
            busyAddress = nil
            readySent = false
            // Sleep the backoff with jitter, but wake at once for stop().
            let jitter = Int64.random(in: 0...(backoff.value / 4 + 1))
            let sleeper = Poller([.descriptor(wakeup.descriptor, .readable)])
            _ = try sleeper.poll(timeoutMilliseconds: Int(backoff.value + jitter))
            backoff = min(backoff * 2, configuration.reconnectMax)
            socket = try openSocket(endpoint)
            poller = Poller([.socket(socket, .readable), .descriptor(wakeup.descriptor, .readable)])
            lastReceived = Instant.now()
        }

        do {
            while true {
                if !readySent && !executing && !stopping {
                    try send(MajordomoCodec.workerReady(dialect, service: service.name))
                    readySent = true
                    logger.info("worker ready", metadata: ["service": service.name, "broker": endpoint])
                }
                if stopping && !executing {
                    if readySent { try send(MajordomoCodec.workerDisconnect(dialect)) }
                    // Let DISCONNECT (and the last reply) leave before the socket closes.
                    try socket.setLinger(milliseconds: 1_000)
                    socket.close()
                    logger.info("worker drained and stopped", metadata: ["service": service.name, "served": String(requestsServed)])
                    return
                }

                let now = Instant.now()
                let nextHeartbeat = lastSent + interval
                let deadline = min(nextHeartbeat, lastReceived + expiry)
                let ready = try poller.poll(timeoutMilliseconds: Int(now.milliseconds(until: deadline)))

                if ready[1].contains(.readable) {
                    wakeup.drain()
                    for outgoing in outbox.withLock({ box -> [Outgoing] in defer { box.removeAll() }; return box }) {
                        if outgoing.kind == .final {
                            executing = false
                            served.add(1, ordering: .relaxed)
                        }
                        // A reply for a connection that has since been replaced is stale: the broker
                        // that sent the request gave it to someone else or is gone.
                        guard outgoing.generation == generation, outgoing.address == busyAddress, readySent else { continue }
                        if let frames = MajordomoCodec.workerReply(dialect, outgoing.kind, address: outgoing.address, body: outgoing.frames) {
                            try send(frames)
                        }
                        if outgoing.kind == .final { busyAddress = nil }
                    }
                }

                var reconnected = false
                if ready[0].contains(.readable) {
                    while !reconnected, let frames = try socket.receive(dontWait: true) {
                        lastReceived = Instant.now()
                        backoff = configuration.reconnectInitial
                        switch MajordomoCodec.decodeAtWorker(dialect, frames) {
                        case .success(.heartbeat):
                            break
                        case .success(.disconnect):
                            try reconnect("the broker sent DISCONNECT", sayGoodbye: false)
                            reconnected = true
                        case .success(.request(let address, let body)):
                            logger.debug("request received", metadata: ["service": service.name])
                            if executing {
                                // The broker must not send a second request; answer it rather than lose it.
                                logger.warning("request while busy; refusing it", metadata: ["service": service.name])
                                if let reply = MajordomoCodec.workerReply(dialect, .final, address: address, body: [WireError(.busy, "worker is busy").jsonFrame]) {
                                    try send(reply)
                                }
                                continue
                            }
                            // Even when draining, a request already assigned to us is served.
                            if let inline {
                                let final = execute(Job(generation: generation, address: address, body: body), inline)
                                for partial in outbox.withLock({ box -> [Outgoing] in defer { box.removeAll() }; return box }) {
                                    if let frames = MajordomoCodec.workerReply(dialect, .partial, address: address, body: partial.frames) { try send(frames) }
                                }
                                if let frames = MajordomoCodec.workerReply(dialect, .final, address: address, body: final) { try send(frames) }
                                served.add(1, ordering: .relaxed)
                                continue
                            }
                            busyAddress = address
                            executing = true
                            inbox.withLock { $0.append(Job(generation: generation, address: address, body: body)) }
                            jobReady.signal()
                        case .failure(let error):
                            logger.warning("invalid message from the broker", metadata: ["error": error.message])
                        }
                    }
                }

                // A new connection starts with READY (top of the loop), never with a heartbeat.
                if reconnected { continue }
                let after = Instant.now()
                if after >= lastReceived + expiry {
                    try reconnect("no heartbeat from the broker for \(expiry.value) ms", sayGoodbye: true)
                    continue
                }
                // A worker busy sending replies sends no heartbeats; its report still goes out once per interval.
                if readySent && (after >= lastSent + interval || (configuration.sendsReports && after >= lastReport + interval)) {
                    if configuration.sendsReports {
                        try send(MajordomoCodec.workerHeartbeat(dialect, report: report().jsonFrame))
                        lastReport = after
                    } else {
                        try send(MajordomoCodec.workerHeartbeat(dialect))
                    }
                }
            }
        } catch let error as ZMQError where error.isTerminated {
            logger.info("worker stopped: context terminated", metadata: ["service": service.name])
        }
    }

    /// The figures a heartbeat carries to the broker's stats.
    func report() -> WorkerReport {
        WorkerReport(jobsDone: requestsServed, engineSeconds: Double(engineNanoseconds.load(ordering: .relaxed)) / 1e9,
                     rssBytes: ProcessMemory.residentBytes() ?? 0, pid: getpid())
    }

    private func openSocket(_ endpoint: String) throws(ZMQError) -> Socket {
        let socket = try Socket(context: context, type: .dealer)
        try socket.setSendHighWaterMark(1_000)
        try socket.setReceiveHighWaterMark(1_000)
        try socket.applyCurve(configuration.curve)
        try socket.connect(endpoint)
        return socket
    }
}
