import Testing
import QuireWire
import QuireTestSupport

@Suite("Encoders: exact frames")
struct EncoderTests {
    let body: [[UInt8]] = [bytes("result"), [0x00, 0xFF], []]

    // MARK: Broker → client

    @Test("clientReply MDP/0.2: PARTIAL 0x02 / FINAL 0x03 with the service frame")
    func clientReplyMDP02() {
        #expect(MajordomoCodec.clientReply(.mdp02, .partial, service: "ocr", body: body)
            == [Header.mdpc02, [0x02], bytes("ocr"), bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientReply(.mdp02, .final, service: "ocr", body: body)
            == [Header.mdpc02, [0x03], bytes("ocr"), bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientReply(.mdp02, .final, service: "ocr", body: [])
            == [Header.mdpc02, [0x03], bytes("ocr")])
    }

    @Test("clientReply MDP/0.1: final only, behind an empty frame, no command frame")
    func clientReplyMDP01() {
        #expect(MajordomoCodec.clientReply(.mdp01, .final, service: "ocr", body: body)
            == [[], Header.mdpc01, bytes("ocr"), bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientReply(.mdp01, .final, service: "ocr", body: [])
            == [[], Header.mdpc01, bytes("ocr")])
        #expect(MajordomoCodec.clientReply(.mdp01, .partial, service: "ocr", body: body) == nil)
        #expect(MajordomoCodec.clientReply(.mdp01, .partial, service: "ocr", body: []) == nil)
    }

    @Test("clientReply majortomo: 0x03 partial / 0x04 final, no service frame")
    func clientReplyMajortomo() {
        #expect(MajordomoCodec.clientReply(.majortomo, .partial, service: "ocr", body: body)
            == [[], Header.mdpc02, [0x03], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientReply(.majortomo, .final, service: "ocr", body: body)
            == [[], Header.mdpc02, [0x04], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientReply(.majortomo, .final, service: "ocr", body: [])
            == [[], Header.mdpc02, [0x04]])
    }

    @Test("clientReply encodes a non-ASCII service as UTF-8")
    func clientReplyUTF8Service() {
        #expect(MajordomoCodec.clientReply(.mdp02, .final, service: "ocr.é", body: [])
            == [Header.mdpc02, [0x03], [0x6F, 0x63, 0x72, 0x2E, 0xC3, 0xA9]])
    }

    @Test("unknownPeerReply: MDP/0.2 FINAL shape, empty frame echoed when the message had one")
    func unknownPeerReply() {
        let error = WireError(.badRequest, "unknown protocol header").jsonFrame
        #expect(MajordomoCodec.unknownPeerReply(leadingEmptyFrame: false, service: nil, body: [error])
            == [Header.mdpc02, [0x03], [], error])
        #expect(MajordomoCodec.unknownPeerReply(leadingEmptyFrame: true, service: nil, body: [error])
            == [[], Header.mdpc02, [0x03], [], error])
        #expect(MajordomoCodec.unknownPeerReply(leadingEmptyFrame: false, service: "ocr", body: [error])
            == [Header.mdpc02, [0x03], bytes("ocr"), error])
        #expect(MajordomoCodec.unknownPeerReply(leadingEmptyFrame: true, service: "ocr", body: [])
            == [[], Header.mdpc02, [0x03], bytes("ocr")])
    }

    // MARK: Broker → worker

    @Test("workerRequest: REQUEST 0x02, address, empty delimiter, body")
    func workerRequest() {
        #expect(MajordomoCodec.workerRequest(.mdp02, address: routerAddress, body: body)
            == [Header.mdpw02, [0x02], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerRequest(.mdp01, address: routerAddress, body: body)
            == [[], Header.mdpw01, [0x02], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerRequest(.majortomo, address: routerAddress, body: body)
            == [[], Header.mdpw02, [0x02], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerRequest(.mdp02, address: [0x2A], body: [])
            == [Header.mdpw02, [0x02], [0x2A], []])
    }

    @Test("workerHeartbeat: 0x05, or 0x04 in MDP/0.1")
    func workerHeartbeat() {
        #expect(MajordomoCodec.workerHeartbeat(.mdp02) == [Header.mdpw02, [0x05]])
        #expect(MajordomoCodec.workerHeartbeat(.mdp01) == [[], Header.mdpw01, [0x04]])
        #expect(MajordomoCodec.workerHeartbeat(.majortomo) == [[], Header.mdpw02, [0x05]])
    }

    @Test("workerDisconnect: 0x06, or 0x05 in MDP/0.1")
    func workerDisconnect() {
        #expect(MajordomoCodec.workerDisconnect(.mdp02) == [Header.mdpw02, [0x06]])
        #expect(MajordomoCodec.workerDisconnect(.mdp01) == [[], Header.mdpw01, [0x05]])
        #expect(MajordomoCodec.workerDisconnect(.majortomo) == [[], Header.mdpw02, [0x06]])
    }

    // MARK: Client → broker

    @Test("clientRequest per dialect")
    func clientRequest() {
        #expect(MajordomoCodec.clientRequest(.mdp02, service: "echo", body: body)
            == [Header.mdpc02, [0x01], bytes("echo"), bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientRequest(.mdp01, service: "echo", body: body)
            == [[], Header.mdpc01, bytes("echo"), bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientRequest(.majortomo, service: "echo", body: body)
            == [[], Header.mdpc02, [0x02], bytes("echo"), bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.clientRequest(.mdp02, service: "echo", body: []) == [Header.mdpc02, [0x01], bytes("echo")])
        #expect(MajordomoCodec.clientRequest(.mdp01, service: "echo", body: []) == [[], Header.mdpc01, bytes("echo")])
        #expect(MajordomoCodec.clientRequest(.majortomo, service: "echo", body: []) == [[], Header.mdpc02, [0x02], bytes("echo")])
    }

    // MARK: Worker → broker

    @Test("workerReady per dialect")
    func workerReady() {
        #expect(MajordomoCodec.workerReady(.mdp02, service: "ocr") == [Header.mdpw02, [0x01], bytes("ocr")])
        #expect(MajordomoCodec.workerReady(.mdp01, service: "ocr") == [[], Header.mdpw01, [0x01], bytes("ocr")])
        #expect(MajordomoCodec.workerReady(.majortomo, service: "ocr") == [[], Header.mdpw02, [0x01], bytes("ocr")])
    }

    @Test("workerReply: PARTIAL 0x03 / FINAL 0x04; MDP/0.1 REPLY 0x03 and no partial")
    func workerReply() {
        #expect(MajordomoCodec.workerReply(.mdp02, .partial, address: routerAddress, body: body)
            == [Header.mdpw02, [0x03], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerReply(.mdp02, .final, address: routerAddress, body: body)
            == [Header.mdpw02, [0x04], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerReply(.mdp01, .final, address: routerAddress, body: body)
            == [[], Header.mdpw01, [0x03], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerReply(.mdp01, .partial, address: routerAddress, body: body) == nil)
        #expect(MajordomoCodec.workerReply(.majortomo, .partial, address: routerAddress, body: body)
            == [[], Header.mdpw02, [0x03], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerReply(.majortomo, .final, address: routerAddress, body: body)
            == [[], Header.mdpw02, [0x04], routerAddress, [], bytes("result"), [0x00, 0xFF], []])
        #expect(MajordomoCodec.workerReply(.mdp02, .final, address: routerAddress, body: [])
            == [Header.mdpw02, [0x04], routerAddress, []])
    }
}

@Suite("decodeAtWorker and decodeClientReply: exact frames and failures")
struct PeerDecodeTests {
    @Test("decodeAtWorker heartbeat and disconnect bytes per dialect")
    func workerControl() {
        #expect(MajordomoCodec.decodeAtWorker(.mdp02, [Header.mdpw02, [0x05]]).successValue == .heartbeat)
        #expect(MajordomoCodec.decodeAtWorker(.mdp02, [Header.mdpw02, [0x06]]).successValue == .disconnect)
        #expect(MajordomoCodec.decodeAtWorker(.mdp01, [[], Header.mdpw01, [0x04]]).successValue == .heartbeat)
        #expect(MajordomoCodec.decodeAtWorker(.mdp01, [[], Header.mdpw01, [0x05]]).successValue == .disconnect)
        #expect(MajordomoCodec.decodeAtWorker(.majortomo, [[], Header.mdpw02, [0x05]]).successValue == .heartbeat)
        #expect(MajordomoCodec.decodeAtWorker(.majortomo, [[], Header.mdpw02, [0x06]]).successValue == .disconnect)
    }

    @Test("decodeAtWorker request with a binary body")
    func workerRequest() {
        #expect(MajordomoCodec.decodeAtWorker(.mdp02, [Header.mdpw02, [0x02], routerAddress, []] + binaryBody).successValue
            == .request(address: routerAddress, body: binaryBody))
    }

    static let badWorkerInbound: [(Dialect, [[UInt8]])] = [
        (.mdp02, []),
        (.mdp02, [Header.mdpw02]),
        (.mdp02, [Header.mdpc02, [0x05]]),                      // client header
        (.mdp02, [Header.mdpw01, [0x04]]),                      // other dialect's header
        (.mdp02, [[], Header.mdpw02, [0x05]]),                  // unexpected leading empty frame
        (.mdp02, [Header.mdpw02, [0x05, 0x00]]),                // two-byte command
        (.mdp02, [Header.mdpw02, [0x04]]),                      // FINAL is not broker → worker
        (.mdp02, [Header.mdpw02, [0x02], routerAddress]),       // REQUEST without delimiter
        (.mdp02, [Header.mdpw02, [0x02], routerAddress, bytes("x")]),
        (.mdp01, [Header.mdpw01, [0x04]]),                      // missing leading empty frame
        (.mdp01, [[], Header.mdpw01, [0x06]]),                  // MDP/0.2's DISCONNECT
        (.mdp01, [[], Header.mdpw02, [0x04]]),
        (.majortomo, [Header.mdpw02, [0x05]]),                  // missing leading empty frame
        (.majortomo, [[], Header.mdpw02, [0x04]]),
        (.majortomo, [[]]),
    ]

    @Test("decodeAtWorker rejects malformed messages with bad_request", arguments: badWorkerInbound)
    func workerFailures(_ dialect: Dialect, _ frames: [[UInt8]]) throws {
        let result = MajordomoCodec.decodeAtWorker(dialect, frames)
        #expect(result.successValue == nil)
        let error = try #require(result.failureValue)
        #expect(error.code == .badRequest)
        #expect(!error.message.isEmpty)
    }

    @Test("decodeClientReply reads exact frames per dialect")
    func clientReplies() throws {
        let mdp02Partial = try #require(MajordomoCodec.decodeClientReply(.mdp02, [Header.mdpc02, [0x02], bytes("ocr"), bytes("p")]).successValue)
        #expect(mdp02Partial.0 == .partial)
        #expect(mdp02Partial.body == [bytes("p")])
        let mdp02Final = try #require(MajordomoCodec.decodeClientReply(.mdp02, [Header.mdpc02, [0x03], bytes("ocr")]).successValue)
        #expect(mdp02Final.0 == .final)
        #expect(mdp02Final.body == [])
        let mdp01 = try #require(MajordomoCodec.decodeClientReply(.mdp01, [[], Header.mdpc01, bytes("ocr"), bytes("a"), bytes("b")]).successValue)
        #expect(mdp01.0 == .final)
        #expect(mdp01.body == [bytes("a"), bytes("b")])
        let mdp01Empty = try #require(MajordomoCodec.decodeClientReply(.mdp01, [[], Header.mdpc01, bytes("ocr")]).successValue)
        #expect(mdp01Empty.body == [])
        let majortomoPartial = try #require(MajordomoCodec.decodeClientReply(.majortomo, [[], Header.mdpc02, [0x03], bytes("p")]).successValue)
        #expect(majortomoPartial.0 == .partial)
        #expect(majortomoPartial.body == [bytes("p")])
        let majortomoFinal = try #require(MajordomoCodec.decodeClientReply(.majortomo, [[], Header.mdpc02, [0x04]]).successValue)
        #expect(majortomoFinal.0 == .final)
        #expect(majortomoFinal.body == [])
    }

    static let badClientReplies: [(Dialect, [[UInt8]])] = [
        (.mdp02, []),
        (.mdp02, [Header.mdpc02]),
        (.mdp02, [Header.mdpc02, [0x03]]),                      // no service frame
        (.mdp02, [Header.mdpc02, [0x01], bytes("ocr")]),        // REQUEST is not a reply
        (.mdp02, [Header.mdpc02, [0x04], bytes("ocr")]),        // majortomo's FINAL
        (.mdp02, [[], Header.mdpc02, [0x03], bytes("ocr")]),    // unexpected leading empty frame
        (.mdp02, [Header.mdpc01, [0x03], bytes("ocr")]),
        (.mdp01, [Header.mdpc01, bytes("ocr")]),                // missing leading empty frame
        (.mdp01, [[], Header.mdpc01]),                          // no service frame
        (.mdp01, [[], Header.mdpc02, bytes("ocr")]),
        (.majortomo, [Header.mdpc02, [0x04]]),                  // missing leading empty frame
        (.majortomo, [[], Header.mdpc02]),
        (.majortomo, [[], Header.mdpc02, [0x02]]),              // REQUEST is not a reply
        (.majortomo, [[], Header.mdpc02, [0x04, 0x00]]),
        (.majortomo, [[], Header.mdpc01, [0x04]]),
    ]

    @Test("decodeClientReply rejects malformed replies with bad_request", arguments: badClientReplies)
    func clientReplyFailures(_ dialect: Dialect, _ frames: [[UInt8]]) throws {
        let result = MajordomoCodec.decodeClientReply(dialect, frames)
        #expect(result.successValue == nil)
        let error = try #require(result.failureValue)
        #expect(error.code == .badRequest)
        #expect(!error.message.isEmpty)
    }
}
