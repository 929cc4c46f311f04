import QuireSupport
import QuireWire
import Testing

@testable import QuireClient

/// The client's pool without sockets: events in, actions out, the clock moved by hand.
@Suite struct ClientMachineTests {
    typealias Action = ClientMachine.Action

    struct Rig {
        var machine: ClientMachine
        var now = Instant(nanoseconds: 1_000_000_000)
        var nextID: UInt64 = 1

        init(endpoints: [String] = ["tcp://a:5555"], maxInFlight: Int = 4, idleLinger: Milliseconds = 60_000) {
            machine = ClientMachine(endpoints: endpoints, dialect: .mdp02, maxInFlight: maxInFlight, idleLinger: idleLinger)
        }

        mutating func handle(_ event: ClientMachine.Event) -> [Action] {
            machine.handle(event, now: now)
        }

        /// Submits a request to `echo` with `body`; its id and the actions.
        mutating func submit(_ body: String, timeout: Milliseconds = 1_000, retries: Int = 0) -> (UInt64, [Action]) {
            let id = nextID
            nextID += 1
            let actions = handle(.submit(ClientMachine.Request(id: id, service: "echo", body: [Array(body.utf8)], timeout: timeout, retries: retries)))
            return (id, actions)
        }

        mutating func advance(_ milliseconds: Int64) -> [Action] {
            now = now + Milliseconds(milliseconds)
            return handle(.tick)
        }
    }

    static func request(_ body: String) -> [[UInt8]] { MajordomoCodec.clientRequest(.mdp02, service: "echo", body: [Array(body.utf8)]) }
    static func reply(_ body: [[UInt8]], _ kind: ReplyKind = .final) -> [[UInt8]] {
        MajordomoCodec.clientReply(.mdp02, kind, service: "echo", body: body) ?? []
    }
    static func reply(_ text: String) -> [[UInt8]] { reply([Array(text.utf8)]) }

    /// The connections the actions open, in order.
    static func opened(_ actions: [Action]) -> [ClientMachine.ConnectionID] {
        actions.compactMap { if case .open(let id, _) = $0 { id } else { nil } }
    }

    @Test("a request goes out on a new connection, its FINAL reply answers it, and the next request reuses the connection")
    func reuse() {
        var rig = Rig()
        let (first, actions) = rig.submit("one")
        #expect(actions == [.open(1, endpoint: "tcp://a:5555"), .send(1, Self.request("one")), .arm(rig.now + 1_000)])
        #expect(rig.handle(.received(1, Self.reply("one"))) == [.succeed(first, [Array("one".utf8)]), .arm(nil)])
        let (second, next) = rig.submit("two")
        #expect(next == [.send(1, Self.request("two")), .arm(rig.now + 1_000)])
        #expect(rig.handle(.received(1, Self.reply("two"))).first == .succeed(second, [Array("two".utf8)]))
        #expect(rig.machine.connections.count == 1)
    }

    @Test("no more connections than maxInFlight: the rest wait, first come first served, and take the connection freed")
    func bounded() {
        var rig = Rig(maxInFlight: 2)
        let (a, first) = rig.submit("a")
        _ = rig.submit("b")
        let (c, third) = rig.submit("c")
        #expect(Self.opened(first) == [1])
        #expect(third.isEmpty, "the third waits: two connections are busy")
        #expect(rig.machine.connections.count == 2 && rig.machine.waitingCount == 1)
        let answered = rig.handle(.received(1, Self.reply("a")))
        #expect(answered.prefix(2) == [.succeed(a, [Array("a".utf8)]), .send(1, Self.request("c"))])
        #expect(Self.opened(answered).isEmpty && rig.machine.waitingCount == 0)
        #expect(rig.handle(.received(1, Self.reply("c"))).first == .succeed(c, [Array("c".utf8)]))
    }

    @Test("an attempt that times out is sent again on a fresh connection, and the old one is closed")
    func retryOnFreshConnection() {
        var rig = Rig()
        let (id, _) = rig.submit("one", timeout: 500, retries: 2)
        #expect(rig.advance(499).isEmpty, "not yet")
        let retry = rig.advance(1)
        #expect(retry == [.close(1), .open(2, endpoint: "tcp://a:5555"), .send(2, Self.request("one")), .arm(rig.now + 500)])
        #expect(rig.handle(.received(2, Self.reply("one"))).first == .succeed(id, [Array("one".utf8)]))
    }

