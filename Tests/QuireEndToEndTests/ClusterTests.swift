import Foundation
import Synchronization
import QuireClient
import QuireSupport
import QuireWire
import Testing

/// Broker and workers as real processes over TCP, as they run in production.
@Suite("End to end: broker and workers as processes", .serialized)
struct ClusterTests {
    /// Short heartbeats so that death is noticed in well under a second.
    static let heartbeat = ["--heartbeat-interval-ms", "200", "--heartbeat-liveness", "5"]

    func startBroker(bind: String = "tcp://127.0.0.1:*", extra: [String] = []) async throws -> (QuireProcess, String) {
        let broker = try QuireProcess("broker", ["broker", "--bind", bind] + Self.heartbeat + extra)
        let endpoint = try #require(await broker.boundEndpoint(), "broker did not bind: \(broker.log)")
        return (broker, endpoint)
    }

    func startWorker(_ endpoint: String, _ name: String, extra: [String] = []) throws -> QuireProcess {
        try QuireProcess(name, ["worker", "echo", "--broker", endpoint, "--log-level", "debug"] + Self.heartbeat + extra)
    }

    /// Waits until `count` workers of `service` are registered, asking MMI.
    func waitForWorkers(_ client: QuireClient, service: String = "echo", broker: QuireProcess, count: Int) async throws {
        let deadline = Date().addingTimeInterval(15)
        // Asked once more after the deadline: a starved task may wake up only after it.
        while true {
            if broker.log.components(separatedBy: "\"worker ready\"").count - 1 >= count {
                let reply = try await client.request(service: "mmi.service", body: [Array(service.utf8)])
                if reply == [Array("200".utf8)] { return }
            }
            if Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("workers did not register: \(broker.log)")
    }

    @Test("three workers serve many requests in flight; each gets its own body back")
    func manyInFlight() async throws {
        let (broker, endpoint) = try await startBroker()
        defer { withExtendedLifetime(broker) {} }
        let workers = try (1...3).map { try startWorker(endpoint, "w\($0)") }
        defer { withExtendedLifetime(workers) {} }
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 10_000, maxInFlight: 32)) { client in
            try await waitForWorkers(client, broker: broker, count: 3)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<300 {
                    group.addTask {
                        let body = [Array("request \(i)".utf8), [UInt8(i % 256), 0, 255]]
                        let reply = try await client.request(service: "echo", body: body)
                        #expect(reply == body)
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test("a worker killed with SIGKILL while it holds a request: the client still gets the reply from another")
    func workerKilledMidRequest() async throws {
        let (broker, endpoint) = try await startBroker()
        defer { withExtendedLifetime(broker) {} }
        let workers = try (1...3).map { try startWorker(endpoint, "w\($0)", extra: ["--delay-ms", "1500"]) }
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 20_000, retries: 0)) { client in
            try await waitForWorkers(client, broker: broker, count: 3)
            let partials = Counter()
            async let reply = client.request(service: "echo", body: [Array("survive".utf8)]) { _ in partials.increment() }
            // Find the worker holding the request and kill it.
            var holder: QuireProcess?
            let deadline = Date().addingTimeInterval(10)
            while holder == nil && Date() < deadline {
                holder = workers.first { $0.log.contains("request received") }
                try await Task.sleep(for: .milliseconds(10))
            }
            let victim = try #require(holder, "no worker took the request")
            victim.signal(SIGKILL)
            #expect(try await reply == [Array("survive".utf8)])
            // The PARTIAL from the first worker and from the one that finished it.
            #expect(partials.value >= 1)
            #expect(await broker.waitForLog("requeued a request its worker lost"))
            let served = workers.filter { $0 !== victim && $0.log.contains("request received") }
            #expect(served.count == 1)
        }
    }

    @Test("the broker killed and restarted: workers re-register by themselves and requests flow again")
    func brokerRestart() async throws {
        let (broker, endpoint) = try await startBroker()
        defer { withExtendedLifetime(broker) {} }
        let workers = try (1...3).map { try startWorker(endpoint, "w\($0)") }
        defer { withExtendedLifetime(workers) {} }
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 3_000, retries: 0)) { client in
            try await waitForWorkers(client, broker: broker, count: 3)
            #expect(try await client.request(service: "echo", body: [Array("before".utf8)]) == [Array("before".utf8)])
        }
        broker.signal(SIGKILL)
        _ = await broker.waitForExit(seconds: 5)
        // Same port: workers know only this endpoint.
        let (second, again) = try await startBroker(bind: endpoint)
        defer { withExtendedLifetime(second) {} }
        #expect(again == endpoint)
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 3_000, retries: 0)) { client in
            try await waitForWorkers(client, broker: second, count: 3)
            for i in 0..<20 {
                let body = [Array("after \(i)".utf8)]
                #expect(try await client.request(service: "echo", body: body) == body)
            }
        }
        for worker in workers { #expect(worker.process.isRunning) }
        #expect(workers.allSatisfy { $0.log.contains("reconnecting to the broker") })
    }

    @Test("SIGTERM drains a worker: the request in hand is answered, then it exits 0")
    func drainOnSigterm() async throws {
        let (broker, endpoint) = try await startBroker()
        defer { withExtendedLifetime(broker) {} }
        let worker = try startWorker(endpoint, "w1", extra: ["--delay-ms", "800"])
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 10_000, retries: 0)) { client in
            try await waitForWorkers(client, broker: broker, count: 1)
            async let reply = client.request(service: "echo", body: [Array("finish me".utf8)])
            #expect(await worker.waitForLog("request received"))
            worker.signal(SIGTERM)
            #expect(try await reply == [Array("finish me".utf8)])
            #expect(await worker.waitForExit(seconds: 10) == 0)
            #expect(await broker.waitForLog("worker disconnected"))
        }
    }

    @Test("SIGTERM stops the broker cleanly, answering queued clients with shutting_down")
    func brokerStops() async throws {
        let (broker, endpoint) = try await startBroker()
        defer { withExtendedLifetime(broker) {} }
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 10_000, retries: 0)) { client in
            async let reply = client.request(service: "nobody-serves-this", body: [Array("x".utf8)])
            try await Task.sleep(for: .milliseconds(300))
            broker.signal(SIGTERM)
            do {
                _ = try await reply
                Issue.record("expected an error")
            } catch let error as ClientError {
                #expect(error.remote?.code == .shuttingDown)
            }
        }
        #expect(await broker.waitForExit(seconds: 5) == 0)
    }

    @Test("a request for a service nobody serves expires with service_unavailable")
    func serviceUnavailable() async throws {
        let (broker, endpoint) = try await startBroker(extra: ["--request-timeout-ms", "300"])
        defer { withExtendedLifetime(broker) {} }
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 5_000, retries: 0)) { client in
            do {
                _ = try await client.request(service: "ocr", body: [Array("{}".utf8)])
                Issue.record("expected an error")
            } catch let error as ClientError {
                #expect(error.code == .remote)
                #expect(error.remote?.code == .serviceUnavailable)
                #expect(error.remote?.service == "ocr")
            }
        }
    }

    @Test("a JSON service answers invalid_json for a body that is not a JSON object, and keeps serving")
    func invalidJSON() async throws {
        let (broker, endpoint) = try await startBroker()
        defer { withExtendedLifetime(broker) {} }
        let worker = try startWorker(endpoint, "w1", extra: ["--json"])
        defer { withExtendedLifetime(worker) {} }
        try await withClient(configuration: ClientConfiguration(broker: endpoint, timeout: 5_000, retries: 0)) { client in
            try await waitForWorkers(client, broker: broker, count: 1)
            for bad in [[0xff, 0xfe], Array("[1,2]".utf8), Array("{\"a\":".utf8), []] as [[UInt8]] {
                do {
                    _ = try await client.request(service: "echo", body: [bad])
                    Issue.record("expected invalid_json for \(bad)")
                } catch let error as ClientError {
                    #expect(error.remote?.code == .invalidJSON)
                }
            }
            let good = [Array("{\"ok\":true}".utf8)]
            #expect(try await client.request(service: "echo", body: good) == good)
        }
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
