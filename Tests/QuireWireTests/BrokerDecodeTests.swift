import Testing
import QuireWire
import QuireTestSupport

/// One message the broker should accept, and what it should decode to.
struct AcceptedMessage: Sendable, CustomTestStringConvertible {
    var name: String
    var frames: [[UInt8]]
    var expected: BrokerInbound
    var testDescription: String { name }
}

@Suite("decodeAtBroker: accepted messages")
struct BrokerDecodeAcceptTests {
    static let clientRequests: [AcceptedMessage] = [
        // MDP/0.2: ["MDPC02", 0x01, service, body…]
        .init(name: "mdp02 request, two body frames",
              frames: [Header.mdpc02, [0x01], bytes("echo"), bytes("hello"), bytes("world")],
              expected: .clientRequest(.mdp02, service: "echo", body: [bytes("hello"), bytes("world")])),
        .init(name: "mdp02 request, empty body",
              frames: [Header.mdpc02, [0x01], bytes("echo")],
              expected: .clientRequest(.mdp02, service: "echo", body: [])),
        .init(name: "mdp02 request, binary body",
              frames: [Header.mdpc02, [0x01], bytes("ocr")] + binaryBody,
              expected: .clientRequest(.mdp02, service: "ocr", body: binaryBody)),
        .init(name: "mdp02 request, body of one empty frame",
              frames: [Header.mdpc02, [0x01], bytes("echo"), []],
              expected: .clientRequest(.mdp02, service: "echo", body: [[]])),
        // MDP/0.1: ["", "MDPC01", service, body…]
        .init(name: "mdp01 request, two body frames",
              frames: [[], Header.mdpc01, bytes("echo"), bytes("hello"), bytes("world")],
              expected: .clientRequest(.mdp01, service: "echo", body: [bytes("hello"), bytes("world")])),
        .init(name: "mdp01 request, empty body",
              frames: [[], Header.mdpc01, bytes("echo")],
              expected: .clientRequest(.mdp01, service: "echo", body: [])),
        .init(name: "mdp01 request, binary body",
              frames: [[], Header.mdpc01, bytes("ocr")] + binaryBody,
              expected: .clientRequest(.mdp01, service: "ocr", body: binaryBody)),
        // majortomo: ["", "MDPC02", 0x02, service, body…]
        .init(name: "majortomo request, two body frames",
              frames: [[], Header.mdpc02, [0x02], bytes("echo"), bytes("hello"), bytes("world")],
              expected: .clientRequest(.majortomo, service: "echo", body: [bytes("hello"), bytes("world")])),
        .init(name: "majortomo request, empty body",
              frames: [[], Header.mdpc02, [0x02], bytes("echo")],
              expected: .clientRequest(.majortomo, service: "echo", body: [])),
        .init(name: "majortomo request, binary body",
              frames: [[], Header.mdpc02, [0x02], bytes("ocr")] + binaryBody,
              expected: .clientRequest(.majortomo, service: "ocr", body: binaryBody)),
        // Service names at the edges of what is allowed.
        .init(name: "service of exactly 255 bytes",
              frames: [Header.mdpc02, [0x01], Array(repeating: UInt8(ascii: "s"), count: 255), bytes("x")],
              expected: .clientRequest(.mdp02, service: String(repeating: "s", count: 255), body: [bytes("x")])),
        .init(name: "service of one byte",
              frames: [Header.mdpc02, [0x01], bytes("a")],
              expected: .clientRequest(.mdp02, service: "a", body: [])),
        .init(name: "non-ASCII UTF-8 service",
              frames: [[], Header.mdpc01, [0x6F, 0x63, 0x72, 0x2E, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x93, 0x84]],
              expected: .clientRequest(.mdp01, service: "ocr.é€📄", body: [])),
        .init(name: "service with spaces and punctuation",
              frames: [Header.mdpc02, [0x01], bytes("mmi.service ocr/v2")],
              expected: .clientRequest(.mdp02, service: "mmi.service ocr/v2", body: [])),
    ]

