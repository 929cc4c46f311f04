import QuireSupport
import QuireJWT
import QuireWire

/// Something that happened to the broker.
public enum BrokerEvent: Sendable, Equatable {
    /// A message arrived on the ROUTER: the peer's identity and the frames after it.
    case message(peer: [UInt8], frames: [[UInt8]])
    /// A send to `peer` failed because the peer is gone (`EHOSTUNREACH` with ROUTER_MANDATORY) or its
    /// queue is full; `frames` is what could not be sent.
    case undeliverable(peer: [UInt8], frames: [[UInt8]])
    /// Time passed: heartbeats, expiries and timeouts are due.
    case tick
    /// The broker is stopping: answer everyone who waits and tell workers.
    case shutdown
}

/// Something the broker loop must do.
public enum BrokerAction: Sendable, Equatable {
    case send(peer: [UInt8], frames: [[UInt8]])
    case log(Logger.Level, String, [String: String])
    /// A request to one of the broker's own `titanic.*` services, for the job machine.
    /// `owner` is the token's subject ("" with auth off): the job's owner, or who asks about it.
    case titanic(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], owner: String)
    /// The final reply to a job's request (``BrokerState/submitJob(tag:service:body:now:)``).
    case jobReply(tag: UInt64, body: [[UInt8]])
    /// A PARTIAL reply to a job's request: how far the attempt has got (``JobProgress``), or nothing.
    case jobPartial(tag: UInt64, body: [[UInt8]])
    /// A job's request failed without a reply: its worker was lost, or it found no worker in time.
    /// `reachedWorker` is false when no worker ever received it (the attempt does not count).
    case jobFailed(tag: UInt64, error: WireError, reachedWorker: Bool)
}

/// Counters the broker keeps; the stats publisher reads them.
public struct BrokerCounters: Sendable, Equatable {
    public var requestsReceived = 0
    public var repliesSent = 0
    public var errorsSent: [WireError.Code: Int] = [:]
    public var requestsRequeued = 0
    public var workersDisconnected = 0
    public var workersExpired = 0
    public var malformedMessages = 0
    public var bytesIn = 0
    public var bytesOut = 0
}

/// The Majordomo broker as a pure state machine: events in, actions out, time passed in.
///
/// It never touches a socket or a clock, so every rule (LRU dispatch, heartbeats, expiry, requeueing,
/// limits, dialects) is unit-tested without either. `BrokerLoop` polls the ROUTER and carries out the
/// actions.
public struct BrokerState: Sendable {
    public let configuration: BrokerConfiguration
    public internal(set) var counters = BrokerCounters()
    /// Figures for the stats socket (`BrokerStatistics.swift`); the broker loop sets its start time.
    public var statistics = BrokerStatistics()

    struct Worker: Sendable {
        let identity: [UInt8]
        let dialect: Dialect
        let service: String
        /// The request being served, if any.
        var request: UInt64?
        /// When the worker counts as dead unless something arrives from it.
        var expiry: Instant
        /// When a busy worker of a silent dialect counts as dead.
        var busyDeadline: Instant?
        /// When the broker last sent the worker anything (heartbeats are sent only after quiet).
        var lastSent: Instant
    }

    /// Where a request came from, and so where its reply goes.
    enum Origin: Sendable, Equatable {
        /// A client peer, answered in its own dialect.
        case client(peer: [UInt8], dialect: Dialect)
        /// One attempt of a durable job: the reply goes to the job machine as ``BrokerAction/jobReply(tag:body:)``.
        case job(tag: UInt64)
        /// The broker's own fetch of the token keys from `auth.jwks`.
        case jwks
    }

    struct Request: Sendable {
        let id: UInt64
        let origin: Origin
        /// Workers that said goodbye while holding it (see the DISCONNECT case).
        var goodbyes = 0
        let service: String
        let body: [[UInt8]]
        var deadline: Instant
        var attempts: Int
    }

    struct Service: Sendable {
        var queue = Deque<Request>()
        /// Idle workers, least recently used first.
        var idle = Deque<[UInt8]>()
        var workerCount = 0
    }

    var workers: [[UInt8]: Worker] = [:]
    var services: [String: Service] = [:]
    /// Requests held by workers, by request id (the address frame the worker echoes back).
    var inFlight: [UInt64: Request] = [:]
    var nextRequestID: UInt64 = 1
    var stopping = false
    /// Token checks; `nil` when auth is off.
    var auth: AuthGate?
    /// Whether the broker keeps durable jobs now (``BrokerMachine`` says): what `mmi.service` answers
    /// for `titanic.*`.
    var servesJobs = false
    /// Wall-clock seconds since 1970, for token `exp`/`nbf`; the loop sets it before each event (the
    /// monotonic `now` cannot be compared with a token's times).
    public var wallClockSeconds: Int64 = 0
    public init(configuration: BrokerConfiguration) {
        self.configuration = configuration
        auth = configuration.auth.map(AuthGate.init)
    }

