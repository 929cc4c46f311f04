import Foundation
import QuireHTTP
import QuireSupport
import QuireWire
import Synchronization
import Testing
@testable import QuireGateway

/// Records the `auth.token` requests the gateway makes and answers each with `answer`.
final class FakeTokens: Sendable {
    let grants = Mutex<[TokenRequest]>([])
    let answer: Mutex<Result<TokenResponse, TokenFailure>>
    init(_ answer: Result<TokenResponse, TokenFailure> = .success(TokenResponse(accessToken: "tok.en.sig", expiresIn: 900, scope: "ocr"))) {
        self.answer = Mutex(answer)
    }
    var all: [TokenRequest] { grants.withLock { $0 } }
    var backend: TokenBackend {
        TokenBackend { grant in
            self.grants.withLock { $0.append(grant) }
            return self.answer.withLock { $0 }
        }
    }
}

func form(_ body: String, headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"], path: String = "/oauth2/token",
          method: String = "POST") -> HTTPRequest {
    HTTPRequest(method: method, path: path, headers: headers, body: Array(body.utf8))
}

func jsonObject(_ response: HTTPResponse) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
}

func basic(_ id: String, _ secret: String) -> String {
    "Basic " + Data((id + ":" + secret).utf8).base64EncodedString()
}

@Suite("OAuth form and Basic parsing")
struct OAuthParsingTests {
    @Test("form decoding: + is a space, %XX a byte (either case), UTF-8 checked", arguments: [
        ("a+b", "a b"), ("a%2Bb", "a+b"), ("%3a%3A", "::"), ("%C3%A9t%C3%A9", "été"), ("", ""), ("plain", "plain"),
    ])
    func decode(_ encoded: String, _ expected: String) {
        #expect(OAuthTokenEndpoint.formDecode(Array(encoded.utf8)) == expected)
    }

    @Test("broken escapes and non-UTF-8 are refused", arguments: ["%", "%4", "%G0", "%zz", "%FF", "%C3"])
    func broken(_ encoded: String) {
        #expect(OAuthTokenEndpoint.formDecode(Array(encoded.utf8)) == nil)
    }

    @Test("parameters: empty values are omitted, a repeated one is invalid_request")
    func parameters() throws {
        let fields = try OAuthTokenEndpoint.parseForm(Array("grant_type=client_credentials&scope=&client_id=a%20b&&x".utf8)).get()
        #expect(fields == ["grant_type": "client_credentials", "client_id": "a b"])
        for body in ["a=1&a=2", "a=&a=2", "scope=ocr&scope=ocr"] {
            guard case .failure(let refusal) = OAuthTokenEndpoint.parseForm(Array(body.utf8)) else { Issue.record("\(body) parsed"); continue }
            #expect(refusal.status == 400 && refusal.error == "invalid_request" && refusal.description.contains("repeated"))
        }
        #expect((try? OAuthTokenEndpoint.parseForm(Array("a=%ZZ".utf8)).get()) == nil)
    }

    @Test("Basic: each half url-decoded; the id ends at the first colon, the secret may hold more", arguments: [
        ("qc_a", "qs_b", "qc_a", "qs_b"),
        ("qc_a", "p%3Ass%3Aword", "qc_a", "p:ss:word"),
        ("qc_a", "raw:colons:kept", "qc_a", "raw:colons:kept"),
        ("my%20client", "s+e%2Bc", "my client", "s e+c"),
        ("qc_a", "", "qc_a", ""),
    ])
    func basicCredentials(_ id: String, _ secret: String, _ expectedID: String, _ expectedSecret: String) throws {
        let (gotID, gotSecret) = try OAuthTokenEndpoint.basicCredentials(basic(id, secret)).get()
        #expect(gotID == expectedID)
        #expect(gotSecret == expectedSecret)
    }

    @Test("Basic that is malformed is invalid_request; another scheme is invalid_client with a challenge")
    func basicRefusals() {
        for header in ["Basic !!!", "Basic " + Data("no-colon".utf8).base64EncodedString(), "Basic " + Data(":secret".utf8).base64EncodedString(),
                       "Basic " + Data("a%ZZ:b".utf8).base64EncodedString(), "Basic"] {
            guard case .failure(let refusal) = OAuthTokenEndpoint.basicCredentials(header) else { Issue.record("\(header) parsed"); continue }
            #expect(refusal.error == (header == "Basic" ? "invalid_client" : "invalid_request"), "\(header)")
        }
        guard case .failure(let bearer) = OAuthTokenEndpoint.basicCredentials("Bearer abc") else { Issue.record("Bearer parsed"); return }
        #expect(bearer.status == 401 && bearer.error == "invalid_client" && bearer.challenge)
    }

