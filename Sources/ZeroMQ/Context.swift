internal import CZeroMQ
import Synchronization

/// A libzmq context: thread-safe and shared by every socket of a process.
///
/// Sockets keep their context alive, so the context is only terminated (`zmq_ctx_term`) once the last
/// socket has been closed; freeing it earlier would make `zmq_ctx_term` wait for sockets forever.
/// ``shutdown()`` is the way to stop a process: every blocking call on every socket returns `ETERM`.
public final class Context: @unchecked Sendable {
    // libzmq documents the context as thread-safe; the pointer is never mutated after init.
    let handle: UnsafeMutableRawPointer

    /// Creates a context with `ioThreads` I/O threads (one is plenty below a gigabyte per second).
    /// `threadNamePrefix` puts a number before its threads' names (`ZMQbg/IO/0`), which tells a
    /// process's contexts apart in `top -H` and /proc.
    public init(ioThreads: Int32 = 1, threadNamePrefix: Int32? = nil) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        self.handle = handle
        _ = zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        if let threadNamePrefix { _ = zmq_ctx_set(handle, ZMQ_THREAD_NAME_PREFIX, threadNamePrefix) }
        // The broker can have many peers; the default of 1023 sockets is per context, not per peer,
        // but raise it anyway for processes with many client sockets.
        _ = zmq_ctx_set(handle, ZMQ_MAX_SOCKETS, 16_384)
    }

    /// Makes every blocking call on this context's sockets fail with `ETERM`, from any thread.
    public func shutdown() {
        _ = zmq_ctx_shutdown(handle)
    }

    private let terminated = Atomic<Bool>(false)

    /// Waits until the messages that closed sockets still hold have left (or their linger ran out),
    /// then frees the context. Call it once every socket is closed, before the process exits: `exit`
    /// does not run deinitialisers, and a goodbye sent just before it would otherwise be lost.
    public func terminate() {
        guard !terminated.exchange(true, ordering: .acquiringAndReleasing) else { return }
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    deinit {
        // All sockets hold a reference to the context, so none is open here and this cannot block
        // longer than the sockets' linger.
        terminate()
    }

    /// The libzmq version linked at run time, such as `4.3.4`.
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// Whether libzmq was built with a capability such as `curve`.
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }
}
