#if canImport(Glibc)
import Glibc
#endif

/// A point on the monotonic clock, in nanoseconds. State machines take it as an argument and never
/// read the clock themselves, so tests can drive time by hand.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// Now, on `CLOCK_MONOTONIC`.
    public static func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }

    public static func + (a: Instant, milliseconds: Milliseconds) -> Instant {
        Instant(nanoseconds: a.nanoseconds &+ UInt64(max(0, milliseconds.value)) * 1_000_000)
    }

    /// Whole milliseconds from `self` until `later` (0 when `later` is not after `self`).
    public func milliseconds(until later: Instant) -> Int64 {
        later.nanoseconds > nanoseconds ? Int64((later.nanoseconds - nanoseconds + 999_999) / 1_000_000) : 0
    }

    /// Seconds elapsed from `earlier` to `self`, as a Double.
    public func seconds(since earlier: Instant) -> Double {
        nanoseconds >= earlier.nanoseconds ? Double(nanoseconds - earlier.nanoseconds) / 1e9 : 0
    }

    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

/// A duration in milliseconds: the unit of every Quire timeout and interval setting.
public struct Milliseconds: Hashable, Comparable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var value: Int64
    public init(_ value: Int64) { self.value = value }
    public init(integerLiteral value: Int64) { self.value = value }
    public static func < (a: Milliseconds, b: Milliseconds) -> Bool { a.value < b.value }
    public static func * (a: Milliseconds, n: Int) -> Milliseconds { Milliseconds(a.value * Int64(n)) }
    public var description: String { "\(value) ms" }
}
