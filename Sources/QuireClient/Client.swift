import Dispatch
import Foundation
import QuireSupport
import QuireWire
import Synchronization
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// How a client reaches the broker and how patient it is.
public struct ClientConfiguration: Sendable, Equatable {
    /// The broker's endpoint (`--broker`, `QUIRE_BROKER`).
    public var broker: String
    public var dialect: Dialect
    /// How long to wait for the FINAL reply to one attempt.
    public var timeout: Milliseconds
    /// How many times to resend a request that timed out, on a fresh connection each time (RFC 7's
    /// reliability section: the Lazy Pirate pattern). Quire's services are idempotent.
    public var retries: Int
    /// Requests in flight at once. Each has its own DEALER connection, as MDP allows one outstanding
    /// request per connection; further requests wait in the client.
    public var maxInFlight: Int
    /// CURVE towards a broker that has it on (`--curve-server-key`, `--curve-key`); `nil`: plain TCP.
    public var curve: CurveClientSettings?

    public init(broker: String = "tcp://127.0.0.1:5555", dialect: Dialect = .mdp02, timeout: Milliseconds = 30_000, retries: Int = 2, maxInFlight: Int = 64,
                curve: CurveClientSettings? = nil) {
        self.broker = broker
        self.dialect = dialect
        self.timeout = timeout
        self.retries = retries
        self.maxInFlight = maxInFlight
        self.curve = curve
    }

    /// The defaults, overridden by the `QUIRE_*` variables of ``settings`` where set.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        try Self.settings.applyEnvironment(environment, to: &self)
    }

    /// What the client verbs let their users set about the connection, each setting declared once.
    public static let settings: [Setting<ClientConfiguration>] = [
        .broker(\.broker),
        Setting(\.timeout, flag: "timeout-ms", variable: "QUIRE_TIMEOUT_MS", .milliseconds(1...86_400_000), help: "wait per attempt"),
        Setting(\.retries, flag: "retries", variable: "QUIRE_RETRIES", .integer(0...100), help: "resend after a timeout"),
        Setting(\.dialect, flag: "dialect", .choice(noun: "dialect", placeholder: "D"), help: "the Majordomo dialect to speak"),
    ]
}

/// Why a request failed on the client side.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No reply within the timeout, after every retry.
        case timeout
        /// The broker or a worker answered with a typed error (see ``remote``).
        case remote
        /// A ZeroMQ call failed.
        case transport
        /// The client was closed while the request waited.
        case closed
        /// The calling task was cancelled.
        case cancelled
        /// The broker's reply did not follow the protocol.
        case protocolError = "protocol_error"
    }

    public var code: Code
    public var message: String
    /// The error the broker or worker sent, for ``Code/remote``.
    public var remote: WireError?

    public init(_ code: Code, _ message: String, remote: WireError? = nil) {
        self.code = code
        self.message = message
        self.remote = remote
    }

    public var description: String {
        if let remote { return "\(remote.code.rawValue): \(remote.message)" }
        return "\(code.rawValue): \(message)"
    }
}

/// The Quire client: an async/await API over one dedicated I/O thread that owns every socket.
///
/// Many requests may be in flight at once (``ClientConfiguration/maxInFlight``). Use
/// ``withClient(configuration:_:)`` so that the thread is always shut down.
public final class QuireClient: Sendable {
    public let configuration: ClientConfiguration
    /// The brokers `configuration.broker` names, in the order they are tried.
    let endpoints: [String]
    private let inUse = Atomic<Int>(0)

    /// The broker requests go to now: the first named, until one stopped answering.
    public var brokerInUse: String { endpoints[inUse.load(ordering: .relaxed)] }
    private let context: Context
    private let wakeup: Wakeup
    private let commands = Mutex<[Command]>([])
    private let nextID = Atomic<UInt64>(1)
    private let finished = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(false)

    enum Command: Sendable {
        case submit(Submission)
        case cancel(UInt64)
        case stop
    }

    struct Submission: Sendable {
        let id: UInt64
        let service: String
        let body: [[UInt8]]
        let timeout: Milliseconds
        let retries: Int
        let continuation: CheckedContinuation<[[UInt8]], any Error>
        let onPartial: (@Sendable ([[UInt8]]) -> Void)?
    }