    static let workerCommands: [AcceptedMessage] = [
        // MDP/0.2 worker: no leading empty frame.
        .init(name: "mdp02 READY",
              frames: [Header.mdpw02, [0x01], bytes("ocr")],
              expected: .worker(.mdp02, .ready(service: "ocr"))),
        .init(name: "mdp02 PARTIAL",
              frames: [Header.mdpw02, [0x03], routerAddress, [], bytes("page 1")],
              expected: .worker(.mdp02, .reply(.partial, address: routerAddress, body: [bytes("page 1")]))),
        .init(name: "mdp02 FINAL, multi-frame body",
              frames: [Header.mdpw02, [0x04], routerAddress, [], bytes("a"), bytes("b"), bytes("c")],
              expected: .worker(.mdp02, .reply(.final, address: routerAddress, body: [bytes("a"), bytes("b"), bytes("c")]))),
        .init(name: "mdp02 FINAL, empty body",
              frames: [Header.mdpw02, [0x04], routerAddress, []],
              expected: .worker(.mdp02, .reply(.final, address: routerAddress, body: []))),
        .init(name: "mdp02 FINAL, binary body",
              frames: [Header.mdpw02, [0x04], routerAddress, []] + binaryBody,
              expected: .worker(.mdp02, .reply(.final, address: routerAddress, body: binaryBody))),
        .init(name: "mdp02 FINAL, empty address",
              frames: [Header.mdpw02, [0x04], [], [], bytes("x")],
              expected: .worker(.mdp02, .reply(.final, address: [], body: [bytes("x")]))),
        .init(name: "mdp02 HEARTBEAT",
              frames: [Header.mdpw02, [0x05]],
              expected: .worker(.mdp02, .heartbeat)),
        .init(name: "mdp02 DISCONNECT",
              frames: [Header.mdpw02, [0x06]],
              expected: .worker(.mdp02, .disconnect)),
        // MDP/0.1 worker: leading empty frame, REPLY 0x03, HEARTBEAT 0x04, DISCONNECT 0x05.
        .init(name: "mdp01 READY",
              frames: [[], Header.mdpw01, [0x01], bytes("ocr")],
              expected: .worker(.mdp01, .ready(service: "ocr"))),
        .init(name: "mdp01 REPLY",
              frames: [[], Header.mdpw01, [0x03], routerAddress, [], bytes("done"), bytes("2")],
              expected: .worker(.mdp01, .reply(.final, address: routerAddress, body: [bytes("done"), bytes("2")]))),
        .init(name: "mdp01 REPLY, empty body",
              frames: [[], Header.mdpw01, [0x03], routerAddress, []],
              expected: .worker(.mdp01, .reply(.final, address: routerAddress, body: []))),
        .init(name: "mdp01 REPLY, binary body",
              frames: [[], Header.mdpw01, [0x03], routerAddress, []] + binaryBody,
              expected: .worker(.mdp01, .reply(.final, address: routerAddress, body: binaryBody))),
        .init(name: "mdp01 HEARTBEAT",
              frames: [[], Header.mdpw01, [0x04]],
              expected: .worker(.mdp01, .heartbeat)),
        .init(name: "mdp01 DISCONNECT",
              frames: [[], Header.mdpw01, [0x05]],
              expected: .worker(.mdp01, .disconnect)),
        // majortomo worker: MDP/0.2 commands behind a leading empty frame.
        .init(name: "majortomo READY",
              frames: [[], Header.mdpw02, [0x01], bytes("ocr")],
              expected: .worker(.majortomo, .ready(service: "ocr"))),
        .init(name: "majortomo PARTIAL",
              frames: [[], Header.mdpw02, [0x03], routerAddress, [], bytes("page 1")],
              expected: .worker(.majortomo, .reply(.partial, address: routerAddress, body: [bytes("page 1")]))),
        .init(name: "majortomo FINAL",
              frames: [[], Header.mdpw02, [0x04], routerAddress, [], bytes("a"), bytes("b")],
              expected: .worker(.majortomo, .reply(.final, address: routerAddress, body: [bytes("a"), bytes("b")]))),
        .init(name: "majortomo FINAL, binary body",
              frames: [[], Header.mdpw02, [0x04], routerAddress, []] + binaryBody,
              expected: .worker(.majortomo, .reply(.final, address: routerAddress, body: binaryBody))),
        .init(name: "majortomo HEARTBEAT",
              frames: [[], Header.mdpw02, [0x05]],
              expected: .worker(.majortomo, .heartbeat)),
        .init(name: "majortomo DISCONNECT",
              frames: [[], Header.mdpw02, [0x06]],
              expected: .worker(.majortomo, .disconnect)),
    ]

