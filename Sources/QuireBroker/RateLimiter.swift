import QuireSupport

/// Token buckets per key (a client id): `ratePerSecond` sustained, `burst` at once. Pure: time is
/// passed in; one instance belongs to one thread (the broker's loop).
public struct RateLimiter: Sendable {
    /// The outcome of one ``take(_:now:cost:)``.
    public enum Decision: Sendable, Equatable {
        case allowed
        /// Refused; a token will be there after this long.
        case limited(retryAfter: Milliseconds)
    }

    public let ratePerSecond: Double
    public let burst: Double
    /// Past this many keys, buckets that have refilled completely are forgotten (they hold no state
    /// a fresh bucket would not).
    public let maxKeys: Int

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Instant
    }

    private var buckets: [String: Bucket] = [:]

    public init(ratePerSecond: Double, burst: Double, maxKeys: Int = 100_000) {
        self.ratePerSecond = max(ratePerSecond, 1e-9)
        self.burst = max(burst, 1)
        self.maxKeys = max(maxKeys, 1)
    }

    /// Keys currently tracked.
    public var trackedKeys: Int { buckets.count }

    /// Takes `cost` tokens from `key`'s bucket if it has them.
    public mutating func take(_ key: String, now: Instant, cost: Double = 1) -> Decision {
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + now.seconds(since: bucket.updated) * ratePerSecond)
        bucket.updated = max(bucket.updated, now)
        let decision: Decision
        if bucket.tokens >= cost {
            bucket.tokens -= cost
            decision = .allowed
        } else {
            let wait = (cost - bucket.tokens) / ratePerSecond
            decision = .limited(retryAfter: Milliseconds(Int64((wait * 1_000).rounded(.up))))
        }
        buckets[key] = bucket
        if buckets.count > maxKeys { evictFull(now: now) }
        return decision
    }

    private mutating func evictFull(now: Instant) {
        let refill = burst / ratePerSecond
        buckets = buckets.filter { _, bucket in bucket.tokens + now.seconds(since: bucket.updated) * ratePerSecond < burst && now.seconds(since: bucket.updated) < refill }
    }
}
