import QuireSupport

#if canImport(Glibc)
import Glibc
#endif

/// Durations in logarithmic buckets over a sliding window: percentiles in constant memory and
/// constant time per sample, with a bounded relative error, instead of a sorted list of samples.
///
/// Buckets are 1/8 of a doubling wide (upper bounds 2^(i/8) µs), so a percentile is within about 9 %
/// of the true value, from 1 µs to about 71 minutes; shorter values land in the first bucket, longer
/// ones in the last. The window is `slots` slices of `window / slots` each: percentiles cover the
/// slices that overlap the last `window`, that is between `window × (slots − 1) / slots` and `window`
/// of history. All-time `count` and `sum` are kept too, for Prometheus summaries. Time is passed in.
public struct LatencyHistogram: Sendable, Equatable {
    /// Buckets per doubling: 8 gives a worst-case relative error of 2^(1/8) − 1 ≈ 9 %.
    public static let bucketsPerDoubling = 8
    /// Bucket 0 holds everything up to 1 µs; bucket `i` holds (2^((i−1)/8), 2^(i/8)] µs.
    public static let bucketCount = 32 * bucketsPerDoubling + 1

    struct Slot: Sendable, Equatable {
        /// Which slice of time the slot holds: `now / slotNanoseconds`; `UInt64.max` when unused.
        var epoch: UInt64 = .max
        var counts: [UInt32] = []
        var count: Int = 0
        var maximum: Double = 0
    }

    public let windowNanoseconds: UInt64
    public let slotNanoseconds: UInt64
    var slots: [Slot]
    /// Samples since creation (not windowed).
    public private(set) var count: Int = 0
    /// Sum of every sample since creation, in seconds (not windowed).
    public private(set) var sum: Double = 0

    /// - Parameters:
    ///   - window: how much history percentiles cover.
    ///   - slots: how many slices the window is cut into (more: smoother expiry, more memory).
    public init(window: Milliseconds = 60_000, slots: Int = 6) {
        let slotCount = max(1, slots)
        let windowNs = UInt64(max(1, window.value)) * 1_000_000
        self.windowNanoseconds = windowNs
        self.slotNanoseconds = max(1, windowNs / UInt64(slotCount))
        self.slots = Array(repeating: Slot(), count: slotCount)
    }

    /// The bucket a duration in seconds falls into.
    public static func bucket(forSeconds seconds: Double) -> Int {
        let micros = seconds * 1e6
        guard micros > 1 else { return 0 }  // also NaN and negatives
        let index = Int((log2(micros) * Double(bucketsPerDoubling)).rounded(.up))
        return min(max(index, 1), bucketCount - 1)
    }

    /// The largest duration (seconds) bucket `index` holds.
    public static func upperBound(ofBucket index: Int) -> Double {
        exp2(Double(index) / Double(bucketsPerDoubling)) / 1e6
    }

    /// Records one duration.
    public mutating func record(seconds: Double, now: Instant) {
        let value = seconds.isFinite ? max(0, seconds) : 0
        let epoch = now.nanoseconds / slotNanoseconds
        let index = Int(epoch % UInt64(slots.count))
        if slots[index].epoch != epoch {
            slots[index] = Slot(epoch: epoch, counts: Array(repeating: 0, count: Self.bucketCount), count: 0, maximum: 0)
        }
        slots[index].counts[Self.bucket(forSeconds: value)] &+= 1
        slots[index].count += 1
        if value > slots[index].maximum { slots[index].maximum = value }
        count += 1
        sum += value
    }

    /// Whether a slot's slice of time is inside the window ending at `now`.
    private func isLive(_ slot: Slot, now: Instant) -> Bool {
        let current = now.nanoseconds / slotNanoseconds
        return slot.epoch != .max && slot.epoch <= current && current - slot.epoch < UInt64(slots.count)
    }

    /// Samples inside the window.
    public func windowCount(now: Instant) -> Int {
        slots.reduce(0) { isLive($1, now: now) ? $0 + $1.count : $0 }
    }

    /// The largest sample inside the window, or `nil` when it is empty.
    public func windowMaximum(now: Instant) -> Double? {
        var result: Double?
        for slot in slots where isLive(slot, now: now) && slot.count > 0 {
            result = max(result ?? 0, slot.maximum)
        }
        return result
    }

    /// The `quantile` (0…1) of the samples inside the window, in seconds, or `nil` when it is empty.
    /// Interpolates geometrically inside the bucket and never exceeds the window's largest sample.
    public func percentile(_ quantile: Double, now: Instant) -> Double? {
        percentiles([quantile], now: now)[0]
    }

    /// Several quantiles at once (one pass over the buckets).
    public func percentiles(_ quantiles: [Double], now: Instant) -> [Double?] {
        var merged = [Int](repeating: 0, count: Self.bucketCount)
        var total = 0
        var maximum = 0.0
        for slot in slots where isLive(slot, now: now) && slot.count > 0 {
            for (index, n) in slot.counts.enumerated() where n > 0 { merged[index] += Int(n) }
            total += slot.count
            maximum = max(maximum, slot.maximum)
        }
        guard total > 0 else { return quantiles.map { _ in nil } }
        return quantiles.map { quantile in
            let q = min(max(quantile, 0), 1)
            // The rank of the sample wanted, 1-based: the smallest rank r with r ≥ q × total.
            let rank = max(1, Int((q * Double(total)).rounded(.up)))
            var seen = 0
            for (index, n) in merged.enumerated() where n > 0 {
                if seen + n >= rank {
                    let upper = Self.upperBound(ofBucket: index)
                    let lower = index == 0 ? 0 : Self.upperBound(ofBucket: index - 1)
                    let fraction = Double(rank - seen) / Double(n)
                    let value = index == 0 ? upper * fraction : lower * pow(upper / lower, fraction)
                    return min(value, maximum)
                }
                seen += n
            }
            return maximum
        }
    }

    /// The summary a snapshot carries: p50/p90/p99/max over the window plus all-time count and sum.
    public func summary(now: Instant) -> LatencySummary {
        let p = percentiles([0.5, 0.9, 0.99], now: now)
        return LatencySummary(p50: p[0], p90: p[1], p99: p[2], max: windowMaximum(now: now),
                              windowCount: windowCount(now: now), count: count, sum: sum)
    }
}
