import Foundation

/// A gate a test opens. Whatever waits on it — a `TestOrigin` reply, a worker — is held until
/// `open()`, so a test orders events by what has happened ("every request has joined"), never by
/// how long it slept. Once open it stays open.
public final class TestGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    public init() {}

    public func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks the calling thread (never a cooperative-pool thread) until open.
    public func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
}
