import Foundation
import QuireStats
import QuireSupport
import Synchronization
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// An error of the exporter's listening socket, with the errno it failed with.
public struct ExporterError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var errno: Int32
    public var context: String
    public var description: String { "\(operation) \(context): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// `quire exporter`: subscribes to the broker's stats socket and serves the latest snapshot as
/// Prometheus metrics over HTTP/1.1, on one thread: a poll over the SUB socket, the listening socket
/// and the open connections. One request per connection; a client that sends nothing is dropped
/// after `requestTimeout`; nothing a client sends can stop the server.
public final class Exporter: Sendable {
    public let statsEndpoint: String
    public let listen: String
    public let requestTimeout: Milliseconds
    private let context: Context
    private let logger: Logger
    private let wakeup: Wakeup
    private let stopRequested = Atomic<Bool>(false)
    private let port = Atomic<Int>(0)

    /// The most connections open at once; more are accepted and closed at once.
    static let maxConnections = 64

    public init(statsEndpoint: String, listen: String, context: Context, logger: Logger, requestTimeout: Milliseconds = 10_000) throws(ZMQError) {
        self.statsEndpoint = statsEndpoint
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

    struct Connection {
        let fd: Int32
        var input: [UInt8] = []
        var output: [UInt8] = []
        var written = 0
        let deadline: Instant
    }

    /// Serves until ``stop()``.
    public func run(onListening: (Int) -> Void = { _ in }) throws {
        let listener = try Self.listenSocket(listen)
        defer { close(listener.fd) }
        port.store(listener.port, ordering: .releasing)
        let subscriber = try StatsSubscriber(context: context, endpoint: statsEndpoint, events: false)
        defer { subscriber.close() }
        logger.notice("exporter listening", metadata: ["listen": listen, "port": String(listener.port), "stats": statsEndpoint])
        onListening(listener.port)

        var latest: StatsSnapshot?
        var lastArrival: Instant?
        var received = 0
        var missed = 0
        var connections: [Connection] = []

        func metrics() -> String {
            let now = Instant.now()
            let age = lastArrival.map { now.seconds(since: $0) }
            let interval = Double(latest?.intervalMs ?? 1_000) / 1000
            let up = age.map { $0 <= max(3 * interval, 3) } ?? false
            return PrometheusRenderer.render(latest, exporter: .init(snapshotsReceived: received, snapshotsMissed: missed,
                                                                      lastSnapshotAgeSeconds: age, up: up))
        }

        while !stopRequested.load(ordering: .acquiring) {
            var items: [Poller.Item] = [.socket(subscriber.socket, .readable), .descriptor(listener.fd, .readable), .descriptor(wakeup.descriptor, .readable)]
            for c in connections { items.append(.descriptor(c.fd, c.output.isEmpty ? .readable : .writable)) }
            let now = Instant.now()
            let nearest = connections.map(\.deadline).min()
            let timeout = nearest.map { Int(now.milliseconds(until: $0)) } ?? 1_000
            let ready = try Poller(items).poll(timeoutMilliseconds: timeout)

            if ready[2].contains(.readable) { wakeup.drain() }
            if ready[0].contains(.readable) {
                while let message = try subscriber.receive() {
                    switch message {
                    case .snapshot(let snapshot, _):
                        if let last = latest, last.broker.startedAtMs == snapshot.broker.startedAtMs, snapshot.sequence > last.sequence + 1 {
                            missed += Int(snapshot.sequence - last.sequence - 1)
                        }
                        latest = snapshot
                        lastArrival = Instant.now()
                        received += 1
                    case .event:
                        break
                    case .invalid(let topic, let reason):
                        logger.warning("stats message ignored", metadata: ["topic": topic, "reason": reason])
                    }
                }
            }
            // Connections accepted now were not polled: they get their turn at the next poll.
            let polled = connections.count
            if ready[1].contains(.readable) {
                acceptAll(listener.fd, into: &connections)
            }
            // Connections: read, answer, write; close when done, broken or late.
            var index = 0
            var kept: [Connection] = []
            for var c in connections {
                let events = index < polled ? ready[3 + index] : []
                index += 1
                var open = true
                if c.output.isEmpty, !events.isEmpty {
                    open = readRequest(&c, metrics: metrics)
                }
                if open, !c.output.isEmpty {
                    open = writeResponse(&c)
                }
                if open, Instant.now() >= c.deadline {
                    open = false
                }
                if open { kept.append(c) } else { close(c.fd) }
            }
            connections = kept
        }
        for c in connections { close(c.fd) }
        logger.notice("exporter stopped")
    }

    private func acceptAll(_ fd: Int32, into connections: inout [Connection]) {
        while true {
            let client = accept(fd, nil, nil)
            if client >= 0 {
                _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            }
            if client < 0 {
                let e = errno
                if e == EINTR || e == ECONNABORTED { continue }
                if e != EAGAIN && e != EWOULDBLOCK { logger.warning("accept failed", metadata: ["errno": String(e)]) }
                return
            }
            if connections.count >= Self.maxConnections {
                var c = Connection(fd: client, deadline: Instant.now() + Milliseconds(1_000))
                c.output = HTTP.Response.text(503, "Service Unavailable", "too many connections").serialized()
                _ = writeResponse(&c)
                close(client)
                continue
            }
            connections.append(Connection(fd: client, deadline: Instant.now() + requestTimeout))
        }
    }

    /// Reads what is there; prepares the response once the head is complete. `false`: close it.
    private func readRequest(_ c: inout Connection, metrics: () -> String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                c.input += buffer[0..<n]
                switch HTTP.parseHead(c.input) {
                case .incomplete:
                    continue
                case .invalid(let response):
                    c.output = response.serialized()
                    return true
                case .request(let method, let path):
                    c.output = HTTP.respond(method: method, path: path, metrics: metrics).serialized(includeBody: method != "HEAD")
                    return true
                }
            }
            if n == 0 { return false }  // the client closed before a full request
            let e = errno
            if e == EINTR { continue }
            return e == EAGAIN || e == EWOULDBLOCK
        }
    }

    /// Writes what the socket takes. `false`: done or broken, close it.
    private func writeResponse(_ c: inout Connection) -> Bool {
        while c.written < c.output.count {
            let written = c.written
            let n = c.output.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                return send(c.fd, base + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { c.written += n; continue }
            let e = errno
            if n < 0 && e == EINTR { continue }
            if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) { return true }
            return false
        }
        // Everything is out: say we are done sending; the kernel delivers the rest.
        shutdown(c.fd, Int32(SHUT_WR))
        return false
    }

    /// Parses `:9464`, `0.0.0.0:9464`, `127.0.0.1:0`, `[::1]:9464`, `localhost:9464`.
    public static func parseListen(_ text: String) -> (host: String?, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty || host == "*" ? nil : host, port)
    }

    static func listenSocket(_ listen: String) throws -> (fd: Int32, port: Int) {
        guard let (host, port) = parseListen(listen) else {
            throw ExporterError(operation: "parse", errno: EINVAL, context: "'\(listen)': expected [HOST]:PORT such as :9464")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw ExporterError(operation: "getaddrinfo", errno: EINVAL, context: "'\(listen)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var lastErrno: Int32 = EADDRNOTAVAIL
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        // Prefer IPv4 for a wildcard host, so ':9464' answers on 127.0.0.1 everywhere.
        var ordered: [UnsafeMutablePointer<addrinfo>] = []
        while let info = candidate { ordered.append(info); candidate = info.pointee.ai_next }
        ordered.sort { ($0.pointee.ai_family == AF_INET ? 0 : 1) < ($1.pointee.ai_family == AF_INET ? 0 : 1) }
        for info in ordered {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            if fd < 0 { lastErrno = errno; continue }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            if bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, Glibc.listen(fd, 64) == 0 {
                var address = sockaddr_storage()
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let bound = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                } == 0 ? Self.port(of: address) : Int(port)
                return (fd, bound)
            }
            lastErrno = errno
            close(fd)
        }
        throw ExporterError(operation: "bind", errno: lastErrno, context: "'\(listen)'")
    }

    static func port(of address: sockaddr_storage) -> Int {
        var copy = address
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default:
            return 0
        }
    }
}
