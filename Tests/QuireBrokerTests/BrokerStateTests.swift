import Foundation
import QuireSupport
import QuireWire
import Testing

@testable import QuireBroker

/// Drives `BrokerState` by hand: no sockets, no clock.
struct Harness {
    var state: BrokerState
    var now = Instant(nanoseconds: 1_000_000_000)

    init(_ configuration: BrokerConfiguration = BrokerConfiguration(
        heartbeatInterval: 1_000, heartbeatLiveness: 3, busyWorkerTimeout: 20_000,
        requestTimeout: 5_000, maxAttempts: 2, maxQueuedRequests: 3, maxMessageBytes: 1_024, maxFrames: 8)) {
        state = BrokerState(configuration: configuration)
    }

    mutating func advance(ms: Int64) { now = now + Milliseconds(ms) }

    mutating func send(_ peer: String, _ frames: [[UInt8]]) -> [Sent] {
        Self.sends(state.handle(.message(peer: Array(peer.utf8), frames: frames), now: now))
    }

    mutating func tick() -> [Sent] { Self.sends(state.handle(.tick, now: now)) }

    static func sends(_ actions: [BrokerAction]) -> [Sent] {
        actions.compactMap {
            if case .send(let peer, let frames) = $0 { return Sent(peer: String(decoding: peer, as: UTF8.self), frames: frames) }
            return nil
        }
    }

    // Peers in each dialect.
    mutating func ready(_ worker: String, service: String = "echo", dialect: Dialect = .mdp02) -> [Sent] {
        send(worker, MajordomoCodec.workerReady(dialect, service: service))
    }

    mutating func request(_ client: String, service: String = "echo", body: [String] = ["hi"], dialect: Dialect = .mdp02) -> [Sent] {
        send(client, MajordomoCodec.clientRequest(dialect, service: service, body: body.map { Array($0.utf8) }))
    }

    mutating func final(_ worker: String, address: [UInt8], body: [String], dialect: Dialect = .mdp02) -> [Sent] {
        send(worker, MajordomoCodec.workerReply(dialect, .final, address: address, body: body.map { Array($0.utf8) })!)
    }
}

struct Sent: Equatable, CustomStringConvertible {
    var peer: String
    var frames: [[UInt8]]
    var description: String { "\(peer): \(frames.map { String(decoding: $0, as: UTF8.self) })" }

    /// The address frame of a REQUEST sent to a MDP/0.2 worker.
    var requestAddress: [UInt8]? {
        guard case .success(.request(let address, _)) = MajordomoCodec.decodeAtWorker(.mdp02, frames) else { return nil }
        return address
    }

    var isRequest: Bool { requestAddress != nil }

    var isDisconnect: Bool {
        Dialect.allCases.contains { frames == MajordomoCodec.workerDisconnect($0) }
    }

    var isHeartbeat: Bool {
        Dialect.allCases.contains { frames == MajordomoCodec.workerHeartbeat($0) }
    }

    /// The error in a FINAL reply to a client, in any dialect.
    var error: WireError? {
        guard let last = frames.last else { return nil }
        return WireError(jsonFrame: last)
    }
}

func text(_ frames: [[UInt8]]) -> [String] { frames.map { String(decoding: $0, as: UTF8.self) } }

@Suite("Broker state machine")
struct BrokerStateTests {
    @Test("a request reaches a ready worker and the reply goes back to the client")
    func roundTrip() throws {
        var h = Harness()
        #expect(h.ready("w1").isEmpty)
        let toWorker = h.request("c1", body: ["a", "b"])
        #expect(toWorker.count == 1)
        let sent = try #require(toWorker.first)
        #expect(sent.peer == "w1")
        let address = try #require(sent.requestAddress)
        #expect(Array(text(sent.frames).suffix(2)) == ["a", "b"])

        let toClient = h.final("w1", address: address, body: ["A", "B"])
        #expect(toClient == [Sent(peer: "c1", frames: [MDP.clientHeader02, [0x03], Array("echo".utf8), Array("A".utf8), Array("B".utf8)])])
        #expect(h.state.idleWorkerCount(service: "echo") == 1)
        #expect(h.state.inFlightCount == 0)
    }

