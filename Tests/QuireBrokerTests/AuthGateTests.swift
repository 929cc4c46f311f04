import Foundation
import QuireJWT
import QuireSupport
import QuireTokens
import QuireWire
import Testing

@testable import QuireBroker

/// The broker's token check, driven by hand: JWKS fetched through the broker's own queue, requests
/// parked until it arrives, tokens removed before workers see them, refusals, rate limits.
@Suite struct AuthGateTests {
    let directory = NSTemporaryDirectory() + "quire-authgate-\(UUID().uuidString)"

    func harness(rateLimit: Double = 1_000) -> Harness {
        var h = Harness(BrokerConfiguration(heartbeatInterval: 1_000, heartbeatLiveness: 3, requestTimeout: 5_000, maxQueuedRequests: 100,
                                            maxMessageBytes: 1 << 20, maxFrames: 8,
                                            auth: AuthConfiguration(rateLimit: rateLimit, burst: rateLimit * 2)))
        h.state.wallClockSeconds = epochSeconds()
        return h
    }

    /// A token worker's authority with one client allowed `echo`, and a token for it.
    func authority() throws -> (TokenAuthority, String) {
        let authority = try TokenAuthority(dataDirectory: directory)
        _ = try KeyStore(dataDirectory: directory).ensureKey(now: epochSeconds())
        let (client, secret) = try ClientRegistry(dataDirectory: directory).add(name: "app", scopes: ["echo"], now: epochSeconds())
        let issued = authority.issue(.credentials(Credentials(clientID: client.id, clientSecret: secret)))
        let token = try issued.get().accessToken
        return (authority, token)
    }

    func request(_ token: String?, extra: String = "") -> [String] {
        let json = token.map { #"{"token":"\#($0)"\#(extra)}"# } ?? "{\(extra.dropFirst())}"
        return [json, "payload"]
    }

    @Test func aRequestWaitsForTheJWKSThenReachesTheWorkerWithoutItsToken() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (authority, token) = try authority()
        var h = harness()
        _ = h.ready("echo-worker")
        // No keys yet and no token worker: the request is parked, a JWKS request is queued.
        #expect(h.request("app", body: request(token)).isEmpty)
        // The token worker arrives and is asked for the keys at once.
        let asked = h.ready("jwks-worker", service: "auth.jwks")
        let address = try #require(asked.first(where: { $0.peer == "jwks-worker" })?.requestAddress)
        let replies = h.send("jwks-worker", MajordomoCodec.workerReply(.mdp02, .final, address: address, body: [try authority.jwks().jsonFrame])!)
        // The parked request is replayed: it goes to the echo worker, without the token.
        let forwarded = try #require(replies.first(where: { $0.peer == "echo-worker" }))
        guard case .success(.request(_, let body)) = MajordomoCodec.decodeAtWorker(.mdp02, forwarded.frames) else {
            Issue.record("not a REQUEST: \(forwarded)")
            return
        }
        #expect(body == [Array("{}".utf8), Array("payload".utf8)])
    }

    @Test func refusalsCarryTheirCodes() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (authority, token) = try authority()
        var h = harness()
        h.state.auth?.install(try authority.jwks())
        _ = h.ready("echo-worker")
        func code(_ sent: [Sent]) -> String? {
            guard let frames = sent.first?.frames, let last = frames.last else { return nil }
            return WireError(jsonFrame: last)?.code.rawValue
        }
        #expect(code(h.request("c", body: request(nil, extra: #","a":1"#))) == "unauthenticated")
        #expect(code(h.request("c", body: request(String(token.dropLast(3)) + "AAA"))) == "unauthenticated")
        #expect(code(h.request("c", service: "ocr", body: request(token))) == "forbidden")
        // Expired: the same token, an hour later.
        h.state.wallClockSeconds += 3_600
        #expect(code(h.request("c", body: request(token))) == "token_expired")
        // Discovery and the token endpoint need no token.
        #expect(h.request("c", service: "mmi.service", body: ["echo"]).first?.frames.last == Array("200".utf8))
        // And a client may ask whether tokens are wanted here (they are: 200), with no token worker.
        #expect(h.request("c", service: "mmi.auth", body: []).first?.frames.last == Array("200".utf8))
    }

    @Test func requestsWaitingForTheKeysAreBounded() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, token) = try authority()
        var h = harness()
        // No token worker: every request with this token waits for a JWKS that does not come.
        var refused = 0
        for n in 0..<(AuthGate.maxParked + 5) {
            for sent in h.request("c\(n)", body: request(token)) {
                if let error = sent.frames.last.flatMap(WireError.init(jsonFrame:)), error.code == .serviceUnavailable { refused += 1 }
            }
        }
        #expect(h.state.auth?.parked.count == AuthGate.maxParked)
        #expect(refused == 5)
        // When the wait runs out, each parked request gets its answer.
        h.advance(ms: 6_000)
        let answers = h.tick().filter { $0.frames.last.flatMap(WireError.init(jsonFrame:))?.code == .serviceUnavailable }
        #expect(answers.count == AuthGate.maxParked)
        #expect(h.state.auth?.parked.isEmpty == true)
    }

    @Test func aClientOverItsRateIsToldWhenToComeBack() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (authority, token) = try authority()
        var h = harness(rateLimit: 2)
        h.state.auth?.install(try authority.jwks())
        var limited: [WireError] = []
        for _ in 0..<10 {
            for sent in h.request("c", body: request(token)) {
                if let error = sent.frames.last.flatMap(WireError.init(jsonFrame:)), error.code == .rateLimited { limited.append(error) }
            }
        }
        #expect(limited.count == 6)  // a burst of 4, then refusals
        #expect(limited.allSatisfy { ($0.retryAfterMilliseconds ?? 0) > 0 })
    }
}
