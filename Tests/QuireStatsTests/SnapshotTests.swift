import Foundation
import QuireStats
import QuireSupport
import QuireWire
import Testing

func sampleSnapshot(sequence: UInt64 = 7, startedAtMs: Int64 = 1_795_970_000_000, timeMs: Int64 = 1_795_970_624_953,
                    completed: Int = 100, services: [String] = ["echo", "ocr"], workers: Int = 2) -> StatsSnapshot {
    let serviceStats = services.map { name in
        ServiceStats(name: name, queue: .init(requests: 2, jobs: PriorityDepth(high: 1, normal: 0, low: 4)),
                     workers: .init(idle: 1, busy: 1),
                     requests: .init(submitted: completed + 2, completed: completed, failed: 3, retried: 1, expired: 0),
                     jobs: .init(submitted: 5, completed: 4, failed: 0, retried: 0, dead: 1, expired: 0),
                     rejections: Rejections(busy: 2, tooLarge: 1, auth: 0, malformed: 1),
                     waitSeconds: LatencySummary(p50: 0.0001, p90: 0.002, p99: 0.03, max: 0.05, windowCount: 10, count: 100, sum: 1.5),
                     runSeconds: LatencySummary(), bytesIn: 1234, bytesOut: 5678)
    }
    let workerStats = (0..<workers).map { n in
        WorkerStats(id: "00" + String(format: "%08x", n + 0xabc000), service: services.first ?? "echo", state: n == 0 ? "busy" : "idle",
                    dialect: "mdp02", jobsDone: 10 * n, connectedSeconds: 100, lastHeartbeatSecondsAgo: 0.4,
                    report: n == 0 ? WorkerReport(jobsDone: 9, engineSeconds: 12.5, rssBytes: 87_000_000, pid: 123) : nil)
    }
    return StatsSnapshot(sequence: sequence, timeMs: timeMs, intervalMs: 1_000, windowSeconds: 60,
                         broker: .init(startedAtMs: startedAtMs, uptimeSeconds: Double(timeMs - startedAtMs) / 1000, pid: 4242),
                         totals: .init(requestsReceived: 200, repliesSent: 190, bytesIn: 10_000, bytesOut: 20_000, malformedMessages: 1,
                                       workersJoined: 3, workersLost: 1, rejections: Rejections(busy: 4)),
                         services: serviceStats, workers: workerStats)
}

@Suite("Snapshot encoding")
struct SnapshotTests {
    @Test("a snapshot survives a JSON round trip")
    func roundTrip() throws {
        let snapshot = sampleSnapshot()
        let decoded = try JSONDecoder().decode(StatsSnapshot.self, from: Data(StatsJSON.encode(snapshot)))
        #expect(decoded == snapshot)
    }

    @Test("missing percentiles and reports are encoded as null, not left out")
    func nulls() throws {
        let json = String(decoding: StatsJSON.encode(sampleSnapshot()), as: UTF8.self)
        #expect(json.contains(#""runSeconds":{"count":0,"max":null,"p50":null,"p90":null,"p99":null,"sum":0,"windowCount":0}"#))
        #expect(json.contains(#""report":null"#))
        #expect(!json.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["version", "sequence", "timeMs", "time", "intervalMs", "windowSeconds", "broker", "totals", "services", "workers"])
    }

    @Test("times are RFC 3339 UTC with milliseconds, as Foundation formats them", arguments: [Int64(0), 951_782_400_000, 1_795_970_624_953, 4_102_444_799_999, -1])
    func rfc3339(ms: Int64) {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let expected = formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
        #expect(StatsTime.rfc3339(unixMilliseconds: ms) == expected)
    }

    @Test("worker reports: a frame round-trips; junk and negative figures are not reports")
    func workerReport() {
        let report = WorkerReport(jobsDone: 3, engineSeconds: 0.25, rssBytes: 1 << 20, pid: 7)
        #expect(WorkerReport(jsonFrame: report.jsonFrame) == report)
        #expect(WorkerReport(jsonFrame: Array("hello".utf8)) == nil)
        #expect(WorkerReport(jsonFrame: Array(#"{"jobsDone":-1,"engineSeconds":0,"rssBytes":0,"pid":1}"#.utf8)) == nil)
        #expect(WorkerReport(jsonFrame: []) == nil)
    }

    @Test("statm: the second field in pages")
    func statm() {
        #expect(ProcessMemory.residentBytes(statm: "12345 678 90 1 0 2 0\n", pageSize: 4096) == 678 * 4096)
        #expect(ProcessMemory.residentBytes(statm: "garbage", pageSize: 4096) == nil)
        let own = ProcessMemory.residentBytes() ?? 0
        #expect(own > 1_000_000)
    }

    @Test("malloc arenas: one per engine thread and at least two, unless MALLOC_ARENA_MAX says")
    func arenas() {
        #expect(ProcessMemory.arenaLimit(engineThreads: 1, environment: [:]) == 2)
        #expect(ProcessMemory.arenaLimit(engineThreads: 6, environment: ["PATH": "/bin"]) == 6)
        #expect(ProcessMemory.arenaLimit(engineThreads: 6, environment: ["MALLOC_ARENA_MAX": "1"]) == nil)
        // glibc takes the setting (64 for the test process: more arenas than it makes anyway); jemalloc,
        // which the quire binary links (and so this one), keeps its own arenas.
        #expect(ProcessMemory.limitArenas(64) == !ProcessMemory.runsOnJemalloc)
    }
}
