/// When a running job is given up (`--job-timeout`): what its work may check, and what the image
/// library is handed so that it can stop itself (libvips' kill flag) instead of being abandoned.
public struct JobDeadline: Sendable {
    /// Nil: no deadline.
    public let instant: ContinuousClock.Instant?

    public init(_ instant: ContinuousClock.Instant?) { self.instant = instant }

    /// No deadline: work run outside the worker pool (the bench, tests).
    public static let none = JobDeadline(nil)

    /// Time left, never negative; nil when there is no deadline.
    public var remaining: Duration? { instant.map { max(.zero, $0 - .now) } }

    public var hasPassed: Bool { instant.map { ContinuousClock.now >= $0 } ?? false }
}
