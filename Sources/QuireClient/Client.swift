import Dispatch
import Foundation
import QuireSupport
import QuireWire
import Synchronization
import ZeroMQ

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

    public init(broker: String = "tcp://127.0.0.1:5555", dialect: Dialect = .mdp02, timeout: Milliseconds = 30_000, retries: Int = 2, maxInFlight: Int = 64) {
        self.broker = broker
        self.dialect = dialect
        self.timeout = timeout
        self.retries = retries
        self.maxInFlight = maxInFlight
    }

    /// The defaults overridden by `QUIRE_BROKER`, `QUIRE_TIMEOUT_MS`, `QUIRE_RETRIES`.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        let reader = EnvironmentReader(environment)
        if let v = reader.string("QUIRE_BROKER") { broker = v }
        if let v = try reader.milliseconds("QUIRE_TIMEOUT_MS") { timeout = v }
        if let v = try reader.integer("QUIRE_RETRIES", range: 0...100) { retries = v }
    }
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
        let continuation: CheckedContinuation<[[UInt8]], any Error>
        let onPartial: (@Sendable ([[UInt8]]) -> Void)?
    }

    public init(configuration: ClientConfiguration, context: Context? = nil) throws(ZMQError) {
        self.configuration = configuration
        if let context { self.context = context } else { self.context = try Context() }
        self.wakeup = try Wakeup()
        let thread = Thread { [self] in
            ioLoop()
            finished.signal()
        }
        thread.name = "quire-client-io"
        thread.start()
    }

    /// Sends `body` to `service` and returns the FINAL reply's frames. Throws ``ClientError``: `.remote`
    /// with the typed error when the reply is an error body.
    public func request(
        service: String,
        body: [[UInt8]],
        timeout: Milliseconds? = nil,
        onPartial: (@Sendable ([[UInt8]]) -> Void)? = nil
    ) async throws -> [[UInt8]] {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let submission = Submission(id: id, service: service, body: body, timeout: timeout ?? configuration.timeout,
                                            continuation: continuation, onPartial: onPartial)
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

    private final class Active {
        let socket: Socket
        let submission: Submission
        var deadline: Instant
        var retriesLeft: Int
        init(socket: Socket, submission: Submission, deadline: Instant, retriesLeft: Int) {
            self.socket = socket
            self.submission = submission
            self.deadline = deadline
            self.retriesLeft = retriesLeft
        }
    }

    private func ioLoop() {
        var idle: [Socket] = []
        var active: [Active] = []
        var waiting: [Submission] = []
        var waitingHead = 0
        var poller: Poller?

        func newSocket() throws(ZMQError) -> Socket {
            let socket = try Socket(context: context, type: .dealer)
            try socket.connect(configuration.broker)
            return socket
        }

        func start(_ submission: Submission, retriesLeft: Int, fresh: Bool) {
            do {
                let reused = fresh ? nil : idle.popLast()
                let socket = try reused ?? newSocket()
                let frames = MajordomoCodec.clientRequest(configuration.dialect, service: submission.service, body: submission.body)
                guard try socket.send(frames, dontWait: true) else {
                    throw ZMQError(code: EAGAIN, operation: "zmq_send", context: "the connection's queue is full")
                }
                active.append(Active(socket: socket, submission: submission, deadline: Instant.now() + submission.timeout, retriesLeft: retriesLeft))
            } catch {
                submission.continuation.resume(throwing: ClientError(.transport, String(describing: error)))
            }
            poller = nil
        }

        func finish(_ index: Int, recycle: Bool) {
            let entry = active.remove(at: index)
            if recycle && idle.count < configuration.maxInFlight { idle.append(entry.socket) } else { entry.socket.close() }
            poller = nil
        }

        var running = true
        while running || !active.isEmpty {
            if !running {
                for entry in active { entry.submission.continuation.resume(throwing: ClientError(.closed, "the client was closed")) }
                active.removeAll()
                break
            }
            // Start waiting requests while there is room.
            while active.count < configuration.maxInFlight, waitingHead < waiting.count {
                let submission = waiting[waitingHead]
                waitingHead += 1
                start(submission, retriesLeft: configuration.retries, fresh: false)
            }
            if waitingHead > 1024 && waitingHead * 2 > waiting.count {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
            if poller == nil {
                poller = Poller(active.map { .socket($0.socket, .readable) } + [.descriptor(wakeup.descriptor, .readable)])
            }
            let now = Instant.now()
            let nextDeadline = active.map(\.deadline).min()
            let timeout = nextDeadline.map { Int(now.milliseconds(until: $0)) } ?? -1
            let ready: [PollEvents]
            do {
                ready = try poller!.poll(timeoutMilliseconds: timeout)
            } catch {
                for entry in active { entry.submission.continuation.resume(throwing: ClientError(.transport, error.description)) }
                for index in waitingHead..<waiting.count { waiting[index].continuation.resume(throwing: ClientError(.transport, error.description)) }
                return
            }

            // Replies. Walk backwards so removals keep earlier indices valid.
            for index in stride(from: active.count - 1, through: 0, by: -1) where index < ready.count - 1 && ready[index].contains(.readable) {
                let entry = active[index]
                while true {
                    let frames: [[UInt8]]?
                    do { frames = try entry.socket.receive(dontWait: true) } catch { frames = nil }
                    guard let frames else { break }
                    switch MajordomoCodec.decodeClientReply(configuration.dialect, frames) {
                    case .success((.partial, let body)):
                        entry.submission.onPartial?(body)
                        continue
                    case .success((.final, let body)):
                        if body.count == 1, let error = WireError(jsonFrame: body[0]) {
                            entry.submission.continuation.resume(throwing: ClientError(.remote, error.message, remote: error))
                        } else {
                            entry.submission.continuation.resume(returning: body)
                        }
                    case .failure(let error):
                        entry.submission.continuation.resume(throwing: ClientError(.protocolError, error.message))
                    }
                    finish(index, recycle: true)
                    break
                }
            }

            // Commands.
            if ready.last?.contains(.readable) == true {
                wakeup.drain()
                for command in commands.withLock({ queue -> [Command] in defer { queue.removeAll() }; return queue }) {
                    switch command {
                    case .submit(let submission):
                        waiting.append(submission)
                    case .cancel(let id):
                        if let index = active.firstIndex(where: { $0.submission.id == id }) {
                            active[index].submission.continuation.resume(throwing: ClientError(.cancelled, "cancelled"))
                            // A reply may still arrive on that connection: do not reuse it.
                            finish(index, recycle: false)
                        } else if let index = waiting[waitingHead...].firstIndex(where: { $0.id == id }) {
                            waiting[index].continuation.resume(throwing: ClientError(.cancelled, "cancelled"))
                            waiting.remove(at: index)
                        }
                    case .stop:
                        running = false
                        for index in waitingHead..<waiting.count {
                            waiting[index].continuation.resume(throwing: ClientError(.closed, "the client was closed"))
                        }
                        waiting.removeAll()
                        waitingHead = 0
                    }
                }
            }

            // Timeouts: resend on a fresh connection, or give up.
            let after = Instant.now()
            for index in stride(from: active.count - 1, through: 0, by: -1) where after >= active[index].deadline {
                let entry = active[index]
                finish(index, recycle: false)
                if entry.retriesLeft > 0 {
                    start(entry.submission, retriesLeft: entry.retriesLeft - 1, fresh: true)
                } else {
                    let attempts = configuration.retries + 1
                    entry.submission.continuation.resume(throwing: ClientError(.timeout, "no reply from service '\(entry.submission.service)' within \(entry.submission.timeout.value) ms (\(attempts) attempt\(attempts == 1 ? "" : "s"))"))
                }
            }
        }
        for socket in idle { socket.close() }
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
