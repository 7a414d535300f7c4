internal import Glibc

/// The one way the tree starts a thread of its own: a named, detached POSIX thread with a stack
/// size chosen by the caller.
///
/// Why not Foundation's `Thread`: it drags Foundation into modules that have no other use for it,
/// its default stack is 8 MiB of address space per thread, and it cannot be named portably. Why
/// not Swift concurrency: the threads started here block (in `curl_multi_poll`, `accept`,
/// `recv`, a condition wait), and blocking a cooperative-pool thread can starve unrelated tasks.
/// Why detached: nothing in the tree needs `pthread_join`; a caller that must wait for the end of
/// the thread's work waits on a ``Monitor`` the closure updates last, which also works from any
/// thread and with a timeout.
public enum DetachedThread {
    /// Starts `body` on a new detached thread named `name` (Linux keeps the first 15 bytes; shown
    /// by `top -H`, `gdb`, `/proc/<pid>/task/*/comm`) with a stack of `stackSize` bytes (raised to
    /// 64 KiB at least). Throws the `pthread_create` error, typically `EAGAIN` when the process
    /// is out of threads.
    ///
    /// A `niceness` above 0 runs the thread that many nice levels below the process's main thread
    /// (capped at 19, the lowest), set in the new thread before `body`: for work that must yield
    /// the cores to threads that answer clients. 0 (the default) leaves the value the thread
    /// inherits from the one that starts it. Threads the new thread starts in turn (libvips' own)
    /// inherit its value. Best effort: see `lowerPriority`.
    public static func start(
        name: String, stackSize: Int, niceness: Int = 0, _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) {
        let start = Unmanaged.passRetained(Start(name: name, niceness: niceness, body: body)).toOpaque()
        let result = create(stackSize: stackSize, context: start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SystemError(operation: "pthread_create", code: result)
        }
    }

    /// pthread_create with the attributes; the new thread takes over the retained `context`.
    private static func create(stackSize: Int, context: UnsafeMutableRawPointer) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        _ = pthread_attr_setstacksize(&attributes, max(stackSize, 64 << 10))
        var thread = pthread_t()
        return pthread_create(&thread, &attributes, threadMain, context)
    }

    fileprivate final class Start: Sendable {
        let name: String
        let niceness: Int
        let body: @Sendable () -> Void

        init(name: String, niceness: Int, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.niceness = niceness
            self.body = body
        }
    }

    /// Sets the calling thread's nice value to the main thread's plus `niceness`, capped at 19.
    /// Relative to the main thread, so that `nice -n 5 thumbd` keeps the gap, and so that a thread
    /// started from an already lowered one does not sink further. On Linux the nice value belongs
    /// to one thread, not to the process (POSIX says otherwise; see setpriority(2), BUGS), and
    /// `PRIO_PROCESS` with id 0 is the calling thread (glibc's overlay lacks `gettid`); the main
    /// thread's id is the process id. Errors are ignored: any thread may lower its own priority, so
    /// only a sandbox that forbids the call (seccomp) makes it fail, and then the thread just runs
    /// at the priority it inherited, as it did before this existed.
    fileprivate static func lowerPriority(by niceness: Int) {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let base = getpriority(which, id_t(getpid()))
        guard errno == 0 else { return }
        _ = setpriority(which, 0, Int32(min(19, Int(base) + niceness)))
    }

    /// Names the calling thread, best effort. Glibc's Swift overlay does not expose
    /// `pthread_setname_np` (a GNU extension) and `prctl` is variadic, so this writes
    /// `/proc/thread-self/comm`, which is what both end up setting.
    fileprivate static func setCurrentThreadName(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let owner = FileDescriptor(adopting: descriptor)
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(owner.rawValue, $0.baseAddress, $0.count) }
    }
}

/// The new thread's entry point: names it, lowers its priority if asked, then runs the closure.
private func threadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<DetachedThread.Start>.fromOpaque(context!).takeRetainedValue()
    DetachedThread.setCurrentThreadName(start.name)
    if start.niceness > 0 { DetachedThread.lowerPriority(by: start.niceness) }
    start.body()
    return nil
}
