import Foundation
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
    func head(_ s: String) -> HTTP.Head { HTTP.parseHead(Array(s.utf8)) }

    @Test("request heads: complete, incomplete, malformed, too large")
    func parse() {
        #expect(head("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") == .request(method: "GET", path: "/metrics"))
        #expect(head("GET /metrics?x=1 HTTP/1.0\n\n") == .request(method: "GET", path: "/metrics"))
        #expect(head("GET /metrics HTTP/1.1\r\nHost: x\r\n") == .incomplete)
        #expect(head("") == .incomplete)
        for bad in ["GARBAGE\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2\r\n\r\n", "get /metrics HTTP/1.1\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n"] {
            guard case .invalid(let response) = head(bad) else { Issue.record("accepted \(bad)"); continue }
            #expect(response.status == 400)
        }
        guard case .invalid(let large) = HTTP.parseHead([UInt8](repeating: UInt8(ascii: "a"), count: HTTP.maxHeadBytes)) else {
            Issue.record("a huge head was not refused"); return
        }
        #expect(large.status == 431)
    }

    @Test("routing: GET /metrics 200, other paths 404, other methods 405")
    func routing() {
        let ok = HTTP.respond(method: "GET", path: "/metrics") { "quire_up 1\n" }
        #expect(ok.status == 200)
        #expect(ok.body == Array("quire_up 1\n".utf8))
        #expect(ok.headers.contains { $0.0 == "Content-Type" && $0.1.hasPrefix("text/plain; version=0.0.4") })
        #expect(HTTP.respond(method: "GET", path: "/nope") { "" }.status == 404)
        #expect(HTTP.respond(method: "POST", path: "/metrics") { "" }.status == 405)
        let wire = String(decoding: ok.serialized(), as: UTF8.self)
        #expect(wire.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(wire.contains("Content-Length: 11\r\n"))
        #expect(!String(decoding: ok.serialized(includeBody: false), as: UTF8.self).contains("quire_up"))
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