    // MARK: - Queries

    /// Workers registered for `service`.
    public func workerCount(service: String) -> Int { services[service]?.workerCount ?? 0 }
    /// Idle workers for `service`.
    public func idleWorkerCount(service: String) -> Int { services[service]?.idle.count ?? 0 }
    /// Requests waiting for a worker of `service`.
    public func queueDepth(service: String) -> Int { services[service]?.queue.count ?? 0 }
    /// Requests held by workers.
    public var inFlightCount: Int { inFlight.count }
    public var workerTotal: Int { workers.count }
    public var serviceNames: [String] { services.keys.sorted() }

    /// Whether a durable job for `service` would go to a worker at once: an idle worker that no queued
    /// request has claimed. The job machine keeps jobs in its own priority lanes until then.
    public func canTakeJob(service: String) -> Bool { jobCapacity(service: service) > 0 }

    /// How many durable jobs for `service` would go to a worker at once: idle workers that no queued
    /// request has claimed.
    public func jobCapacity(service: String) -> Int {
        guard !stopping, let record = services[service] else { return 0 }
        return max(0, record.idle.count - record.queue.count)
    }

    /// Hands one attempt of a durable job to the service's workers. Its reply comes back as
    /// ``BrokerAction/jobReply(tag:body:)``, a failure as ``BrokerAction/jobFailed(tag:error:reachedWorker:)``.
    public mutating func submitJob(tag: UInt64, service: String, body: [[UInt8]], now: Instant) -> [BrokerAction] {
        var actions: [BrokerAction] = []
        let request = Request(id: nextRequestID, origin: .job(tag: tag), service: service, body: body,
                              deadline: now + configuration.requestTimeout, attempts: 0)
        nextRequestID &+= 1
        services[service, default: Service()].queue.append(request)
        dispatch(service: service, now: now, into: &actions)
        return actions
    }

    /// A FINAL reply from one of the broker's own services to a client.
    public mutating func reply(to peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]]) -> [BrokerAction] {
        var actions: [BrokerAction] = []
        counters.repliesSent += 1
        if let frames = MajordomoCodec.clientReply(dialect, .final, service: service, body: body) {
            send(peer, frames, into: &actions)
        }
        return actions
    }

    /// Services that have workers now.
    public var servicesWithWorkers: [String] { services.compactMap { $0.value.workerCount > 0 ? $0.key : nil } }

    // MARK: - Events

    public mutating func handle(_ event: BrokerEvent, now: Instant) -> [BrokerAction] {
        var actions: [BrokerAction] = []
        switch event {
        case .message(let peer, let frames):
            receive(peer: peer, frames: frames, now: now, replay: false, into: &actions)
        case .undeliverable(let peer, let frames):
            if let worker = workers[peer] {
                actions.append(.log(.warning, "worker unreachable; dropping it", ["peer": hex(peer)]))
                // A REQUEST that never left does not use up one of the request's attempts.
                if let id = worker.request, case .success(.request) = MajordomoCodec.decodeAtWorker(worker.dialect, frames) {
                    inFlight[id]?.attempts -= 1
                }
                removeWorker(peer, now: now, into: &actions, disconnect: false)
            } else {
                actions.append(.log(.debug, "reply undeliverable: the client is gone", ["peer": hex(peer)]))
            }
        case .tick:
            tick(now: now, into: &actions)
        case .shutdown:
            shutdown(into: &actions)
        }
        return actions
    }

    // MARK: - Output

    mutating func replyError(to client: [UInt8], dialect: Dialect, service: String, _ error: WireError, into actions: inout [BrokerAction]) {
        count(error.code)
        statistics.errorSent(service: service, code: error.code)
        // Titanic replies start with a status (RFC 9).
        let body = ServiceClass(service) == .jobs ? Titanic.refusal(error) : [error.jsonFrame]
        if let frames = MajordomoCodec.clientReply(dialect, .final, service: service, body: body) {
            send(client, frames, into: &actions)
        }
    }

    mutating func count(_ code: WireError.Code) {
        counters.errorsSent[code, default: 0] += 1
    }

    mutating func send(_ peer: [UInt8], _ frames: [[UInt8]], into actions: inout [BrokerAction]) {
        for frame in frames { counters.bytesOut += frame.count }
        actions.append(.send(peer: peer, frames: frames))
    }

    /// The opaque address frame a worker echoes back: the request id, 8 bytes big-endian.
    static func address(of id: UInt64) -> [UInt8] {
        withUnsafeBytes(of: id.bigEndian) { Array($0) }
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits: [Character] = Array("0123456789abcdef")
    var s = ""
    for b in bytes.prefix(16) {
        s.append(digits[Int(b >> 4)])
        s.append(digits[Int(b & 0xf)])
    }
    return s
}
