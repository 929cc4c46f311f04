import Foundation
import QuireJWT
import QuireSupport
import QuireWire
import Synchronization

/// How the token worker issues tokens.
public struct TokenAuthorityConfiguration: Sendable, Equatable {
    /// `iss` of every token.
    public var issuer: String
    /// The audience tokens are for (`aud`); a request may name it, and no other.
    public var audience: String
    /// Lifetime of access tokens, seconds (default 15 minutes).
    public var tokenLifetime: Int64
    /// Default and longest lifetime of reader tokens, seconds; never beyond the subject token's `exp`.
    public var readerTokenLifetime: Int64
    /// Clock skew tolerated when verifying subject tokens, seconds.
    public var leeway: Int64
    /// How long a successful secret check is remembered, seconds: argon2id costs tens of
    /// milliseconds and 64 MiB by design, which would cap minting at a few dozen tokens a second.
    public var verifiedSecretCacheLifetime: Int64

    /// Lifetime of tokens issued for an API key, seconds (never more than ``tokenLifetime``). Only the
    /// gateway holds them and it keeps each for at most a minute, so they need not live long; short
    /// lifetimes bound what a token copied out of the gateway's memory is worth after a key is revoked.
    public static let apiKeyTokenLifetime: Int64 = 120

    /// The longest lifetime accepted for either kind of token (a day): keys are pruned after it.
    public static let maxTokenLifetime: Int64 = 86_400

    public init(issuer: String = "quire", audience: String = "quire", tokenLifetime: Int64 = 900, readerTokenLifetime: Int64 = 900,
                leeway: Int64 = 30, verifiedSecretCacheLifetime: Int64 = 600) {
        self.issuer = issuer
        self.audience = audience
        self.tokenLifetime = min(max(tokenLifetime, 1), Self.maxTokenLifetime)
        self.readerTokenLifetime = min(max(readerTokenLifetime, 1), Self.maxTokenLifetime)
        self.leeway = leeway
        self.verifiedSecretCacheLifetime = verifiedSecretCacheLifetime
    }

    /// What `quire worker token` lets its users set, each setting declared once.
    public static let settings: [Setting<TokenAuthorityConfiguration>] = [
        .issuer(\.issuer),
        .audience(\.audience),
        Setting(\.tokenLifetime, flag: "token-ttl-s", variable: "QUIRE_TOKEN_TTL_S", .integer64(1...Int(maxTokenLifetime)),
                help: "access token lifetime, seconds"),
    ]

    /// How long a retired key stays in the JWKS after its successor takes over.
    public var keyRetention: Int64 { max(tokenLifetime, readerTokenLifetime) + leeway }
}

/// The token worker's logic: answers `auth.token` and `auth.jwks` request frames. Thread-safe (one
/// instance serves both services' threads); reads keys and clients from the data folder and picks
/// up changes (`quire keys rotate`, `quire clients add|remove`) without a restart.
public final class TokenAuthority: Sendable {
    public let configuration: TokenAuthorityConfiguration
    public let keyStore: KeyStore
    public let registry: ClientRegistry

    private struct State: Sendable {
        var keys = KeySet([])
        var keysStamp: Int64 = -1
        var clients: [String: RegisteredClient] = [:]
        var clientsStamp: Int64 = -1
        /// SHA-256 of each client's API key, with the client's id.
        var apiKeys: [(digest: [UInt8], value: String)] = []
        /// keyed BLAKE2b of (id, hash, secret) → when the memory of that successful check ends.
        var verified: [[UInt8]: Int64] = [:]
    }

    private let state = Mutex(State())
    /// Per-process key for the verified-secret cache: the cache holds no secret and nothing useful
    /// outside this process.
    private let cacheKey = Sodium.randomBytes(32)
    /// Checked against when the client is unknown, so that unknown ids and wrong secrets take as long.
    private let decoyHash: String

    /// Opens the data folder and creates a signing key if there is none.
    public init(dataDirectory: String, configuration: TokenAuthorityConfiguration = TokenAuthorityConfiguration(), now: Int64 = epochSeconds()) throws(TokenStoreError) {
        try Sodium.ensureReady()
        self.configuration = configuration
        self.keyStore = KeyStore(dataDirectory: dataDirectory)
        self.registry = ClientRegistry(dataDirectory: dataDirectory)
        self.decoyHash = try Sodium.passwordHash(Base64URL.encode(Sodium.randomBytes(32)))
        try keyStore.ensureKey(now: now)
        _ = try refreshedKeys()
    }

