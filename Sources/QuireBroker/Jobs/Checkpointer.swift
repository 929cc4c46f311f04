import Foundation
import QuireSupport
import Synchronization

/// Moves the job store's WAL into the database on its own thread and connection, so that the broker's
/// loop never stalls on a checkpoint's writes and fsyncs.
///
/// A PASSIVE checkpoint copies what the WAL holds without blocking the writer. Under a steady stream of
/// commits it never quite catches up, and the WAL only restarts from its beginning after a complete
/// checkpoint: past ``restartBytes`` the checkpointer asks for a RESTART checkpoint, which holds new
/// commits back only while it copies the little the PASSIVE ones left. The broker's own connection
/// keeps a large automatic-checkpoint threshold only as a safety net.
final class Checkpointer: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let wake = DispatchSemaphore(value: 0)

    init(path: String, interval: Milliseconds, restartBytes: Int = 64 << 20, logger: Logger) {
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
                    var info = stat()
                    if stat(path + "-wal", &info) == 0, Int(info.st_size) > restartBytes {
                        try database.execute("PRAGMA wal_checkpoint(RESTART)")
                    }
                    failures = 0
                } catch {
                    failures += 1
                    if failures == 1 || failures % 100 == 0 {
                        logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)", "failures": String(failures)])
                    }
                }
            }
        }
        thread.name = "quire-checkpnt"  // at most 15 bytes: Linux refuses longer thread names
        thread.start()
    }

    /// Stops the thread, waiting up to `timeout` for a checkpoint in progress.
    func stop(timeout: Milliseconds = 5_000) {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
        _ = done.wait(timeout: .now() + .milliseconds(Int(timeout.value)))
    }
}
