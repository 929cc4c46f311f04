import Foundation
import QuireSupport
import Synchronization

/// Moves the job store's WAL into the database on its own thread and connection, so that the broker's
/// loop never stalls on a checkpoint's writes and fsyncs.
///
/// A PASSIVE checkpoint copies what the WAL holds without blocking the writer; once it has caught up,
/// the writer starts the WAL from the beginning again, which keeps the file small. The broker's own
/// connection keeps a large automatic-checkpoint threshold only as a safety net.
final class Checkpointer: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let wake = DispatchSemaphore(value: 0)

    init(path: String, interval: Milliseconds, logger: Logger) {
        let thread = Thread { [self] in
            defer { done.signal() }
            let database: SQLiteDatabase
            do {
                database = try SQLiteDatabase(path: path)
            } catch {
                logger.error("the WAL checkpointer cannot open the job store", metadata: ["error": "\(error)"])
                return
            }
            var failures = 0
            while !stopRequested.load(ordering: .acquiring) {
                _ = wake.wait(timeout: .now() + .milliseconds(Int(interval.value)))
                do {
                    try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    failures = 0
                } catch {
                    failures += 1
                    if failures == 1 || failures % 100 == 0 {
                        logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)", "failures": String(failures)])
                    }
                }
            }
        }
        thread.name = "quire-checkpoint"
        thread.start()
    }

    /// Stops the thread, waiting up to `timeout` for a checkpoint in progress.
    func stop(timeout: Milliseconds = 5_000) {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
        _ = done.wait(timeout: .now() + .milliseconds(Int(timeout.value)))
    }
}
