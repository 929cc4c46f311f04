import Testing
import QuireWire
import QuireTestSupport

/// One message the broker must reject, and how it must describe the rejection.
struct RejectedMessage: Sendable, CustomTestStringConvertible {
    var name: String
    var frames: [[UInt8]]
    var role: PeerRole
    var dialect: Dialect
    /// The `leadingEmptyFrame` the failure must report (whether frame 0 was empty).
    var leadingEmptyFrame: Bool
    /// A piece of the error message that says why, so that a message rejected for the wrong reason fails.
    var reason: String
    var testDescription: String { name }
}

private let longService = Array(repeating: UInt8(ascii: "s"), count: 256)

@Suite("decodeAtBroker: rejected messages")
struct BrokerDecodeFailureTests {
    static let envelope: [RejectedMessage] = [
        .init(name: "empty message", frames: [],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: false, reason: "empty message"),
        .init(name: "only an empty frame", frames: [[]],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: true, reason: "empty message"),
        .init(name: "unknown text header", frames: [bytes("HTTP/1.1"), bytes("GET /")],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown protocol header 'HTTP/1.1'"),
        .init(name: "unknown header behind an empty frame", frames: [[], bytes("MDPC03"), [0x01], bytes("echo")],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: true, reason: "unknown protocol header 'MDPC03'"),
        .init(name: "lower-case header", frames: [bytes("mdpc02"), [0x01], bytes("echo")],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown protocol header"),
        .init(name: "binary header", frames: [[0xFF, 0x00, 0x01]],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown protocol header 0xff 0x00 0x01"),
        .init(name: "two leading empty frames", frames: [[], [], Header.mdpc02, [0x01], bytes("echo")],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: true, reason: "unknown protocol header (empty)"),
        .init(name: "header with a trailing byte", frames: [Header.mdpc02 + [0x00], [0x01], bytes("echo")],
              role: .unknown, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown protocol header"),
    ]

    static let client: [RejectedMessage] = [
        // Wrong command byte per dialect.
        .init(name: "mdp02 client command 0x02 (majortomo's)", frames: [Header.mdpc02, [0x02], bytes("echo")],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown client command 0x02; expected REQUEST 0x01"),
        .init(name: "majortomo client command 0x01 (MDP/0.2's)", frames: [[], Header.mdpc02, [0x01], bytes("echo")],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "unknown client command 0x01; expected REQUEST 0x02"),
        .init(name: "mdp02 client command 0x03", frames: [Header.mdpc02, [0x03], bytes("echo"), bytes("x")],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown client command 0x03"),
        .init(name: "mdp02 client command of two bytes", frames: [Header.mdpc02, [0x01, 0x00], bytes("echo")],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown client command 0x01 0x00"),
        .init(name: "mdp02 client empty command frame", frames: [Header.mdpc02, [], bytes("echo")],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown client command (empty)"),
        .init(name: "mdp02 client without command frame", frames: [Header.mdpc02],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "missing its command frame"),
        .init(name: "majortomo client without command frame", frames: [[], Header.mdpc02],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "missing its command frame"),
        // Missing service.
        .init(name: "mdp02 missing service", frames: [Header.mdpc02, [0x01]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "missing its service frame"),
        .init(name: "mdp01 missing service", frames: [[], Header.mdpc01],
              role: .client, dialect: .mdp01, leadingEmptyFrame: true, reason: "missing its service frame"),
        .init(name: "majortomo missing service", frames: [[], Header.mdpc02, [0x02]],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "missing its service frame"),
        // Empty service.
        .init(name: "mdp02 empty service", frames: [Header.mdpc02, [0x01], [], bytes("body")],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "empty service name"),
        .init(name: "mdp01 empty service", frames: [[], Header.mdpc01, [], bytes("body")],
              role: .client, dialect: .mdp01, leadingEmptyFrame: true, reason: "empty service name"),
        .init(name: "majortomo empty service", frames: [[], Header.mdpc02, [0x02], []],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "empty service name"),
        // Service longer than 255 bytes.
        .init(name: "mdp02 service of 256 bytes", frames: [Header.mdpc02, [0x01], longService],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "longer than 255 bytes"),
        .init(name: "mdp01 service of 256 bytes", frames: [[], Header.mdpc01, longService, bytes("x")],
              role: .client, dialect: .mdp01, leadingEmptyFrame: true, reason: "longer than 255 bytes"),
        .init(name: "majortomo service of 256 bytes", frames: [[], Header.mdpc02, [0x02], longService],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "longer than 255 bytes"),
        .init(name: "service of 128 two-byte characters (256 bytes)",
              frames: [Header.mdpc02, [0x01], Array(String(repeating: "é", count: 128).utf8)],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "longer than 255 bytes"),
        // Invalid UTF-8.
        .init(name: "service with a bad continuation byte", frames: [Header.mdpc02, [0x01], [0x65, 0xC3, 0x28]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "not valid UTF-8"),
        .init(name: "service 0xFF", frames: [[], Header.mdpc01, [0xFF]],
              role: .client, dialect: .mdp01, leadingEmptyFrame: true, reason: "not valid UTF-8"),
        .init(name: "service with an overlong '/'", frames: [[], Header.mdpc02, [0x02], [0xC0, 0xAF]],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "not valid UTF-8"),
        .init(name: "service with a UTF-8-encoded surrogate", frames: [Header.mdpc02, [0x01], [0xED, 0xA0, 0x80]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "not valid UTF-8"),
        .init(name: "service with a truncated sequence", frames: [Header.mdpc02, [0x01], [0x6F, 0x63, 0x72, 0xE2, 0x82]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "not valid UTF-8"),
        .init(name: "service above U+10FFFF", frames: [Header.mdpc02, [0x01], [0xF4, 0x90, 0x80, 0x80]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "not valid UTF-8"),
        // Control characters.
        .init(name: "service with NUL", frames: [Header.mdpc02, [0x01], [0x65, 0x00, 0x63]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "control characters"),
        .init(name: "service with a newline", frames: [[], Header.mdpc01, bytes("echo\n")],
              role: .client, dialect: .mdp01, leadingEmptyFrame: true, reason: "control characters"),
        .init(name: "service with a tab", frames: [[], Header.mdpc02, [0x02], bytes("ec\tho")],
              role: .client, dialect: .majortomo, leadingEmptyFrame: true, reason: "control characters"),
        .init(name: "service with DEL", frames: [Header.mdpc02, [0x01], [0x65, 0x7F]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "control characters"),
        .init(name: "service with C1 NEL (U+0085)", frames: [Header.mdpc02, [0x01], [0x65, 0xC2, 0x85]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "control characters"),
        .init(name: "service with ESC", frames: [Header.mdpc02, [0x01], [0x1B, 0x5B, 0x32, 0x4A]],
              role: .client, dialect: .mdp02, leadingEmptyFrame: false, reason: "control characters"),
        // MDP/0.1 needs its leading empty frame.
        .init(name: "MDPC01 without the leading empty frame", frames: [Header.mdpc01, bytes("echo"), bytes("x")],
              role: .client, dialect: .mdp01, leadingEmptyFrame: false, reason: "MDP/0.1 messages start with an empty frame"),
    ]

    static let worker: [RejectedMessage] = [
        .init(name: "MDPW01 without the leading empty frame", frames: [Header.mdpw01, [0x01], bytes("ocr")],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: false, reason: "MDP/0.1 messages start with an empty frame"),
        // Reply without the empty delimiter after the address.
        .init(name: "mdp02 FINAL without the empty delimiter", frames: [Header.mdpw02, [0x04], routerAddress, bytes("body")],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "must be followed by an empty frame"),
        .init(name: "mdp02 PARTIAL without the empty delimiter", frames: [Header.mdpw02, [0x03], routerAddress, bytes("a"), []],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "must be followed by an empty frame"),
        .init(name: "mdp01 REPLY without the empty delimiter", frames: [[], Header.mdpw01, [0x03], routerAddress, bytes("body")],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "must be followed by an empty frame"),
        .init(name: "majortomo FINAL without the empty delimiter", frames: [[], Header.mdpw02, [0x04], routerAddress, bytes("body")],
              role: .worker, dialect: .majortomo, leadingEmptyFrame: true, reason: "must be followed by an empty frame"),
        .init(name: "mdp02 FINAL with only an address", frames: [Header.mdpw02, [0x04], routerAddress],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "needs a client address frame and an empty frame"),
        .init(name: "mdp01 REPLY with nothing after the command", frames: [[], Header.mdpw01, [0x03]],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "needs a client address frame and an empty frame"),
        // Command frame not one byte.
        .init(name: "mdp02 command frame of 2 bytes", frames: [Header.mdpw02, [0x04, 0x00], routerAddress, [], bytes("x")],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "one-byte command frame"),
        .init(name: "mdp01 command frame of 2 bytes", frames: [[], Header.mdpw01, [0x01, 0x01], bytes("ocr")],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "one-byte command frame"),
        .init(name: "majortomo command frame of 2 bytes", frames: [[], Header.mdpw02, [0x05, 0x05]],
              role: .worker, dialect: .majortomo, leadingEmptyFrame: true, reason: "one-byte command frame"),
        .init(name: "mdp02 empty command frame", frames: [Header.mdpw02, []],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "one-byte command frame"),
        .init(name: "mdp02 header alone", frames: [Header.mdpw02],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "one-byte command frame"),
        .init(name: "mdp01 header alone", frames: [[], Header.mdpw01],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "one-byte command frame"),
        // Unknown commands.
        .init(name: "mdp02 worker sends REQUEST 0x02", frames: [Header.mdpw02, [0x02], routerAddress, [], bytes("x")],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown worker command 0x02"),
        .init(name: "mdp02 worker command 0x07", frames: [Header.mdpw02, [0x07]],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown worker command 0x07"),
        .init(name: "mdp02 worker command 0x00", frames: [Header.mdpw02, [0x00]],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "unknown worker command 0x00"),
        .init(name: "majortomo worker command 0xff", frames: [[], Header.mdpw02, [0xFF]],
              role: .worker, dialect: .majortomo, leadingEmptyFrame: true, reason: "unknown worker command 0xff"),
        .init(name: "mdp01 worker command 0x06 (MDP/0.2's DISCONNECT)", frames: [[], Header.mdpw01, [0x06]],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "unknown MDP/0.1 worker command 0x06"),
        .init(name: "mdp01 worker sends REQUEST 0x02", frames: [[], Header.mdpw01, [0x02], routerAddress, [], bytes("x")],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "unknown MDP/0.1 worker command 0x02"),
        // READY must carry exactly one valid service frame.
        .init(name: "mdp02 READY with an extra frame", frames: [Header.mdpw02, [0x01], bytes("ocr"), bytes("extra")],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "READY takes exactly one service frame"),
        .init(name: "mdp01 READY with an extra frame", frames: [[], Header.mdpw01, [0x01], bytes("ocr"), []],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "READY takes exactly one service frame"),
        .init(name: "majortomo READY with an extra frame", frames: [[], Header.mdpw02, [0x01], bytes("ocr"), bytes("a"), bytes("b")],
              role: .worker, dialect: .majortomo, leadingEmptyFrame: true, reason: "READY takes exactly one service frame"),
        .init(name: "mdp02 READY without a service", frames: [Header.mdpw02, [0x01]],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "READY takes exactly one service frame"),
        .init(name: "mdp02 READY with an empty service", frames: [Header.mdpw02, [0x01], []],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "empty service name"),
        .init(name: "mdp01 READY with a 256-byte service", frames: [[], Header.mdpw01, [0x01], longService],
              role: .worker, dialect: .mdp01, leadingEmptyFrame: true, reason: "longer than 255 bytes"),
        .init(name: "majortomo READY with invalid UTF-8", frames: [[], Header.mdpw02, [0x01], [0xFE, 0xFF]],
              role: .worker, dialect: .majortomo, leadingEmptyFrame: true, reason: "not valid UTF-8"),
        .init(name: "mdp02 READY with a control character", frames: [Header.mdpw02, [0x01], bytes("ocr\r")],
              role: .worker, dialect: .mdp02, leadingEmptyFrame: false, reason: "control characters"),
    ]

    private func check(_ message: RejectedMessage) throws {
        let result = MajordomoCodec.decodeAtBroker(message.frames)
        #expect(result.successValue == nil, "decoded as \(String(describing: result.successValue))")
        let failure = try #require(result.failureValue)
        #expect(failure.role == message.role)
        #expect(failure.dialect == message.dialect)
        #expect(failure.leadingEmptyFrame == message.leadingEmptyFrame)
        #expect(failure.service == nil)
        #expect(failure.error.code == .badRequest)
        #expect(failure.error.retryable == false)
        #expect(failure.error.service == nil)
        #expect(failure.error.message.contains(message.reason), "message: \(failure.error.message)")
    }

    @Test("envelope and header", arguments: envelope)
    func envelopeFailure(_ message: RejectedMessage) throws { try check(message) }

    @Test("client messages", arguments: client)
    func clientFailure(_ message: RejectedMessage) throws { try check(message) }

    @Test("worker messages", arguments: worker)
    func workerFailure(_ message: RejectedMessage) throws { try check(message) }

    @Test("exact messages for a few failures")
    func exactMessages() throws {
        func message(_ frames: [[UInt8]]) throws -> String {
            try #require(MajordomoCodec.decodeAtBroker(frames).failureValue).error.message
        }
        #expect(try message([]) == "empty message: expected a Majordomo header frame")
        #expect(try message([bytes("ZMTP")])
            == "unknown protocol header 'ZMTP'; expected MDPC02, MDPC01, MDPW02 or MDPW01")
        #expect(try message([Array(0...9)])
            == "unknown protocol header 0x00 0x01 0x02 0x03 0x04 0x05 0x06 0x07 …; expected MDPC02, MDPC01, MDPW02 or MDPW01")
        #expect(try message([bytes("ABCDEFGHIJKLMNOPQRSTUVWXYZ")])
            == "unknown protocol header 'ABCDEFGHIJKLMNOP'…; expected MDPC02, MDPC01, MDPW02 or MDPW01")
        #expect(try message([Header.mdpc02, [0x7F]]) == "unknown client command 0x7f; expected REQUEST 0x01")
        #expect(try message([[], Header.mdpc02, [0x01], bytes("x")]) == "unknown client command 0x01; expected REQUEST 0x02")
        #expect(try message([Header.mdpw02, [0x01], longService]) == "service name longer than 255 bytes")
        #expect(try message([Header.mdpw02, [0x0A]]) == "unknown worker command 0x0a")
        #expect(try message([[], Header.mdpw01, [0x06]]) == "unknown MDP/0.1 worker command 0x06")
    }

    @Test("a failure's error frame is a JSON bad_request body")
    func failureErrorFrame() throws {
        let failure = try #require(MajordomoCodec.decodeAtBroker([Header.mdpc02, [0x01], []]).failureValue)
        #expect(String(decoding: failure.error.jsonFrame, as: UTF8.self)
            == #"{"error":{"code":"bad_request","message":"empty service name","retryable":false}}"#)
    }
}
