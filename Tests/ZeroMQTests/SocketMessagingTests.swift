import Foundation
import Testing
import ZeroMQ
import QuireTestSupport

/// Multipart payloads that a wrapper could plausibly mangle.
enum Payload: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case oneEmptyFrame, emptyFramesAroundData, zeroBytes, oneMegabyte, hundredFrames

    var testDescription: String { rawValue }

    var frames: [Frame] {
        switch self {
        case .oneEmptyFrame:
            return [[]]
        case .emptyFramesAroundData:
            return [[], [0x41], [], []]
        case .zeroBytes:
            return [[0], [0, 0, 0], [0, 1, 0, 255, 0], (0...255).map { UInt8($0) }]
        case .oneMegabyte:
            return [(0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 ^ ($0 >> 8) ^ ($0 >> 16)) }]
        case .hundredFrames:
            return (0..<100).map { index in [UInt8(index)] + [UInt8](repeating: 0, count: index) }
        }
    }
}

@Suite("Socket messaging")
struct SocketMessagingTests {
    @Test("DEALER to ROUTER and back keeps every frame intact", arguments: Transport.allCases, Payload.allCases)
    func dealerRouterRoundTrip(transport: Transport, payload: Payload) throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        let endpoint = try bindFresh(router, transport)
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.connect(endpoint)

        let frames = payload.frames
        #expect(try dealer.send(frames))

        let request = try #require(try router.receive(timeoutMilliseconds: 10_000), "ROUTER received nothing")
        try #require(request.count == frames.count + 1, "got \(request.count) frames, sent \(frames.count)")
        #expect(request[1...].map(\.count) == frames.map(\.count))
        #expect(Array(request[1...]) == frames)

        let identity = request[0]
        #expect(!identity.isEmpty)
        #expect(try router.send([identity] + frames))

