import Foundation
import QuireSupport
import Synchronization

/// Hears what other brokers of a shared store commit (`LISTEN quire_jobs`), on a connection and a
/// thread of its own: work queued for a service wakes the brokers whose workers are idle at once,
/// and a finished job answers the readers another broker holds for it. Notifications are a shortcut:
/// while this connection is down (it reconnects by itself, backing off up to 10 s), the brokers' poll
/// (``JobConfiguration/storePoll``) finds the same work, later.
final class StoreListener: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// Listens on the store `connectionString` names, for the schema `schema`; `deliver` is called on
    /// the listener's thread with the services that have new work and the jobs finished.
    init(connectionString: String, schema: String, logger: Logger, deliver: @escaping @Sendable (_ work: Set<String>, _ done: Set<String>) -> Void) {
        let thread = Thread { [self] in
            defer { done.signal() }
            var backoff = 250.0
            var connection: PostgresConnection?
            while !stopRequested.load(ordering: .acquiring) {
                do {
                    if connection == nil {
                        let opened = try PostgresConnection(connectionString, applicationName: "quire broker (listen)")
                        try opened.execute("LISTEN \(PostgresJobStore.channel)")
                        connection = opened
                        backoff = 250
                    }
                    guard let connection else { continue }
                    var work: Set<String> = []
                    var finished: Set<String> = []
                    for notice in try connection.notifications(timeout: 250) where notice.channel == PostgresJobStore.channel {
                        let parts = notice.payload.split(separator: " ", maxSplits: 2).map(String.init)
                        guard parts.count == 3, parts[0] == schema else { continue }
                        if parts[1] == "work" { work.insert(parts[2]) } else if parts[1] == "done" { finished.insert(parts[2]) }
                    }
                    if !work.isEmpty || !finished.isEmpty { deliver(work, finished) }
                } catch {
                    if connection != nil {
                        logger.warning("lost the job store's notifications; polling until they are back", metadata: ["error": "\(error)"])
                    }
                    connection = nil
                    var slept = 0.0
                    while slept < backoff, !stopRequested.load(ordering: .acquiring) {
                        Thread.sleep(forTimeInterval: 0.05)
                        slept += 50
                    }
                    backoff = min(backoff * 2, 10_000)
                }
            }
        }
        thread.name = "quire-store-lsn"  // at most 15 bytes: Linux refuses longer thread names
        thread.start()
    }

    /// Stops listening (within a quarter second).
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        done.wait()
    }
}
