internal import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A failed libzmq call: the `errno` it left, captured right after the call, and what was being done.
public struct ZMQError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The `errno` value libzmq reported (`zmq_errno()` right after the failing call).
    public let code: Int32
    /// The libzmq function that failed, such as `zmq_bind`.
    public let operation: String
    /// What the caller was doing: an endpoint, an option name.
    public let context: String

    public init(code: Int32, operation: String, context: String = "") {
        self.code = code
        self.operation = operation
        self.context = context
    }

    /// The context was terminated (`ETERM`): the clean way out of every blocking loop.
    public var isTerminated: Bool { code == ETERM }
    /// A non-blocking call found nothing to do (`EAGAIN`).
    public var isWouldBlock: Bool { code == EAGAIN }
    /// A ROUTER with `ROUTER_MANDATORY` has no route to the addressed peer.
    public var isHostUnreachable: Bool { code == EHOSTUNREACH }

    public var description: String {
        let text = String(cString: zmq_strerror(code))
        return context.isEmpty ? "\(operation): \(text) (errno \(code))" : "\(operation)(\(context)): \(text) (errno \(code))"
    }

    /// Builds the error from the calling thread's current `zmq_errno()`.
    static func last(_ operation: String, _ context: String = "") -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation, context: context)
    }
}

/// Runs a libzmq call, retrying it while it fails with `EINTR`; any other failure becomes a `ZMQError`.
/// This is the one place where `EINTR` is retried.
@inline(__always)
func retryingInterrupts(_ operation: String, _ context: @autoclosure () -> String = "", _ call: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let rc = call()
        if rc >= 0 { return rc }
        let code = zmq_errno()
        if code == EINTR { continue }
        throw ZMQError(code: code, operation: operation, context: context())
    }
}