        let reply = try #require(try dealer.receive(timeoutMilliseconds: 10_000), "DEALER received nothing")
        #expect(reply.map(\.count) == frames.map(\.count))
        #expect(reply == frames)
    }

    @Test("messages keep their boundaries and order", arguments: Transport.allCases)
    func messageBoundaries(transport: Transport) throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        let endpoint = try bindFresh(router, transport)
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.connect(endpoint)

        let messages: [[Frame]] = [[bytes("a")], [bytes("b"), bytes("c")], [[]], [bytes("d"), [], bytes("e")]]
        for message in messages { #expect(try dealer.send(message)) }
        for message in messages {
            let received = try #require(try router.receive(timeoutMilliseconds: 10_000))
            #expect(Array(received.dropFirst()) == message)
        }
        #expect(try router.receive(dontWait: true) == nil)
    }

    @Test("sending no frames sends nothing")
    func emptySend() throws {
        let context = try Context()
        let pull = try Socket(context: context, type: .pull)
        let endpoint = try bindFresh(pull, .inproc)
        let push = try Socket(context: context, type: .push)
        try push.connect(endpoint)

        #expect(try push.send([]))
        #expect(try push.send([bytes("marker")]))
        #expect(try pull.receive(timeoutMilliseconds: 5_000) == [bytes("marker")])
    }

    @Test("ROUTER sees the identity set with setIdentity and can address the peer by it",
          arguments: [bytes("worker-7"), [0x01, 0x00, 0xFF, 0x00], [UInt8](repeating: 0x5A, count: 255)])
    func routerSeesIdentity(identity: Frame) throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        try router.setRouterMandatory(true)
        let endpoint = try bindFresh(router, .tcp)
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setIdentity(identity)
        try dealer.connect(endpoint)

        #expect(try dealer.send([bytes("hello")]))
        let request = try #require(try router.receive(timeoutMilliseconds: 10_000))
        #expect(request == [identity, bytes("hello")])

        // Addressed by the identity we chose, not one ROUTER made up.
        #expect(try router.send([identity, bytes("welcome")]))
        #expect(try dealer.receive(timeoutMilliseconds: 10_000) == [bytes("welcome")])
    }

    @Test("without setIdentity, ROUTER makes up a 5-byte identity starting with a zero byte")
    func generatedIdentity() throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        let endpoint = try bindFresh(router, .inproc)
        let first = try Socket(context: context, type: .dealer)
        try first.connect(endpoint)
        let second = try Socket(context: context, type: .dealer)
        try second.connect(endpoint)

        #expect(try first.send([bytes("1")]))
        let one = try #require(try router.receive(timeoutMilliseconds: 5_000))
        #expect(try second.send([bytes("2")]))
        let two = try #require(try router.receive(timeoutMilliseconds: 5_000))

        #expect(one.count == 2 && two.count == 2)
        #expect(one[0].count == 5 && one[0].first == 0)
        #expect(two[0].count == 5 && two[0].first == 0)
        #expect(one[0] != two[0])
    }

    @Test("setIdentity rejects an empty identity and one over 255 bytes", arguments: [0, 256])
    func invalidIdentity(length: Int) throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        let error = #expect(throws: ZMQError.self) { try dealer.setIdentity([UInt8](repeating: 1, count: length)) }
        #expect(error?.code == EINVAL)
        #expect(error?.operation == "zmq_setsockopt")
        #expect(error?.context == "ZMQ_ROUTING_ID")
    }

    @Test("receive(dontWait: true) returns nil when nothing is waiting, the message when one is")
    func receiveDontWait() throws {
        let context = try Context()
        let pull = try Socket(context: context, type: .pull)
        let endpoint = try bindFresh(pull, .inproc)
        #expect(try pull.receive(dontWait: true) == nil)

        let push = try Socket(context: context, type: .push)
        try push.connect(endpoint)
        #expect(try pull.receive(dontWait: true) == nil)

        #expect(try push.send([bytes("a"), [], bytes("c")]))
        let events = try Poller([.socket(pull, .readable)]).poll(timeoutMilliseconds: 5_000)
        try #require(events == [.readable])
        #expect(try pull.receive(dontWait: true) == [bytes("a"), [], bytes("c")])
        #expect(try pull.receive(dontWait: true) == nil)
    }

    @Test("a blocking receive with a receive timeout returns nil when the timeout expires")
    func receiveTimeout() throws {
        let context = try Context()
        let pull = try Socket(context: context, type: .pull)
        _ = try bindFresh(pull, .inproc)
        try pull.setReceiveTimeout(milliseconds: 200)
        let start = ContinuousClock.now
        #expect(try pull.receive() == nil)
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(150), "returned after \(elapsed)")
        #expect(elapsed < .seconds(5), "returned after \(elapsed)")
    }

    @Test("send(dontWait: true) returns false from a DEALER with no connection at all")
    func sendWithoutAnyPeer() throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setSendHighWaterMark(1)
        #expect(try dealer.send([bytes("nobody")], dontWait: true) == false)
        #expect(try dealer.send([bytes("still"), bytes("nobody")], dontWait: true) == false)
    }

    /// A DEALER that has connected (without `IMMEDIATE`) gets a pipe at once, even though nobody is
    /// there yet: SNDHWM 1 lets exactly one message in, and the next one would block.
    @Test("send(dontWait: true) returns false once SNDHWM 1 is reached with no peer present",
          arguments: ["inproc", "tcp"])
    func sendHighWaterMarkWithNoPeer(transport: String) throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setSendHighWaterMark(1)
        // Nothing listens on TCP port 1 of the loopback interface; the inproc name is never bound.
        try dealer.connect(transport == "tcp" ? "tcp://127.0.0.1:1" : uniqueInprocEndpoint())

        #expect(try dealer.send([bytes("first")], dontWait: true) == true)
        #expect(try dealer.send([bytes("second")], dontWait: true) == false)
        #expect(try dealer.send([bytes("third"), bytes("part")], dontWait: true) == false)
    }

    @Test("with IMMEDIATE, a DEALER whose connection is not up refuses even the first message")
    func immediateRefusesFirstMessage() throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setImmediate(true)
        try dealer.connect("tcp://127.0.0.1:1")
        #expect(try dealer.send([bytes("first")], dontWait: true) == false)
    }

    @Test("a refused multipart message leaves nothing half-sent behind")
    func refusedMultipartIsAtomic() throws {
        let context = try Context()
        let endpoint = uniqueInprocEndpoint()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setSendHighWaterMark(1)
        try dealer.connect(endpoint)

        #expect(try dealer.send([bytes("a1"), bytes("a2")], dontWait: true) == true)
        #expect(try dealer.send([bytes("b1"), bytes("b2"), bytes("b3")], dontWait: true) == false)

        let router = try Socket(context: context, type: .router)
        try router.bind(endpoint)
        let first = try #require(try router.receive(timeoutMilliseconds: 5_000))
        #expect(Array(first.dropFirst()) == [bytes("a1"), bytes("a2")])

        // Once the queue drains, the next message arrives on its own, not glued to "b1".
        var sent = false
        for _ in 0..<100 where !sent {
            sent = try dealer.send([bytes("c1")], dontWait: true)
            if !sent { Thread.sleep(forTimeInterval: 0.01) }
        }
        try #require(sent, "the DEALER's queue never drained")
        let second = try #require(try router.receive(timeoutMilliseconds: 5_000))
        #expect(Array(second.dropFirst()) == [bytes("c1")])
        #expect(try router.receive(dontWait: true) == nil)
    }

    @Test("a blocking send with a send timeout returns false when the timeout expires")
    func sendTimeout() throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setSendTimeout(milliseconds: 200)
        let start = ContinuousClock.now
        #expect(try dealer.send([bytes("nobody")]) == false)
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(150), "returned after \(elapsed)")
        #expect(elapsed < .seconds(5), "returned after \(elapsed)")
    }

    @Test("ROUTER_MANDATORY makes a send to an unknown identity throw EHOSTUNREACH")
    func routerMandatoryUnknownPeer() throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        try router.setRouterMandatory(true)
        let endpoint = try bindFresh(router, .inproc)

        for dontWait in [false, true] {
            let error = #expect(throws: ZMQError.self) {
                try router.send([bytes("nobody"), bytes("payload")], dontWait: dontWait)
            }
            #expect(error?.isHostUnreachable == true, "dontWait: \(dontWait)")
            #expect(error?.code == EHOSTUNREACH)
            #expect(error?.operation == "zmq_send")
        }

        // A known peer is still reachable after the failures (no half-sent message is pending).
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setIdentity(bytes("known"))
        try dealer.connect(endpoint)
        #expect(try dealer.send([bytes("hi")]))
        #expect(try router.receive(timeoutMilliseconds: 5_000) == [bytes("known"), bytes("hi")])
        #expect(try router.send([bytes("known"), bytes("reply")]))
        #expect(try dealer.receive(timeoutMilliseconds: 5_000) == [bytes("reply")])
    }

    @Test("without ROUTER_MANDATORY a message to an unknown identity is dropped silently")
    func routerDropsUnknownPeer() throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        let endpoint = try bindFresh(router, .inproc)
        #expect(try router.send([bytes("nobody"), bytes("payload")]) == true)

        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setIdentity(bytes("nobody"))
        try dealer.connect(endpoint)
        #expect(try dealer.receive(timeoutMilliseconds: 200) == nil)
    }

    @Test("a monitor reports a bound socket's connections accepted and gone, one event each")
    func monitorReportsConnections() throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        try router.bind("tcp://127.0.0.1:*")
        let monitorEndpoint = "inproc://monitor-\(UUID().uuidString)"
        try router.monitor(monitorEndpoint, events: [.accepted, .disconnected])
        let monitor = try Socket(context: context, type: .pair)
        try monitor.setReceiveTimeout(milliseconds: 5_000)
        try monitor.connect(monitorEndpoint)
        let dealers = try (0..<2).map { _ in try Socket(context: context, type: .dealer) }
        for dealer in dealers { try dealer.connect(router.lastEndpoint) }
        var seen: [Socket.MonitorEvents] = []
        func next() throws -> Socket.MonitorEvents? {
            let message = try #require(try monitor.receive(), "no event within 5 s")
            return Socket.monitorEvent(message)
        }
        for _ in 0..<2 { seen.append(try #require(try next())) }
        #expect(seen == [.accepted, .accepted])
        dealers[0].close()
        #expect(try next() == .disconnected)
        #expect(Socket.monitorEvent([[1, 2, 3]]) == nil, "not a monitor message")
    }
}