    public init(configuration: ClientConfiguration, context: Context? = nil) throws(ZMQError) {
        self.configuration = configuration
        let endpoints = BrokerEndpoints.split(configuration.broker)
        self.endpoints = endpoints.isEmpty ? [configuration.broker] : endpoints
        if let context { self.context = context } else { self.context = try Context() }
        self.wakeup = try Wakeup()
        let thread = Thread { [self] in
            // Foundation on Linux passes a name to the kernel only when set from the running thread.
            Thread.current.name = "quire-client-io"
            ioLoop()
            finished.signal()
        }
        thread.name = "quire-client-io"
        thread.start()
    }

    /// Sends `body` to `service` and returns the FINAL reply's frames. Throws ``ClientError``: `.remote`
    /// with the typed error when the reply is an error body. `timeout` and `retries` default to the
    /// configuration's.
    public func request(
        service: String,
        body: [[UInt8]],
        timeout: Milliseconds? = nil,
        retries: Int? = nil,
        onPartial: (@Sendable ([[UInt8]]) -> Void)? = nil
    ) async throws -> [[UInt8]] {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // With several brokers, every one of them is tried before a request gives up.
                let submission = Submission(id: id, service: service, body: body, timeout: timeout ?? configuration.timeout,
                                            retries: max(endpoints.count - 1, retries ?? configuration.retries), continuation: continuation,
                                            onPartial: onPartial)
                if !enqueue(.submit(submission)) {
                    continuation.resume(throwing: ClientError(.closed, "the client is closed"))
                }
            }
        } onCancel: {
            _ = enqueue(.cancel(id))
        }
    }

    @discardableResult
    private func enqueue(_ command: Command) -> Bool {
        let accepted = commands.withLock { queue -> Bool in
            if closed.load(ordering: .acquiring), case .submit = command { return false }
            queue.append(command)
            return true
        }
        if accepted { wakeup.signal() }
        return accepted
    }

    /// Fails every waiting request with `.closed` and stops the I/O thread.
    public func close() async {
        if closed.exchange(true, ordering: .acquiringAndReleasing) == false {
            commands.withLock { $0.append(.stop) }
            wakeup.signal()
        }
        let finished = self.finished
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                finished.wait()
                finished.signal()
                done.resume()
            }
        }
    }

    // MARK: - I/O thread

    /// One connection to the broker and the request it carries, if any. Connections are reused from
    /// request to request; one is replaced only when a reply may still be on its way (timeout, cancel).
    private final class Slot {
        var socket: Socket
        /// Which of ``endpoints`` the socket is connected to.
        var endpoint = 0
        /// The socket's ZMQ_FD: readable when the socket has news, which ZMQ_EVENTS then tells.
        var descriptor: Int32
        var submission: Submission?
        var deadline = Instant(nanoseconds: 0)
        var retriesLeft = 0
        /// Ask ZMQ_EVENTS before sleeping: the socket was just used, which may have consumed the
        /// descriptor's signal.
        var check = false
        init(socket: Socket) throws(ZMQError) {
            self.socket = socket
            self.descriptor = try socket.fileDescriptor
        }
    }

    private func ioLoop() {
        var slots: [Slot] = []
        var idle: [Int] = []          // indices of slots without a request
        var waiting: [Submission] = []
        var waitingHead = 0
        // zmq_poll asks every item for ZMQ_EVENTS on every call, two system calls per socket, idle
        // ones included: after a burst of 64 that is ~130 calls per wake-up even with one request in
        // flight. Poll the sockets' ZMQ_FDs instead (one call) and ask only the sockets that fired
        // or were just used.
        var descriptors: [pollfd]?    // rebuilt only when a connection is added or replaced
        var activeCount = 0
        // The broker in use; a request that times out moves every connection on to the next one
        // (RFC 7's reliable client with several brokers: a broker that stopped answering is skipped).
        var current = 0

        func newSocket() throws(ZMQError) -> Socket {
            let socket = try Socket(context: context, type: .dealer)
            try socket.applyCurve(configuration.curve)
            try socket.connect(endpoints[current])
            return socket
        }

        /// Closes `slot`'s connection and gives it a fresh one to the broker in use (kept as it was when
        /// no fresh one can be made).
        func reconnect(_ slot: Slot) {
            slot.socket.close()
            if let fresh = try? newSocket(), let descriptor = try? fresh.fileDescriptor {
                slot.socket = fresh
                slot.descriptor = descriptor
                slot.endpoint = current
            }
            descriptors = nil
        }

        /// Sends `submission` on slot `index`, or fails it.
        func send(_ submission: Submission, on index: Int, retriesLeft: Int) {
            let slot = slots[index]
            do {
                let frames = MajordomoCodec.clientRequest(configuration.dialect, service: submission.service, body: submission.body)
                guard try slot.socket.send(frames, dontWait: true) else {
                    throw ZMQError(code: EAGAIN, operation: "zmq_send", context: "the connection's queue is full")
                }
                slot.submission = submission
                slot.check = true
                slot.deadline = Instant.now() + submission.timeout
                slot.retriesLeft = retriesLeft
                activeCount += 1
            } catch {
                submission.continuation.resume(throwing: ClientError(.transport, String(describing: error)))
                idle.append(index)
            }
        }

        /// Ends slot `index`'s request. `replace`: a late reply may still arrive, so the connection is
        /// closed and a fresh one takes its place.
        func release(_ index: Int, replace: Bool) {
            let slot = slots[index]
            if slot.submission != nil { activeCount -= 1 }
            slot.submission = nil
            if replace { reconnect(slot) }
            idle.append(index)
        }

        func failEverything(_ error: ClientError) {
            for slot in slots {
                slot.submission?.continuation.resume(throwing: error)
                slot.submission = nil
            }
            for index in waitingHead..<waiting.count { waiting[index].continuation.resume(throwing: error) }
            waiting.removeAll()
            waitingHead = 0
            activeCount = 0
        }

        var running = true
        while running {
            // Start waiting requests while there is room.
            while waitingHead < waiting.count {
                let index: Int
                if let free = idle.popLast() {
                    index = free
                } else if slots.count < configuration.maxInFlight {
                    do {
                        let slot = try Slot(socket: try newSocket())
                        slot.endpoint = current
                        slots.append(slot)
                    } catch {
                        failEverything(ClientError(.transport, error.description))
                        return
                    }
                    descriptors = nil
                    index = slots.count - 1
                } else {
                    break
                }
                let submission = waiting[waitingHead]
                waitingHead += 1
                // A connection made to a broker that has since stopped answering goes to the one in use.
                if slots[index].endpoint != current { reconnect(slots[index]) }
                send(submission, on: index, retriesLeft: submission.retries)
            }
            if waitingHead > 1024 && waitingHead * 2 > waiting.count {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
            if descriptors == nil {
                descriptors = slots.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
                    + [pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)]
            }
            var nextDeadline: Instant?
            if activeCount > 0 {
                for slot in slots where slot.submission != nil {
                    if nextDeadline == nil || slot.deadline < nextDeadline! { nextDeadline = slot.deadline }
                }
            }
            let mustLook = slots.contains { $0.check }
            let timeout = mustLook ? 0 : nextDeadline.map { Int32(clamping: Instant.now().milliseconds(until: $0)) } ?? -1
            let count = descriptors!.count
            for index in 0..<count { descriptors![index].revents = 0 }
            while descriptors!.withUnsafeMutableBufferPointer({ Glibc.poll($0.baseAddress, nfds_t(count), timeout) }) < 0 && errno == EINTR {}
            let fired = descriptors!.map { $0.revents & Int16(POLLIN) != 0 }

            // Replies.
            for index in slots.indices where slots[index].check || fired[index] {
                let slot = slots[index]
                slot.check = false
                guard (try? slot.socket.events)?.contains(.readable) ?? true else { continue }
                while let frames = try? slot.socket.receive(dontWait: true) {
                    guard let submission = slot.submission else { continue }   // nothing is waiting on it: drop
                    switch MajordomoCodec.decodeClientReply(configuration.dialect, frames) {
                    case .success((.partial, let body)):
                        submission.onPartial?(body)
                        // A worker that says how far it has got is working: the attempt's timeout
                        // counts from its last word (a long document sends one per page).
                        slot.deadline = Instant.now() + submission.timeout
                        continue
                    case .success((.final, let body)):
                        if body.count == 1, let error = WireError(jsonFrame: body[0]) {
                            submission.continuation.resume(throwing: ClientError(.remote, error.message, remote: error))
                        } else {
                            submission.continuation.resume(returning: body)
                        }
                        release(index, replace: false)
                    case .failure(let error):
                        submission.continuation.resume(throwing: ClientError(.protocolError, error.message))
                        release(index, replace: true)
                    }
                    break
                }
            }

            // Commands.
            if fired[slots.count] {
                wakeup.drain()
                for command in commands.withLock({ queue -> [Command] in defer { queue.removeAll() }; return queue }) {
                    switch command {
                    case .submit(let submission):
                        waiting.append(submission)
                    case .cancel(let id):
                        if let index = slots.firstIndex(where: { $0.submission?.id == id }) {
                            slots[index].submission?.continuation.resume(throwing: ClientError(.cancelled, "cancelled"))
                            release(index, replace: true)
                        } else if let index = waiting[waitingHead...].firstIndex(where: { $0.id == id }) {
                            waiting[index].continuation.resume(throwing: ClientError(.cancelled, "cancelled"))
                            waiting.remove(at: index)
                        }
                    case .stop:
                        running = false
                    }
                }
            }

            // Timeouts: resend on a fresh connection, or give up.
            if activeCount > 0 {
                let now = Instant.now()
                for index in slots.indices {
                    let slot = slots[index]
                    guard let submission = slot.submission, now >= slot.deadline else { continue }
                    let retriesLeft = slot.retriesLeft
                    // Silence from the broker in use: the next one (once per broker, not per request).
                    if slot.endpoint == current {
                        current = (current + 1) % endpoints.count
                        inUse.store(current, ordering: .relaxed)
                    }
                    release(index, replace: true)
                    if retriesLeft > 0 {
                        idle.removeLast()   // the slot just released: reuse it at once
                        send(submission, on: index, retriesLeft: retriesLeft - 1)
                    } else {
                        let attempts = submission.retries + 1
                        submission.continuation.resume(throwing: ClientError(.timeout, "no reply from service '\(submission.service)' within \(submission.timeout.value) ms (\(attempts) attempt\(attempts == 1 ? "" : "s"))"))
                    }
                }
            }
        }
        failEverything(ClientError(.closed, "the client was closed"))
        for slot in slots { slot.socket.close() }
    }
}

