import Foundation
import QuireSupport
import QuireWire
import Synchronization
import Testing
import ZeroMQ

@testable import QuireClient

/// The machine's actions carried out on real sockets (`inproc://`, a context of the test's own): a
/// resend on a fresh connection as the broker sees it, cancellation and close.
@Suite struct ClientExecutorTests {
    final class Peers: Sendable {
        let seen = Mutex<[[UInt8]]>([])
    }

    @Test("a request that times out is resent on a fresh connection: the broker sees a second peer, whose answer is the reply")
    func resendOnFreshConnection() async throws {
        let context = try Context()
        let endpoint = "inproc://client-executor-\(UUID().uuidString)"
        let peers = Peers()
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let replied = DispatchSemaphore(value: 0)
        // A broker that ignores the first request and answers the second, on a thread of its own.
        let broker = Thread {
            defer { finished.signal() }
            guard let router = try? Socket(context: context, type: .router), (try? router.bind(endpoint)) != nil,
                  (try? router.setReceiveTimeout(milliseconds: 5_000)) != nil else { ready.signal(); return }
            defer { router.close() }
            ready.signal()
            guard let first = try? router.receive(), let second = try? router.receive() else { return }
            peers.seen.withLock { $0 = [first[0], second[0]] }
            let reply = MajordomoCodec.clientReply(.mdp02, .final, service: "echo", body: [Array("pong".utf8)]) ?? []
            _ = try? router.send([second[0]] + reply)
            // Keep the socket until the reply is through (LINGER 0 would drop it).
            _ = replied.wait(timeout: .now() + 5)
        }
        broker.start()
        ready.wait()
        let client = try QuireClient(configuration: ClientConfiguration(broker: endpoint, timeout: 1_000, retries: 1), context: context)
        let reply = try await client.request(service: "echo", body: [Array("ping".utf8)])
        replied.signal()
        await client.close()
        #expect(reply == [Array("pong".utf8)])
        let seen = peers.seen.withLock { $0 }
        #expect(seen.count == 2 && seen[0] != seen[1], "the resend came from another connection")
        finished.wait()
    }

    @Test("close fails a request still waiting with closed, and a request after it at once")
    func closeFailsWaiting() async throws {
        let context = try Context()
        // Nobody ever binds this endpoint: the request waits.
        let client = try QuireClient(configuration: ClientConfiguration(broker: "inproc://nobody-\(UUID().uuidString)", timeout: 60_000), context: context)
        let waiting = Task { try await client.request(service: "echo", body: [Array("ping".utf8)]) }
        try await Task.sleep(for: .milliseconds(50))
        await client.close()
        // Closed while it waited, or (on a slow machine) before it was queued.
        let error = await #expect(throws: ClientError.self) { _ = try await waiting.value }
        #expect(error?.code == .closed)
        await #expect(throws: ClientError(.closed, "the client is closed")) { _ = try await client.request(service: "echo", body: []) }
    }

    @Test("a cancelled task's request fails with cancelled, and the client goes on serving")
    func cancellation() async throws {
        let context = try Context()
        let client = try QuireClient(configuration: ClientConfiguration(broker: "inproc://nobody-\(UUID().uuidString)", timeout: 60_000), context: context)
        let waiting = Task { try await client.request(service: "echo", body: [Array("ping".utf8)]) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: ClientError(.cancelled, "cancelled")) { _ = try await waiting.value }
        await #expect(throws: ClientError(.timeout, "no reply from service 'echo' within 50 ms (1 attempt)")) {
            _ = try await client.request(service: "echo", body: [], timeout: 50, retries: 0)
        }
        // Cancelled before it could be queued: its cancel must not be lost.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.request(service: "echo", body: [Array("ping".utf8)])
        }
        let started = ContinuousClock.now
        await #expect(throws: ClientError(.cancelled, "cancelled")) { _ = try await early.value }
        #expect(ContinuousClock.now - started < .seconds(30), "not after the 60 s timeout")
        await client.close()
    }

    /// The connections a broker holds, from its socket's monitor: now, and the most at once.
    final class Connections: Sendable {
        let live = Atomic<Int>(0)
        let most = Atomic<Int>(0)

        func count(_ event: Socket.MonitorEvents?) {
            if event == .accepted {
                let now = live.add(1, ordering: .relaxed).newValue
                _ = most.max(now, ordering: .relaxed)
            } else if event == .disconnected {
                live.subtract(1, ordering: .relaxed)
            }
        }
    }

    @Test("after a burst the idle connections are closed once their linger is over, as the broker sees it, all but one")
    func idleConnectionsClosed() async throws {
        let context = try Context()
        let bound = Mutex<String?>(nil)
        let stop = Atomic<Bool>(false)
        let connections = Connections()
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // A broker on TCP that counts its connections from its socket's monitor, holds requests until
        // three have come (three connections at once) and then answers each.
        let broker = Thread {
            defer { finished.signal() }
            let monitorEndpoint = "inproc://client-executor-monitor-\(UUID().uuidString)"
            guard let router = try? Socket(context: context, type: .router), (try? router.bind("tcp://127.0.0.1:*")) != nil,
                  (try? router.setReceiveTimeout(milliseconds: 10)) != nil, (try? router.monitor(monitorEndpoint, events: [.accepted, .disconnected])) != nil,
                  let monitor = try? Socket(context: context, type: .pair), (try? monitor.connect(monitorEndpoint)) != nil
            else { ready.signal(); return }
            defer { monitor.close(); router.close() }
            bound.withLock { $0 = try? router.lastEndpoint }
            ready.signal()
            var held: [[UInt8]] = []
            while !stop.load(ordering: .relaxed) {
                while let event = try? monitor.receive(dontWait: true) { connections.count(Socket.monitorEvent(event)) }
                guard let request = try? router.receive() else { continue }
                held.append(request[0])
                guard held.count >= 3 else { continue }
                let reply = MajordomoCodec.clientReply(.mdp02, .final, service: "echo", body: [Array("pong".utf8)]) ?? []
                for peer in held { _ = try? router.send([peer] + reply) }
                held = []
            }
        }
        broker.start()
        ready.wait()
        defer { stop.store(true, ordering: .relaxed); finished.wait() }
        let endpoint = try #require(bound.withLock { $0 })
        let linger: Milliseconds = 300
        let client = try QuireClient(configuration: ClientConfiguration(broker: endpoint, timeout: 30_000, retries: 0, idleLinger: linger), context: context)
        func burst() async throws -> [[[UInt8]]] {
            async let a = client.request(service: "echo", body: [Array("a".utf8)])
            async let b = client.request(service: "echo", body: [Array("b".utf8)])
            async let c = client.request(service: "echo", body: [Array("c".utf8)])
            return try await [a, b, c]
        }
        func live(becomes count: Int) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(30)
            while connections.live.load(ordering: .relaxed) != count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            return connections.live.load(ordering: .relaxed) == count
        }
        #expect(try await burst().allSatisfy { $0 == [Array("pong".utf8)] })
        #expect(try await live(becomes: 1), "two closed after the linger, the last one kept: \(connections.live.load(ordering: .relaxed)) open")
        #expect(connections.most.load(ordering: .relaxed) == 3, "one connection per request in flight")
        try await Task.sleep(for: .milliseconds(3 * linger.value))
        #expect(connections.live.load(ordering: .relaxed) == 1, "the last one stays")
        // The next burst opens two again: the broker answers only once it holds three requests.
        #expect(try await burst().count == 3)
        #expect(try await live(becomes: 1))
        #expect(connections.most.load(ordering: .relaxed) == 3)
        await client.close()
    }
}
