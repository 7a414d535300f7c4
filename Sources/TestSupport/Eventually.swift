/// Polls `condition` until it holds, at most for `limit`; whether it held. For state that has no
/// notification of its own (counters, gauges, a connection's state): where a gate or a callback
/// can say when something happened, use that instead. The bound only keeps a broken build from
/// hanging the run; it is generous because a loaded 2-core CI machine can take seconds, so a test
/// never asserts on how long this took.
public func eventually(
    within limit: Duration = .seconds(60), every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    // Counts this task's turns, not time from the call: what the condition waits for is often a
    // task the test started just before (an `async let` request), which needs a cooperative-pool
    // thread first, and under a sanitizer other tests can keep every one of them busy for longer
    // than `limit`. While they do, this task gets no turn either.
    for _ in 0..<max(1, Int(limit / interval)) {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// As `eventually(within:every:_:)`, for a condition on one reading of `value` (a statistics
/// snapshot, say), read afresh at every poll: a condition on several of its fields sees them at
/// one moment.
public func eventually<Value>(
    _ value: @autoclosure () throws -> Value, within limit: Duration = .seconds(60),
    _ condition: (Value) throws -> Bool
) async rethrows -> Bool {
    try await eventually(within: limit) { try condition(try value()) }
}