/// What the broker says about a service (MMI `mmi.service`, RFC 8).
public enum ServiceAvailability: Sendable, Equatable {
    /// `200`: at least one worker serves it.
    case available
    /// `404`: no worker serves it now.
    case absent
    /// Any other answer (`501` from a broker without MMI, a peer that is not a Majordomo broker).
    case unknown
}

extension QuireClient {
    /// Asks the broker whether `service` has a worker, in one attempt of at most `timeout`. Throws
    /// ``ClientError`` (`.timeout` when the broker does not answer).
    public func availability(of service: String, timeout: Milliseconds) async throws -> ServiceAvailability {
        try await askMMI(ReservedService.mmiService, body: [Array(service.utf8)], timeout: timeout)
    }

    /// Asks the broker whether it wants a token on requests (`mmi.auth`): `true` (auth on), `false`
    /// (off), nil when it does not say (a broker that answers `501`). One attempt of at most `timeout`.
    public func wantsTokens(timeout: Milliseconds) async throws -> Bool? {
        switch try await askMMI(ReservedService.mmiAuth, body: [], timeout: timeout) {
        case .available: true
        case .absent: false
        case .unknown: nil
        }
    }

    private func askMMI(_ service: String, body: [[UInt8]], timeout: Milliseconds) async throws -> ServiceAvailability {
        let reply = try await request(service: service, body: body, timeout: timeout, retries: 0)
        switch reply.first.map({ String(decoding: $0, as: UTF8.self) }) {
        case "200": return .available
        case "404": return .absent
        default: return .unknown
        }
    }
}

/// Runs `body` with a client that is closed when `body` returns or throws.
public func withClient<Result: Sendable>(
    configuration: ClientConfiguration,
    context: Context? = nil,
    _ body: (QuireClient) async throws -> Result
) async throws -> Result {
    let client = try QuireClient(configuration: configuration, context: context)
    do {
        let result = try await body(client)
        await client.close()
        return result
    } catch {
        await client.close()
        throw error
    }
}
