internal import Primitives
internal import Synchronization

/// One open connection, for the request-head deadline. Created at libmicrohttpd's connection-started
/// notification and retained in the connection's socket context until the connection-closed one.
final class ConnectionState: Sendable {
    /// The connection's socket. Only ever used by ``ConnectionRegistry`` under its lock, while the
    /// connection is registered (so the descriptor cannot have been closed and reused).
    let fd: Int32
    /// When the connection started waiting for a request head (``monotonicNanoseconds()``);
    /// ``notWaiting`` while a request is being handled.
    let waitingSince: Atomic<Int64>
    static let notWaiting = Int64.min
    /// Answered and shut down before libmicrohttpd read anything (see `ServerCore.screenFirstBytes`):
    /// whatever it still parses from this connection is not handed to the handler.
    let refused = Atomic<Bool>(false)

    init(fd: Int32) {
        self.fd = fd
        self.waitingSince = Atomic(monotonicNanoseconds())
    }

    /// The head of a request is complete.
    func headReceived() {
        waitingSince.store(Self.notWaiting, ordering: .relaxed)
    }

    /// A request ended; the connection now waits for the next head (keep-alive). `allowance` moves
    /// the start of that wait later: idle keep-alive time before the next request begins.
    func requestEnded(allowance: Int64 = 0) {
        waitingSince.store(monotonicNanoseconds() + allowance, ordering: .relaxed)
    }
}

/// The monotonic clock (`ContinuousClock`) as one integer, for the connections' atomic stamps.
func monotonicNanoseconds() -> Int64 {
    ContinuousClock.now.nanosecondsSinceOrigin
}