    private func refreshedKeys() throws(TokenStoreError) -> KeySet {
        let stamp = keyStore.stamp
        if let cached = state.withLock({ $0.keysStamp == stamp ? $0.keys : nil }) { return cached }
        let keys = try keyStore.load()
        state.withLock { $0.keys = keys; $0.keysStamp = stamp }
        return keys
    }

    private func refreshedClient(_ id: String) throws(TokenStoreError) -> RegisteredClient? {
        try refreshedClients { state in state.clients[id] }
    }

    /// `read` on the client table, reloaded first when the registry file has changed.
    private func refreshedClients<T: Sendable>(_ read: (State) -> T) throws(TokenStoreError) -> T {
        let stamp = registry.stamp
        if let found = state.withLock({ $0.clientsStamp == stamp ? Optional(read($0)) : nil }) { return found }
        let clients = try registry.load()
        let byID = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let keys = clients.compactMap { client in client.apiKeyHash.flatMap(APIKey.digest(stored:)).map { (digest: $0, value: client.id) } }
        return state.withLock { state in
            state.clients = byID
            state.apiKeys = keys
            state.clientsStamp = stamp
            state.verified.removeAll()
            return read(state)
        }
    }

    /// The JWKS now: pending, signing and recently retired keys.
    public func jwks(now: Int64 = epochSeconds()) throws(TokenStoreError) -> JWKS {
        try refreshedKeys().jwks(now: now, retention: configuration.keyRetention)
    }

    /// A verifier for tokens this authority issued (used for token exchange, tests and benchmarks).
    public func verifier(now: Int64 = epochSeconds()) throws(TokenStoreError) -> TokenVerifier {
        TokenVerifier(jwks: try jwks(now: now), audience: configuration.audience, issuer: configuration.issuer, leeway: configuration.leeway)
    }

    // MARK: - Wire

    /// The reply frame for an `auth.jwks` request (its body is ignored).
    public func handleJWKSRequest(now: Int64 = epochSeconds()) -> [UInt8] {
        do { return try jwks(now: now).jsonFrame } catch {
            return WireError(.internal, "cannot read the signing keys").jsonFrame
        }
    }

    /// The reply frame for an `auth.token` request: a ``TokenResponse`` or an RFC 6749 §5.2 error.
    public func handleTokenRequest(_ frame: [UInt8], now: Int64 = epochSeconds()) -> [UInt8] {
        respond(to: frame, now: now).frame
    }

    /// The reply frame and, for the log, what happened: grant, client, scope, outcome. The summary
    /// never holds a secret or a token.
    public func respond(to frame: [UInt8], now: Int64 = epochSeconds()) -> (frame: [UInt8], summary: [String: String]) {
        guard frame.first == UInt8(ascii: "{"), let request = try? JSONDecoder().decode(TokenRequest.self, from: Data(frame)) else {
            var message = "frame 1 must be a JSON object with string members grant_type, client_id, client_secret, scope, audience"
            if let object = (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any],
               let member = SchemaMessages.firstUndecodable(TokenRequest.self, in: object, keys: TokenRequest.memberNames) {
                message = "'\(member)' must be " + (member == "expires_in" ? "an integer number of seconds" : "a string")
            }
            let error = WireError(.invalidRequest, message)
            return (error.jsonFrame, ["outcome": error.code.rawValue])
        }
        var summary = ["grant": printable(request.grantType ?? "-")]
        if let id = request.clientID { summary["client.id"] = printable(id) }
        if let job = request.job { summary["job.id"] = printable(job) }
        switch issue(request, now: now) {
        case .success(let response):
            summary["outcome"] = "issued"
            summary["scope"] = response.scope
            summary["expires_in"] = String(response.expiresIn)
            return (response.jsonFrame, summary)
        case .failure(let error):
            summary["outcome"] = error.code.rawValue
            return (error.jsonFrame, summary)
        }
    }

    // MARK: - Grants

