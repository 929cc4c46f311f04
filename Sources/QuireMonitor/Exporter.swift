import Foundation
import QuireHTTP
import QuireStats
import QuireSupport
import Synchronization
import ZeroMQ

/// `quire exporter`: subscribes to the broker's stats socket and serves the latest snapshot as
/// Prometheus metrics over HTTP. The HTTP side is libmicrohttpd (``HTTPServer``, two threads); this
/// type's own thread only polls the SUB socket. A client that sends nothing is dropped after
/// `requestTimeout`; nothing a client sends can stop the server.
public final class Exporter: Sendable {
    public let statsEndpoint: String
    private let curve: CurveClientSettings?
    public let listen: String
    public let requestTimeout: Milliseconds
    private let context: Context
    private let logger: Logger
    private let wakeup: Wakeup
    private let stopRequested = Atomic<Bool>(false)
    private let port = Atomic<Int>(0)
    private let scrape = Mutex(Scrape())

    /// The most connections open at once; more wait in the listen backlog until one closes.
    static let maxConnections = 64

    /// What the SUB loop learned, for the HTTP threads.
    struct Scrape: Sendable {
        var latest: StatsSnapshot?
        var lastArrival: Instant?
        var received = 0
        var missed = 0
    }

    public init(statsEndpoint: String, listen: String, context: Context, logger: Logger, requestTimeout: Milliseconds = 10_000,
                curve: CurveClientSettings? = nil) throws(ZMQError) {
        self.statsEndpoint = statsEndpoint
        self.curve = curve
        self.listen = listen
        self.context = context
        self.logger = logger
        self.requestTimeout = requestTimeout
        self.wakeup = try Wakeup()
    }

    /// The TCP port listened on, once ``run(onListening:)`` has bound it (0 before).
    public var boundPort: Int { port.load(ordering: .acquiring) }

    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// The HTTP side's settings: few threads (a scrape is cheap), no request bodies to speak of.
    public static func serverConfiguration(listen: ListenAddress, requestTimeout: Milliseconds) -> HTTPServerConfiguration {
        // Silence is cut off by the request timeout first (with 408); the idle timeout is for clients
        // that stop reading a response.
        let seconds = max(1, Int((requestTimeout.value + 999) / 1000))
        return HTTPServerConfiguration(listen: listen, threads: 2, maxConnections: maxConnections, idleTimeoutSeconds: 2 * seconds,
                                       requestTimeout: .milliseconds(requestTimeout.value), maxHeaderBytes: 16 * 1024,
                                       maxBodyBytes: 16 * 1024, connectionMemoryBytes: 64 * 1024)
    }

    /// The exporter's routes: `GET`/`HEAD /metrics` → `metrics()`, `/` → a pointer to it, else 404/405.
    public static func router(metrics: @escaping @Sendable () -> String) -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/metrics") { _, _ in
            HTTPResponse(status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: Array(metrics().utf8))
        }
        router.get("/") { _, _ in .text(200, "quire exporter: metrics at /metrics") }
        router.notFound = { _ in .text(404, "not found; metrics are at /metrics") }
        router.methodNotAllowed = { _, _ in .text(405, "only GET and HEAD", headers: ["Allow": "GET, HEAD"]) }
        return router
    }

    /// Serves until ``stop()``.
    public func run(onListening: (Int) -> Void = { _ in }) throws {
        guard let address = ListenAddress(listen) else {
            throw HTTPServerError(.invalidAddress, "expected [HOST]:PORT such as :9464", address: listen)
        }
        let logger = self.logger
        let server = try HTTPServer(configuration: Self.serverConfiguration(listen: address, requestTimeout: requestTimeout),
                                    log: { logger.debug("http", metadata: ["detail": $0]) },
                                    handler: Self.router(metrics: { Self.metrics(self.scrape.withLock { $0 }) }).handler)
        defer { server.stop() }
        port.store(server.port, ordering: .releasing)
        let subscriber = try StatsSubscriber(context: context, endpoint: statsEndpoint, events: false, curve: curve)
        defer { subscriber.close() }
        logger.notice("exporter listening", metadata: ["listen": listen, "port": String(server.port), "stats": statsEndpoint])
        onListening(server.port)

        while !stopRequested.load(ordering: .acquiring) {
            let ready = try Poller([.socket(subscriber.socket, .readable), .descriptor(wakeup.descriptor, .readable)])
                .poll(timeoutMilliseconds: 1_000)
            if ready[1].contains(.readable) { wakeup.drain() }
            guard ready[0].contains(.readable) else { continue }
            while let message = try subscriber.receive() {
                switch message {
                case .snapshot(let snapshot, _):
                    scrape.withLock { state in
                        if let last = state.latest, last.broker.startedAtMs == snapshot.broker.startedAtMs, snapshot.sequence > last.sequence + 1 {
                            state.missed += Int(snapshot.sequence - last.sequence - 1)
                        }
                        state.latest = snapshot
                        state.lastArrival = Instant.now()
                        state.received += 1
                    }
                case .event:
                    break
                case .invalid(let topic, let reason):
                    logger.warning("stats message ignored", metadata: ["topic": topic, "reason": reason])
                }
            }
        }
        logger.notice("exporter stopped")
    }

    static func metrics(_ state: Scrape) -> String {
        let now = Instant.now()
        let age = state.lastArrival.map { now.seconds(since: $0) }
        let interval = Double(state.latest?.intervalMs ?? 1_000) / 1000
        let up = age.map { $0 <= max(3 * interval, 3) } ?? false
        return PrometheusRenderer.render(state.latest, exporter: .init(snapshotsReceived: state.received, snapshotsMissed: state.missed,
                                                                        lastSnapshotAgeSeconds: age, up: up))
    }

    /// Parses `:9464`, `0.0.0.0:9464`, `127.0.0.1:0`, `[::1]:9464`, `localhost:9464`.
    public static func parseListen(_ text: String) -> (host: String?, port: UInt16)? {
        ListenAddress(text).map { ($0.host, $0.port) }
    }
}
