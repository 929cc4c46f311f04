import QuireSupport
import QuireWire

/// The client's connection pool as one pure state machine: requests waiting, the connections that
/// carry them, timeouts, resends and failover. ``ClientExecutor`` feeds it events and carries out its
/// actions; time comes in with every event and is never read here, so tests drive it by hand.
///
/// The rules, from RFC 7's reliability section (the Lazy Pirate pattern) and MDP's one outstanding
/// request per connection:
/// - a request goes out on an idle connection, or on a new one while there are fewer than
///   `maxInFlight`; otherwise it waits, first come first served;
/// - a connection is reused after a FINAL reply; one on which a reply may still come (a timeout, a
///   cancel, a reply that broke the protocol) is closed, so a late reply has nowhere to arrive;
/// - a connection left idle for `idleLinger` is closed, all but the last one: the pool shrinks back
///   after a burst (or after the wait for a restarted worker) instead of keeping its high-water mark
///   of connections, and of the broker's descriptors, for good;
/// - an attempt with no word from the service within its timeout (a PARTIAL counts as a word) is
///   sent again on a fresh connection while its retries last, and then fails with `timeout`;
/// - with several brokers, an attempt that timed out at the broker in use moves every request on to the
///   next broker, and each request may be resent at least once per other broker.
struct ClientMachine: Sendable {
    typealias RequestID = UInt64
    typealias ConnectionID = UInt64

    /// One request as its caller made it.
    struct Request: Sendable, Equatable {
        var id: RequestID
        var service: String
        var body: [[UInt8]]
        /// How long each attempt may wait for the service's next word.
        var timeout: Milliseconds
        /// Resends after a timeout the caller allows.
        var retries: Int
    }

    enum Event: Sendable, Equatable {
        case submit(Request)
        /// A message arrived on a connection.
        case received(ConnectionID, [[UInt8]])
        /// Time passed: attempts whose deadline is here time out.
        case tick
        /// An ``Action/open(_:endpoint:)`` could not be carried out.
        case openFailed(ConnectionID, String)
        /// A ``Action/send(_:_:)`` could not be carried out (the connection's queue full, or it is gone).
        case sendFailed(ConnectionID, String)
        /// The caller gave up on a request (its task was cancelled).
        case cancel(RequestID)
        /// Fail everything and close every connection.
        case close
    }

    enum Action: Sendable, Equatable {
        /// Open a connection (a DEALER socket) to `endpoint`.
        case open(ConnectionID, endpoint: String)
        case close(ConnectionID)
        /// Send a message on a connection without blocking; ``Event/sendFailed(_:_:)`` when it cannot go.
        case send(ConnectionID, [[UInt8]])
        /// A PARTIAL reply to a request still waiting.
        case partial(RequestID, [[UInt8]])
        /// A request's FINAL reply: it is answered.
        case succeed(RequestID, [[UInt8]])
        case fail(RequestID, ClientError)
        /// Send ``Event/tick`` at this instant (nil: no attempt is waiting and no idle connection is to
        /// be closed, no timer).
        case arm(Instant?)
        /// Requests go to this broker (an index into the endpoints) from now on.
        case useBroker(Int)
        /// Everything is answered and every connection closed: the executor may end.
        case stop
    }

    /// An attempt in flight on a connection.
    struct Attempt: Sendable {
        var request: Request
        var deadline: Instant
        var retriesLeft: Int
    }

    struct Connection: Sendable {
        var id: ConnectionID
        /// Which of the endpoints it is connected to.
        var endpoint: Int
        var attempt: Attempt?
    }

    /// A connection without an attempt, and since when.
    struct Idle {
        var id: ConnectionID
        var since: Instant
    }