    @Test("the retries spent, the request fails with timeout after as many attempts")
    func retryBudget() {
        var rig = Rig()
        let (id, _) = rig.submit("one", timeout: 100, retries: 2)
        #expect(Self.opened(rig.advance(100)) == [2])
        #expect(Self.opened(rig.advance(100)) == [3])
        let last = rig.advance(100)
        #expect(last.first == .close(3))
        let failure = last.compactMap { if case .fail(id, let error) = $0 { error } else { nil } }.first
        #expect(failure?.code == .timeout)
        #expect(failure?.message == "no reply from service 'echo' within 100 ms (3 attempts)")
        #expect(last.last == .arm(nil) && rig.machine.connections.isEmpty)
    }

    @Test("a late reply to an abandoned attempt is dropped, as is a reply nobody waits for")
    func lateReplies() {
        var rig = Rig()
        let (id, _) = rig.submit("one", timeout: 100, retries: 1)
        _ = rig.advance(100)
        #expect(rig.handle(.received(1, Self.reply("one"))).isEmpty, "connection 1 was closed after the timeout")
        #expect(rig.handle(.received(2, Self.reply("one"))).first == .succeed(id, [Array("one".utf8)]))
        #expect(rig.handle(.received(2, Self.reply("again"))).isEmpty, "connection 2 is idle")
        #expect(rig.handle(.received(99, Self.reply("who?"))).isEmpty)
    }

