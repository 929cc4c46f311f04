import Testing
import QuireWire
import QuireTestSupport

/// Bodies every round trip is run with: none, text, binary with empty frames in it, many frames.
private let bodies: [[[UInt8]]] = [
    [],
    [bytes("hello")],
    [[]],
    binaryBody,
    (0..<16).map { [UInt8($0), UInt8(255 - $0)] },
]

private let services = ["echo", "ocr.é📄", String(repeating: "x", count: 255), "mmi.service"]

private let addresses: [[UInt8]] = [routerAddress, [], [0x00], Array(repeating: 0xAB, count: 255)]

@Suite("Round trips per dialect")
struct RoundTripTests {
    @Test("clientRequest → decodeAtBroker", arguments: Dialect.allCases)
    func clientRequest(_ dialect: Dialect) {
        for service in services {
            for body in bodies {
                let frames = MajordomoCodec.clientRequest(dialect, service: service, body: body)
                #expect(MajordomoCodec.decodeAtBroker(frames).successValue
                    == .clientRequest(dialect, service: service, body: body),
                    "service \(service), \(body.count) body frames")
            }
        }
    }

    @Test("workerReply → decodeAtBroker", arguments: Dialect.allCases)
    func workerReply(_ dialect: Dialect) throws {
        var encoded = 0
        for kind in [ReplyKind.partial, .final] {
            for address in addresses {
                for body in bodies {
                    guard let frames = MajordomoCodec.workerReply(dialect, kind, address: address, body: body) else {
                        #expect(dialect == .mdp01 && kind == .partial, "only MDP/0.1 partials are not encodable")
                        continue
                    }
                    encoded += 1
                    #expect(MajordomoCodec.decodeAtBroker(frames).successValue
                        == .worker(dialect, .reply(kind, address: address, body: body)))
                }
            }
        }
        #expect(encoded == (dialect == .mdp01 ? 1 : 2) * addresses.count * bodies.count)
    }

    @Test("workerReady / workerHeartbeat / workerDisconnect → decodeAtBroker", arguments: Dialect.allCases)
    func workerControl(_ dialect: Dialect) {
        for service in services {
            #expect(MajordomoCodec.decodeAtBroker(MajordomoCodec.workerReady(dialect, service: service)).successValue
                == .worker(dialect, .ready(service: service)))
        }
        // Heartbeat and disconnect have the same shape in both directions.
        #expect(MajordomoCodec.decodeAtBroker(MajordomoCodec.workerHeartbeat(dialect)).successValue == .worker(dialect, .heartbeat))
        #expect(MajordomoCodec.decodeAtBroker(MajordomoCodec.workerDisconnect(dialect)).successValue == .worker(dialect, .disconnect))
    }

    @Test("workerRequest / workerHeartbeat / workerDisconnect → decodeAtWorker", arguments: Dialect.allCases)
    func workerInbound(_ dialect: Dialect) {
        for address in addresses {
            for body in bodies {
                let frames = MajordomoCodec.workerRequest(dialect, address: address, body: body)
                #expect(MajordomoCodec.decodeAtWorker(dialect, frames).successValue == .request(address: address, body: body))
            }
        }
        #expect(MajordomoCodec.decodeAtWorker(dialect, MajordomoCodec.workerHeartbeat(dialect)).successValue == .heartbeat)
        #expect(MajordomoCodec.decodeAtWorker(dialect, MajordomoCodec.workerDisconnect(dialect)).successValue == .disconnect)
    }

    @Test("clientReply → decodeClientReply", arguments: Dialect.allCases)
    func clientReply(_ dialect: Dialect) throws {
        for kind in [ReplyKind.partial, .final] {
            for body in bodies {
                guard let frames = MajordomoCodec.clientReply(dialect, kind, service: "ocr", body: body) else {
                    #expect(dialect == .mdp01 && kind == .partial, "only MDP/0.1 partials are not encodable")
                    continue
                }
                let decoded = try #require(MajordomoCodec.decodeClientReply(dialect, frames).successValue)
                #expect(decoded.0 == kind)
                #expect(decoded.body == body)
            }
        }
    }

    @Test("a reply is only understood in its own dialect", arguments: Dialect.allCases)
    func crossDialect(_ dialect: Dialect) throws {
        for other in Dialect.allCases where other != dialect {
            let reply = try #require(MajordomoCodec.clientReply(other, .final, service: "ocr", body: [bytes("x")]))
            #expect(MajordomoCodec.decodeClientReply(dialect, reply).successValue == nil, "\(other) reply read as \(dialect)")
            let request = MajordomoCodec.workerRequest(other, address: routerAddress, body: [bytes("x")])
            #expect(MajordomoCodec.decodeAtWorker(dialect, request).successValue == nil, "\(other) request read as \(dialect)")
        }
    }

    @Test("the broker answers a decode failure in a shape the client's dialect decodes", arguments: Dialect.allCases)
    func failureAnswer(_ dialect: Dialect) throws {
        // A request with an empty service name, in each dialect.
        var frames = MajordomoCodec.clientRequest(dialect, service: "x", body: [bytes("b")])
        frames[frames.count - 2] = []
        let failure = try #require(MajordomoCodec.decodeAtBroker(frames).failureValue)
        #expect(failure.role == .client)
        #expect(failure.dialect == dialect)
        let answer = try #require(MajordomoCodec.clientReply(failure.dialect, .final, service: failure.service ?? "",
                                                            body: [failure.error.jsonFrame]))
        let decoded = try #require(MajordomoCodec.decodeClientReply(dialect, answer).successValue)
        #expect(decoded.0 == .final)
        #expect(decoded.body.count == 1)
        #expect(WireError(jsonFrame: decoded.body[0]) == failure.error)
    }
}