    @Test("client REQUEST", arguments: clientRequests)
    func clientRequest(_ message: AcceptedMessage) throws {
        let decoded = MajordomoCodec.decodeAtBroker(message.frames)
        #expect(decoded.failureValue == nil, "unexpected failure: \(String(describing: decoded.failureValue?.error))")
        #expect(decoded.successValue == message.expected)
    }

    @Test("worker command", arguments: workerCommands)
    func workerCommand(_ message: AcceptedMessage) throws {
        let decoded = MajordomoCodec.decodeAtBroker(message.frames)
        #expect(decoded.failureValue == nil, "unexpected failure: \(String(describing: decoded.failureValue?.error))")
        #expect(decoded.successValue == message.expected)
    }

    @Test("the body is every frame after the service, byte for byte, however many")
    func bodyFramesArePreservedExactly() throws {
        let body: [[UInt8]] = (0..<40).map { i in Array(repeating: UInt8(i), count: i) }
        let decoded = try #require(MajordomoCodec.decodeAtBroker([Header.mdpc02, [0x01], bytes("bulk")] + body).successValue)
        guard case .clientRequest(let dialect, let service, let decodedBody) = decoded else {
            Issue.record("expected a client request, got \(decoded)")
            return
        }
        #expect(dialect == .mdp02)
        #expect(service == "bulk")
        #expect(decodedBody.count == 40)
        #expect(decodedBody == body)
        #expect(decodedBody[0] == [])
        #expect(decodedBody[39] == Array(repeating: 39, count: 39))
    }

    @Test("a client frame that looks like a command after the service is body, not a command")
    func commandLikeBodyFramesAreBody() {
        let frames: [[UInt8]] = [Header.mdpc02, [0x01], bytes("echo"), [0x01], Header.mdpw02, []]
        #expect(MajordomoCodec.decodeAtBroker(frames).successValue
            == .clientRequest(.mdp02, service: "echo", body: [[0x01], Header.mdpw02, []]))
    }
}

@Suite("Dialect and protocol constants")
struct DialectConstantTests {
    @Test("header constants are the RFC's ASCII bytes")
    func headerBytes() {
        #expect(MDP.clientHeader02 == Header.mdpc02)
        #expect(MDP.workerHeader02 == Header.mdpw02)
        #expect(MDP.clientHeader01 == Header.mdpc01)
        #expect(MDP.workerHeader01 == Header.mdpw01)
        #expect(MDP.maxServiceNameBytes == 255)
    }

    @Test("leading empty frame and busy heartbeats per dialect")
    func dialectFlags() {
        #expect(Dialect.allCases == [.mdp02, .mdp01, .majortomo])
        #expect(Dialect.mdp02.leadingEmptyFrame == false)
        #expect(Dialect.mdp01.leadingEmptyFrame == true)
        #expect(Dialect.majortomo.leadingEmptyFrame == true)
        #expect(Dialect.mdp02.heartbeatsWhileBusy == true)
        #expect(Dialect.mdp01.heartbeatsWhileBusy == false)
        #expect(Dialect.majortomo.heartbeatsWhileBusy == false)
    }
}