    /// Handles one token request. Errors carry RFC 6749 §5.2 codes; none of them repeats a secret.
    public func issue(_ request: TokenRequest, now: Int64 = epochSeconds()) -> Result<TokenResponse, WireError> {
        do {
            switch request.grantType {
            case nil:
                return .failure(WireError(.invalidRequest, "grant_type is required"))
            case TokenRequest.clientCredentials?:
                return try clientCredentials(request, now: now)
            case TokenRequest.tokenExchange?:
                return try exchange(request, now: now)
            case TokenRequest.apiKeyGrant?:
                return try apiKeyGrant(request, now: now)
            case let other?:
                return .failure(WireError(.unsupportedGrantType, "grant_type '\(printable(other))' is not supported; use client_credentials or \(TokenRequest.tokenExchange)"))
            }
        } catch {
            return .failure(WireError(.internal, "token store: \(error.message)"))
        }
    }

    private func clientCredentials(_ request: TokenRequest, now: Int64) throws(TokenStoreError) -> Result<TokenResponse, WireError> {
        guard let id = request.clientID, let secret = request.clientSecret, !id.isEmpty else {
            return .failure(WireError(.invalidRequest, "client_id and client_secret are required"))
        }
        if let audience = request.audience, audience != configuration.audience {
            return .failure(WireError(.invalidRequest, "unknown audience '\(printable(audience))'"))
        }
        guard let client = try authenticate(id: id, secret: secret, now: now) else {
            return .failure(WireError(.invalidClient, "client authentication failed"))
        }
        switch Self.scopes(request.scope, of: client) {
        case .success(let scopes):
            return try mint(subject: client.id, scopes: scopes, job: nil, expiresAt: now + configuration.tokenLifetime, now: now, issuedTokenType: nil)
        case .failure(let error):
            return .failure(error)
        }
    }

    /// The API-key grant: the client whose key hash matches gets a token of
    /// ``TokenAuthorityConfiguration/apiKeyTokenLifetime`` (or the access token lifetime, if shorter).
    /// An unknown or revoked key is `invalid_client`, as a failed client authentication.
    private func apiKeyGrant(_ request: TokenRequest, now: Int64) throws(TokenStoreError) -> Result<TokenResponse, WireError> {
        guard let key = request.apiKey, !key.isEmpty else { return .failure(WireError(.invalidRequest, "api_key is required")) }
        if let audience = request.audience, audience != configuration.audience {
            return .failure(WireError(.invalidRequest, "unknown audience '\(printable(audience))'"))
        }
        let client = try refreshedClients { state -> RegisteredClient? in
            APIKey.find(key, in: state.apiKeys).flatMap { state.clients[$0] }
        }
        guard let client else { return .failure(WireError(.invalidClient, "API key not valid")) }
        switch Self.scopes(request.scope, of: client) {
        case .success(let scopes):
            let lifetime = min(TokenAuthorityConfiguration.apiKeyTokenLifetime, configuration.tokenLifetime)
            return try mint(subject: client.id, scopes: scopes, job: nil, expiresAt: now + lifetime, now: now, issuedTokenType: nil)
        case .failure(let error):
            return .failure(error)
        }
    }

    /// The scopes a token for `client` gets: those `requested` (space-separated), all of them when nil.
    private static func scopes(_ requested: String?, of client: RegisteredClient) -> Result<Set<String>, WireError> {
        let allowed = Set(client.scopes)
        let scopes: Set<String>
        if let requested {
            scopes = Set(requested.split(separator: " ").map(String.init))
            let refused = scopes.subtracting(allowed)
            if !refused.isEmpty { return .failure(WireError(.invalidScope, "scope not granted to this client: \(refused.sorted().map(printable).joined(separator: " "))")) }
            if scopes.isEmpty { return .failure(WireError(.invalidScope, "empty scope")) }
        } else {
            scopes = allowed
        }
        if scopes.isEmpty { return .failure(WireError(.invalidScope, "this client has no scopes")) }
        return .success(scopes)
    }

