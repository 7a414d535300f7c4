internal import Primitives
import ThumbnailCore

/// A circuit breaker per origin (scheme, host, port): after `threshold` connection-level failures
/// in a row — refused, reset, no answer, connect timeout, deadline miss — requests to that origin
/// are answered at once (502, or 504 when the last failure was a timeout) for `coolDown`, instead
/// of each one waiting for the same failure. Then one trial request goes through: a failure opens
/// it for another cool-down, any answer closes it. An origin that *answers*, even with a 5xx, is
/// alive: those answers close the breaker, and their errors are negatively cached per source
/// instead (`--error-ttl`). The fetcher decides what a failure is from libcurl's result codes
/// (`CurlTransferError.isConnectionLevel`), never from text.
///
/// Bounded: only origins with failures have an entry (an answer removes it), and at most
/// `capacity`; when full, a closed entry with the fewest failures goes first, then the open one
/// whose cool-down ends soonest.
final class OriginBreaker: Sendable {
    enum Verdict: Equatable {
        case proceed
        case refuse(ThumbnailError)
    }

    enum Outcome {
        /// The origin answered (any HTTP status).
        case answered
        /// A connection-level failure (`timedOut`: a connect timeout or deadline miss).
        case connectionFailure(timedOut: Bool)
        /// Neither: refused by our policy, over the byte cap, cancelled. Says nothing of the origin.
        case inconclusive
    }

    private struct Entry {
        var failures = 0
        var lastTimedOut = false
        /// Set while open: refused until then; after it, one trial at a time.
        var openUntil: ContinuousClock.Instant?
        var trialRunning = false
    }

    let threshold: Int
    let coolDown: Duration
    let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let log: @Sendable (LogEvent) -> Void
    private let table = Locked<[OriginKey: Entry]>([:])

    /// `threshold` 0 turns it off. `log` hears when a breaker opens and closes.
    init(
        threshold: Int, coolDown: Duration, capacity: Int = 1024,
        now: @escaping @Sendable () -> ContinuousClock.Instant, log: @escaping @Sendable (LogEvent) -> Void
    ) {
        self.threshold = threshold
        self.coolDown = coolDown
        self.capacity = max(1, capacity)
        self.now = now
        self.log = log
    }

    /// Whether a request to `origin` may go out now. While open, no; once the cool-down is over,
    /// one trial (the caller must `record` its outcome).
    func check(_ origin: OriginKey) -> Verdict {
        guard threshold > 0 else { return .proceed }
        let now = now()
        return table.withLock { table -> Verdict in
            guard var entry = table[origin], let until = entry.openUntil else { return .proceed }
            if now < until || entry.trialRunning {
                let code: ThumbnailError.Code = entry.lastTimedOut ? .originTimeout : .originFailed
                return .refuse(ThumbnailError(code, "circuit open for \(origin)"))
            }
            entry.trialRunning = true
            table[origin] = entry
            return .proceed
        }
    }

    func record(_ origin: OriginKey, _ outcome: Outcome) {
        guard threshold > 0 else { return }
        let now = now()
        let message = table.withLock { table -> LogEvent? in
            switch outcome {
            case .answered:
                guard let entry = table.removeValue(forKey: origin) else { return nil }
                return entry.openUntil == nil
                    ? nil
                    : LogEvent(
                        "breaker-close", "circuit closed for \(origin): it answered again",
                        [("origin", .text("\(origin)"))])
            case .inconclusive:
                table[origin]?.trialRunning = false
                return nil
            case .connectionFailure(let timedOut):
                if table[origin] == nil { makeRoom(&table) }
                var entry = table[origin] ?? Entry()
                entry.failures += 1
                entry.lastTimedOut = timedOut
                var message: LogEvent? = nil
                if entry.openUntil != nil {
                    // A trial failed (or a request that began before it opened): another cool-down.
                    entry.openUntil = now.advanced(by: coolDown)
                } else if entry.failures >= threshold {
                    entry.openUntil = now.advanced(by: coolDown)
                    message = LogEvent(
                        "breaker-open",
                        "circuit opened for \(origin): \(entry.failures) connection failures in a row; "
                            + "requests to it are answered at once for \(coolDown.wholeSeconds) s",
                        [
                            ("origin", .text("\(origin)")), ("failures", .int(entry.failures)),
                            ("cooldown", .number(coolDown.seconds)),
                        ])
                }
                entry.trialRunning = false
                table[origin] = entry
                return message
            }
        }
        if let message { log(message) }
    }

    /// Whether `origin`'s breaker is open now (refusing), for tests.
    func isOpen(_ origin: OriginKey) -> Bool {
        let now = now()
        return table.withLock { table in table[origin]?.openUntil.map { now < $0 } ?? false }
    }

    var trackedOrigins: Int { table.withLock { $0.count } }

    /// Origins by breaker state (counts only: a host is never a label). Origins without failures
    /// have no entry.
    var counts: OriginHealth {
        let now = now()
        return table.withLock { table in
            table.values.reduce(into: OriginHealth()) { counts, entry in
                guard let until = entry.openUntil else { return counts.failing += 1 }
                if now < until { counts.open += 1 } else { counts.halfOpen += 1 }
            }
        }
    }

    private func makeRoom(_ table: inout [OriginKey: Entry]) {
        guard table.count >= capacity else { return }
        let closed = table.filter { $0.value.openUntil == nil }
        if let victim = closed.min(by: { $0.value.failures < $1.value.failures }) {
            table.removeValue(forKey: victim.key)
        } else if let victim = table.min(by: { $0.value.openUntil! < $1.value.openUntil! }) {
            table.removeValue(forKey: victim.key)
        }
    }
}
