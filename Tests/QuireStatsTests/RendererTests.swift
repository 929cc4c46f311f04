import Foundation
import QuireHTTP
import QuireMonitor
import QuireStats
import QuireSupport
import Testing

@Suite("Prometheus rendering")
struct PrometheusTests {
    let status = PrometheusRenderer.ExporterStatus(snapshotsReceived: 5, snapshotsMissed: 1, lastSnapshotAgeSeconds: 0.5, up: true)

    /// `name{labels} value` lines, parsed loosely.
    func samples(_ text: String) -> [(name: String, labels: String, value: String)] {
        text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let parts = line.split(separator: " ")
            let head = String(parts[0])
            let name = head.split(separator: "{").first.map(String.init) ?? head
            let labels = head.contains("{") ? String(head.drop { $0 != "{" }) : ""
            return (name, labels, String(parts.last ?? ""))
        }
    }

    @Test("counters, gauges and summaries with the snapshot's values")
    func values() {
        let text = PrometheusRenderer.render(sampleSnapshot(), exporter: status)
        #expect(text.contains("quire_requests_completed_total{service=\"echo\"} 100\n"))
        #expect(text.contains("# TYPE quire_requests_completed_total counter\n"))
        #expect(text.contains("quire_queue_depth{service=\"ocr\"} 7\n"))
        #expect(text.contains("quire_job_queue_depth{service=\"ocr\",priority=\"low\"} 4\n"))
        #expect(text.contains("quire_workers{service=\"echo\",state=\"busy\"} 1\n"))
        #expect(text.contains("quire_rejections_total{service=\"echo\",reason=\"too_large\"} 1\n"))
        #expect(text.contains("# TYPE quire_wait_seconds summary\n"))
        #expect(text.contains("quire_wait_seconds{service=\"echo\",quantile=\"0.99\"} 0.03\n"))
        #expect(text.contains("quire_wait_seconds_sum{service=\"echo\"} 1.5\n"))
        #expect(text.contains("quire_wait_seconds_count{service=\"echo\"} 100\n"))
        #expect(text.contains("quire_run_seconds{service=\"echo\",quantile=\"0.5\"} NaN\n"))
        #expect(text.contains("quire_worker_resident_memory_bytes{service=\"echo\"} 87000000\n"))
        #expect(text.contains("quire_jobs_dead_total{service=\"ocr\"} 1\n"))
        #expect(text.contains("quire_up 1\n"))
        #expect(text.hasSuffix("\n"))
    }

    @Test("every sample has a declared family, names follow the rules, and no label is unbounded")
    func shape() {
        let text = PrometheusRenderer.render(sampleSnapshot(workers: 30), exporter: status)
        var declared = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            declared.insert(String(line.split(separator: " ")[2]))
        }
        for sample in samples(text) {
            let family = ["_sum", "_count"].reduce(sample.name) { name, suffix in
                name.hasSuffix(suffix) && declared.contains(String(name.dropLast(suffix.count))) ? String(name.dropLast(suffix.count)) : name
            }
            #expect(declared.contains(family), "\(sample.name) has no TYPE")
            #expect(sample.name.hasPrefix("quire_"))
            #expect(sample.name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
            for label in ["id=", "worker=", "job="] { #expect(!sample.labels.contains(label)) }
            #expect(Double(sample.value) != nil || sample.value == "NaN")
        }
        for name in declared where text.contains("# TYPE \(name) counter") { #expect(name.hasSuffix("_total")) }
    }

    @Test("label values are escaped")
    func escaping() {
        let text = PrometheusRenderer.render(sampleSnapshot(services: ["we\"ird\\name\nx"]), exporter: status)
        #expect(text.contains(#"quire_queue_depth{service="we\"ird\\name\nx"} 7"#))
    }

    @Test("before the first snapshot: only the exporter's own metrics, quire_up 0")
    func noSnapshot() {
        let text = PrometheusRenderer.render(nil, exporter: .init(snapshotsReceived: 0, snapshotsMissed: 0, lastSnapshotAgeSeconds: nil, up: false))
        #expect(text.contains("quire_up 0\n"))
        #expect(!text.contains("quire_queue_depth"))
    }
}

@Suite("Terminal view")
struct TerminalViewTests {
    let now = Instant(nanoseconds: 5_000_000_000)

    @Test("waiting for the broker before the first snapshot")
    func waiting() {
        let view = TerminalView(endpoint: "tcp://127.0.0.1:5556")
        #expect(view.render(now: now).contains { $0.contains("waiting for the broker") })
    }