    private func exchange(_ request: TokenRequest, now: Int64) throws(TokenStoreError) -> Result<TokenResponse, WireError> {
        guard let subjectToken = request.subjectToken, let job = request.job else {
            return .failure(WireError(.invalidRequest, "subject_token and job are required"))
        }
        if let type = request.subjectTokenType, type != TokenRequest.accessTokenType && type != TokenRequest.jwtTokenType {
            return .failure(WireError(.invalidRequest, "subject_token_type must be \(TokenRequest.accessTokenType)"))
        }
        guard !job.isEmpty, job.utf8.count <= 256 else { return .failure(WireError(.invalidRequest, "job must be a job id")) }
        if let scope = request.scope, scope != AccessClaims.readerScope {
            return .failure(WireError(.invalidScope, "a reader token has scope '\(AccessClaims.readerScope)' only"))
        }
        if let expiresIn = request.expiresIn, expiresIn <= 0 { return .failure(WireError(.invalidRequest, "expires_in must be positive")) }
        let subject: AccessClaims
        switch try verifier(now: now).verify(subjectToken, now: now) {
        case .success(let claims): subject = claims
        case .failure(let error): return .failure(WireError(.invalidGrant, "subject_token refused: \(error.message)"))
        }
        if subject.isReader { return .failure(WireError(.invalidGrant, "a reader token cannot be exchanged")) }
        guard try refreshedClient(subject.subject) != nil else {
            return .failure(WireError(.invalidGrant, "the subject token's client no longer exists"))
        }
        let lifetime = min(request.expiresIn ?? configuration.readerTokenLifetime, configuration.readerTokenLifetime)
        let expiresAt = min(now + lifetime, subject.expiresAt)
        guard expiresAt > now else { return .failure(WireError(.invalidGrant, "the subject token has expired")) }
        return try mint(subject: subject.subject, scopes: [AccessClaims.readerScope], job: job, expiresAt: expiresAt, now: now,
                        issuedTokenType: TokenRequest.accessTokenType)
    }

    private func mint(subject: String, scopes: Set<String>, job: String?, expiresAt: Int64, now: Int64, issuedTokenType: String?) throws(TokenStoreError) -> Result<TokenResponse, WireError> {
        guard let key = try refreshedKeys().signingKey(now: now) else {
            return .failure(WireError(.internal, "no active signing key"))
        }
        let scope = scopes.sorted().joined(separator: " ")
        let claims = TokenClaims(iss: configuration.issuer, sub: subject, aud: .one(configuration.audience), scope: scope,
                                 iat: now, nbf: now, exp: expiresAt, jti: Base64URL.encode(Sodium.randomBytes(16)), job: job)
        let token = JWTSigner(key: key).sign(claims)
        return .success(TokenResponse(accessToken: token, expiresIn: expiresAt - now, scope: scope, issuedTokenType: issuedTokenType))
    }

    /// The client, if `secret` is its secret. Successful checks are remembered for a while under a
    /// keyed hash (never the secret); failures always pay for argon2id.
    private func authenticate(id: String, secret: String, now: Int64) throws(TokenStoreError) -> RegisteredClient? {
        guard id.utf8.count <= 256, secret.utf8.count <= 1_024 else { return nil }
        guard let client = try refreshedClient(id) else {
            _ = Sodium.passwordMatches(secret, hash: decoyHash)
            return nil
        }
        let fingerprint = Sodium.keyedHash(Array(client.id.utf8) + [0] + Array(client.secretHash.utf8) + [0] + Array(secret.utf8), key: cacheKey)
        let remembered = state.withLock { state -> Bool in
            guard let until = state.verified[fingerprint] else { return false }
            if until > now { return true }
            state.verified[fingerprint] = nil
            return false
        }
        if remembered { return client }
        guard Sodium.passwordMatches(secret, hash: client.secretHash) else { return nil }
        let lifetime = configuration.verifiedSecretCacheLifetime
        if lifetime > 0 {
            state.withLock { state in
                if state.verified.count >= 10_000 { state.verified = state.verified.filter { $0.value > now } }
                if state.verified.count < 10_000 { state.verified[fingerprint] = now + lifetime }
            }
        }
        return client
    }
}

/// A client-supplied string made safe to quote in a message: short, printable.
func printable(_ text: String) -> String {
    let cleaned = String(text.unicodeScalars.prefix(64).map { $0.value >= 0x20 && $0.value != 0x7F ? Character($0) : "?" })
    return text.unicodeScalars.count > 64 ? cleaned + "…" : cleaned
}
