import Dispatch
import Synchronization

/// Runs async work from synchronous code (`main`, a worker's execution thread) on the cooperative pool
/// and waits for it on this thread. Never call it from a task: the calling thread must not be one of
/// the pool's (the main thread and the workers' own threads are not), or waiting here could block the
/// very work it waits for.
public func blockingAwait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await work()
            box.withLock { $0 = .success(value) }
        } catch {
            box.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return box.withLock { $0! }
}
