import Dispatch
import Foundation
import QuireSupport
import QuireWire
import Testing
import ZeroMQ
@testable import QuireBroker

@Suite("CURVE and the ZAP handler")
struct CurveBrokerTests {
    let logger = Logger(label: "test", level: .critical)

    @Test("RFC 27 decisions: listed CURVE key 200 with the key as user id, others 400, garbage 500")
    func decisions() throws {
        let listed = try CurveKeyPair.generate().publicKey
        let other = try CurveKeyPair.generate().publicKey
        func request(_ mechanism: String, _ credentials: [[UInt8]]) -> [[UInt8]] {
            [Array("1.0".utf8), Array("7".utf8), Array("quire".utf8), Array("127.0.0.1".utf8), [], Array(mechanism.utf8)] + credentials
        }
        let ok = ZAPHandler.decide(request("CURVE", [listed]), allowedKeys: [listed])
        #expect(ok.allowed)
        #expect(ok.frames == [Array("1.0".utf8), Array("7".utf8), Array("200".utf8), Array("OK".utf8), Array(try Z85.encode(listed).utf8), []])
        let refused = ZAPHandler.decide(request("CURVE", [other]), allowedKeys: [listed])
        #expect(!refused.allowed && refused.frames[2] == Array("400".utf8) && refused.frames[1] == Array("7".utf8))
        #expect(!ZAPHandler.decide(request("NULL", []), allowedKeys: [listed]).allowed)
        #expect(!ZAPHandler.decide(request("PLAIN", [Array("u".utf8), Array("p".utf8)]), allowedKeys: [listed]).allowed)
        #expect(!ZAPHandler.decide(request("CURVE", [Array(listed.prefix(31))]), allowedKeys: [listed]).allowed)
        #expect(ZAPHandler.decide([Array("2.0".utf8)], allowedKeys: [listed]).frames[2] == Array("500".utf8))
    }

    @Test("requireBound fails without a handler and passes with one; a second handler cannot bind")
    func requireBound() throws {
        let context = try Context()
        defer { context.terminate() }
        #expect(throws: ZMQError.self) { try ZAPHandler.requireBound(in: context) }
        let handler = try ZAPHandler(context: context, allowedKeys: [], logger: logger)
        try ZAPHandler.requireBound(in: context)
        #expect(throws: (any Error).self) { try ZAPHandler(context: context, allowedKeys: [], logger: logger) }
        handler.stop()
    }

    @Test("a broker with CURVE on and no ZAP handler does not start")
    func refusesWithoutHandler() throws {
        let context = try Context()
        defer { context.terminate() }
        let server = try CurveKeyPair.generate()
        let configuration = BrokerConfiguration(bind: "tcp://127.0.0.1:*", curve: CurveServerSettings(secretKey: server.secretKey, allowedKeys: nil))
        let broker = try Broker(configuration: configuration, context: context, logger: logger)
        #expect(throws: ZMQError.self) { try broker.run() }
        #expect(broker.boundEndpoint == nil)
    }

    @Test("listed clients get answers; unlisted and plain clients get nothing")
    func endToEnd() throws {
        let context = try Context()
        let server = try CurveKeyPair.generate()
        let listed = try CurveKeyPair.generate()
        let unlisted = try CurveKeyPair.generate()
        let zap = try ZAPHandler(context: context, allowedKeys: [listed.publicKey], logger: logger)
        let configuration = BrokerConfiguration(bind: "tcp://127.0.0.1:*", curve: CurveServerSettings(secretKey: server.secretKey, allowedKeys: [listed.publicKey]))
        let broker = try Broker(configuration: configuration, context: context, logger: logger)
        let bound = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? broker.run(onBound: { _ in bound.signal() })
            done.signal()
        }.start()
        #expect(bound.wait(timeout: .now() + 10) == .success)
        let endpoint = try #require(broker.boundEndpoint)
        defer {
            broker.stop()
            _ = done.wait(timeout: .now() + 5)
            zap.stop()
            context.terminate()
        }
        func ask(_ curve: CurveClientSettings?) throws -> [[UInt8]]? {
            let socket = try Socket(context: context, type: .dealer)
            defer { socket.close() }
            try socket.applyCurve(curve)
            try socket.setSendTimeout(milliseconds: 1_000)
            try socket.setReceiveTimeout(milliseconds: 1_000)
            try socket.connect(endpoint)
            guard try socket.send(MajordomoCodec.clientRequest(.mdp02, service: "mmi.service", body: [Array("echo".utf8)])) else { return nil }
            return try socket.receive()
        }
        let reply = try #require(try ask(CurveClientSettings(serverKey: server.publicKey, keyPair: listed)))
        #expect(reply.last == Array("404".utf8))
        #expect(try ask(CurveClientSettings(serverKey: server.publicKey, keyPair: unlisted)) == nil)
        #expect(try ask(nil) == nil)
        #expect(zap.decisions.allowed >= 1 && zap.decisions.denied >= 1)
    }
}