    @Test("requests queue while a service has no worker and are served when one registers")
    func queueUntilWorker() throws {
        var h = Harness()
        #expect(h.request("c1").isEmpty)
        #expect(h.request("c2").isEmpty)
        #expect(h.state.queueDepth(service: "echo") == 2)
        let sent = h.ready("w1")
        #expect(sent.count == 1)
        #expect(sent.first?.peer == "w1")
        #expect(h.state.queueDepth(service: "echo") == 1)
    }

    @Test("idle workers are used least recently used first")
    func lruDispatch() throws {
        var h = Harness()
        _ = h.ready("w1")
        _ = h.ready("w2")
        _ = h.ready("w3")
        let first = try #require(h.request("c1").first)
        #expect(first.peer == "w1")
        _ = h.final("w1", address: try #require(first.requestAddress), body: ["x"])
        // w1 is now the most recently used: w2 and w3 come first.
        #expect(h.request("c2").first?.peer == "w2")
        #expect(h.request("c3").first?.peer == "w3")
        #expect(h.request("c4").first?.peer == "w1")
    }

    @Test("queued requests expire: service_unavailable without workers")
    func expiryWithoutWorkers() throws {
        var h = Harness()
        _ = h.request("c1", service: "ocr")
        h.advance(ms: 4_999)
        #expect(h.tick().isEmpty)
        h.advance(ms: 1)
        let sent = h.tick()
        #expect(sent.count == 1)
        let error = try #require(sent.first?.error)
        #expect(sent.first?.peer == "c1")
        #expect(error.code == .serviceUnavailable)
        #expect(error.service == "ocr")
        #expect(error.retryable)
        #expect(h.state.queueDepth(service: "ocr") == 0)
    }

    @Test("queued requests expire with timeout when workers exist but stay busy")
    func expiryWithBusyWorkers() throws {
        var h = Harness()
        _ = h.ready("w1")
        _ = h.request("c1")
        _ = h.request("c2")
        for _ in 0..<10 {
            h.advance(ms: 500)
            _ = h.send("w1", MajordomoCodec.workerHeartbeat(.mdp02))
            let sent = h.tick()
            if let error = sent.compactMap(\.error).first {
                #expect(error.code == .timeout)
                return
            }
        }
        Issue.record("the queued request never expired")
    }

    @Test("the broker heartbeats idle and busy workers, and only after a quiet interval")
    func heartbeats() throws {
        var h = Harness()
        _ = h.ready("w1")
        _ = h.ready("w2")
        _ = h.request("c1")   // w1 busy
        h.advance(ms: 999)
        #expect(h.tick().isEmpty)
        h.advance(ms: 1)
        let beats = h.tick()
        #expect(Set(beats.map(\.peer)) == ["w1", "w2"])
        #expect(beats.allSatisfy { $0.isHeartbeat })
        #expect(h.tick().isEmpty)
    }

    @Test("a silent idle worker expires")
    func idleExpiry() throws {
        var h = Harness()
        _ = h.ready("w1")
        h.advance(ms: 2_500)
        _ = h.send("w1", MajordomoCodec.workerHeartbeat(.mdp02))   // keeps it alive
        h.advance(ms: 2_999)
        _ = h.tick()
        #expect(h.state.workerCount(service: "echo") == 1)
        h.advance(ms: 1)
        let sent = h.tick()
        #expect(sent.contains { $0.peer == "w1" && $0.isDisconnect })
        #expect(h.state.workerCount(service: "echo") == 0)
    }

    @Test("a busy MDP/0.2 worker that goes silent loses its request to the next worker")
    func busyWorkerDiesRequeue() throws {
        var h = Harness()
        _ = h.ready("w1")
        let first = try #require(h.request("c1", body: ["payload"]).first)
        #expect(first.peer == "w1")
        _ = h.ready("w2")
        // w2 keeps heartbeating, w1 is silent.
        var redispatched: Sent?
        for _ in 0..<8 {
            h.advance(ms: 500)
            _ = h.send("w2", MajordomoCodec.workerHeartbeat(.mdp02))
            if let r = h.tick().first(where: { $0.peer == "w2" && $0.isRequest }) { redispatched = r; break }
        }
        let second = try #require(redispatched)
        #expect(text(second.frames).last == "payload")
        let reply = h.final("w2", address: try #require(second.requestAddress), body: ["done"])
        #expect(reply.first?.peer == "c1")
        #expect(text(reply.first!.frames).last == "done")
    }

    @Test("when every attempt's worker dies the client gets worker_lost")
    func attemptsExhausted() throws {
        var h = Harness()
        _ = h.ready("w1")
        _ = h.request("c1")
        h.advance(ms: 3_500)
        _ = h.tick()   // w1 went silent holding it: attempt 1 lost, requeued
        #expect(h.state.queueDepth(service: "echo") == 1)
        let second = h.ready("w2")
        #expect(second.first?.peer == "w2")
        h.advance(ms: 3_500)
        let sent = h.tick()   // attempt 2 lost: the limit
        let error = try #require(sent.first { $0.peer == "c1" }?.error)
        #expect(error.code == .workerLost)
        #expect(error.attempts == 2)
        #expect(h.state.queueDepth(service: "echo") == 0)
    }

    @Test("MDP/0.1 and majortomo workers may stay silent while busy, up to the busy timeout", arguments: [Dialect.mdp01, .majortomo])
    func silentBusyDialects(dialect: Dialect) throws {
        var h = Harness()
        _ = h.ready("w1", dialect: dialect)
        let request = try #require(h.request("c1").first)
        #expect(request.peer == "w1")
        h.advance(ms: 10_000)   // far past the heartbeat expiry
        #expect(!h.tick().contains { $0.isDisconnect })
        #expect(h.state.workerCount(service: "echo") == 1)
        h.advance(ms: 10_000)   // busy timeout reached
        #expect(h.tick().contains { $0.peer == "w1" && $0.isDisconnect })
        #expect(h.state.workerCount(service: "echo") == 0)
    }

    @Test("an unreachable worker is dropped; the REQUEST that never left it costs no attempt")
    func undeliverable() throws {
        var h = Harness()   // maxAttempts 2
        for i in 1...5 {
            _ = h.ready("w\(i)")
        }
        let first = try #require(h.request("c1").first)
        var sent = first
        // Five workers in a row are gone before the REQUEST reaches them: the request is never lost.
        for i in 1...4 {
            #expect(sent.peer == "w\(i)")
            let next = Harness.sends(h.state.handle(.undeliverable(peer: Array(sent.peer.utf8), frames: sent.frames), now: h.now))
            #expect(!next.contains { $0.error != nil })
            sent = try #require(next.first { $0.isRequest })
        }
        #expect(sent.peer == "w5")
        #expect(h.state.workerCount(service: "echo") == 1)
        // A worker that dies after receiving the request does use an attempt.
        _ = h.send("w5", MajordomoCodec.workerDisconnect(.mdp02))
        #expect(h.state.queueDepth(service: "echo") == 1)
    }

    @Test("protocol violations by workers get DISCONNECT")
    func workerViolations() throws {
        var h = Harness()
        // Anything but READY from an unknown worker.
        #expect(h.send("x", MajordomoCodec.workerHeartbeat(.mdp02)).first?.isDisconnect == true)
        // READY twice.
        _ = h.ready("w1")
        #expect(h.ready("w1").first?.isDisconnect == true)
        #expect(h.state.workerCount(service: "echo") == 0)
        // FINAL for a request it does not hold.
        _ = h.ready("w2")
        #expect(h.final("w2", address: [0, 0, 0, 0, 0, 0, 0, 9], body: ["x"]).first?.isDisconnect == true)
        // Garbage command byte from a registered worker.
        _ = h.ready("w3")
        #expect(h.send("w3", [MDP.workerHeader02, [0x09]]).first?.isDisconnect == true)
        // Reserved service names.
        #expect(h.ready("w4", service: "mmi.service").first?.isDisconnect == true)
        #expect(h.state.workerTotal == 0)
    }

    @Test("a worker that breaks the protocol while busy gives its request to another worker")
    func violationRequeues() throws {
        var h = Harness()
        _ = h.ready("w1")
        _ = h.request("c1")
        _ = h.ready("w2")
        let sent = h.final("w1", address: [1, 2, 3], body: ["bogus"])
        #expect(sent.contains { $0.peer == "w1" && $0.isDisconnect })
        #expect(sent.contains { $0.peer == "w2" && $0.isRequest })
        #expect(!sent.contains { $0.peer == "c1" })
    }

    @Test("malformed client messages get a typed error in the client's dialect", arguments: [
        ([MDP.clientHeader02, [0x07], Array("echo".utf8)], Dialect.mdp02),
        ([MDP.clientHeader02, [0x01]], Dialect.mdp02),
        ([MDP.clientHeader02, [0x01], []], Dialect.mdp02),
        ([MDP.clientHeader02, [0x01], [0xff, 0xfe]], Dialect.mdp02),
        ([[], MDP.clientHeader01], Dialect.mdp01),
        ([[], MDP.clientHeader02, [0x01], Array("echo".utf8)], Dialect.majortomo),
    ] as [([[UInt8]], Dialect)])
    func malformedClients(frames: [[UInt8]], dialect: Dialect) throws {
        var h = Harness()
        let sent = h.send("c1", frames)
        #expect(sent.count == 1)
        let reply = try #require(sent.first)
        #expect(reply.peer == "c1")
        #expect(reply.error?.code == .badRequest)
        switch dialect {
        case .mdp02: #expect(Array(reply.frames.prefix(2)) == [MDP.clientHeader02, [0x03]])
        case .mdp01: #expect(Array(reply.frames.prefix(2)) == [[], MDP.clientHeader01])
        case .majortomo: #expect(Array(reply.frames.prefix(3)) == [[], MDP.clientHeader02, [0x04]])
        }
    }

    @Test("unknown headers are answered in MDP/0.2 shape, behind an empty frame if there was one")
    func unknownHeader() throws {
        var h = Harness()
        let plain = try #require(h.send("c1", [Array("HTTP/1.1".utf8)]).first)
        #expect(Array(plain.frames.prefix(2)) == [MDP.clientHeader02, [0x03]])
        #expect(plain.error?.code == .badRequest)
        let enveloped = try #require(h.send("c1", [[], Array("XYZ".utf8)]).first)
        #expect(Array(enveloped.frames.prefix(3)) == [[], MDP.clientHeader02, [0x03]])
        let empty = try #require(h.send("c1", []).first)
        #expect(empty.error?.code == .badRequest)
    }

    @Test("size, frame and queue limits answer too_large and busy")
    func limits() throws {
        var h = Harness()
        let big = h.request("c1", body: [String(repeating: "x", count: 1_100)])
        #expect(big.first?.error?.code == .tooLarge)
        #expect(big.first?.error?.limit == 1_024)
        let many = h.request("c1", body: Array(repeating: "x", count: 8))
        #expect(many.first?.error?.code == .tooLarge)
        for i in 0..<3 { #expect(h.request("c\(i)").isEmpty) }
        let busy = h.request("c9")
        #expect(busy.first?.error?.code == .busy)
        #expect(busy.first?.error?.retryable == true)
        #expect(h.state.queueDepth(service: "echo") == 3)
    }

    @Test("MMI: mmi.service answers 200 or 404, mmi.auth 404 with auth off, other mmi.* 501", arguments: Dialect.allCases)
    func mmi(dialect: Dialect) throws {
        var h = Harness()
        _ = h.ready("w1")
        func ask(_ service: String, _ body: [String]) throws -> [String] {
            let sent = try #require(h.request("c1", service: service, body: body, dialect: dialect).first)
            guard case .success((.final, let frames)) = MajordomoCodec.decodeClientReply(dialect, sent.frames) else {
                Issue.record("not a final reply: \(sent)")
                return []
            }
            return text(frames)
        }
        #expect(try ask("mmi.service", ["echo"]) == ["200"])
        #expect(try ask("mmi.service", ["ocr"]) == ["404"])
        #expect(try ask("mmi.auth", []) == ["404"])
        #expect(try ask("mmi.whatever", []) == ["501"])
    }

    @Test("partial replies reach MDP/0.2 and majortomo clients, not MDP/0.1 ones", arguments: Dialect.allCases)
    func partials(dialect: Dialect) throws {
        var h = Harness()
        _ = h.ready("w1")
        let request = try #require(h.request("c1", dialect: dialect).first)
        let address = try #require(request.requestAddress)
        let partial = h.send("w1", MajordomoCodec.workerReply(.mdp02, .partial, address: address, body: [Array("50%".utf8)])!)
        if dialect == .mdp01 {
            #expect(partial.isEmpty)
        } else {
            let sent = try #require(partial.first)
            guard case .success((.partial, let body)) = MajordomoCodec.decodeClientReply(dialect, sent.frames) else {
                Issue.record("not a partial: \(sent)")
                return
            }
            #expect(text(body) == ["50%"])
        }
        // The worker is still busy until FINAL.
        #expect(h.state.idleWorkerCount(service: "echo") == 0)
        _ = h.final("w1", address: address, body: ["done"])
        #expect(h.state.idleWorkerCount(service: "echo") == 1)
    }

    @Test("workers of every dialect get requests in their own dialect", arguments: Dialect.allCases)
    func workerDialects(dialect: Dialect) throws {
        var h = Harness()
        _ = h.ready("w1", dialect: dialect)
        let sent = try #require(h.request("c1", body: ["x"]).first)
        guard case .success(.request(let address, let body)) = MajordomoCodec.decodeAtWorker(dialect, sent.frames) else {
            Issue.record("not a \(dialect) request: \(sent)")
            return
        }
        #expect(text(body) == ["x"])
        let reply = try #require(h.final("w1", address: address, body: ["y"], dialect: dialect).first)
        #expect(reply.peer == "c1")
        #expect(text(reply.frames).last == "y")
    }

    @Test("shutdown answers every waiting client and disconnects every worker")
    func shutdown() throws {
        var h = Harness()
        _ = h.ready("w1")
        _ = h.request("c1")          // in flight
        _ = h.request("c2")          // queued
        let sent = Harness.sends(h.state.handle(.shutdown, now: h.now))
        #expect(sent.filter { $0.error?.code == .shuttingDown }.map(\.peer).sorted() == ["c1", "c2"])
        #expect(sent.contains { $0.peer == "w1" && $0.isDisconnect })
        // New work is refused while stopping.
        #expect(h.request("c3").first?.error?.code == .shuttingDown)
        #expect(h.ready("w2").first?.isDisconnect == true)
    }

    @Test("a thousand malformed messages leave the state consistent and serving")
    func malformedFlood() throws {
        var h = Harness()
        _ = h.ready("w1")
        var generator = SystemRandomNumberGenerator()
        var replies = 0
        for i in 0..<1_000 {
            var frames: [[UInt8]] = []
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                frames.append((0..<Int.random(in: 0...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            }
            replies += h.send("bad\(i)", frames).count
        }
        #expect(replies == 1_000)
        #expect(h.state.workerCount(service: "echo") == 1)
        let sent = try #require(h.request("good").first)
        #expect(sent.peer == "w1")
    }
}
