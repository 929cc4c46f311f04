import QuireSupport
import QuireTokens
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

    // MARK: - Receiving

    /// `replay`: a request that waited for the JWKS, handled again (counted once, never parked twice).
    mutating func receive(peer: [UInt8], frames: [[UInt8]], now: Instant, replay: Bool, into actions: inout [BrokerAction]) {
        var total = 0
        for frame in frames { total += frame.count }
        if !replay { counters.bytesIn += total }

        let decoded = MajordomoCodec.decodeAtBroker(frames)
        switch decoded {
        case .failure(let failure):
            counters.malformedMessages += 1
            rejectMalformed(peer: peer, failure: failure, now: now, into: &actions)

        case .success(.clientRequest(let dialect, let service, var body)):
            if !replay { counters.requestsReceived += 1 }
            if stopping {
                replyError(to: peer, dialect: dialect, service: service,
                           WireError(.shuttingDown, "the broker is shutting down", service: service), into: &actions)
                return
            }
            if frames.count > configuration.maxFrames {
                replyError(to: peer, dialect: dialect, service: service,
                           WireError(.tooLarge, "message has \(frames.count) frames; the limit is \(configuration.maxFrames)",
                                     service: service, limit: configuration.maxFrames), into: &actions)
                return
            }
            if total > configuration.maxMessageBytes {
                replyError(to: peer, dialect: dialect, service: service,
                           WireError(.tooLarge, "message has \(total) bytes; the limit is \(configuration.maxMessageBytes)",
                                     service: service, limit: configuration.maxMessageBytes), into: &actions)
                return
            }
            if service.hasPrefix("mmi.") {
                answerMMI(peer: peer, dialect: dialect, service: service, body: body, into: &actions)
                return
            }
            var owner = ""
            if var gate = auth, AuthConfiguration.isProtected(service) {
                let decision = gate.check(service: service, body: body, now: now, wallSeconds: wallClockSeconds, mayPark: !replay)
                auth = gate
                switch decision {
                case .allow(let checked, let subject):
                    body = checked
                    owner = subject
                case .deny(let error):
                    replyError(to: peer, dialect: dialect, service: service, error, into: &actions)
                    return
                case .park:
                    // Bounded: tokens naming unknown keys cannot make the broker hold unlimited bytes.
                    guard gate.parked.count < AuthGate.maxParked, gate.parkedBytes + total <= AuthGate.maxParkedBytes else {
                        replyError(to: peer, dialect: dialect, service: service,
                                   WireError(.serviceUnavailable, "too many requests are waiting for the token keys; try again shortly", service: service),
                                   into: &actions)
                        return
                    }
                    auth?.parked.append((peer, frames, now + gate.configuration.jwksWait))
                    auth?.parkedBytes += total
                    fetchJWKS(now: now, into: &actions)
                    return
                }
            }
            if service.hasPrefix("titanic.") {
                actions.append(.titanic(peer: peer, dialect: dialect, service: service, body: body, owner: owner))
                return
            }
            enqueue(client: peer, dialect: dialect, service: service, body: body, now: now, into: &actions)

        case .success(.worker(let dialect, let command)):
            statistics.workerMessage(peer, command: command, frames: frames, now: now)
            workerMessage(peer: peer, dialect: dialect, command: command, now: now, into: &actions)
        }
    }

    private mutating func rejectMalformed(peer: [UInt8], failure: DecodeFailure, now: Instant, into actions: inout [BrokerAction]) {
        actions.append(.log(.debug, "malformed message", ["peer": hex(peer), "reason": failure.error.message]))
        if workers[peer] != nil {
            // A registered worker that breaks the protocol is disconnected, whatever it sent.
            violation(peer, reason: failure.error.message, now: now, into: &actions)
            return
        }
        switch failure.role {
        case .worker:
            send(peer, MajordomoCodec.workerDisconnect(failure.dialect), into: &actions)
            counters.workersDisconnected += 1
        case .client:
            replyError(to: peer, dialect: failure.dialect, service: failure.service ?? "", failure.error, into: &actions)
        case .unknown:
            count(failure.error.code)
            send(peer, MajordomoCodec.unknownPeerReply(leadingEmptyFrame: failure.leadingEmptyFrame,
                                                        service: failure.service, body: [failure.error.jsonFrame]), into: &actions)
        }
    }

    // MARK: - Clients

    private mutating func enqueue(client: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], now: Instant, into actions: inout [BrokerAction]) {
        var record = services[service] ?? Service()
        if record.queue.count >= configuration.maxQueuedRequests {
            replyError(to: client, dialect: dialect, service: service,
                       WireError(.busy, "the queue for '\(service)' is full (\(configuration.maxQueuedRequests) requests)",
                                 service: service, limit: configuration.maxQueuedRequests), into: &actions)
            return
        }
        let request = Request(id: nextRequestID, origin: .client(peer: client, dialect: dialect), service: service, body: body,
                              deadline: now + configuration.requestTimeout, attempts: 0)
        nextRequestID &+= 1
        record.queue.append(request)
        services[service] = record
        statistics.requestQueued(id: request.id, service: service, body: body, now: now)
        dispatch(service: service, now: now, into: &actions)
    }

    private mutating func answerMMI(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], into actions: inout [BrokerAction]) {
        let code: String
        switch service {
        case "mmi.service":
            // RFC 8: the body's first frame names the service; 200 when it has workers, 404 when not.
            if let first = body.first, case .success(let name) = MajordomoCodec.validateServiceName(first) {
                code = workerCount(service: name) > 0 ? "200" : "404"
            } else {
                code = "404"
            }
        default:
            code = "501"
        }
        counters.repliesSent += 1
        if let frames = MajordomoCodec.clientReply(dialect, .final, service: service, body: [Array(code.utf8)]) {
            send(peer, frames, into: &actions)
        }
    }

    // MARK: - Workers

    private mutating func workerMessage(peer: [UInt8], dialect: Dialect, command: WorkerCommand, now: Instant, into actions: inout [BrokerAction]) {
        guard var worker = workers[peer] else {
            switch command {
            case .ready(let service):
                register(peer: peer, dialect: dialect, service: service, now: now, into: &actions)
            case .disconnect:
                break
            default:
                // RFC 7/18: anything but READY from an unknown worker gets DISCONNECT. This is also how a
                // worker learns that a restarted broker has forgotten it.
                actions.append(.log(.info, "message from an unregistered worker; disconnecting it", ["peer": hex(peer)]))
                send(peer, MajordomoCodec.workerDisconnect(dialect), into: &actions)
                counters.workersDisconnected += 1
            }
            return
        }
        guard dialect == worker.dialect else {
            violation(peer, reason: "worker switched Majordomo dialect", now: now, into: &actions)
            return
        }
        if case .disconnect = command {
            actions.append(.log(.info, "worker disconnected", ["peer": hex(peer), "service": worker.service]))
            // A draining worker says goodbye only once it has answered what it took: a request it still
            // holds was sent while it was leaving (scale-down) and never served, so handing it on costs
            // no attempt. Up to maxAttempts such goodbyes per request, so that a worker that takes
            // requests and leaves without answering cannot pass one around for ever.
            // (Not for durable jobs: each attempt is a new request to the broker, so a per-request cap
            // would never stop one; their attempts count, and a lost worker sends them straight back.)
            if let id = worker.request, let request = inFlight[id], case .client = request.origin, request.goodbyes < configuration.maxAttempts {
                inFlight[id]?.attempts -= 1
                inFlight[id]?.goodbyes += 1
            }
            removeWorker(peer, now: now, into: &actions, disconnect: false)
            return
        }
        // Anything but DISCONNECT counts as a heartbeat.
        worker.expiry = now + configuration.workerExpiry
        workers[peer] = worker
        switch command {
        case .ready:
            violation(peer, reason: "READY from a worker that is already registered", now: now, into: &actions)
        case .heartbeat, .disconnect:
            break
        case .reply(let kind, let address, let body):
            guard let requestID = worker.request, address == Self.address(of: requestID), let request = inFlight[requestID] else {
                violation(peer, reason: "reply for a request the worker does not hold", now: now, into: &actions)
                return
            }
            if kind == .partial {
                guard case .client(let client, let dialect) = request.origin else { return }
                statistics.partialForwarded(service: request.service, body: body)
                if let frames = MajordomoCodec.clientReply(dialect, .partial, service: request.service, body: body) {
                    send(client, frames, into: &actions)
                }
                return
            }
            inFlight[requestID] = nil
            switch request.origin {
            case .client(let client, let dialect):
                statistics.requestCompleted(id: requestID, service: request.service, worker: peer, body: body, now: now)
                counters.repliesSent += 1
                if let frames = MajordomoCodec.clientReply(dialect, .final, service: request.service, body: body) {
                    send(client, frames, into: &actions)
                }
            case .job(let tag):
                // Jobs are counted as jobs by the job machine, not as requests.
                statistics.requestAbandoned(id: requestID)
                actions.append(.jobReply(tag: tag, body: body))
            case .jwks:
                statistics.requestAbandoned(id: requestID)
                receiveJWKS(body, now: now, into: &actions)
            }
            worker.request = nil
            worker.busyDeadline = nil
            workers[peer] = worker
            services[worker.service, default: Service()].idle.append(peer)
            dispatch(service: worker.service, now: now, into: &actions)
        }
    }

    private mutating func register(peer: [UInt8], dialect: Dialect, service: String, now: Instant, into actions: inout [BrokerAction]) {
        if service.hasPrefix("mmi.") || service.hasPrefix("titanic.") {
            actions.append(.log(.warning, "worker tried to serve a reserved service; disconnecting it", ["peer": hex(peer), "service": service]))
            send(peer, MajordomoCodec.workerDisconnect(dialect), into: &actions)
            counters.workersDisconnected += 1
            return
        }
        if stopping {
            send(peer, MajordomoCodec.workerDisconnect(dialect), into: &actions)
            return
        }
        workers[peer] = Worker(identity: peer, dialect: dialect, service: service, request: nil,
                               expiry: now + configuration.workerExpiry, busyDeadline: nil, lastSent: now)
        var record = services[service] ?? Service()
        record.workerCount += 1
        record.idle.append(peer)
        services[service] = record
        statistics.workerJoined(peer, service: service, now: now)
        actions.append(.log(.info, "worker ready", ["peer": hex(peer), "service": service, "dialect": dialect.rawValue]))
        dispatch(service: service, now: now, into: &actions)
        if service == "auth.jwks", let gate = auth, !gate.haveKeys, !gate.fetching {
            fetchJWKS(now: now, into: &actions)
        }
    }

    /// A worker broke the protocol: DISCONNECT it and give its request to another worker.
    private mutating func violation(_ peer: [UInt8], reason: String, now: Instant, into actions: inout [BrokerAction]) {
        actions.append(.log(.warning, "worker broke the protocol; disconnecting it", ["peer": hex(peer), "reason": reason]))
        removeWorker(peer, now: now, into: &actions, disconnect: true)
    }

    /// Forgets a worker. A request it held goes back to the front of its queue, or fails with
    /// `worker_lost` when its attempts are used up.
    mutating func removeWorker(_ peer: [UInt8], now: Instant, into actions: inout [BrokerAction], disconnect: Bool) {
        guard let worker = workers.removeValue(forKey: peer) else { return }
        statistics.workerLost(peer, service: worker.service, dropped: disconnect)
        if disconnect {
            send(peer, MajordomoCodec.workerDisconnect(worker.dialect), into: &actions)
            counters.workersDisconnected += 1
        }
        var record = services[worker.service] ?? Service()
        record.workerCount -= 1
        record.idle.removeAll { $0 == peer }
        services[worker.service] = record
        if let requestID = worker.request, var request = inFlight.removeValue(forKey: requestID) {
            switch request.origin {
            case .job(let tag):
                // The job machine counts a job's attempts across restarts and decides about retries.
                statistics.requestAbandoned(id: requestID)
                actions.append(.jobFailed(tag: tag, error: WireError(.workerLost, "the worker holding the job was lost", service: request.service),
                                          reachedWorker: request.attempts > 0))
            case .jwks:
                statistics.requestAbandoned(id: requestID)
                jwksFailed("the token worker was lost while fetching the JWKS", into: &actions)
            case .client(let client, let dialect) where request.attempts >= configuration.maxAttempts:
                statistics.requestAbandoned(id: requestID)
                replyError(to: client, dialect: dialect, service: request.service,
                           WireError(.workerLost, "\(request.attempts) workers lost the request in turn",
                                     service: request.service, attempts: request.attempts), into: &actions)
            case .client:
                counters.requestsRequeued += 1
                statistics.requestRequeued(id: request.id, service: request.service, now: now)
                request.deadline = now + configuration.requestTimeout
                services[worker.service, default: Service()].queue.prepend(request)
                actions.append(.log(.info, "requeued a request its worker lost", ["service": request.service, "attempts": String(request.attempts)]))
                dispatch(service: worker.service, now: now, into: &actions)
            }
        }
    }

    /// Hands queued requests to idle workers, least recently used worker first.
    mutating func dispatch(service: String, now: Instant, into actions: inout [BrokerAction]) {
        guard var record = services[service] else { return }
        while !record.queue.isEmpty, let identity = record.idle.popFirst() {
            guard var worker = workers[identity] else { continue }
            var request = record.queue.popFirst()!
            request.attempts += 1
            worker.request = request.id
            worker.busyDeadline = worker.dialect.heartbeatsWhileBusy ? nil : now + configuration.busyWorkerTimeout
            worker.lastSent = now
            workers[identity] = worker
            send(identity, MajordomoCodec.workerRequest(worker.dialect, address: Self.address(of: request.id), body: request.body), into: &actions)
            inFlight[request.id] = request
            statistics.requestDispatched(id: request.id, service: service, now: now)
        }
        services[service] = record
    }

    // MARK: - Output

    mutating func replyError(to client: [UInt8], dialect: Dialect, service: String, _ error: WireError, into actions: inout [BrokerAction]) {
        count(error.code)
        statistics.errorSent(service: service, code: error.code)
        // Titanic replies start with a status (RFC 9).
        let body = service.hasPrefix("titanic.") ? Titanic.refusal(error) : [error.jsonFrame]
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
