import Dispatch
import Synchronization

/// Runs async work from synchronous code (`main`, a worker's execution thread) on the cooperative pool
/// and waits for it on this thread. Never call it from a task: the calling thread must not be one of
/// the pool's (the main thread and the workers' own threads are not), or waiting here could block the
/// very work it waits for.
public func blockingAwait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    // Without a deadline the wait ends only with the work.
    blockingAwait(within: nil, work)!
}

/// As ``blockingAwait(_:)``, waiting at most `timeout`: nil when it passed first. The work is then
/// cancelled (which fails a client's requests at once) and given up to 5 s to wind down.
public func blockingAwait<T: Sendable>(within timeout: Milliseconds?, _ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error>? {
    let box = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let task = Task {
        do {
            let value = try await work()
            box.withLock { $0 = .success(value) }
        } catch {
            box.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    if let timeout {
        if done.wait(timeout: .now() + .milliseconds(Int(timeout.value))) == .timedOut {
            task.cancel()
            _ = done.wait(timeout: .now() + .seconds(5))
            return nil
        }
    } else {
        done.wait()
    }
    return box.withLock { $0 }
}