    @Test("fits 80 columns and the height, with long names and many workers", arguments: [(80, 24), (80, 12), (60, 40)])
    func fits(width: Int, height: Int) {
        var view = TerminalView(endpoint: "tcp://a-very-long-host-name.example.com:5556")
        view.receive(sampleSnapshot(services: ["echo", "a-service-with-a-very-long-name", "ocr"], workers: 50), now: now)
        let lines = view.render(width: width, height: height, now: now)
        #expect(lines.count <= height)
        for line in lines { #expect(line.count <= width, "\(line.count): \(line)") }
        #expect(lines.contains { $0.hasPrefix("echo ") })
        #expect(lines.contains { $0.hasPrefix("SERVICE") })
    }

    @Test("shows the services, the workers and the throughput between two snapshots")
    func content() throws {
        var view = TerminalView(endpoint: "e")
        view.receive(sampleSnapshot(sequence: 1, timeMs: 1_795_970_624_000, completed: 100), now: now)
        view.receive(sampleSnapshot(sequence: 2, timeMs: 1_795_970_626_000, completed: 150), now: now)
        let lines = view.render(width: 80, height: 40, now: now)
        let echo = try #require(lines.first { $0.hasPrefix("echo ") })
        // 50 more completed requests (and no more jobs) in 2 s.
        #expect(echo.contains(" 25.0 "))
        #expect(echo.contains(" 154 "))  // done: 150 requests + 4 jobs
        #expect(echo.contains("100µs"))
        #expect(lines.contains { $0.contains("WORKERS 2 connected, 1 busy") })
        #expect(lines.contains { $0.contains("00abc000") && $0.contains("busy") && $0.contains("87.0 MB") })
    }

    @Test("notices a gap in the sequence and a broker restart")
    func notices() {
        var view = TerminalView(endpoint: "e")
        view.receive(sampleSnapshot(sequence: 1), now: now)
        view.receive(sampleSnapshot(sequence: 4), now: now)
        #expect(view.missed == 2)
        #expect(view.render(now: now).contains { $0.contains("missed 2 snapshots") })
        view.receive(sampleSnapshot(sequence: 1, startedAtMs: 1_795_970_600_000), now: now)
        #expect(view.render(now: now).contains { $0.contains("broker restarted") })
        #expect(view.previous == nil)
    }

    @Test("notices a broker that went quiet")
    func stale() {
        var view = TerminalView(endpoint: "e")
        view.receive(sampleSnapshot(), now: now)
        #expect(view.render(now: now + Milliseconds(10_000)).contains { $0.contains("no snapshot for 10 s") })
    }
}

@Suite("Exporter HTTP")
struct HTTPTests {
    /// The exporter's routes on a real server (libmicrohttpd), as `quire exporter` serves them.
    func withExporter(_ body: (Int) async throws -> Void) async throws {
        let configuration = Exporter.serverConfiguration(listen: ListenAddress(host: "127.0.0.1", port: 0), requestTimeout: 10_000)
        let server = try HTTPServer(configuration: configuration, handler: Exporter.router { "quire_up 1\n" }.handler)
        defer { server.stop() }
        try await body(server.port)
    }

    /// Sends `text` on a fresh connection and returns everything until the server closes, waiting on a
    /// thread of its own (not one of the cooperative pool's two).
    func exchange(_ port: Int, _ text: [UInt8]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Self.exchangeNow(port, text) }) }.start()
        }
    }

    static func exchangeNow(_ port: Int, _ text: [UInt8]) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = text.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }

    func status(_ wire: String) -> Int? {
        wire.hasPrefix("HTTP/1.1 ") ? Int(wire.dropFirst(9).prefix(3)) : nil
    }

    @Test("request heads: complete, sloppy, malformed, too large")
    func parse() async throws {
        try await withExporter { port in
            let answer1 = try await exchange(port, Array("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(status(answer1) == 200)
            let answer2 = try await exchange(port, Array("GET /metrics?x=1 HTTP/1.0\n\n".utf8))
            #expect(status(answer2) == 200)
            for bad in ["GARBAGE\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2\r\n\r\n", "get /metrics HTTP/1.1\r\n\r\n"] {
                let answer3 = try await exchange(port, Array(bad.utf8))
                #expect(status(answer3) == 400, "\(bad)")
            }
            // libmicrohttpd reads the request line on whitespace boundaries, as RFC 9112 §3 allows
            // (the hand-written parser said 400 to a double space).
            let answer4 = try await exchange(port, Array("GET  /metrics HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
            #expect(status(answer4) == 200)
            // A head over 16 KiB (the hand-written server's limit too) is refused.
            let answer5 = try await exchange(port, Array("GET /\(String(repeating: "a", count: 16 * 1024)) HTTP/1.1\r\n\r\n".utf8))
            #expect(status(answer5) == 431)
        }
    }

    @Test("routing: GET /metrics 200, other paths 404, other methods 405")
    func routing() async throws {
        let router = Exporter.router { "quire_up 1\n" }
        let ok = router.respond(to: HTTPRequest(method: "GET", path: "/metrics"))
        #expect(ok.status == 200)
        #expect(ok.body == Array("quire_up 1\n".utf8))
        #expect(ok.headers.contains { $0.name == "Content-Type" && $0.value.hasPrefix("text/plain; version=0.0.4") })
        #expect(router.respond(to: HTTPRequest(method: "GET", path: "/nope")).status == 404)
        let post = router.respond(to: HTTPRequest(method: "POST", path: "/metrics"))
        #expect(post.status == 405)
        #expect(post.headers["Allow"] == "GET, HEAD")
        try await withExporter { port in
            let wire = try await exchange(port, Array("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
            #expect(wire.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(wire.contains("Content-Length: 11\r\n"))
            let head = try await exchange(port, Array("HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
            #expect(head.contains("Content-Length: 11\r\n"))
            #expect(!head.contains("quire_up"))
        }
    }

    @Test("listen addresses", arguments: [(":9464", nil as String?, 9464 as UInt16), ("127.0.0.1:0", "127.0.0.1", 0), ("[::1]:80", "::1", 80), ("*:1", nil, 1)])
    func listen(text: String, host: String?, port: UInt16) throws {
        let parsed = try #require(Exporter.parseListen(text))
        #expect(parsed.host == host)
        #expect(parsed.port == port)
    }

    @Test("bad listen addresses", arguments: ["9464", ":http", ":70000", ""])
    func badListen(text: String) {
        #expect(Exporter.parseListen(text) == nil)
    }
}
