import Dispatch
import Foundation
import Synchronization
import Testing
import ZeroMQ

/// A fresh `inproc://` name, so tests running in parallel never share an endpoint.
func uniqueInprocEndpoint() -> String {
    "inproc://zmq-tests-\(UUID().uuidString)"
}

/// The transports the wrapper is exercised over.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inproc, tcp
    var testDescription: String { rawValue }
}

/// Binds `socket` on a fresh endpoint of `transport` and returns the endpoint peers connect to.
func bindFresh(_ socket: Socket, _ transport: Transport) throws -> String {
    switch transport {
    case .inproc:
        let endpoint = uniqueInprocEndpoint()
        try socket.bind(endpoint)
        return endpoint
    case .tcp:
        try socket.bind("tcp://127.0.0.1:*")
        return try socket.lastEndpoint
    }
}

extension Socket {
    /// Receives with a receive timeout, so that a missing message fails a test instead of hanging it.
    func receive(timeoutMilliseconds: Int32) throws -> [Frame]? {
        try setReceiveTimeout(milliseconds: timeoutMilliseconds)
        return try receive()
    }
}

/// A value shared between a test and a thread it started.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}

/// Runs `body` on a new thread; the returned semaphore is signalled once `body` has returned.
/// Tests join with `wait(timeout:)`, never unbounded.
func startThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        finished.signal()
    }
    thread.start()
    return finished
}

/// Waits for `semaphore` at most `seconds`.
func joined(_ semaphore: DispatchSemaphore, within seconds: Double = 5) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}


/// libzmq's `ETERM` (`ZMQ_HAUSNUMERO + 53`); the test target does not import the C module.
let zmqETERM: Int32 = 156_384_712 + 53
