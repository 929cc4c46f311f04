import QuireSupport
import QuireWire
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// The client's I/O thread: owns every socket, waits in `poll(2)`, and does nothing but carry out a
/// ``ClientMachine``'s actions and feed it what happened (replies, the clock, the callers' commands).
final class ClientExecutor {
    /// One open connection: a DEALER socket and its ZMQ_FD.
    private final class Link {
        let id: ClientMachine.ConnectionID
        let socket: Socket
        /// Readable when the socket has news, which ZMQ_EVENTS then tells.
        let descriptor: Int32
        /// Ask ZMQ_EVENTS before sleeping: the socket was just used, which may have consumed the
        /// descriptor's signal.
        var check = false

        init(id: ClientMachine.ConnectionID, socket: Socket) throws(ZMQError) {
            self.id = id
            self.socket = socket
            self.descriptor = try socket.fileDescriptor
        }
    }

    /// What a caller waits on.
    struct Waiter {
        let continuation: CheckedContinuation<[[UInt8]], any Error>
        let onPartial: (@Sendable ([[UInt8]]) -> Void)?
    }

    private var machine: ClientMachine
    private let context: Context
    private let curve: CurveClientSettings?
    private let wakeup: Wakeup
    /// The callers' commands since the last look.
    private let takeCommands: () -> [QuireClient.Command]
    private let brokerChanged: (Int) -> Void
    private var links: [Link] = []
    private var waiters: [ClientMachine.RequestID: Waiter] = [:]
    private var deadline: Instant?
    private var stopped = false
    // zmq_poll asks every item for ZMQ_EVENTS on every call, two system calls per socket, idle ones
    // included: after a burst of 64 that is ~130 calls per wake-up even with one request in flight.
    // Poll the sockets' ZMQ_FDs instead (one call) and ask only the sockets that fired or were just used.
    private var descriptors: [pollfd]?

    init(machine: ClientMachine, context: Context, curve: CurveClientSettings?, wakeup: Wakeup,
         takeCommands: @escaping () -> [QuireClient.Command], brokerChanged: @escaping (Int) -> Void) {
        self.machine = machine
        self.context = context
        self.curve = curve
        self.wakeup = wakeup
        self.takeCommands = takeCommands
        self.brokerChanged = brokerChanged
    }

    /// Runs until the machine has stopped (after a ``QuireClient/Command/stop``).
    func run() {
        while !stopped {
            if descriptors == nil {
                descriptors = links.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
                    + [pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)]
            }
            let mustLook = links.contains { $0.check }
            let timeout = mustLook ? 0 : deadline.map { Int32(clamping: Instant.now().milliseconds(until: $0)) } ?? -1
            let count = descriptors!.count
            for index in 0..<count { descriptors![index].revents = 0 }
            while descriptors!.withUnsafeMutableBufferPointer({ Glibc.poll($0.baseAddress, nfds_t(count), timeout) }) < 0 && errno == EINTR {}
            let fired = descriptors!.map { $0.revents & Int16(POLLIN) != 0 }
            let polled = links

            // Replies, on the connections that fired or were just used.
            for (index, link) in polled.enumerated() where link.check || fired[index] {
                link.check = false
                guard (try? link.socket.events)?.contains(.readable) ?? true else { continue }
                var messages: [[[UInt8]]] = []
                while let frames = try? link.socket.receive(dontWait: true) { messages.append(frames) }
                for frames in messages { handle(.received(link.id, frames)) }
            }

            // Commands.
            if fired[polled.count] {
                wakeup.drain()
                for command in takeCommands() {
                    switch command {
                    case .submit(let submission):
                        waiters[submission.request.id] = Waiter(continuation: submission.continuation, onPartial: submission.onPartial)
                        handle(.submit(submission.request))
                    case .cancel(let id):
                        handle(.cancel(id))
                    case .stop:
                        handle(.close)
                    }
                }
            }

            // Timeouts.
            if let deadline, Instant.now() >= deadline { handle(.tick) }
        }
        for link in links { link.socket.close() }
        links = []
    }

    /// Hands `event` to the machine and carries out its actions, and those of the events they cause.
    private func handle(_ event: ClientMachine.Event) {
        var actions = machine.handle(event, now: Instant.now())
        var index = 0
        while index < actions.count {
            let action = actions[index]
            index += 1
            if let next = perform(action) { actions += machine.handle(next, now: Instant.now()) }
        }
    }

    /// Carries out one action; the event it caused, if any.
    private func perform(_ action: ClientMachine.Action) -> ClientMachine.Event? {
        switch action {
        case .open(let id, let endpoint):
            do throws(ZMQError) {
                let socket = try Socket(context: context, type: .dealer)
                do throws(ZMQError) {
                    try socket.applyCurve(curve)
                    try socket.connect(endpoint)
                    links.append(try Link(id: id, socket: socket))
                } catch {
                    socket.close()
                    throw error
                }
                descriptors = nil
            } catch {
                return .openFailed(id, error.description)
            }
        case .close(let id):
            guard let index = links.firstIndex(where: { $0.id == id }) else { break }
            links.remove(at: index).socket.close()
            descriptors = nil
        case .send(let id, let frames):
            guard let link = links.first(where: { $0.id == id }) else { return .sendFailed(id, "the connection is closed") }
            do throws(ZMQError) {
                guard try link.socket.send(frames, dontWait: true) else {
                    throw ZMQError(code: EAGAIN, operation: "zmq_send", context: "the connection's queue is full")
                }
                link.check = true
            } catch {
                return .sendFailed(id, String(describing: error))
            }
        case .partial(let id, let body):
            waiters[id]?.onPartial?(body)
        case .succeed(let id, let body):
            waiters.removeValue(forKey: id)?.continuation.resume(returning: body)
        case .fail(let id, let error):
            waiters.removeValue(forKey: id)?.continuation.resume(throwing: error)
        case .arm(let instant):
            deadline = instant
        case .useBroker(let endpoint):
            brokerChanged(endpoint)
        case .stop:
            stopped = true
        }
        return nil
    }
}
