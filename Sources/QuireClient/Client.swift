import Dispatch
import Foundation
import QuireSupport
import QuireWire
import Synchronization
import ZeroMQ

/// The Quire client: an async/await API over one dedicated I/O thread that owns every socket.
///
/// Many requests may be in flight at once (``ClientConfiguration/maxInFlight``). Use
/// ``withClient(configuration:_:)`` so that the thread is always shut down. The pool's rules live in
/// ``ClientMachine``; the thread (``ClientExecutor``) only carries them out.
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

    /// What callers ask of the I/O thread.
    enum Command: Sendable {
        case submit(Submission)
        case cancel(ClientMachine.RequestID)
        case stop
    }

    struct Submission: Sendable {
        let request: ClientMachine.Request
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
            // Sockets are made, used and closed on this thread only.
            let executor = ClientExecutor(
                machine: ClientMachine(endpoints: self.endpoints, dialect: configuration.dialect, maxInFlight: configuration.maxInFlight,
                                      idleLinger: configuration.idleLinger),
                context: self.context, curve: configuration.curve, wakeup: wakeup,
                takeCommands: { [self] in commands.withLock { queue in defer { queue.removeAll() }; return queue } },
                brokerChanged: { [self] in inUse.store($0, ordering: .relaxed) })
            executor.run()
            finished.signal()
        }
        thread.name = "quire-client-io"
        thread.start()
    }

    /// Sends `body` to `service` and returns the FINAL reply's frames. Throws ``ClientError``: `.remote`
    /// with the typed error when the reply is an error body. `timeout` and `retries` default to the
    /// configuration's; with several brokers, every one of them is tried before a request gives up.
    public func request(
        service: String,
        body: [[UInt8]],
        timeout: Milliseconds? = nil,
        retries: Int? = nil,
        onPartial: (@Sendable ([[UInt8]]) -> Void)? = nil
    ) async throws -> [[UInt8]] {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let request = ClientMachine.Request(id: id, service: service, body: body, timeout: timeout ?? configuration.timeout,
                                            retries: retries ?? configuration.retries)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if !enqueue(.submit(Submission(request: request, continuation: continuation, onPartial: onPartial))) {
                    continuation.resume(throwing: ClientError(.closed, "the client is closed"))
                } else if Task.isCancelled {
                    // Cancelled before the submission was queued: that cancel found nothing to cancel.
                    enqueue(.cancel(id))
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
