import QuireStats
import QuireSupport
import Testing

@Suite("Latency histogram")
struct HistogramTests {
    let t0 = Instant(nanoseconds: 1_000_000_000_000)

    @Test("bucket bounds: a bucket's upper bound falls in it, a little more in the next")
    func buckets() {
        for index in [1, 8, 40, 100, 200] {
            let upper = LatencyHistogram.upperBound(ofBucket: index)
            #expect(LatencyHistogram.bucket(forSeconds: upper * 0.999) == index)
            #expect(LatencyHistogram.bucket(forSeconds: upper * 1.001) == index + 1)
        }
        #expect(LatencyHistogram.bucket(forSeconds: 0) == 0)
        #expect(LatencyHistogram.bucket(forSeconds: -1) == 0)
        #expect(LatencyHistogram.bucket(forSeconds: .nan) == 0)
        #expect(LatencyHistogram.bucket(forSeconds: 1e9) == LatencyHistogram.bucketCount - 1)
    }

    @Test("percentiles of 1…1000 ms are within the buckets' 9 % of the exact ones", arguments: [0.5, 0.9, 0.99])
    func percentiles(quantile: Double) throws {
        var h = LatencyHistogram()
        // Shuffled order: the histogram must not depend on it.
        var values = (1...1000).map { Double($0) / 1000 }
        values.shuffle()
        for v in values { h.record(seconds: v, now: t0) }
        let exact = Double(Int((quantile * 1000).rounded(.up))) / 1000
        let got = try #require(h.percentile(quantile, now: t0))
        #expect(abs(got - exact) / exact < 0.09, "p\(quantile): \(got) vs \(exact)")
    }

    @Test("one sample: every percentile is about it and never above it")
    func single() throws {
        var h = LatencyHistogram()
        h.record(seconds: 0.123, now: t0)
        for q in [0.0, 0.5, 0.99, 1.0] {
            let p = try #require(h.percentile(q, now: t0))
            #expect(p <= 0.123 && p > 0.123 / 1.1)
        }
        #expect(h.windowMaximum(now: t0) == 0.123)
    }

    @Test("empty window: no percentiles")
    func empty() {
        let h = LatencyHistogram()
        #expect(h.percentile(0.5, now: t0) == nil)
        #expect(h.summary(now: t0) == LatencySummary())
    }

    @Test("the window slides: old samples leave the percentiles, count and sum stay")
    func window() throws {
        var h = LatencyHistogram(window: 60_000, slots: 6)
        for _ in 0..<100 { h.record(seconds: 1.0, now: t0) }
        let later = t0 + Milliseconds(30_000)
        for _ in 0..<100 { h.record(seconds: 0.001, now: later) }
        #expect(h.windowCount(now: later) == 200)
        let median = try #require(h.percentile(0.5, now: later))
        #expect(median < 0.0011)
        let p99 = try #require(h.percentile(0.99, now: later))
        #expect(p99 > 0.9)
        // 65 s after the first batch: it has left the window, the second has not.
        let end = t0 + Milliseconds(65_000)
        #expect(h.windowCount(now: end) == 100)
        let p = try #require(h.percentile(0.99, now: end))
        #expect(p < 0.0011)
        // Long after: nothing in the window, but the all-time figures remain.
        let much = t0 + Milliseconds(200_000)
        #expect(h.windowCount(now: much) == 0)
        #expect(h.percentile(0.5, now: much) == nil)
        #expect(h.count == 200)
        #expect(abs(h.sum - 100.1) < 1e-9)
    }

    @Test("a slot reused for a later slice starts empty")
    func slotReuse() {
        var h = LatencyHistogram(window: 6_000, slots: 6)
        h.record(seconds: 5, now: t0)
        // Exactly one window later the same slot index comes round again.
        let next = t0 + Milliseconds(6_000)
        h.record(seconds: 0.002, now: next)
        #expect(h.windowCount(now: next) == 1)
        #expect(h.windowMaximum(now: next) == 0.002)
    }
}
