import Foundation
import Testing
import ZeroMQ
import QuireTestSupport

@Suite("Z85")
struct Z85Tests {
    /// The test vector of ZeroMQ RFC 32 (Z85).
    static let rfcBytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]

    @Test("encodes the RFC 32 test vector")
    func encodeRFCVector() throws {
        #expect(try Z85.encode(Self.rfcBytes) == "HelloWorld")
    }

    @Test("decodes the RFC 32 test vector")
    func decodeRFCVector() throws {
        #expect(try Z85.decode("HelloWorld") == Self.rfcBytes)
    }

    @Test("decode(encode(x)) == x for 4-byte multiples", arguments: [4, 8, 32, 64, 400])
    func roundTrip(count: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let data = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = try Z85.encode(data)
        #expect(text.utf8.count == count * 5 / 4)
        #expect(try Z85.decode(text) == data)
    }

    @Test("extreme bytes round-trip", arguments: [[UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xFF, count: 32)])
    func extremes(data: [UInt8]) throws {
        #expect(try Z85.decode(try Z85.encode(data)) == data)
    }

    @Test("decode rejects text whose length is not a multiple of 5",
          arguments: ["H", "Hell", "HelloWorl", "HelloWorld!", "HelloWorldHelloWorl"])
    func decodeWrongLength(text: String) throws {
        let error = #expect(throws: ZMQError.self) { try Z85.decode(text) }
        #expect(error?.code == EINVAL)
        #expect(error?.operation == "zmq_z85_decode")
    }

    @Test("a single 5-character group decodes to 4 bytes")
    func singleGroup() throws {
        #expect(try Z85.decode("Hello") == [0x86, 0x4F, 0xD2, 0x6F])
    }

    @Test("decode rejects characters outside the Z85 alphabet", arguments: ["Hello,orld", "Hello orld", "Hello~orld", "Hello\"orld"])
    func decodeBadCharacters(text: String) throws {
        let error = #expect(throws: ZMQError.self) { try Z85.decode(text) }
        #expect(error?.code == EINVAL)
        #expect(error?.operation == "zmq_z85_decode")
    }

    @Test("encode rejects data whose length is not a multiple of 4", arguments: [1, 3, 5, 31])
    func encodeWrongLength(count: Int) throws {
        let error = #expect(throws: ZMQError.self) { try Z85.encode([UInt8](repeating: 1, count: count)) }
        #expect(error?.code == EINVAL)
        #expect(error?.operation == "zmq_z85_encode")
    }
}

@Suite("CURVE")
struct CurveTests {
    @Test("generate() gives 32-byte keys, different every time")
    func generate() throws {
        let first = try CurveKeyPair.generate()
        let second = try CurveKeyPair.generate()
        #expect(first.publicKey.count == 32)
        #expect(first.secretKey.count == 32)
        #expect(first.publicKey != first.secretKey)
        #expect(first != second)
        #expect(first.publicKey != second.publicKey)
        #expect(first.secretKey != second.secretKey)
    }

    @Test("publicKey(forSecret:) gives back the generated public key")
    func publicKeyForSecret() throws {
        for _ in 0..<5 {
            let pair = try CurveKeyPair.generate()
            #expect(try CurveKeyPair.publicKey(forSecret: pair.secretKey) == pair.publicKey)
        }
    }

    /// RFC 7748 section 6.1: Alice's X25519 key pair (CURVE uses Curve25519 scalar multiplication).
    @Test("publicKey(forSecret:) matches the RFC 7748 X25519 test vector")
    func publicKeyRFC7748() throws {
        let secret = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let expected = hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(try CurveKeyPair.publicKey(forSecret: secret) == expected)
    }

    @Test("publicKey(forSecret:) rejects a secret that is not 32 bytes")
    func publicKeyForShortSecret() throws {
        // libzmq decodes the Z85 text into a 32-byte buffer without checking its length: a short secret
        // leaves the rest of that buffer uninitialised, a long one overflows it. The wrapper must check.
        _ = #expect(throws: ZMQError.self) { try CurveKeyPair.publicKey(forSecret: [1, 2, 3, 4, 5, 6, 7, 8]) }
        _ = #expect(throws: ZMQError.self) { try CurveKeyPair.publicKey(forSecret: [UInt8](repeating: 1, count: 64)) }
    }

    /// A CURVE server (ROUTER) and a client (DEALER) on TCP.
    private func curvePair(_ context: Context, serverKeys: CurveKeyPair, serverKeyForClient: [UInt8])
        throws -> (server: Socket, client: Socket)
    {
        let server = try Socket(context: context, type: .router)
        try server.setCurveServer(secretKey: serverKeys.secretKey)
        let endpoint = try bindFresh(server, .tcp)
        let client = try Socket(context: context, type: .dealer)
        try client.setCurveClient(serverKey: serverKeyForClient, keyPair: try CurveKeyPair.generate())
        try client.connect(endpoint)
        return (server, client)
    }

    @Test("a CURVE client and server with matching keys exchange messages; both report mechanism 2")
    func curveExchange() throws {
        let context = try Context()
        let serverKeys = try CurveKeyPair.generate()
        let (server, client) = try curvePair(context, serverKeys: serverKeys, serverKeyForClient: serverKeys.publicKey)

        let secret: [Frame] = [bytes("secret"), [0, 1, 2, 0], []]
        #expect(try client.send(secret))
        let request = try #require(try server.receive(timeoutMilliseconds: 10_000), "server received nothing")
        #expect(Array(request.dropFirst()) == secret)

        #expect(try server.send([request[0], bytes("reply")]))
        #expect(try client.receive(timeoutMilliseconds: 10_000) == [bytes("reply")])

        #expect(try server.mechanism == 2)
        #expect(try client.mechanism == 2)
    }

    @Test("a CURVE client with the wrong server key gets nothing through")
    func wrongServerKey() throws {
        let context = try Context()
        let serverKeys = try CurveKeyPair.generate()
        let impostor = try CurveKeyPair.generate()
        let (server, client) = try curvePair(context, serverKeys: serverKeys, serverKeyForClient: impostor.publicKey)

        #expect(try client.send([bytes("hello?")]))
        #expect(try server.receive(timeoutMilliseconds: 500) == nil)
    }

    @Test("a plain (NULL) client gets nothing through to a CURVE server")
    func nullClientRejected() throws {
        let context = try Context()
        let serverKeys = try CurveKeyPair.generate()
        let server = try Socket(context: context, type: .router)
        try server.setCurveServer(secretKey: serverKeys.secretKey)
        let endpoint = try bindFresh(server, .tcp)
        let client = try Socket(context: context, type: .dealer)
        try client.connect(endpoint)

        #expect(try client.send([bytes("hello?")]))
        #expect(try server.receive(timeoutMilliseconds: 500) == nil)
    }

    @Test("CURVE keys must be 32 bytes", arguments: [0, 31, 33])
    func keyLength(count: Int) throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .router)
        let error = #expect(throws: ZMQError.self) {
            try socket.setCurveServer(secretKey: [UInt8](repeating: 7, count: count))
        }
        #expect(error?.code == EINVAL)
        #expect(error?.context == "ZMQ_CURVE_SECRETKEY")
    }
}

private func hex(_ text: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        result.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return result
}
