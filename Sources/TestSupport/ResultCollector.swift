internal import Primitives

/// Gathers `count` results in order and resumes the caller once all are in.
final class ResultCollector<Value: Sendable>: Sendable {
    private struct State {
        var results: [Value?]
        var remaining: Int
    }

    private let state: Locked<State>
    private let continuation: CheckedContinuation<[Value], Never>

    init(count: Int, continuation: CheckedContinuation<[Value], Never>) {
        self.state = Locked(State(results: Array(repeating: nil, count: count), remaining: count))
        self.continuation = continuation
        if count == 0 { continuation.resume(returning: []) }
    }

    func set(_ index: Int, _ value: Value) {
        let done: [Value]? = state.withLock { state in
            state.results[index] = value
            state.remaining -= 1
            return state.remaining == 0 ? state.results.map { $0! } : nil
        }
        if let done { continuation.resume(returning: done) }
    }
}
