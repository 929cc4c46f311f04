import QuireSupport
import QuireJWT
import QuireWire

/// How the broker checks tokens. `nil` in ``BrokerConfiguration/auth`` means auth is off.
public struct AuthConfiguration: Sendable, Equatable {
    /// The `aud` every token must carry.
    public var audience: String
    /// The `iss` every token must carry.
    public var issuer: String
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    public var leeway: Int64
    /// Requests per second each client (token subject) may make, sustained; `burst` at once.
    public var rateLimit: Double
    public var burst: Double
    /// A key id that a fresh JWKS did not have is refused for this long without another fetch; fetches
    /// for other unknown ids are at least ``jwksMinimumGap`` apart.
    public var jwksRefetchInterval: Milliseconds
    public var jwksMinimumGap: Milliseconds
    /// The JWKS is fetched again this often anyway, so that removed keys stop being honoured.
    public var jwksMaxAge: Milliseconds
    /// How long a request may wait for the JWKS before it is refused.
    public var jwksWait: Milliseconds

    public init(audience: String = "quire", issuer: String = "quire", leeway: Int64 = 30, rateLimit: Double = 200, burst: Double = 400,
                jwksRefetchInterval: Milliseconds = 5_000, jwksMinimumGap: Milliseconds = 200, jwksMaxAge: Milliseconds = 300_000, jwksWait: Milliseconds = 5_000) {
        self.audience = audience
        self.issuer = issuer
        self.leeway = leeway
        self.rateLimit = rateLimit
        self.burst = burst
        self.jwksRefetchInterval = jwksRefetchInterval
        self.jwksMinimumGap = jwksMinimumGap
        self.jwksMaxAge = jwksMaxAge
        self.jwksWait = jwksWait
    }

    /// What `quire broker` and `quire up` let their users set about token checks, each setting
    /// declared once. Whether auth is on at all is the command line's (`--auth`, `QUIRE_AUTH`).
    public static let settings: [Setting<AuthConfiguration>] = [
        .audience(\.audience),
        .issuer(\.issuer),
        Setting(flag: "rate-limit", variable: "QUIRE_RATE_LIMIT", .integer(1...1_000_000),
                help: "requests per second per client, burst twice as many",
                set: { configuration, rate in
                    configuration.rateLimit = Double(rate)
                    configuration.burst = Double(rate * 2)
                },
                get: { Int($0.rateLimit) }),
    ]

    /// Services every client may call without a token: discovery and the token endpoint itself
    /// (``ServiceClass/needsToken``).
    public static func isProtected(_ service: String) -> Bool { ServiceClass(service).needsToken }
}

/// The broker's token check, kept inside ``BrokerState``: pure, time passed in.
///
/// Verified tokens are cached (one Ed25519 check per token, not per request). The public keys come
/// from the `auth.jwks` service through the broker itself; a token signed by a key the broker does not
/// know parks its request and triggers one fetch (at most one per ``AuthConfiguration/jwksRefetchInterval``).
struct AuthGate: Sendable {
    let configuration: AuthConfiguration
    var cache: VerifiedTokenCache
    var limiter: RateLimiter
    var haveKeys = false
    var fetching = false
    var lastFetch: Instant?
    /// Key ids a fetched JWKS did not have, and when that was found.
    var missingKeys: [String: Instant] = [:]
    /// Requests waiting for the JWKS: the original message, replayed when it arrives.
    var parked: [(peer: [UInt8], frames: [[UInt8]], until: Instant)] = []
    var parkedBytes = 0
    /// Past these, a request whose token names an unknown key is refused at once instead of waiting.
    static let maxParked = 1_000
    static let maxParkedBytes = 64 << 20

    init(configuration: AuthConfiguration) {
        self.configuration = configuration
        cache = VerifiedTokenCache(verifier: TokenVerifier(jwks: JWKS(keys: []), audience: configuration.audience,
                                                           issuer: configuration.issuer, leeway: configuration.leeway))
        limiter = RateLimiter(ratePerSecond: configuration.rateLimit, burst: configuration.burst)
    }

    enum Decision {
        /// Go on with `body` (the token removed); `subject` owns what the request creates.
        case allow(body: [[UInt8]], subject: String)
        case deny(WireError)
        /// The token's key is unknown: wait for the JWKS.
        case park
    }

    /// Checks the token of a request to `service`. The token is the `token` member of the request's
    /// first JSON frame; for `titanic.*` the frame after the target service or the job id.
    mutating func check(service: String, body: [[UInt8]], now: Instant, wallSeconds: Int64, mayPark: Bool) -> Decision {
        let titanic = ServiceClass(service) == .jobs
        let index = titanic ? 1 : 0
        guard body.count > index else { return .deny(missing(service)) }
        let token: String
        var rest = body
        switch BrokerEnvelope.split(body[index], removing: ["token"]) {
        case .failure(let error):
            return .deny(error)
        case .success(let (envelope, frame)):
            guard let value = envelope.token, !value.isEmpty else { return .deny(missing(service)) }
            token = value
            rest[index] = frame
        }
        let claims: AccessClaims
        switch cache.verify(token, now: wallSeconds) {
        case .success(let value):
            claims = value
        case .failure(.unknownKeyID(let kid)):
            if mayPark && canFetch(kid: kid, now: now) { return .park }
            if !mayPark {
                // Checked against a JWKS fetched for it: unknown for a while, without refetching.
                if missingKeys.count > 10_000 { missingKeys.removeAll() }
                missingKeys[kid] = now
            }
            return .deny(WireError(.unauthenticated, haveKeys ? "token signed by unknown key '\(kid)'" : "no signing keys known yet: is a token worker (auth.jwks) running?",
                                   retryable: !haveKeys, service: service))
        case .failure(let error):
            return .deny(error.wireError(service: service))
        }
        let target = service == Titanic.request ? body.first.map { String(decoding: $0, as: UTF8.self) } : nil
        let job = titanic && service != Titanic.request ? body.first.map { String(decoding: $0, as: UTF8.self).lowercased() } : nil
        if let refusal = claims.authorize(service: service, targetService: target, job: job) {
            return .deny(refusal.wireError(service: service))
        }
        if case .limited(let retryAfter) = limiter.take(claims.subject, now: now) {
            return .deny(WireError(.rateLimited, "more than \(Int(configuration.rateLimit)) requests per second from this client",
                                   service: service, retryAfterMilliseconds: Int(retryAfter.value)))
        }
        return .allow(body: rest, subject: claims.subject)
    }

    private func missing(_ service: String) -> WireError {
        WireError(.unauthenticated, "'\(service)' needs a token: the 'token' member of the request's JSON frame (get one from auth.token)", service: service)
    }

    /// Whether a token signed by `kid` may wait for a (new or running) JWKS fetch.
    func canFetch(kid: String, now: Instant) -> Bool {
        if let missing = missingKeys[kid], now < missing + configuration.jwksRefetchInterval { return false }
        if fetching { return true }
        guard let lastFetch else { return true }
        return now >= lastFetch + configuration.jwksMinimumGap
    }

    /// A new JWKS: swap the verifier (forgetting cached tokens of removed keys).
    mutating func install(_ jwks: JWKS) {
        cache.replaceVerifier(TokenVerifier(jwks: jwks, audience: configuration.audience, issuer: configuration.issuer, leeway: configuration.leeway))
        haveKeys = !jwks.keys.isEmpty
    }
}
