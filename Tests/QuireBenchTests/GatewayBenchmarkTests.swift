import QuireSupport
import Testing
@testable import QuireBench

@Suite("Gateway benchmark")
struct GatewayBenchmarkTests {
    @Test("a short run measures the three paths side by side, every answer checked")
    func shortRun() throws {
        var options = GatewayBenchOptions()
        options.requests = 40
        options.connections = 4
        options.latencyRequests = 10
        options.warmupRequests = 2
        options.imageBytes = 2_000
        let report = try GatewayBenchmark(options: options, logger: Logger(label: "test.bench", level: .error)).run()
        #expect(report.paths.map(\.name) == ["direct", "Cloud Vision", "Image Analysis"])
        #expect(report.paths.allSatisfy { $0.requestsPerSecond > 0 && $0.p50Microseconds > 0 && $0.p50Microseconds <= $0.p99Microseconds })
        #expect(report.resultBytes > 10_000)
        let table = report.markdown()
        #expect(table.contains("| added by the gateway, Cloud Vision |"))
        #expect(table.contains("Machine: "))
    }
}