    let endpoints: [String]
    let dialect: Dialect
    let maxInFlight: Int
    /// How long a connection may sit idle before it is closed, unless it is the only one.
    let idleLinger: Milliseconds
    /// The broker in use: the first named, until one stopped answering.
    private(set) var current = 0
    private(set) var connections: [Connection] = []
    /// Connections without an attempt, in the order they were freed: the last freed is reused first,
    /// so the first ones are those idle the longest.
    private var idle: [Idle] = []
    private var waiting = RequestQueue()
    private var nextConnection: ConnectionID = 1
    private var armed: Instant?
    private(set) var isClosed = false

    init(endpoints: [String], dialect: Dialect, maxInFlight: Int, idleLinger: Milliseconds = ClientConfiguration.defaultIdleLinger) {
        self.endpoints = endpoints.isEmpty ? [""] : endpoints
        self.dialect = dialect
        self.maxInFlight = max(1, maxInFlight)
        self.idleLinger = idleLinger
    }

    /// Requests that wait for a connection.
    var waitingCount: Int { waiting.count }

    mutating func handle(_ event: Event, now: Instant) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .submit(let request):
            guard !isClosed else { return [.fail(request.id, ClientError(.closed, "the client is closed"))] }
            waiting.append(request)
        case .received(let connection, let frames):
            received(frames, on: connection, now: now, into: &actions)
        case .tick:
            expire(now: now, into: &actions)
        case .openFailed(let connection, let reason):
            // The request meant for it fails; the next one tries a connection of its own.
            if let attempt = drop(connection) {
                actions.append(.fail(attempt.request.id, ClientError(.transport, reason)))
            }
        case .sendFailed(let connection, let reason):
            guard let index = index(of: connection), let attempt = connections[index].attempt else { break }
            free(index, now: now)
            actions.append(.fail(attempt.request.id, ClientError(.transport, reason)))
        case .cancel(let id):
            if let connection = connections.first(where: { $0.attempt?.request.id == id }) {
                // Its reply may still come: the connection goes with the request.
                _ = drop(connection.id)
                actions.append(.close(connection.id))
                actions.append(.fail(id, ClientError(.cancelled, "cancelled")))
            } else if waiting.remove(id) {
                actions.append(.fail(id, ClientError(.cancelled, "cancelled")))
            }
        case .close:
            guard !isClosed else { return [] }
            isClosed = true
            let closed = ClientError(.closed, "the client was closed")
            for connection in connections {
                if let attempt = connection.attempt { actions.append(.fail(attempt.request.id, closed)) }
            }
            for request in waiting.removeAll() { actions.append(.fail(request.id, closed)) }
            for connection in connections { actions.append(.close(connection.id)) }
            connections = []
            idle = []
            armed = nil
            actions.append(.stop)
            return actions
        }
        startWaiting(now: now, into: &actions)
        shrink(now: now, into: &actions)
        rearm(into: &actions)
        return actions
    }

    // MARK: - Replies

    private mutating func received(_ frames: [[UInt8]], on connection: ConnectionID, now: Instant, into actions: inout [Action]) {
        // A connection closed since, or one nobody waits on: the reply is late, dropped.
        guard let index = index(of: connection), let attempt = connections[index].attempt else { return }
        let id = attempt.request.id
        switch MajordomoCodec.decodeClientReply(dialect, frames) {
        case .success((.partial, let body)):
            // A worker that says how far it has got is working: the attempt's timeout counts from its
            // last word (a long document sends one per page).
            connections[index].attempt?.deadline = now + attempt.request.timeout
            actions.append(.partial(id, body))
        case .success((.final, let body)):
            free(index, now: now)
            if body.count == 1, let error = WireError(jsonFrame: body[0]) {
                actions.append(.fail(id, ClientError(.remote, error.message, remote: error)))
            } else {
                actions.append(.succeed(id, body))
            }
        case .failure(let error):
            _ = drop(connection)
            actions.append(.close(connection))
            actions.append(.fail(id, ClientError(.protocolError, error.message)))
        }
    }

    // MARK: - Timeouts

    private mutating func expire(now: Instant, into actions: inout [Action]) {
        let expired = connections.filter { connection in connection.attempt.map { now >= $0.deadline } ?? false }
        for connection in expired {
            guard let attempt = drop(connection.id) else { continue }
            actions.append(.close(connection.id))
            // Silence from the broker in use: the next one (once per broker, not per request).
            if connection.endpoint == current, endpoints.count > 1 {
                current = (current + 1) % endpoints.count
                actions.append(.useBroker(current))
            }
            if attempt.retriesLeft > 0 {
                send(attempt.request, on: open(into: &actions), retriesLeft: attempt.retriesLeft - 1, now: now, into: &actions)
            } else {
                let attempts = Self.budget(attempt.request, endpoints: endpoints.count) + 1
                actions.append(.fail(attempt.request.id, ClientError(.timeout, "no reply from service '\(attempt.request.service)' within "
                                                                     + "\(attempt.request.timeout.value) ms (\(attempts) attempt\(attempts == 1 ? "" : "s"))")))
            }
        }
    }

    /// Resends a request may make: its own retries, and with several brokers at least one per other broker.
    static func budget(_ request: Request, endpoints: Int) -> Int {
        max(endpoints - 1, request.retries)
    }

    // MARK: - Connections

    /// Starts waiting requests while there are connections for them.
    private mutating func startWaiting(now: Instant, into actions: inout [Action]) {
        while let request = waiting.first {
            let connection: ConnectionID
            if let free = idle.popLast()?.id {
                if let index = index(of: free), connections[index].endpoint != current {
                    // Made for a broker that has since stopped answering: one to the broker in use instead.
                    _ = drop(free)
                    actions.append(.close(free))
                    connection = open(into: &actions)
                } else {
                    connection = free
                }
            } else if connections.count < maxInFlight {
                connection = open(into: &actions)
            } else {
                break
            }
            _ = waiting.popFirst()
            send(request, on: connection, retriesLeft: Self.budget(request, endpoints: endpoints.count), now: now, into: &actions)
        }
    }

    private mutating func open(into actions: inout [Action]) -> ConnectionID {
        let id = nextConnection
        nextConnection += 1
        connections.append(Connection(id: id, endpoint: current))
        actions.append(.open(id, endpoint: endpoints[current]))
        return id
    }

    /// The connection at `index` has finished its attempt: it waits for the next request.
    private mutating func free(_ index: Int, now: Instant) {
        connections[index].attempt = nil
        idle.append(Idle(id: connections[index].id, since: now))
    }

    /// Closes the connections idle for `idleLinger`, the longest idle first, keeping the last one open.
    private mutating func shrink(now: Instant, into actions: inout [Action]) {
        while connections.count > 1, let oldest = idle.first, now >= oldest.since + idleLinger {
            _ = drop(oldest.id)
            actions.append(.close(oldest.id))
        }
    }

    private mutating func send(_ request: Request, on connection: ConnectionID, retriesLeft: Int, now: Instant, into actions: inout [Action]) {
        guard let index = index(of: connection) else { return }
        connections[index].attempt = Attempt(request: request, deadline: now + request.timeout, retriesLeft: retriesLeft)
        actions.append(.send(connection, MajordomoCodec.clientRequest(dialect, service: request.service, body: request.body)))
    }

    /// Forgets a connection; the attempt it carried, if any.
    private mutating func drop(_ connection: ConnectionID) -> Attempt? {
        guard let index = index(of: connection) else { return nil }
        idle.removeAll { $0.id == connection }
        return connections.remove(at: index).attempt
    }

    private func index(of connection: ConnectionID) -> Int? {
        connections.firstIndex { $0.id == connection }
    }

    /// Asks for a tick at the earliest deadline or linger's end, when it changed.
    private mutating func rearm(into actions: inout [Action]) {
        let linger = connections.count > 1 ? idle.first.map { $0.since + idleLinger } : nil
        let next = (connections.compactMap { $0.attempt?.deadline } + [linger].compactMap { $0 }).min()
        guard next != armed else { return }
        armed = next
        actions.append(.arm(next))
    }
}
