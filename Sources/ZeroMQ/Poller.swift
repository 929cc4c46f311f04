internal import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// What to wait for on a socket or descriptor.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}

/// Waits on several sockets and plain file descriptors at once (`zmq_poll`).
///
/// Belongs to the thread that owns its sockets. Items are fixed at creation; `poll` reuses one array.
public final class Poller {
    public enum Item {
        case socket(Socket, PollEvents)
        case descriptor(Int32, PollEvents)
    }

    private let sockets: [Socket?]
    private var items: [zmq_pollitem_t]

    public init(_ entries: [Item]) {
        var sockets: [Socket?] = []
        var items: [zmq_pollitem_t] = []
        for entry in entries {
            switch entry {
            case .socket(let socket, let events):
                sockets.append(socket)
                items.append(zmq_pollitem_t(socket: socket.raw, fd: -1, events: events.rawValue, revents: 0))
            case .descriptor(let fd, let events):
                sockets.append(nil)
                items.append(zmq_pollitem_t(socket: nil, fd: fd, events: events.rawValue, revents: 0))
            }
        }
        self.sockets = sockets
        self.items = items
    }

    /// Waits until an item is ready or `timeoutMilliseconds` passes (-1: forever). Returns the events
    /// that fired, one entry per item in the order given. `EINTR` is retried; `ETERM` throws.
    public func poll(timeoutMilliseconds: Int) throws(ZMQError) -> [PollEvents] {
        for index in items.indices {
            items[index].revents = 0
            // Look the handle up each time: a socket closed since init must fail, not poll freed memory.
            if let socket = sockets[index] {
                guard let raw = socket.raw else { throw ZMQError(code: ENOTSOCK, operation: "zmq_poll", context: "socket closed") }
                items[index].socket = raw
            }
        }
        let count = items.count
        _ = try retryingInterrupts("zmq_poll") {
            items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, Int32(count), timeoutMilliseconds) }
        }
        return items.map { PollEvents(rawValue: $0.revents) }
    }
}

/// A wake-up signal another thread can raise to interrupt a ``Poller`` (an `eventfd`).
///
/// The owning thread polls ``descriptor``; any thread calls ``signal()``. ``drain()`` resets it.
public final class Wakeup: Sendable {
    public let descriptor: Int32

    public init() throws(ZMQError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw ZMQError(code: errno, operation: "eventfd") }
        descriptor = fd
    }

    deinit { Glibc.close(descriptor) }

    public func signal() {
        var one: UInt64 = 1
        while write(descriptor, &one, 8) < 0 && errno == EINTR {}
    }

    public func drain() {
        var value: UInt64 = 0
        while read(descriptor, &value, 8) < 0 && errno == EINTR {}
    }
}
