import Dispatch
import Foundation
import QuireSupport
import Synchronization

/// A blocking loop (a broker, a worker) on a dedicated thread, never on the cooperative pool, that can
/// be joined with a deadline.
public final class LoopThread: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<(any Error)?>(nil)
    private let finished = Atomic<Bool>(false)

    /// Starts `body` on a new thread named `name`.
    public init(name: String, _ body: @escaping @Sendable () throws -> Void) {
        let thread = Thread { [self] in
            // Set once running: only then does Foundation pass the name on to the kernel, where
            // profilers and top read it.
            Thread.current.name = name
            do {
                try body()
            } catch {
                failure.withLock { $0 = error }
            }
            finished.store(true, ordering: .releasing)
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits up to `timeout` for the thread to end; `true` when it has.
    public func join(timeout: Milliseconds) -> Bool {
        if finished.load(ordering: .acquiring) { return true }
        guard done.wait(timeout: .now() + .milliseconds(Int(timeout.value))) == .success else { return false }
        done.signal()  // so that a later join returns at once
        return true
    }

    /// Waits for the thread to end, however long it takes.
    public func join() {
        if finished.load(ordering: .acquiring) { return }
        done.wait()
        done.signal()
    }

    public var hasFinished: Bool { finished.load(ordering: .acquiring) }

    /// What the body threw, once it has ended.
    public var error: (any Error)? { failure.withLock { $0 } }
}
