import Synchronization

/// What `/readyz` answers: ready only from the end of `ThumbnailApp.start()` until the first
/// termination signal (or `shutdown()`), after which it never becomes ready again.
final class Readiness: Sendable {
    enum State: UInt8 {
        /// Built, maybe listening, not yet announced as serving.
        case starting
        case ready
        /// A stop has begun (the drain, then the graceful stop): balancers should send elsewhere.
        case draining
    }

    private let state = Atomic<UInt8>(State.starting.rawValue)

    var current: State { State(rawValue: state.load(ordering: .acquiring)) ?? .draining }

    /// Whether `/readyz` must say "not ready" because fewer than half of `workers` threads are
    /// usable (the others stuck past `--job-timeout`, beyond what the pool replaces).
    static func tooFewWorkers(usable: Int, of workers: Int) -> Bool { usable * 2 < workers }

    /// starting → ready; a stop that has begun stays begun.
    func becomeReady() {
        _ = state.compareExchange(
            expected: State.starting.rawValue, desired: State.ready.rawValue, ordering: .acquiringAndReleasing)
    }

    /// True for the call that began draining, false when it had begun already.
    func beginDraining() -> Bool {
        state.exchange(State.draining.rawValue, ordering: .acquiringAndReleasing) != State.draining.rawValue
    }
}
