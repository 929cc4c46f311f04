import QuireStats
import QuireSupport
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// The broker's stats PUB socket. Lives on the broker thread, like the ROUTER.
///
/// Publishing costs the broker one `DONTWAIT` send per interval (plus one per event): a subscriber
/// that cannot keep up loses messages at the PUB socket (a small send high-water mark), it never
/// slows the broker. A subscriber finds its way back with the next snapshot (totals, not deltas).
final class StatsPublisher {
    private let socket: Socket
    let endpoint: String
    private let interval: Milliseconds
    private var nextSnapshot: Instant
    private let pid = getpid()
    private let logger: Logger

    init(context: Context, bind: String, interval: Milliseconds, logger: Logger) throws(ZMQError) {
        let socket = try Socket(context: context, type: .pub)
        try socket.setSendHighWaterMark(64)
        try socket.bind(bind)
        self.socket = socket
        self.endpoint = try socket.lastEndpoint
        self.interval = interval
        self.nextSnapshot = Instant.now() + interval
        self.logger = logger
    }

    /// When the next snapshot is due (the loop's poll wakes up for it).
    var deadline: Instant { nextSnapshot }

    /// Publishes pending events, and a snapshot when one is due.
    func publishDue(_ state: inout BrokerState, now: Instant) {
        if !state.statistics.pendingEvents.isEmpty {
            for event in state.statistics.takeEvents(wallClockMs: StatsTime.nowUnixMilliseconds()) {
                send(StatsTopic.event, StatsJSON.encode(event))
            }
        }
        guard now >= nextSnapshot else { return }
        let snapshot = state.statisticsSnapshot(now: now, wallClockMs: StatsTime.nowUnixMilliseconds(), interval: interval, pid: pid)
        send(StatsTopic.snapshot, StatsJSON.encode(snapshot))
        // Keep the cadence, but never try to catch up on missed intervals.
        nextSnapshot = nextSnapshot + interval
        if nextSnapshot <= now { nextSnapshot = now + interval }
    }

    private func send(_ topic: String, _ body: [UInt8]) {
        do {
            _ = try socket.send([Array(topic.utf8), body], dontWait: true)
        } catch {
            logger.warning("stats publish failed", metadata: ["error": error.description])
        }
    }

    func close() { socket.close() }
}
