import Foundation
import QuireHTTP
import QuireJWT
import QuireSupport
import QuireWire
import Synchronization

/// What an HTTP client presented to prove who it is: a bearer token, an API key, both or neither.
public struct Credential: Sendable, Equatable {
    /// `Authorization: Bearer TOKEN`. When both are there, the token is used and the key is not.
    public var token: String?
    /// Azure's `Ocp-Apim-Subscription-Key`; Google's `?key=` or `x-goog-api-key`.
    public var apiKey: String?

    public init(token: String? = nil, apiKey: String? = nil) {
        self.token = token
        self.apiKey = apiKey
    }

    /// What an Azure route accepts: a bearer token, or the key in `Ocp-Apim-Subscription-Key`.
    static func azure(_ request: HTTPRequest) -> Credential {
        Credential(token: Gateway.bearerToken(request), apiKey: nonEmpty(request.headers["Ocp-Apim-Subscription-Key"]))
    }

    /// What a Google or Firebase route accepts: a bearer token, or the key in `?key=` or `x-goog-api-key`
    /// (the query first, as Google's front reads it).
    static func google(_ request: HTTPRequest) -> Credential {
        Credential(token: Gateway.bearerToken(request), apiKey: nonEmpty(request.query("key")) ?? nonEmpty(request.headers["x-goog-api-key"]))
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespaces), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}

/// API keys turned into tokens: the gateway never checks a key itself (it has no client registry). It
/// asks the token worker for a token for the key (`auth.token`, the API-key grant), keeps the token
/// for at most ``cacheSeconds`` (60 s by default and at most) under the key's SHA-256 (never the
/// key), and presents it as the request's token, which the broker checks as any other. A key removed
/// with `quire clients remove` therefore stops working within ``cacheSeconds``.
///
/// With no token worker at the broker (auth off), keys are not checked and requests go without a
/// token, as the CLI's do; a broker with auth on then refuses them itself.
public final class APIKeyTokens: Sendable {
    /// The longest a token may be kept for a key: the longest revocation window.
    public static let maxCacheSeconds: Int64 = 60
    /// A token is not used in its last seconds (clock skew, the request's own time in the queue).
    public static let renewBeforeSeconds: Int64 = 15
    /// Keys remembered at once; past it, expired entries go, then the one expiring first.
    public static let capacity = 1_024

    /// Google's answer to a bad key, and the message of every invalid-key failure.
    public static let invalidKeyMessage = "API key not valid. Please pass a valid API key."

    let backend: TokenBackend
    /// How long a token is kept for a key (0…``maxCacheSeconds``; 0: the token worker is asked every time).
    public let cacheSeconds: Int64
    let clock: @Sendable () -> Instant
    private let cache = Mutex<[[UInt8]: (token: String, until: Instant)]>([:])

    public init(backend: TokenBackend, cacheSeconds: Int64 = maxCacheSeconds, clock: @escaping @Sendable () -> Instant = { Instant.now() }) {
        self.backend = backend
        self.cacheSeconds = min(max(cacheSeconds, 0), Self.maxCacheSeconds)
        self.clock = clock
    }

    /// Entries held now (for tests).
    var count: Int { cache.withLock { $0.count } }

    /// The token to present: the bearer token if there is one, else the key's token; nil without
    /// either, or when there is no token worker to exchange the key.
    public func token(for credential: Credential) -> Result<String?, GatewayFailure> {
        if let token = credential.token { return .success(token) }
        guard let key = credential.apiKey else { return .success(nil) }
        guard key.utf8.count <= 256 else { return .failure(.invalidAPIKey) }
        let digest = Sodium.sha256(Array(key.utf8))
        let now = clock()
        if let hit = cache.withLock({ cache -> String? in
            guard let entry = cache[digest] else { return nil }
            if now < entry.until { return entry.token }
            cache[digest] = nil
            return nil
        }) {
            return .success(hit)
        }
        switch backend.request(.apiKey(key)) {
        case .success(let issued):
            let keep = min(cacheSeconds, issued.expiresIn - Self.renewBeforeSeconds)
            if keep > 0 { remember(digest, issued.accessToken, until: now + Milliseconds(keep * 1_000), now: now) }
            return .success(issued.accessToken)
        case .failure(.noTokenWorker):
            return .success(nil)
        case .failure(.refused(let error)):
            return .failure(Self.failure(error))
        case .failure(.transport(let failure)):
            return .failure(failure)
        }
    }

    /// What an `auth.token` refusal of a key means for the HTTP request.
    static func failure(_ error: WireError) -> GatewayFailure {
        switch error.code {
        case .invalidClient, .invalidRequest, .invalidGrant, .unauthorizedClient:
            return .invalidAPIKey
        case .invalidScope:
            return GatewayFailure(.forbidden, "the API key's client may not call this service: \(error.message)")
        case .unsupportedGrantType:
            return GatewayFailure(.unavailable, "the token worker does not know API keys (an older version?): \(error.message)")
        default:
            return GatewayFailure(error)
        }
    }

    private func remember(_ digest: [UInt8], _ token: String, until: Instant, now: Instant) {
        cache.withLock { cache in
            if cache[digest] == nil && cache.count >= Self.capacity {
                cache = cache.filter { now < $0.value.until }
                if cache.count >= Self.capacity, let first = cache.min(by: { $0.value.until < $1.value.until }) { cache[first.key] = nil }
            }
            cache[digest] = (token, until)
        }
    }
}

extension GatewayFailure {
    /// An unknown or revoked API key: each API answers it with its own body.
    public static var invalidAPIKey: GatewayFailure {
        var failure = GatewayFailure(.unauthenticated, APIKeyTokens.invalidKeyMessage)
        failure.isInvalidAPIKey = true
        return failure
    }
}