    @Test("a PARTIAL reply is passed on and restarts the attempt's timeout")
    func partials() {
        var rig = Rig()
        let (id, _) = rig.submit("doc", timeout: 1_000)
        rig.now = rig.now + 900
        let progress = [Array(#"{"progress":{"done":1,"total":3}}"#.utf8)]
        #expect(rig.handle(.received(1, Self.reply(progress, .partial))) == [.partial(id, progress), .arm(rig.now + 1_000)])
        #expect(rig.advance(900).isEmpty, "1.8 s after sending, 0.9 s after the partial")
        #expect(rig.handle(.received(1, Self.reply("done"))).first == .succeed(id, [Array("done".utf8)]))
    }

    @Test("an error body fails the request with remote; a reply that breaks the protocol closes its connection")
    func errors() {
        var rig = Rig()
        let (id, _) = rig.submit("one")
        let error = WireError(.busy, "queue full")
        let remote = rig.handle(.received(1, Self.reply([error.jsonFrame])))
        #expect(remote.first == .fail(id, ClientError(.remote, "queue full", remote: error)))
        let (other, _) = rig.submit("two")
        let broken = rig.handle(.received(1, [Array("nonsense".utf8)]))
        #expect(broken.first == .close(1))
        guard case .fail(other, let failure)? = broken.dropFirst().first else { Issue.record("not failed: \(broken)"); return }
        #expect(failure.code == .protocolError)
        #expect(rig.machine.connections.isEmpty)
    }

    @Test("close fails every request, in flight or waiting, with closed, closes every connection and stops")
    func close() {
        var rig = Rig(maxInFlight: 1)
        let (a, _) = rig.submit("a")
        let (b, _) = rig.submit("b")
        let closed = ClientError(.closed, "the client was closed")
        #expect(rig.handle(.close) == [.fail(a, closed), .fail(b, closed), .close(1), .stop])
        let (late, refused) = rig.submit("late")
        #expect(refused == [.fail(late, ClientError(.closed, "the client is closed"))])
        #expect(rig.handle(.close).isEmpty)
    }

    @Test("a cancelled request fails with cancelled: in flight its connection is closed, waiting it is never sent")
    func cancel() {
        var rig = Rig(maxInFlight: 1)
        let (a, _) = rig.submit("a")
        let (b, _) = rig.submit("b")
        let (c, _) = rig.submit("c")
        #expect(rig.handle(.cancel(b)) == [.fail(b, ClientError(.cancelled, "cancelled"))])
        let cancelled = rig.handle(.cancel(a))
        #expect(cancelled.prefix(2) == [.close(1), .fail(a, ClientError(.cancelled, "cancelled"))])
        #expect(Array(cancelled.dropFirst(2).prefix(2)) == [.open(2, endpoint: "tcp://a:5555"), .send(2, Self.request("c"))])
        #expect(rig.handle(.received(2, Self.reply("c"))).first == .succeed(c, [Array("c".utf8)]))
        #expect(rig.handle(.cancel(c)).isEmpty, "answered already")
    }

    @Test("a connection that cannot be opened or sent on fails its request with transport; the next request still goes")
    func transportFailures() {
        var rig = Rig()
        let (a, _) = rig.submit("a")
        #expect(rig.handle(.openFailed(1, "too many open files")) == [.fail(a, ClientError(.transport, "too many open files")), .arm(nil)])
        let (b, second) = rig.submit("b")
        #expect(Self.opened(second) == [2])
        #expect(rig.handle(.sendFailed(2, "queue full")).first == .fail(b, ClientError(.transport, "queue full")))
        let (_, third) = rig.submit("c")
        #expect(third.first == .send(2, Self.request("c")), "a connection whose send failed stays for the next request")
    }

    @Test("with several brokers a timeout moves every request to the next one, each broker tried once even without retries")
    func failover() {
        var rig = Rig(endpoints: ["tcp://a:5555", "tcp://b:5555"], maxInFlight: 4)
        let (first, _) = rig.submit("one", timeout: 300, retries: 0)
        let (second, _) = rig.submit("two", timeout: 300, retries: 0)
        #expect(rig.machine.connections.map(\.endpoint) == [0, 0])
        let moved = rig.advance(300)
        // One move for both: the second timeout at a, after the first moved on, does not move back.
        #expect(moved.filter { if case .useBroker = $0 { true } else { false } } == [.useBroker(1)])
        #expect(moved.contains(.open(3, endpoint: "tcp://b:5555")) && moved.contains(.open(4, endpoint: "tcp://b:5555")))
        #expect(rig.handle(.received(3, Self.reply("one"))).first == .succeed(first, [Array("one".utf8)]))
        #expect(rig.handle(.received(4, Self.reply("two"))).first == .succeed(second, [Array("two".utf8)]))
        // The rest go straight to b, on the connections already there.
        let (_, next) = rig.submit("three", timeout: 300)
        #expect(next.first == .send(4, Self.request("three")))
        // b goes silent too: back to a, and the request fails after its two attempts (one per broker).
        _ = rig.submit("four", timeout: 300)
        let silent = rig.advance(300)
        #expect(silent.contains(.useBroker(0)) && Self.opened(silent).count == 2)
        let failed = rig.advance(300).compactMap { if case .fail(_, let error) = $0 { error } else { nil } }
        #expect(failed.count == 2 && failed.allSatisfy { $0.code == .timeout && $0.message.hasSuffix("(2 attempts)") })
    }

    @Test("an idle connection to a broker that stopped answering is replaced by one to the broker in use when taken")
    func idleConnectionFollowsTheBrokerInUse() {
        var rig = Rig(endpoints: ["tcp://a:5555", "tcp://b:5555"], maxInFlight: 2)
        let (one, _) = rig.submit("one", timeout: 300)
        _ = rig.submit("two", timeout: 300)
        #expect(rig.handle(.received(1, Self.reply("one"))).first == .succeed(one, [Array("one".utf8)]))
        _ = rig.advance(300)    // "two" times out at a: b is in use, connection 1 (to a) is idle
        #expect(rig.machine.current == 1)
        let (_, next) = rig.submit("three", timeout: 300)
        #expect(next.prefix(3) == [.close(1), .open(4, endpoint: "tcp://b:5555"), .send(4, Self.request("three"))])
    }

    @Test("the timer is armed at the earliest deadline, and disarmed when nothing is in flight")
    func timer() {
        var rig = Rig()
        let start = rig.now
        let (a, first) = rig.submit("a", timeout: 1_000)
        #expect(first.last == .arm(start + 1_000))
        rig.now = start + 100
        let (_, second) = rig.submit("b", timeout: 200)
        #expect(second.last == .arm(start + 300))
        rig.now = start + 150
        let (_, third) = rig.submit("c", timeout: 5_000)
        #expect(!third.contains { if case .arm = $0 { true } else { false } }, "the earliest deadline did not change")
        _ = a
        #expect(rig.advance(150).last == .arm(start + 1_000))
    }

    @Test("after a burst the connections idle for the linger are closed, the longest idle first, all but the last one")
    func idleConnectionsClosedAfterTheLinger() {
        var rig = Rig(idleLinger: 10_000)
        let start = rig.now
        let ids = (1...3).map { rig.submit("\($0)", timeout: 1_000).0 }
        #expect(rig.machine.connections.map(\.id) == [1, 2, 3])
        for (offset, connection) in [(100, 1), (200, 2), (300, 3)] as [(Int64, UInt64)] {
            rig.now = start + Milliseconds(offset)
            let answered = rig.handle(.received(connection, Self.reply("\(connection)")))
            #expect(answered.first == .succeed(ids[Int(connection) - 1], [Array("\(connection)".utf8)]))
            if connection == 3 {
                #expect(answered.last == .arm(start + 10_100), "nothing in flight: the timer waits for connection 1's linger")
            }
        }
        rig.now = start + 10_099
        #expect(rig.handle(.tick).isEmpty, "not yet")
        rig.now = start + 10_100
        #expect(rig.handle(.tick) == [.close(1), .arm(start + 10_200)])
        rig.now = start + 10_200
        #expect(rig.handle(.tick) == [.close(2), .arm(nil)], "connection 3 is the last one: no timer for it")
        #expect(rig.advance(3_600_000).isEmpty && rig.machine.connections.map(\.id) == [3])
        let (later, again) = rig.submit("later")
        #expect(again == [.send(3, Self.request("later")), .arm(rig.now + 1_000)])
        #expect(rig.handle(.received(3, Self.reply("later"))).first == .succeed(later, [Array("later".utf8)]))
    }

    @Test("connections that steady traffic keeps using stay open; only the surplus of a burst is closed")
    func steadyTrafficKeepsItsConnections() {
        var rig = Rig(idleLinger: 10_000)
        _ = (1...3).map { rig.submit("burst \($0)").0 }
        for connection: UInt64 in [1, 2, 3] { _ = rig.handle(.received(connection, Self.reply("done"))) }
        var closed: [ClientMachine.ConnectionID] = []
        // Two requests at a time every 4 s: they take the connections freed last, 3 and 2.
        for _ in 0..<10 {
            closed += rig.advance(4_000).compactMap { if case .close(let id) = $0 { id } else { nil } }
            let a = rig.submit("a").1, b = rig.submit("b").1
            #expect(Self.opened(a + b).isEmpty, "the pool has connections enough")
            let busy = rig.machine.connections.filter { $0.attempt != nil }.map(\.id)
            for connection in busy { _ = rig.handle(.received(connection, Self.reply("done"))) }
        }
        #expect(closed == [1])
        #expect(rig.machine.connections.map(\.id) == [2, 3])
    }

    @Test("the waiting queue lets go of each request it hands out, at once (a client sends images)")
    func queueHoldsOnlyWaitingRequests() {
        var queue = RequestQueue()
        func request(_ id: Int) -> ClientMachine.Request {
            ClientMachine.Request(id: UInt64(id), service: "ocr", body: [[UInt8](repeating: UInt8(id % 256), count: 1_000)], timeout: 1_000, retries: 0)
        }
        for id in 1...3 { queue.append(request(id)) }
        #expect(queue.popFirst()?.id == 1 && queue.popFirst()?.id == 2)
        #expect(queue.count == 1 && queue.held == 1 && queue.first?.id == 3)
        // A gateway's steady state: one in, one out, thousands of times; nothing taken out is kept.
        for id in 4...5_000 {
            queue.append(request(id))
            _ = queue.popFirst()
            #expect(queue.held == 1)
        }
        #expect(queue.remove(5_000) && queue.count == 0 && queue.held == 0)
        queue.append(request(1))
        #expect(queue.removeAll().map(\.id) == [1] && queue.held == 0)
    }
}
