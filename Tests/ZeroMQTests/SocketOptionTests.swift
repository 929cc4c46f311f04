import Foundation
import Testing
import ZeroMQ
import QuireTestSupport

@Suite("Socket options")
struct SocketOptionTests {
    @Test("LINGER defaults to 0 and follows the initializer and setLinger")
    func linger() throws {
        let context = try Context()
        #expect(try Socket(context: context, type: .dealer).linger == 0)
        #expect(try Socket(context: context, type: .router, linger: 250).linger == 250)
        let socket = try Socket(context: context, type: .pub)
        try socket.setLinger(milliseconds: -1)
        #expect(try socket.linger == -1)
        try socket.setLinger(milliseconds: 1_500)
        #expect(try socket.linger == 1_500)
    }

    @Test("high-water-mark getters start at libzmq's 1000 and reflect the setters",
          arguments: [Int32(0), 1, 7, 50_000])
    func highWaterMarks(value: Int32) throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .dealer)
        #expect(try socket.sendHighWaterMark == 1_000)
        #expect(try socket.receiveHighWaterMark == 1_000)

        try socket.setSendHighWaterMark(value)
        #expect(try socket.sendHighWaterMark == value)
        #expect(try socket.receiveHighWaterMark == 1_000)

        try socket.setReceiveHighWaterMark(value + 3)
        #expect(try socket.receiveHighWaterMark == value + 3)
        #expect(try socket.sendHighWaterMark == value)
    }

    @Test("a negative high-water mark is rejected with EINVAL")
    func negativeHighWaterMark() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .dealer)
        let error = #expect(throws: ZMQError.self) { try socket.setSendHighWaterMark(-1) }
        #expect(error?.code == EINVAL)
        #expect(error?.context == "ZMQ_SNDHWM")
        #expect(try socket.sendHighWaterMark == 1_000)
    }

    @Test("mechanism is NULL (0) without CURVE")
    func nullMechanism() throws {
        let context = try Context()
        #expect(try Socket(context: context, type: .dealer).mechanism == 0)
    }

    @Test("lastEndpoint is empty before bind and names the real port after binding tcp://127.0.0.1:*")
    func lastEndpointHasRealPort() throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        #expect(try router.lastEndpoint == "")

        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint
        let prefix = "tcp://127.0.0.1:"
        try #require(endpoint.hasPrefix(prefix), "\(endpoint)")
        let port = try #require(Int(endpoint.dropFirst(prefix.count)), "\(endpoint)")
        #expect((1...65_535).contains(port))

        // The endpoint really is connectable.
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.connect(endpoint)
        #expect(try dealer.send([bytes("ping")]))
        #expect(try router.receive(timeoutMilliseconds: 10_000)?.last == bytes("ping"))
    }

    @Test("lastEndpoint names an inproc endpoint as bound")
    func lastEndpointInproc() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .pull)
        let endpoint = uniqueInprocEndpoint()
        try socket.bind(endpoint)
        #expect(try socket.lastEndpoint == endpoint)
    }
}

/// `ZMQ_MAXMSGSIZE` is enforced by the ZMTP decoder, so these run over TCP.
@Suite("Socket MAXMSGSIZE")
struct MaxMessageSizeTests {
    static let limit = 1_024

    /// A ROUTER with MAXMSGSIZE `limit` and a DEALER connected to it over TCP.
    private func pair(_ context: Context) throws -> (router: Socket, dealer: Socket) {
        let router = try Socket(context: context, type: .router)
        try router.setMaxMessageSize(Int64(Self.limit))
        let endpoint = try bindFresh(router, .tcp)
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setReconnectInterval(milliseconds: 50, maxMilliseconds: 200)
        try dealer.connect(endpoint)
        return (router, dealer)
    }

    @Test("a frame of exactly the limit is delivered")
    func frameAtLimitDelivered() throws {
        let context = try Context()
        let (router, dealer) = try pair(context)
        let frame = [UInt8](repeating: 0xAB, count: Self.limit)
        #expect(try dealer.send([frame]))
        let received = try #require(try router.receive(timeoutMilliseconds: 10_000))
        #expect(received.count == 2)
        #expect(received.last == frame)
    }

    @Test("the limit is per frame: a multipart message larger in total is delivered")
    func limitIsPerFrame() throws {
        let context = try Context()
        let (router, dealer) = try pair(context)
        let frames = (0..<4).map { [UInt8](repeating: UInt8($0), count: Self.limit) }
        #expect(try dealer.send(frames))
        let received = try #require(try router.receive(timeoutMilliseconds: 10_000))
        #expect(Array(received.dropFirst()) == frames)
    }

    @Test("a frame over the limit is not delivered; the peer is cut off and reconnects")
    func frameOverLimitDropped() throws {
        let context = try Context()
        let (router, dealer) = try pair(context)

        // Make sure the connection is up first, so the oversized frame really goes over the wire.
        #expect(try dealer.send([bytes("hello")]))
        let hello = try #require(try router.receive(timeoutMilliseconds: 10_000))
        #expect(hello.last == bytes("hello"))
        let firstIdentity = hello[0]

        #expect(try dealer.send([[UInt8](repeating: 0xCD, count: Self.limit + 1)]))
        #expect(try router.receive(timeoutMilliseconds: 500) == nil, "an oversized frame was delivered")

        // The ROUTER dropped the connection: its old identity is no longer routable...
        try router.setRouterMandatory(true)
        let error = #expect(throws: ZMQError.self) { try router.send([firstIdentity, bytes("x")]) }
        #expect(error?.isHostUnreachable == true)

        // ...and once the DEALER has reconnected, frames within the limit flow again.
        var delivered: [Frame]?
        for _ in 0..<40 where delivered == nil {
            #expect(try dealer.send([bytes("probe")]))
            delivered = try router.receive(timeoutMilliseconds: 250)
        }
        let probe = try #require(delivered, "no frame got through after the reconnection")
        #expect(probe.last == bytes("probe"))
        #expect(probe[0] != firstIdentity, "expected a new connection with a new identity")
    }

    @Test("libzmq does not enforce MAXMSGSIZE over inproc")
    func notEnforcedOverInproc() throws {
        let context = try Context()
        let pull = try Socket(context: context, type: .pull)
        try pull.setMaxMessageSize(10)
        let endpoint = try bindFresh(pull, .inproc)
        let push = try Socket(context: context, type: .push)
        try push.connect(endpoint)
        let frame = [UInt8](repeating: 7, count: 16)
        #expect(try push.send([frame]))
        #expect(try pull.receive(timeoutMilliseconds: 5_000) == [frame])
    }
}
