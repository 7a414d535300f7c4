internal import Primitives

/// Durations in fixed buckets, for several label series at once (one histogram per series, the
/// same bounds): recording is a short scan of the bounds and two relaxed atomic adds (the bucket
/// and the sum), no lock, no allocation. Buckets are kept per bucket, not cumulative, and the
/// count is their total, so a scrape always sees `+Inf` equal to `_count`.
public final class DurationHistogram: Sendable {
    /// Upper bounds in nanoseconds, ascending.
    @usableFromInline let bounds: [UInt64]
    public let series: Int
    /// Per series: one slot per bound, one for +Inf, one for the sum in nanoseconds.
    @usableFromInline let cells: AtomicCounters

    /// Bounds for request latencies: a hit takes tens of microseconds, a miss up to the fetch timeout.
    public static let requestBounds: [Duration] =
        [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
            .seconds(10), .seconds(20),
        ]
    /// Bounds for work that takes milliseconds to seconds: fetches, decodes, encodes.
    public static let workBounds: [Duration] =
        [
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2.5), .seconds(5), .seconds(10), .seconds(20),
        ]

    public init(bounds: [Duration], series: Int = 1) {
        self.bounds = bounds.map { UInt64(clamping: $0.nanoseconds) }
        self.series = max(1, series)
        self.cells = AtomicCounters(count: self.series * (bounds.count + 2))
    }

    @inlinable
    public func record(_ series: Int = 0, nanoseconds: UInt64) {
        let row = series * (bounds.count + 2)
        var bucket = 0
        while bucket < bounds.count && nanoseconds > bounds[bucket] { bucket += 1 }
        cells.add(row + bucket)
        cells.add(row + bounds.count + 1, Int(truncatingIfNeeded: nanoseconds))
    }

    /// Records the time from `start` to now on the monotonic clock (not an injected test clock).
    public func record(_ series: Int = 0, since start: ContinuousClock.Instant) {
        record(series, nanoseconds: UInt64(clamping: (ContinuousClock.now - start).nanoseconds))
    }

    /// Times `body` on the monotonic clock (not an injected test clock) and records it.
    @inlinable
    public func time<T, E: Error>(_ series: Int = 0, _ body: () throws(E) -> T) throws(E) -> T {
        let start = ContinuousClock.now
        defer { record(series, since: start) }
        return try body()
    }

    public func snapshot(_ series: Int = 0) -> HistogramSnapshot {
        let row = series * (bounds.count + 2)
        var cumulative: [Int] = []
        var total = 0
        for bucket in 0...bounds.count {
            total += cells[row + bucket]
            cumulative.append(total)
        }
        return HistogramSnapshot(
            bounds: bounds.map { Double($0) / 1e9 }, cumulativeCounts: Array(cumulative.dropLast()), count: total,
            sum: Double(cells[row + bounds.count + 1]) / 1e9)
    }
}

/// One histogram at one moment, in seconds.
public struct HistogramSnapshot: Sendable, Equatable {
    /// Upper bounds in seconds, ascending; `cumulativeCounts[i]` observations were ≤ `bounds[i]`.
    public var bounds: [Double]
    public var cumulativeCounts: [Int]
    /// All observations (the `+Inf` bucket).
    public var count: Int
    public var sum: Double

    public init(bounds: [Double] = [], cumulativeCounts: [Int] = [], count: Int = 0, sum: Double = 0) {
        self.bounds = bounds
        self.cumulativeCounts = cumulativeCounts
        self.count = count
        self.sum = sum
    }
}
