// `package`, not `public`: the `timespec` below is for this package's own C calls; no C type is
// part of Primitives' public API (other packages, such as fuzz/, see only Swift types).
package import Glibc

/// The one place a `Duration` becomes the integer, `timespec` or `Double` a C or Foundation API
/// wants. Why: every hand-written `seconds * 1_000_000_000 + attoseconds / …` in the tree rounded
/// differently (down for the watchdog, up for libcurl, to the nearest for a `Date`) and none
/// saturated, so an absurd configuration value could wrap into a negative timeout.
extension Duration {
    /// Whole nanoseconds, rounded towards zero and saturating at `Int64.min` / `Int64.max`
    /// (about ±292 years): the unit of monotonic clocks and of deadline arithmetic.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if sumOverflow { return seconds < 0 ? .min : .max }
        return sum
    }

    /// How many `unit`s (a positive duration) cover this one, rounding up: what a C API that
    /// counts in whole milliseconds or seconds needs when "a little less than asked" would be wrong
    /// (libcurl's timeouts, libmicrohttpd's idle timeout). Zero and negative durations give 0 or a
    /// negative count; saturating like ``nanoseconds``.
    ///
    /// ```swift
    /// Duration.microseconds(1500).roundedUp(to: .milliseconds(1))  // 2
    /// ```
    public func roundedUp(to unit: Duration) -> Int64 {
        let step = unit.nanoseconds
        precondition(step > 0, "Duration.roundedUp(to:): the unit must be positive")
        let total = nanoseconds
        let quotient = total / step
        return total % step > 0 ? quotient + 1 : quotient
    }

    /// A `timespec` for `nanosleep`, `sigtimedwait`, `pthread_cond_timedwait` and friends; negative
    /// durations become zero (those calls reject a negative `tv_nsec`). (The overlay's
    /// `timespec(_:)` for a `Duration` is declared on another module's `timespec` and does not
    /// apply to Glibc's; the other direction, `Duration(timespec)`, is the overlay's and works.)
    /// Package-wide, not public: a C type stays out of the module's API.
    package var timespec: Glibc.timespec {
        let total = max(nanoseconds, 0)
        return Glibc.timespec(tv_sec: Int(total / 1_000_000_000), tv_nsec: Int(total % 1_000_000_000))
    }

    /// Seconds as a `Double`, for APIs that take a `TimeInterval`.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// As a setting or a log line writes it: "10", "0.5".
    public var secondsText: String {
        let value = seconds
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// Whole seconds (rounded down), for header values such as `Retry-After` and `max-age`.
    public var wholeSeconds: Int { Int(components.seconds) }
}
