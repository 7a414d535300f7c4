internal import Primitives

/// A gate a test opens. Whatever waits on it — a `TestOrigin` reply, a worker — is held until
/// `open()`, so a test orders events by what has happened ("every request has joined"), never by
/// how long it slept. Once open it stays open.
public final class TestGate: Sendable {
    private let isOpen = Monitor(false)

    public init() {}

    public func open() { isOpen.withLock { $0 = true } }

    /// Blocks the calling thread (never a cooperative-pool thread) until open.
    public func wait() { isOpen.wait(until: { $0 }) }
}
