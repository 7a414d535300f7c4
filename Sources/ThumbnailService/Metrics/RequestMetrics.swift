import Dispatch
import ThumbnailCore

/// The HTTP layer's counters: every answered request by route, method, status and cache outcome,
/// its duration by route and outcome, and signature failures. Counted where each answer is logged
/// (`Routes.hitResponse(for:)` and `Routes.reply`), so nothing answered escapes. Each label comes from a
/// fixed set — a route of `Routes.routes` or "other", a method of `methods` or "other", a status
/// of `statuses` or "other", an outcome of `outcomes` — so every series has a fixed slot in one
/// table of atomics: counting a request is three relaxed atomic adds and one clock read, no lock,
/// no allocation, no hashing (the hit path runs it tens of thousands of times a second).
final class RequestMetrics: Sendable {
    /// Route labels: the fixed routes, then "other" (a client's path is never a label).
    static let routes: [String] = Routes.routes.sorted() + ["other"]
    static let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "other"]
    /// The statuses HTTP defines (RFC 9110) and thumbd may answer; anything else counts as "other".
    static let statuses = [
        200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 406, 408, 409, 410, 411, 412,
        413, 414, 415, 416, 417, 421, 422, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505,
    ]
    /// Cache outcomes as the pipeline names them (`Pipeline.Outcome`), and "none" for answers that
    /// involve no cache (errors before a lookup, the other routes).
    static let outcomes = ["hit", "miss", "coalesced", "negative", "stale", "revalidated", "disk", "none"]
    static let signatureReasons = ["invalid", "expired"]

    static let thumbRoute = routes.firstIndex(of: "/thumb")!
    static let hitOutcome = 0
    static let noOutcome = outcomes.count - 1

    private let requests = AtomicCounters(
        count: routes.count * methods.count * (statuses.count + 1) * outcomes.count)
    private let durations = DurationHistogram(
        bounds: DurationHistogram.requestBounds, series: routes.count * outcomes.count)
    private let signatureFailures = AtomicCounters(count: signatureReasons.count)
    /// Status code → its index in `statuses` + 1 (0: other), for codes 0..<600.
    private let statusSlots: [UInt8]
    /// The table's strides, as plain constants (a static array's count is a lazy global's).
    private let methodCount = RequestMetrics.methods.count
    private let statusCount = RequestMetrics.statuses.count + 1
    private let outcomeCount = RequestMetrics.outcomes.count

    init() {
        var slots = [UInt8](repeating: 0, count: 600)
        for (index, status) in Self.statuses.enumerated() { slots[status] = UInt8(index + 1) }
        statusSlots = slots
    }

    /// One answered request. `route` and `outcome` are indexes (`routeIndex`, `outcomeIndex`).
    /// `elapsedNanos`: from the request's arrival to its answer (the caller's one clock read,
    /// shared with the log line).
    func record(route: Int, method: String, status: Int, outcome: Int, elapsedNanos elapsed: UInt64) {
        let statusSlot = status >= 0 && status < statusSlots.count ? Int(statusSlots[status]) : 0
        let methodSlot = Self.methodIndex(method)
        requests.add(((route * methodCount + methodSlot) * statusCount + statusSlot) * outcomeCount + outcome)
        durations.record(route * outcomeCount + outcome, nanoseconds: elapsed)
    }

    func recordSignatureFailure(expired: Bool) { signatureFailures.add(expired ? 1 : 0) }

    static func routeIndex(_ route: String) -> Int { routes.firstIndex(of: route) ?? routes.count - 1 }

    static func outcomeIndex(_ cache: String) -> Int { outcomes.firstIndex(of: cache) ?? noOutcome }

    static func methodIndex(_ method: String) -> Int {
        switch method {
        case "GET": 0
        case "HEAD": 1
        case "POST": 2
        default: methods.firstIndex(of: method) ?? methods.count - 1
        }
    }

    /// The non-zero request counters, as label values and counts.
    var requestCounts: [(route: String, method: String, status: String, outcome: String, count: Int)] {
        var rows: [(route: String, method: String, status: String, outcome: String, count: Int)] = []
        let statuses = ["other"] + Self.statuses.map(String.init)
        var series = 0
        for route in Self.routes {
            for method in Self.methods {
                for status in statuses {
                    for outcome in Self.outcomes {
                        let count = requests[series]
                        if count > 0 { rows.append((route, method, status, outcome, count)) }
                        series += 1
                    }
                }
            }
        }
        return rows
    }

    /// Duration histograms of the route/outcome pairs seen.
    var durationSeries: [(route: String, outcome: String, histogram: HistogramSnapshot)] {
        var rows: [(route: String, outcome: String, histogram: HistogramSnapshot)] = []
        for (routeIndex, route) in Self.routes.enumerated() {
            for (outcomeIndex, outcome) in Self.outcomes.enumerated() {
                let histogram = durations.snapshot(routeIndex * Self.outcomes.count + outcomeIndex)
                if histogram.count > 0 { rows.append((route, outcome, histogram)) }
            }
        }
        return rows
    }

    var signatureFailureCounts: [(reason: String, count: Int)] {
        Self.signatureReasons.enumerated().map { ($1, signatureFailures[$0]) }
    }
}
