import Foundation
import QuireSupport
import QuireWire
import Testing
@testable import QuireJWT
@testable import QuireTokens

@Suite("API keys")
struct APIKeyTests {
    let now: Int64 = 1_800_000_000

    @Test("a key is qk_ + 256 random bits, stored only as its SHA-256, listed as present")
    func hashedAtRest() throws {
        let folder = DataFolder()
        let registry = ClientRegistry(dataDirectory: folder.path)
        let (client, secret, key) = try registry.add(name: "app", scopes: ["ocr"], withAPIKey: true, now: now)
        let apiKey = try #require(key)
        #expect(apiKey.hasPrefix("qk_"))
        #expect(Base64URL.decode(apiKey.dropFirst(3))?.count == 32)
        #expect(client.apiKeyHash == APIKey.hash(apiKey))
        #expect(client.apiKeyHash?.hasPrefix("sha256:") == true)
        // The stored digest is SHA-256 of the key's bytes (checked against libsodium's SHA-256 directly).
        #expect(APIKey.digest(stored: try #require(client.apiKeyHash)) == Sodium.sha256(Array(apiKey.utf8)))
        let file = String(decoding: try #require(FileManager.default.contents(atPath: registry.path)), as: UTF8.self)
        #expect(!file.contains(apiKey) && !file.contains(String(apiKey.dropFirst(3).prefix(16))))
        #expect(!file.contains(secret))
        #expect(file.contains("api_key_hash"))
        #expect(try registry.load() == [client])
        // Without --api-key there is no hash; two keys are never the same.
        let (plain, _, none) = try registry.add(name: "cli", scopes: ["ocr"], withAPIKey: false, now: now)
        #expect(none == nil && plain.apiKeyHash == nil)
        let (_, _, other) = try registry.add(name: "app2", scopes: ["ocr"], withAPIKey: true, now: now)
        #expect(other != apiKey)
    }

    @Test("a registry written before API keys existed still loads")
    func oldRegistry() throws {
        let folder = DataFolder()
        let registry = ClientRegistry(dataDirectory: folder.path)
        let (client, _) = try registry.add(name: "old", scopes: ["ocr"], now: now)
        let json = #"{"clients":[{"created":1,"id":"\#(client.id)","name":"old","scopes":["ocr"],"secret_hash":"\#(client.secretHash)"}]}"#
        try PrivateFiles.write(Array(json.utf8), to: registry.path)
        let loaded = try registry.load()
        #expect(loaded.map(\.id) == [client.id])
        #expect(loaded.first?.apiKeyHash == nil)
    }

    @Test("lookup compares every stored digest and finds the one match", arguments: [0, 1, 5, 9])
    func lookup(position: Int) {
        let keys = (0..<10).map { "qk_key-\($0)" }
        let entries = keys.enumerated().map { (digest: APIKey.digest($0.element), value: $0.offset) }
        #expect(APIKey.find(keys[position], in: entries) == position)
        #expect(APIKey.find(keys[position] + "x", in: entries) == nil)
        #expect(APIKey.find("", in: entries) == nil)
        #expect(APIKey.find(String(repeating: "k", count: 300), in: entries) == nil)
        #expect(APIKey.digest(stored: "sha256:short") == nil)
        #expect(APIKey.digest(stored: "md5:" + Base64URL.encode(APIKey.digest("x"))) == nil)
    }

    @Test("the api-key grant: a short token for the key's client, its scopes; unknown and revoked keys are invalid_client")
    func grant() throws {
        let folder = DataFolder()
        let authority = try TokenAuthority(dataDirectory: folder.path, now: now)
        let (client, secret, key) = try authority.registry.add(name: "app", scopes: ["echo", "ocr"], withAPIKey: true, now: now)
        let apiKey = try #require(key)
        let response = try authority.issue(.apiKey(apiKey), now: now).get()
        #expect(response.tokenType == "Bearer")
        #expect(response.scope == "echo ocr")
        #expect(response.expiresIn == TokenAuthorityConfiguration.apiKeyTokenLifetime)
        let claims = try authority.verifier(now: now).verify(response.accessToken, now: now).get()
        #expect(claims.subject == client.id)
        #expect(try authority.issue(.apiKey(apiKey, scope: "ocr"), now: now).get().scope == "ocr")

        func code(_ request: TokenRequest) -> WireError.Code? {
            if case .failure(let error) = authority.issue(request, now: now) { return error.code }
            return nil
        }
        #expect(code(.apiKey(apiKey, scope: "admin")) == .invalidScope)
        #expect(code(.apiKey(apiKey + "x")) == .invalidClient)
        #expect(code(.apiKey("qk_unknown")) == .invalidClient)
        // The client's secret is not its key, and the key is not a secret.
        #expect(code(.apiKey(secret)) == .invalidClient)
        #expect(code(.credentials(Credentials(clientID: client.id, clientSecret: apiKey))) == .invalidClient)
        #expect(code(TokenRequest(grantType: TokenRequest.apiKeyGrant)) == .invalidRequest)
        #expect(code(TokenRequest(grantType: TokenRequest.apiKeyGrant, audience: "elsewhere", apiKey: apiKey)) == .invalidRequest)

        // On the wire the key is never echoed, also when it is refused.
        let refused = authority.handleTokenRequest(TokenRequest.apiKey("qk_never-echoed").jsonFrame, now: now)
        #expect(WireError(jsonFrame: refused)?.code == .invalidClient)
        #expect(!String(decoding: refused, as: UTF8.self).contains("qk_never-echoed"))
        let (_, summary) = authority.respond(to: TokenRequest.apiKey(apiKey).jsonFrame, now: now)
        #expect(!summary.values.contains { $0.contains(apiKey) })
        #expect(summary["outcome"] == "issued")

        // A shorter access-token lifetime caps key tokens too.
        let short = try TokenAuthority(dataDirectory: folder.path, configuration: TokenAuthorityConfiguration(tokenLifetime: 30), now: now)
        #expect(try short.issue(.apiKey(apiKey), now: now).get().expiresIn == 30)

        // Removing the client revokes the key at once.
        try authority.registry.remove(id: client.id)
        #expect(code(.apiKey(apiKey)) == .invalidClient)
    }
}