    @Test("error_description keeps to RFC 6749's ASCII: no quote, no backslash, nothing outside 0x20…0x7E")
    func description() {
        #expect(OAuthTokenEndpoint.asciiDescription(#"grant_type 'x' "q" \ é"#) == "grant_type 'x' ?q? ? ?")
    }
}

@Suite("OAuth token endpoint")
struct OAuthEndpointTests {
    func router(_ tokens: FakeTokens) -> HTTPRouter {
        Gateway.router(recognize: { _ in .failure(GatewayFailure(.internal, "unused")) }, tokens: tokens.backend)
    }

    func expectOAuthHeaders(_ response: HTTPResponse) {
        #expect(response.headers["Content-Type"] == "application/json;charset=UTF-8")
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Pragma"] == "no-cache")
    }

    func expectError(_ response: HTTPResponse, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        let body = try jsonObject(response)
        #expect(Set(body.keys) == ["error", "error_description"], sourceLocation: sourceLocation)
        #expect(body["error"] as? String == code, sourceLocation: sourceLocation)
        expectOAuthHeaders(response)
    }

    @Test("the Azure tutorial's form, at both paths: the grant goes to auth.token; RFC 6749 §5.1 comes back", arguments: ["/oauth2/token", "/contoso.onmicrosoft.com/oauth2/token"])
    func tutorial(_ path: String) throws {
        let tokens = FakeTokens()
        let response = router(tokens).respond(to: form(
            "grant_type=client_credentials&client_id=qc_abc&client_secret=qs_s%2Fe%2Bc&resource=https%3A%2F%2Fcognitiveservices.azure.com%2F",
            path: path))
        #expect(response.status == 200)
        expectOAuthHeaders(response)
        let body = try jsonObject(response)
        #expect(Set(body.keys) == ["access_token", "token_type", "expires_in", "scope"])
        #expect(body["access_token"] as? String == "tok.en.sig")
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["expires_in"] as? Int == 900)
        #expect(body["scope"] as? String == "ocr")
        // resource is ignored; the secret arrives decoded.
        #expect(tokens.all == [TokenRequest(grantType: "client_credentials", clientID: "qc_abc", clientSecret: "qs_s/e+c")])
    }

    @Test("Basic, with scope and audience passed on; client_id may repeat Basic's in the body")
    func basicAuth() throws {
        let tokens = FakeTokens()
        let r = router(tokens)
        let ok = r.respond(to: form("grant_type=client_credentials&scope=ocr&audience=quire",
                                    headers: ["Content-Type": "application/x-www-form-urlencoded; charset=UTF-8", "Authorization": basic("qc_abc", "qs%3Ax")]))
        #expect(ok.status == 200)
        let same = r.respond(to: form("grant_type=client_credentials&client_id=qc_abc",
                                      headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": basic("qc_abc", "qs")]))
        #expect(same.status == 200)
        #expect(tokens.all == [TokenRequest(grantType: "client_credentials", clientID: "qc_abc", clientSecret: "qs:x", scope: "ocr", audience: "quire"),
                               TokenRequest(grantType: "client_credentials", clientID: "qc_abc", clientSecret: "qs")])
    }

    @Test("what the gateway refuses itself never reaches auth.token")
    func localRefusals() throws {
        let tokens = FakeTokens()
        let r = router(tokens)
        let both = ["Content-Type": "application/x-www-form-urlencoded", "Authorization": basic("qc_a", "qs_b")] as HTTPHeaders
        try expectError(r.respond(to: form("grant_type=client_credentials&client_secret=qs_b", headers: both)), 400, "invalid_request")
        try expectError(r.respond(to: form("grant_type=client_credentials&client_id=qc_other", headers: both)), 400, "invalid_request")
        try expectError(r.respond(to: form(#"{"grant_type":"client_credentials"}"#, headers: ["Content-Type": "application/json"])), 400, "invalid_request")
        try expectError(r.respond(to: form("grant_type=client_credentials", headers: [:])), 400, "invalid_request")
        try expectError(r.respond(to: form("client_id=a&client_secret=b")), 400, "invalid_request")
        try expectError(r.respond(to: form("grant_type=password&client_id=a&client_secret=b&username=u&password=p")), 400, "unsupported_grant_type")
        try expectError(r.respond(to: form("grant_type=client_credentials&client_id=a")), 400, "invalid_client")
        try expectError(r.respond(to: form("grant_type=client_credentials&client_secret=b")), 400, "invalid_request")
        try expectError(r.respond(to: form("grant_type=client_credentials&grant_type=client_credentials&client_id=a&client_secret=b")), 400, "invalid_request")
        try expectError(r.respond(to: form("grant_type=client_credentials&client_id=a%ZZ&client_secret=b")), 400, "invalid_request")
        // No client authentication at all: 401 with the scheme to use.
        let anonymous = r.respond(to: form("grant_type=client_credentials"))
        try expectError(anonymous, 401, "invalid_client")
        #expect(anonymous.headers["WWW-Authenticate"] == #"Basic realm="quire", charset="UTF-8""#)
        let bearer = r.respond(to: form("grant_type=client_credentials", headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer x"]))
        try expectError(bearer, 401, "invalid_client")
        #expect(bearer.headers["WWW-Authenticate"]?.hasPrefix("Basic realm=") == true)
        let big = r.respond(to: form("grant_type=client_credentials&client_id=a&client_secret=" + String(repeating: "x", count: 9_000)))
        try expectError(big, 413, "invalid_request")
        for method in ["GET", "PUT", "DELETE"] {
            let wrong = r.respond(to: form("", method: method))
            try expectError(wrong, 405, "invalid_request")
            #expect(wrong.headers["Allow"] == "POST")
        }
        #expect(tokens.all.isEmpty)
    }

    @Test("each token-worker error becomes its RFC 6749 §5.2 answer", arguments: [
        (WireError.Code.invalidClient, false, 400, "invalid_client"),
        (.invalidClient, true, 401, "invalid_client"),
        (.invalidRequest, false, 400, "invalid_request"),
        (.invalidGrant, false, 400, "invalid_grant"),
        (.unauthorizedClient, true, 400, "unauthorized_client"),
        (.unsupportedGrantType, false, 400, "unsupported_grant_type"),
        (.invalidScope, true, 400, "invalid_scope"),
        (.busy, false, 503, "temporarily_unavailable"),
        (.rateLimited, false, 503, "temporarily_unavailable"),
        (.serviceUnavailable, false, 503, "temporarily_unavailable"),
        (.timeout, true, 503, "temporarily_unavailable"),
        (.internal, false, 500, "server_error"),
    ])
    func mapping(_ code: WireError.Code, _ viaBasic: Bool, _ status: Int, _ error: String) throws {
        let tokens = FakeTokens(.failure(.refused(WireError(code, "the \"reason\""))))
        let request = viaBasic
            ? form("grant_type=client_credentials", headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": basic("qc_a", "qs_b")])
            : form("grant_type=client_credentials&client_id=qc_a&client_secret=qs_b")
        let response = router(tokens).respond(to: request)
        try expectError(response, status, error)
        #expect(try jsonObject(response)["error_description"] as? String == "the ?reason?")
        #expect((response.headers["WWW-Authenticate"] != nil) == (status == 401))
    }

    @Test("no token worker, or no broker: 503 temporarily_unavailable; a broken reply: 500 server_error")
    func unavailable() throws {
        for (failure, status, code) in [(TokenFailure.noTokenWorker, 503, "temporarily_unavailable"),
                                        (.transport(GatewayFailure(.unavailable, "the broker: timeout")), 503, "temporarily_unavailable"),
                                        (.transport(GatewayFailure(.internal, "not a token response")), 500, "server_error")] {
            let response = router(FakeTokens(.failure(failure))).respond(to: form("grant_type=client_credentials&client_id=a&client_secret=b"))
            try expectError(response, status, code)
        }
    }
}

@Suite("API keys at the gateway")
struct GatewayAPIKeyTests {
    final class Clock: Sendable {
        let now = Mutex(Instant(nanoseconds: 1_000_000_000_000))
        func advance(seconds: Int64) { now.withLock { $0 = $0 + Milliseconds(seconds * 1_000) } }
        var read: @Sendable () -> Instant { { self.now.withLock { $0 } } }
    }

    @Test("a key's token is kept at most 60 s (less when it expires sooner), under the key's hash; then asked for again")
    func cache() throws {
        let tokens = FakeTokens(.success(TokenResponse(accessToken: "t1", expiresIn: 120, scope: "ocr")))
        let clock = Clock()
        let keys = APIKeyTokens(backend: tokens.backend, clock: clock.read)
        #expect(try keys.token(for: Credential(apiKey: "qk_one")).get() == "t1")
        #expect(tokens.all == [TokenRequest.apiKey("qk_one")])
        clock.advance(seconds: 59)
        #expect(try keys.token(for: Credential(apiKey: "qk_one")).get() == "t1")
        #expect(tokens.all.count == 1)
        clock.advance(seconds: 1)
        tokens.answer.withLock { $0 = .success(TokenResponse(accessToken: "t2", expiresIn: 30, scope: "ocr")) }
        #expect(try keys.token(for: Credential(apiKey: "qk_one")).get() == "t2")
        #expect(tokens.all.count == 2)
        // 30 s tokens are used for 15 s only.
        clock.advance(seconds: 14)
        #expect(try keys.token(for: Credential(apiKey: "qk_one")).get() == "t2")
        clock.advance(seconds: 1)
        _ = keys.token(for: Credential(apiKey: "qk_one"))
        #expect(tokens.all.count == 3)
        // Tokens about to expire are not kept at all.
        tokens.answer.withLock { $0 = .success(TokenResponse(accessToken: "t3", expiresIn: 10, scope: "ocr")) }
        _ = keys.token(for: Credential(apiKey: "qk_two"))
        _ = keys.token(for: Credential(apiKey: "qk_two"))
        #expect(tokens.all.count == 5)
    }

    @Test("a bearer token wins over a key; no credential is no token; no token worker is no token")
    func precedence() throws {
        let tokens = FakeTokens()
        let keys = APIKeyTokens(backend: tokens.backend)
        #expect(try keys.token(for: Credential(token: "given", apiKey: "qk_x")).get() == "given")
        #expect(try keys.token(for: Credential()).get() == nil)
        #expect(tokens.all.isEmpty)
        let none = APIKeyTokens(backend: FakeTokens(.failure(.noTokenWorker)).backend)
        #expect(try none.token(for: Credential(apiKey: "qk_x")).get() == nil)
    }

    @Test("refusals: a bad key, a key without the scope, an old token worker, a busy broker")
    func refusals() {
        let cases: [(TokenFailure, GatewayFailure.Kind, Bool)] = [
            (.refused(WireError(.invalidClient, "API key not valid")), .unauthenticated, true),
            (.refused(WireError(.invalidRequest, "api_key is required")), .unauthenticated, true),
            (.refused(WireError(.invalidScope, "this client has no scopes")), .forbidden, false),
            (.refused(WireError(.unsupportedGrantType, "no")), .unavailable, false),
            (.refused(WireError(.busy, "full")), .busy, false),
            (.transport(GatewayFailure(.unavailable, "the broker: timeout")), .unavailable, false),
        ]
        for (answer, kind, invalidKey) in cases {
            let tokens = FakeTokens(.failure(answer))
            let keys = APIKeyTokens(backend: tokens.backend)
            guard case .failure(let failure) = keys.token(for: Credential(apiKey: "qk_bad")) else { Issue.record("\(answer) gave a token"); continue }
            #expect(failure.kind == kind)
            #expect(failure.isInvalidAPIKey == invalidKey)
            // Failures are never cached.
            _ = keys.token(for: Credential(apiKey: "qk_bad"))
            #expect(tokens.all.count == 2)
        }
        // Oversized keys are refused without a round trip.
        let tokens = FakeTokens()
        #expect((try? APIKeyTokens(backend: tokens.backend).token(for: Credential(apiKey: String(repeating: "k", count: 300))).get()) == nil)
        #expect(tokens.all.isEmpty)
    }

    @Test("the cache is bounded: expired entries go first, then the one expiring soonest")
    func bounded() throws {
        let tokens = FakeTokens(.success(TokenResponse(accessToken: "t", expiresIn: 120, scope: "ocr")))
        let clock = Clock()
        let keys = APIKeyTokens(backend: tokens.backend, clock: clock.read)
        _ = keys.token(for: Credential(apiKey: "qk_0"))
        clock.advance(seconds: 1)
        for index in 1..<APIKeyTokens.capacity { _ = keys.token(for: Credential(apiKey: "qk_\(index)")) }
        #expect(keys.count == APIKeyTokens.capacity)
        _ = keys.token(for: Credential(apiKey: "qk_new"))
        #expect(keys.count == APIKeyTokens.capacity)
        // qk_0 expires first, so it went; qk_new and qk_1 are still held.
        let before = tokens.all.count
        _ = keys.token(for: Credential(apiKey: "qk_new"))
        _ = keys.token(for: Credential(apiKey: "qk_1"))
        #expect(tokens.all.count == before)
        _ = keys.token(for: Credential(apiKey: "qk_0"))
        #expect(tokens.all.count == before + 1)
        // Once they have expired, a new key clears them all out.
        clock.advance(seconds: 61)
        _ = keys.token(for: Credential(apiKey: "qk_later"))
        #expect(keys.count == 1)
    }

    /// Routes whose backends record the credential and refuse it as an invalid key.
    final class Seen: Sendable {
        let credentials = Mutex<[Credential]>([])
        var all: [Credential] { credentials.withLock { $0 } }
    }

    func refusingRouter(_ seen: Seen) -> HTTPRouter {
        let jobs = JobBackend(submit: { call in seen.credentials.withLock { $0.append(call.credential) }; return .failure(.invalidAPIKey) },
                              poll: { _, credential in seen.credentials.withLock { $0.append(credential) }; return .failure(.invalidAPIKey) })
        return Gateway.router(recognize: { call in seen.credentials.withLock { $0.append(call.credential) }; return .failure(.invalidAPIKey) }, jobs: jobs)
    }

    @Test("each API's key header reaches the call, and a bad key gets that API's own body")
    func bodies() throws {
        let seen = Seen()
        let r = refusingRouter(seen)
        let annotate = #"{"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}]}"#
        let google = r.respond(to: HTTPRequest(method: "POST", path: "/v1/images:annotate", query: [("key", "qk_q")],
                                               headers: ["Content-Type": "application/json"], body: Array(annotate.utf8)))
        #expect(google.status == 400)
        let error = try #require(try jsonObject(google)["error"] as? [String: Any])
        #expect(error["code"] as? Int == 400)
        #expect(error["status"] as? String == "INVALID_ARGUMENT")
        #expect(error["message"] as? String == "API key not valid. Please pass a valid API key.")
        let details = try #require(error["details"] as? [[String: Any]])
        #expect(details.first?["@type"] as? String == "type.googleapis.com/google.rpc.ErrorInfo")
        #expect(details.first?["reason"] as? String == "API_KEY_INVALID")
        #expect(details.first?["domain"] as? String == "googleapis.com")

        let header = r.respond(to: HTTPRequest(method: "POST", path: "/v1/images:annotate",
                                               headers: ["Content-Type": "application/json", "x-goog-api-key": "qk_h"], body: Array(annotate.utf8)))
        #expect(header.status == 400)

        let callable = r.respond(to: HTTPRequest(method: "POST", path: "/annotateImage", query: [("key", "qk_f")],
                                                 headers: ["Content-Type": "application/json"],
                                                 body: Array(#"{"data":{"image":{"content":"aGVsbG8="},"features":{"type":"TEXT_DETECTION"}}}"#.utf8)))
        #expect(callable.status == 401)
        #expect(try jsonObject(callable)["error"] as? [String: String] == ["status": "UNAUTHENTICATED", "message": "API key not valid. Please pass a valid API key."])

        let azure = r.respond(to: HTTPRequest(method: "POST", path: "/vision/v3.2/read/analyze",
                                              headers: ["Content-Type": "application/octet-stream", "Ocp-Apim-Subscription-Key": "qk_a"], body: [1, 2, 3]))
        let poll = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v3.2/read/analyzeResults/0123456789abcdef0123456789abcdef",
                                             headers: ["Ocp-Apim-Subscription-Key": "qk_p"]))
        let azureBody = #"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}"#
        for response in [azure, poll] {
            #expect(response.status == 401)
            #expect(String(decoding: response.body, as: UTF8.self) == azureBody)
        }
        #expect(seen.all == [Credential(apiKey: "qk_q"), Credential(apiKey: "qk_h"), Credential(apiKey: "qk_f"), Credential(apiKey: "qk_a"),
                             Credential(apiKey: "qk_p")])
    }

    @Test("keys are read only where each API sends them: Azure's header on Azure routes, ?key= and x-goog-api-key on Google's")
    func placement() throws {
        let seen = Seen()
        let r = refusingRouter(seen)
        _ = r.respond(to: HTTPRequest(method: "POST", path: "/v1/images:annotate",
                                      headers: ["Content-Type": "application/json", "Ocp-Apim-Subscription-Key": "qk_azure", "Authorization": "Bearer b"],
                                      body: Array(#"{"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}]}"#.utf8)))
        _ = r.respond(to: HTTPRequest(method: "POST", path: "/vision/v2.0/read/core/asyncBatchAnalyze", query: [("key", "qk_google")],
                                      headers: ["Content-Type": "application/octet-stream", "x-goog-api-key": "qk_google"], body: [1]))
        #expect(seen.all == [Credential(token: "b"), Credential()])
    }
}
