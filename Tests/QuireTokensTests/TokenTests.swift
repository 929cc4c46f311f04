import Foundation
import QuireSupport
import QuireWire
import Testing
@testable import QuireJWT
@testable import QuireTokens

/// A fresh data folder per test, removed afterwards.
final class DataFolder {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "quire-tokens-\(UUID().uuidString)"
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require(attributes[.posixPermissions] as? Int)
}

/// Splits a token into its decoded header and claims (JSON objects).
func decodeParts(_ token: String) throws -> (header: [String: Any], claims: [String: Any]) {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    try #require(parts.count == 3)
    let header = try #require(Base64URL.decode(parts[0]))
    let claims = try #require(Base64URL.decode(parts[1]))
    return (try #require(JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]),
            try #require(JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any]))
}

/// Re-encodes a token's parts (to forge variations), keeping or dropping the signature.
func forge(header: String, claims: String, signature: String) -> String {
    Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "." + signature
}

@Suite("base64url")
struct Base64URLTests {
    @Test("round trip at every length 0…64", arguments: 0...64)
    func roundTrip(_ count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let text = Base64URL.encode(bytes)
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        #expect(Base64URL.decode(text) == bytes)
        #expect(Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "") == text)
    }

    @Test("rejects padding, other alphabets, impossible lengths and non-canonical tails",
          arguments: ["YQ==", "a+b/", "a", "abcde", "YR", "ab c", "\u{e9}"])
    func rejects(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

@Suite("JWT signing and verification")
struct JWTTests {
    let now: Int64 = 1_800_000_000

    func authority(_ folder: DataFolder, _ configuration: TokenAuthorityConfiguration = .init()) throws -> TokenAuthority {
        try TokenAuthority(dataDirectory: folder.path, configuration: configuration, now: now - 10)
    }

    func clientToken(_ authority: TokenAuthority, scope: String? = nil, at time: Int64? = nil) throws -> (TokenResponse, Credentials) {
        let (client, secret) = try authority.registry.add(name: "capture", scopes: ["ocr", "echo"], now: now)
        let credentials = Credentials(clientID: client.id, clientSecret: secret)
        let response = try authority.issue(.credentials(credentials, scope: scope), now: time ?? now).get()
        return (response, credentials)
    }

    @Test("a minted token has the RFC 8037 header and every claim, and verifies")
    func mintAndVerify() throws {
        let folder = DataFolder()
        let authority = try authority(folder)
        let (response, credentials) = try clientToken(authority)
        #expect(response.tokenType == "Bearer")
        #expect(response.expiresIn == 900)
        #expect(response.scope == "echo ocr")
        let (header, claims) = try decodeParts(response.accessToken)
        #expect(header["alg"] as? String == "EdDSA")
        #expect(header["typ"] as? String == "JWT")
        let kid = try #require(header["kid"] as? String)
        #expect(try authority.jwks(now: now).keys.map(\.kid) == [kid])
        #expect(claims["iss"] as? String == "quire")
        #expect(claims["sub"] as? String == credentials.clientID)
        #expect(claims["aud"] as? String == "quire")
        #expect(claims["scope"] as? String == "echo ocr")
        #expect(claims["iat"] as? Int64 == now)
        #expect(claims["nbf"] as? Int64 == now)
        #expect(claims["exp"] as? Int64 == now + 900)
        #expect((claims["jti"] as? String)?.count == 22)

        let verified = try TokenVerifier(jwks: authority.jwks(now: now)).verify(response.accessToken, now: now + 1).get()
        #expect(verified == AccessClaims(subject: credentials.clientID, scopes: ["ocr", "echo"], job: nil, expiresAt: now + 900,
                                         tokenID: try #require(claims["jti"] as? String), keyID: kid))
    }

    @Test("every rejection has its own reason and wire code")
    func rejections() throws {
        let folder = DataFolder()
        let authority = try authority(folder)
        let (response, _) = try clientToken(authority)
        let token = response.accessToken
        let jwks = try authority.jwks(now: now)
        let parts = token.split(separator: ".").map(String.init)
        let headerJSON = String(decoding: try #require(Base64URL.decode(parts[0])), as: UTF8.self)
        let claimsJSON = String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)

        func refusal(_ candidate: String, verifier: TokenVerifier? = nil, at time: Int64? = nil) -> TokenError? {
            if case .failure(let error) = (verifier ?? TokenVerifier(jwks: jwks)).verify(candidate, now: time ?? now) { return error }
            return nil
        }

        // Expiry and not-before, with the leeway on each side.
        #expect(refusal(token, at: now + 900 + 29) == nil)
        #expect(refusal(token, at: now + 900 + 30) == .expired(expiresAt: now + 900))
        #expect(TokenError.expired(expiresAt: 0).code == .tokenExpired)
        #expect(refusal(token, at: now - 30) == nil)
        #expect(refusal(token, at: now - 31) == .notYetValid(notBefore: now))
        // Audience and issuer.
        #expect(refusal(token, verifier: TokenVerifier(jwks: jwks, audience: "other")) == .wrongAudience)
        #expect(refusal(token, verifier: TokenVerifier(jwks: jwks, issuer: "elsewhere")) == .wrongIssuer("quire"))
        // Tampered claims keep the old signature: refused.
        let elevated = claimsJSON.replacingOccurrences(of: #""scope":"echo ocr""#, with: #""scope":"echo ocr admin""#)
        #expect(elevated != claimsJSON)
        #expect(refusal(forge(header: headerJSON, claims: elevated, signature: parts[2])) == .badSignature)
        // A flipped signature bit.
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[5] ^= 0x01
        #expect(refusal(parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)) == .badSignature)
        // alg none and HS256 (the classic confusion attacks), crit.
        let none = headerJSON.replacingOccurrences(of: "EdDSA", with: "none")
        #expect(refusal(forge(header: none, claims: claimsJSON, signature: "")) == .unsupportedAlgorithm("none"))
        let hmac = headerJSON.replacingOccurrences(of: "EdDSA", with: "HS256")
        #expect(refusal(forge(header: hmac, claims: claimsJSON, signature: parts[2])) == .unsupportedAlgorithm("HS256"))
        let crit = headerJSON.replacingOccurrences(of: "{", with: #"{"crit":["exp"],"#)
        #expect(refusal(forge(header: crit, claims: claimsJSON, signature: parts[2])) == .unsupportedAlgorithm("crit: exp"))
        // An unknown key: the broker refetches the JWKS on this one.
        let otherFolder = DataFolder()
        let stranger = try self.authority(otherFolder)
        let (foreign, _) = try clientToken(stranger)
        guard case .unknownKeyID = try #require(refusal(foreign.accessToken)) else { Issue.record("expected unknownKeyID"); return }
        #expect(TokenError.unknownKeyID("x").code == .unauthenticated)
        // Structure.
        for garbage in ["", "a.b", "a.b.c.d", "!!.??.**", parts[0] + "." + parts[1], String(repeating: "a", count: 9_000)] {
            guard case .malformed = try #require(refusal(garbage)) else { Issue.record("expected malformed for \(garbage.prefix(20))"); continue }
        }
        let noKid = headerJSON.replacingOccurrences(of: #""kid""#, with: #""kidx""#)
        guard case .malformed = try #require(refusal(forge(header: noKid, claims: claimsJSON, signature: parts[2]))) else {
            Issue.record("expected malformed without kid"); return
        }
        for error in [TokenError.badSignature, .wrongAudience, .malformed("x"), .unsupportedAlgorithm("none"), .notYetValid(notBefore: 0)] {
            #expect(error.code == .unauthenticated)
        }
    }

    @Test("scope and job checks answer forbidden")
    func authorize() throws {
        let claims = AccessClaims(subject: "qc_a", scopes: ["ocr"], job: nil, expiresAt: 0, tokenID: "j", keyID: "k")
        #expect(claims.authorize(service: "ocr") == nil)
        #expect(claims.authorize(service: "echo") == .missingScope("echo"))
        #expect(claims.authorize(service: "titanic.request", targetService: "ocr") == nil)
        #expect(claims.authorize(service: "titanic.request", targetService: "echo") == .missingScope("echo"))
        #expect(claims.authorize(service: "titanic.reply", job: "J1") == nil)
        // A scope covers the services that extend its name after a dot, never the other way round.
        #expect(claims.authorize(service: "ocr.document") == nil)
        #expect(claims.authorize(service: "titanic.request", targetService: "ocr.document") == nil)
        #expect(claims.authorize(service: "ocrx") == .missingScope("ocrx"))
        let narrow = AccessClaims(subject: "qc_a", scopes: ["ocr.document"], job: nil, expiresAt: 0, tokenID: "j", keyID: "k")
        #expect(narrow.authorize(service: "ocr") == .missingScope("ocr"))
        #expect(narrow.authorize(service: "ocr.document") == nil)
        let reader = AccessClaims(subject: "qc_a", scopes: [AccessClaims.readerScope], job: "J1", expiresAt: 0, tokenID: "j", keyID: "k")
        #expect(reader.authorize(service: "titanic.reply", job: "J1") == nil)
        #expect(reader.authorize(service: "titanic.status", job: "J1") == nil)
        #expect(reader.authorize(service: "titanic.reply", job: "J2") == .wrongJob)
        #expect(reader.authorize(service: "titanic.close", job: "J1") == .missingScope("titanic.close"))
        #expect(reader.authorize(service: "ocr") == .missingScope("ocr"))
        #expect(TokenError.wrongJob.code == .forbidden)
        #expect(TokenError.missingScope("ocr").wireError(service: "ocr").code == .forbidden)
    }
}

@Suite("JWKS")
struct JWKSTests {
    @Test("the JWKS is RFC 8037 OKP keys with RFC 7638 thumbprints, and parses back")
    func shape() throws {
        let folder = DataFolder()
        let authority = try TokenAuthority(dataDirectory: folder.path, now: 1_000)
        let frame = authority.handleJWKSRequest(now: 1_000)
        let object = try #require(JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any])
        let keys = try #require(object["keys"] as? [[String: Any]])
        try #require(keys.count == 1)
        #expect(keys[0]["kty"] as? String == "OKP")
        #expect(keys[0]["crv"] as? String == "Ed25519")
        #expect(keys[0]["alg"] as? String == "EdDSA")
        #expect(keys[0]["use"] as? String == "sig")
        #expect(keys[0]["d"] == nil, "no private part")
        let xText = try #require(keys[0]["x"] as? String)
        let x = try #require(Base64URL.decode(xText))
        #expect(x.count == 32)
        #expect(keys[0]["kid"] as? String == JWK.thumbprint(ed25519PublicKey: x))
        #expect(try JWKS(jsonFrame: frame) == authority.jwks(now: 1_000))
        #expect(throws: TokenStoreError.self) { try JWKS(jsonFrame: Array("nope".utf8)) }
    }

    @Test("RFC 8037 appendix A.3: the thumbprint of the example key")
    func thumbprintVector() throws {
        let x = try #require(Base64URL.decode("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"))
        #expect(JWK.thumbprint(ed25519PublicKey: x) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
    }

    @Test("RFC 8037 appendix A.4: signing 'Example of Ed25519 signing' gives the RFC's JWS")
    func signatureVector() throws {
        let seed = try #require(Base64URL.decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"))
        let key = try SigningKey(seed: seed, createdAt: 0, activatesAt: 0)
        #expect(Base64URL.encode(key.publicKey) == "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
        let input = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
        #expect(Base64URL.encode(Sodium.sign(Array(input.utf8), secretKey: key.secretKey))
            == "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg")
    }

    @Test("foreign and broken keys in a JWKS are ignored")
    func ignoresForeignKeys() throws {
        let text = #"{"keys":[{"kty":"RSA","kid":"r","n":"x","e":"AQAB"},{"kty":"OKP","crv":"X25519","kid":"x","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},{"kty":"OKP","crv":"Ed25519","kid":"short","x":"AAAA"},{"kty":"OKP","crv":"Ed25519","kid":"good","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#
        let jwks = try JWKS(jsonFrame: Array(text.utf8))
        #expect(jwks.keys.count == 4)
        #expect(Array(jwks.ed25519Keys.keys) == ["good"])
    }
}

@Suite("key rotation")
struct RotationTests {
    @Test("a new key is published before it signs; the old one stays until its tokens expire")
    func rotation() throws {
        let folder = DataFolder()
        let configuration = TokenAuthorityConfiguration(tokenLifetime: 900, leeway: 30)
        let t0: Int64 = 1_000_000
        let authority = try TokenAuthority(dataDirectory: folder.path, configuration: configuration, now: t0)
        let (client, secret) = try authority.registry.add(name: "c", scopes: ["ocr"], now: t0)
        let credentials = Credentials(clientID: client.id, clientSecret: secret)
        let old = try #require(authority.jwks(now: t0).keys.first?.kid)
        let before = try authority.issue(.credentials(credentials), now: t0 + 100).get().accessToken

        let fresh = try authority.keyStore.rotate(now: t0 + 200, activationDelay: 60)
        // Published at once, not yet signing.
        #expect(try Set(authority.jwks(now: t0 + 200).keys.compactMap(\.kid)) == [old, fresh.kid])
        let during = try authority.issue(.credentials(credentials), now: t0 + 230).get().accessToken
        #expect(try decodeParts(during).header["kid"] as? String == old)
        // Signing from its activation on.
        let after = try authority.issue(.credentials(credentials), now: t0 + 260).get().accessToken
        #expect(try decodeParts(after).header["kid"] as? String == fresh.kid)
        // A verifier with the JWKS of any moment accepts every token still valid.
        let jwksNow = try authority.jwks(now: t0 + 300)
        for token in [before, during, after] {
            #expect(throws: Never.self) { try TokenVerifier(jwks: jwksNow).verify(token, now: t0 + 300).get() }
        }
        // The old key stays until the last token it signed (at t0+259 at the latest) has expired...
        let retention = configuration.keyRetention
        #expect(try authority.jwks(now: t0 + 260 + retention - 1).keys.count == 2)
        // ...and then leaves the JWKS.
        #expect(try authority.jwks(now: t0 + 260 + retention).keys.compactMap(\.kid) == [fresh.kid])
        #expect(throws: Never.self) { try TokenVerifier(jwks: authority.jwks(now: t0 + 1_100)).verify(after, now: t0 + 1_100).get() }
    }

    @Test("rotate prunes key files retired for longer than any token lives; files are 0600 in a 0700 folder")
    func pruneAndModes() throws {
        let folder = DataFolder()
        let store = KeyStore(dataDirectory: folder.path)
        let first = try #require(store.ensureKey(now: 0).keys.first)
        #expect(try store.ensureKey(now: 5).keys == [first], "idempotent")
        #expect(try permissions(store.directory) == 0o700)
        #expect(try permissions(store.directory + "/\(first.kid).json") == 0o600)
        let second = try store.rotate(now: 10, activationDelay: 0)
        #expect(try store.load().keys.count == 2)
        let third = try store.rotate(now: 10 + KeyStore.pruneAfter, activationDelay: 0)
        #expect(try Set(store.load().keys.map(\.kid)) == [second.kid, third.kid])
        let text = String(decoding: try #require(FileManager.default.contents(atPath: store.directory + "/\(third.kid).json")), as: UTF8.self)
        #expect(text.contains(Base64URL.encode(third.seed)))
    }

    @Test("a key rotated within the second of the last one activates after it, never ties with it")
    func sameSecondRotation() throws {
        let folder = DataFolder()
        let store = KeyStore(dataDirectory: folder.path)
        let first = try #require(store.ensureKey(now: 100).keys.first)
        let second = try store.rotate(now: 100, activationDelay: 0)
        #expect(second.activatesAt == 101)
        let keys = try store.load()
        #expect(keys.signingKey(now: 100)?.kid == first.kid)
        #expect(keys.signingKey(now: 101)?.kid == second.kid)
        #expect(keys.supersededAt(first, now: 101) == 101)
    }
}

@Suite("client registry and the token endpoint")
struct RegistryTests {
    let now: Int64 = 1_800_000_000

    @Test("secrets are stored only as argon2id hashes, in a 0600 file")
    func hashedAtRest() throws {
        let folder = DataFolder()
        let registry = ClientRegistry(dataDirectory: folder.path)
        let (client, secret) = try registry.add(name: "capture", scopes: ["ocr"], now: now)
        #expect(secret.hasPrefix("qs_") && secret.count > 40)
        #expect(client.secretHash.hasPrefix("$argon2id$"))
        let file = String(decoding: try #require(FileManager.default.contents(atPath: registry.path)), as: UTF8.self)
        #expect(!file.contains(secret))
        #expect(!file.contains(String(secret.dropFirst(3).prefix(20))))
        #expect(file.contains("$argon2id$"))
        #expect(try permissions(registry.path) == 0o600)
        #expect(try registry.load() == [client])
        #expect(Sodium.passwordMatches(secret, hash: client.secretHash))
        #expect(!Sodium.passwordMatches(secret + "x", hash: client.secretHash))
        #expect(try registry.remove(id: client.id))
        #expect(try !registry.remove(id: client.id))
        #expect(try registry.load().isEmpty)
        #expect(throws: TokenStoreError.self) { try registry.add(name: "x", scopes: ["has space"], now: now) }
        #expect(throws: TokenStoreError.self) { try registry.add(name: "x", scopes: [AccessClaims.readerScope], now: now) }
    }

    func code(_ authority: TokenAuthority, _ request: TokenRequest, at time: Int64? = nil) -> WireError.Code? {
        if case .failure(let error) = authority.issue(request, now: time ?? now) { return error.code }
        return nil
    }

    @Test("RFC 6749 §5.2 errors: wrong secret, unknown client, bad grant, bad scope, missing members")
    func errors() throws {
        let folder = DataFolder()
        let authority = try TokenAuthority(dataDirectory: folder.path, now: now)
        let (client, secret) = try authority.registry.add(name: "capture", scopes: ["ocr"], now: now)
        let good = Credentials(clientID: client.id, clientSecret: secret)
        #expect(code(authority, .credentials(good)) == nil)
        #expect(code(authority, .credentials(Credentials(clientID: client.id, clientSecret: secret + "x"))) == .invalidClient)
        #expect(code(authority, .credentials(Credentials(clientID: "qc_nobody", clientSecret: secret))) == .invalidClient)
        #expect(code(authority, TokenRequest(grantType: "password", clientID: client.id, clientSecret: secret)) == .unsupportedGrantType)
        #expect(code(authority, TokenRequest(grantType: "refresh_token")) == .unsupportedGrantType)
        #expect(code(authority, TokenRequest(grantType: nil, clientID: client.id, clientSecret: secret)) == .invalidRequest)
        #expect(code(authority, TokenRequest(grantType: TokenRequest.clientCredentials, clientID: client.id)) == .invalidRequest)
        #expect(code(authority, .credentials(good, scope: "ocr echo")) == .invalidScope)
        #expect(code(authority, .credentials(good, audience: "elsewhere")) == .invalidRequest)
        #expect(try authority.issue(.credentials(good, scope: "ocr", audience: "quire"), now: now).get().scope == "ocr")

        // On the wire: a JSON error body; garbage is invalid_request; the secret is never echoed.
        let wrong = authority.handleTokenRequest(TokenRequest.credentials(Credentials(clientID: client.id, clientSecret: "qs_wrong-secret")).jsonFrame, now: now)
        #expect(WireError(jsonFrame: wrong)?.code == .invalidClient)
        #expect(!String(decoding: wrong, as: UTF8.self).contains("qs_wrong-secret"))
        #expect(WireError(jsonFrame: authority.handleTokenRequest(Array("not json".utf8), now: now))?.code == .invalidRequest)
        #expect(WireError(jsonFrame: authority.handleTokenRequest(Array(#"{"grant_type":5}"#.utf8), now: now))?.code == .invalidRequest)
        let ok = authority.handleTokenRequest(TokenRequest.credentials(good).jsonFrame, now: now)
        #expect(try TokenResponse(jsonFrame: ok).tokenType == "Bearer")

        // A removed client is refused at once, even right after a cached success.
        try authority.registry.remove(id: client.id)
        #expect(code(authority, .credentials(good)) == .invalidClient)
    }

    @Test("reader tokens: one job, read only, same subject, short, never past the subject token")
    func readerTokens() throws {
        let folder = DataFolder()
        let authority = try TokenAuthority(dataDirectory: folder.path, now: now)
        let (client, secret) = try authority.registry.add(name: "capture", scopes: ["ocr"], now: now)
        let subject = try authority.issue(.credentials(Credentials(clientID: client.id, clientSecret: secret)), now: now).get()

        let reader = try authority.issue(.reader(subjectToken: subject.accessToken, job: "J1"), now: now + 100).get()
        #expect(reader.scope == AccessClaims.readerScope)
        #expect(reader.issuedTokenType == TokenRequest.accessTokenType)
        #expect(reader.expiresIn == 800, "capped by the subject token's exp")
        let claims = try authority.verifier(now: now + 100).verify(reader.accessToken, now: now + 100).get()
        #expect(claims.subject == client.id)
        #expect(claims.job == "J1")
        #expect(claims.isReader)
        #expect(claims.authorize(service: "titanic.reply", job: "J1") == nil)
        #expect(claims.authorize(service: "ocr") != nil)

        #expect(try authority.issue(.reader(subjectToken: subject.accessToken, job: "J1", expiresIn: 60), now: now).get().expiresIn == 60)
        #expect(try authority.issue(.reader(subjectToken: subject.accessToken, job: "J1", expiresIn: 99_999), now: now).get().expiresIn == 900)
        // Refusals.
        #expect(code(authority, .reader(subjectToken: reader.accessToken, job: "J2"), at: now + 100) == .invalidGrant)
        #expect(code(authority, .reader(subjectToken: "garbage", job: "J1")) == .invalidGrant)
        #expect(code(authority, .reader(subjectToken: subject.accessToken, job: "J1"), at: now + 2_000) == .invalidGrant)
        #expect(code(authority, TokenRequest(grantType: TokenRequest.tokenExchange, subjectToken: subject.accessToken)) == .invalidRequest)
        #expect(code(authority, .reader(subjectToken: subject.accessToken, job: "J1", expiresIn: 0)) == .invalidRequest)
        var wrongType = TokenRequest.reader(subjectToken: subject.accessToken, job: "J1")
        wrongType.subjectTokenType = "urn:ietf:params:oauth:token-type:refresh_token"
        #expect(code(authority, wrongType) == .invalidRequest)
        let otherFolder = DataFolder()
        let other = try TokenAuthority(dataDirectory: otherFolder.path, now: now)
        #expect(code(other, .reader(subjectToken: subject.accessToken, job: "J1")) == .invalidGrant)
        try authority.registry.remove(id: client.id)
        #expect(code(authority, .reader(subjectToken: subject.accessToken, job: "J1")) == .invalidGrant)
    }

    @Test("bootstrap creates a key, a local client and 0600 credentials once")
    func bootstrap() throws {
        let folder = DataFolder()
        let credentials = try LocalAuthority.bootstrap(directory: folder.path, now: now)
        #expect(try LocalAuthority.bootstrap(directory: folder.path, now: now + 5) == credentials)
        let path = LocalAuthority.credentialsPath(dataDirectory: folder.path)
        #expect(try permissions(path) == 0o600)
        #expect(try permissions(folder.path + "/auth") == 0o700)
        #expect(try Credentials.load(path: path) == credentials)
        let authority = try TokenAuthority(dataDirectory: folder.path, now: now)
        #expect(try authority.issue(.credentials(credentials), now: now).get().scope == "echo ocr")
        #expect(try authority.registry.load().count == 1)
        // A credentials file whose client was removed is replaced.
        try authority.registry.remove(id: credentials.clientID)
        let replaced = try LocalAuthority.bootstrap(directory: folder.path, now: now)
        #expect(replaced.clientID != credentials.clientID)
    }
}

@Suite("verified-token cache")
struct VerifiedTokenCacheTests {
    @Test("hits return the same claims, expiry still applies, failures are not kept, a new JWKS clears it")
    func cache() throws {
        let folder = DataFolder()
        let now: Int64 = 1_800_000_000
        let authority = try TokenAuthority(dataDirectory: folder.path, now: now)
        let (client, secret) = try authority.registry.add(name: "c", scopes: ["ocr"], now: now)
        let token = try authority.issue(.credentials(Credentials(clientID: client.id, clientSecret: secret)), now: now).get().accessToken
        var cache = VerifiedTokenCache(verifier: try authority.verifier(now: now), capacity: 2)
        let first = try cache.verify(token, now: now).get()
        #expect(cache.count == 1)
        #expect(try cache.verify(token, now: now + 10).get() == first)
        var tampered = Array(token.utf8)
        tampered[tampered.count / 2] = tampered[tampered.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: TokenError.self) { try cache.verify(String(decoding: tampered, as: UTF8.self), now: now).get() }
        #expect(cache.count == 1)
        #expect(cache.verify(token, now: now + 900 + 30) == .failure(.expired(expiresAt: now + 900)))
        #expect(cache.count == 0)
        _ = cache.verify(token, now: now)
        let stranger = DataFolder()
        cache.replaceVerifier(try TokenAuthority(dataDirectory: stranger.path, now: now).verifier(now: now))
        #expect(cache.count == 0)
        guard case .failure(.unknownKeyID) = cache.verify(token, now: now) else { Issue.record("expected unknownKeyID"); return }
    }
}
