import QuireSupport
import Testing

@testable import QuireBroker

@Suite("rate limiter")
struct RateLimiterTests {
    func at(_ ms: UInt64) -> Instant { Instant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    @Test("burst, then one per 1/rate, with the exact retry-after; keys are independent")
    func bucket() {
        var limiter = RateLimiter(ratePerSecond: 10, burst: 3)
        for _ in 0..<3 { #expect(limiter.take("a", now: at(0)) == .allowed) }
        #expect(limiter.take("a", now: at(0)) == .limited(retryAfter: 100))
        #expect(limiter.take("b", now: at(0)) == .allowed)
        #expect(limiter.take("a", now: at(40)) == .limited(retryAfter: 60))
        #expect(limiter.take("a", now: at(100)) == .allowed)
        #expect(limiter.take("a", now: at(100)) == .limited(retryAfter: 100))
        // Refill is capped at the burst.
        for _ in 0..<3 { #expect(limiter.take("a", now: at(60_000)) == .allowed) }
        #expect(limiter.take("a", now: at(60_000)) != .allowed)
        // A clock that goes backwards grants nothing extra.
        #expect(limiter.take("a", now: at(0)) != .allowed)
    }

    @Test("idle full buckets are forgotten past maxKeys")
    func eviction() {
        var limiter = RateLimiter(ratePerSecond: 1, burst: 1, maxKeys: 10)
        for index in 0..<10 { _ = limiter.take("k\(index)", now: at(0)) }
        #expect(limiter.trackedKeys == 10)
        _ = limiter.take("late", now: at(5_000))
        #expect(limiter.trackedKeys == 1)
    }
}
