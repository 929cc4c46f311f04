/// Remembers tokens that verified, so the broker pays for Ed25519 and JSON once per token rather
/// than once per request (a client reuses its token for up to 15 minutes). Pure, time passed in;
/// owned by one thread.
///
/// Only successes are kept, and a hit is still checked against `exp` (with the verifier's leeway)
/// each time. Replace the cache (or call ``removeAll()``) when the verifier's JWKS changes, so a
/// key that left the JWKS stops being honoured.
public struct VerifiedTokenCache: Sendable {
    public private(set) var verifier: TokenVerifier
    public let capacity: Int
    private var entries: [String: AccessClaims] = [:]

    public init(verifier: TokenVerifier, capacity: Int = 10_000) {
        self.verifier = verifier
        self.capacity = max(capacity, 1)
    }

    /// Entries held.
    public var count: Int { entries.count }

    /// Swaps in a verifier for a new JWKS and forgets everything verified with the old one.
    public mutating func replaceVerifier(_ verifier: TokenVerifier) {
        self.verifier = verifier
        entries.removeAll()
    }

    public mutating func removeAll() { entries.removeAll() }

    /// Same result as ``TokenVerifier/verify(_:now:)``.
    public mutating func verify(_ token: String, now: Int64) -> Result<AccessClaims, TokenError> {
        if let claims = entries[token] {
            if now - verifier.leeway < claims.expiresAt { return .success(claims) }
            entries[token] = nil
            return .failure(.expired(expiresAt: claims.expiresAt))
        }
        let result = verifier.verify(token, now: now)
        if case .success(let claims) = result {
            if entries.count >= capacity {
                entries = entries.filter { now - verifier.leeway < $0.value.expiresAt }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = claims
        }
        return result
    }
}
