#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A plain joinable POSIX thread. Foundation's `Thread` cannot be joined, and the curl loop
/// must never run on Swift's cooperative pool (it blocks in `curl_multi_poll`).
struct IOThread: Sendable {
    private let handle: pthread_t

    private final class Start {
        let body: () -> Void
        init(body: @escaping () -> Void) {
            self.body = body
        }
    }

    /// Starts `body` on a new thread. (No thread name: pthread_setname_np is a GNU extension
    /// Glibc's Swift overlay does not expose.)
    init(_ body: @escaping () -> Void) {
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                start.body()
                return nil
            }, start)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        self.handle = handle
    }

    /// Whether the caller is running on this thread (joining it from itself would deadlock).
    var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    func join() { _ = pthread_join(handle, nil) }

    func detach() { _ = pthread_detach(handle) }
}
