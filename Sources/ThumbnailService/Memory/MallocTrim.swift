internal import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// A thread that hands the free pages inside glibc's heaps back to the system every interval
/// (`malloc_trim(0)`, `--malloc-trim-interval`).
///
/// Why: glibc shrinks a heap only from its top, and one long-lived block above the freed working
/// buffers of past decodes (a cached thumbnail, a cache entry) keeps every page below it resident
/// as free holes, memory that neither budget counts. A trim returns those pages; the next decodes
/// fault in only what they touch, at most once an interval. Measured: peaks 40–70 MiB lower and
/// idle RSS ~70 MiB lower, for 4–6 ms more system CPU per cold miss (docs/architecture.md,
/// malloc). Code, because no glibc tunable does it: the arena count and the thresholds are
/// tunables, set in the environment thumbd is launched with (`GLIBC_TUNABLES`, same section).
public enum MallocTrim {
    /// Starts the thread, once per process (thumbd's `main`, `thumbd-bench`); a zero interval
    /// starts nothing.
    public static func start(every interval: Duration) {
        #if canImport(Glibc)
            // glibc's own and not variadic, but <malloc.h> is not in Swift's Glibc module: looked
            // up at run time rather than adding a C target for one declaration. Absent (another
            // libc, or jemalloc preloaded): nothing to trim.
            guard interval > .zero, let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else {
                return
            }
            let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
            let pause = interval.timespec
            // Its own thread: a trim walks every arena's free chunks under the arena's lock
            // (about a millisecond on a fragmented heap), which must not land on a server thread.
            // Never stopped: it holds nothing, and the process's exit ends it.
            try? DetachedThread.start(name: "thumbd-trim", stackSize: 64 << 10) {
                while true {
                    var request = pause
                    var remaining = Glibc.timespec()
                    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
                    _ = trim(0)
                }
            }
        #endif
    }
}
