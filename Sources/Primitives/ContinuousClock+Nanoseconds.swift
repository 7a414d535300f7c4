/// `ContinuousClock` is the one monotonic clock in this package: deadlines, elapsed times and
/// freshness all read it. This gives its instants as one integer, for a stamp kept in an
/// `Atomic<Int64>` and compared without a lock. (Only `Monitor` reads another clock: see there.)
extension ContinuousClock.Instant {
    /// Whole nanoseconds from a fixed origin, the first instant asked for in the process: only
    /// order and differences mean anything (an instant before the origin is negative). Saturating
    /// like ``Swift/Duration/nanoseconds``.
    public var nanosecondsSinceOrigin: Int64 { (self - Self.origin).nanoseconds }

    private static let origin = ContinuousClock.now
}
