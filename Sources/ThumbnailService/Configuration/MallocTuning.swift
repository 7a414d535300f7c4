internal import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// glibc malloc settings for a process that decodes images on several threads. Measured with
/// `bench/run.sh` (memory mode, see docs/architecture.md): with glibc's defaults, buffers that
/// libvips and libcurl allocate on one thread and free on another spread over many arenas, and
/// the dynamic mmap threshold climbs so that freed multi-megabyte buffers stay in the heap; RSS
/// then creeps up run after run. A fixed threshold stops that, but it also freezes the trim
/// threshold at 128 KiB, so every free at the top of a heap hands pages back and the next decode
/// faults them in again (zeroed by the kernel): the trim threshold is set with it.
///
/// Trimming at the top is not enough: one long-lived block above the freed working buffers (a
/// cached thumbnail, a cache entry) pins the heap's size, and everything below it stays resident
/// as free holes. A thread calls `malloc_trim` every `--malloc-trim-interval`, which hands the
/// pages of those holes back; only the pages the next decodes touch are faulted in again.
public enum MallocTuning {
    /// From <malloc.h>, which Swift's Glibc module does not export.
    static let arenaMax: Int32 = -8  // M_ARENA_MAX
    static let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
    static let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
    /// Free memory a heap keeps at its top, as a multiple of the mmap threshold: room for a few
    /// decode buffers just under the threshold (measured with a 4 MiB threshold: 8 × it halved the
    /// system time per cold miss against glibc's 128 KiB and left peak RSS where it was).
    static let trimFactor = 8

    /// Applies the settings and starts the trimming thread. Call once, before the first worker
    /// thread starts.
    public static func apply(_ configuration: ServiceConfiguration) {
        #if canImport(Glibc)
            // mallopt and malloc_trim are glibc's own (not variadic); looked up at run time rather
            // than adding a C target for two declarations. Absent (another libc, or jemalloc
            // preloaded): no-op.
            if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
                let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
                if configuration.processing.mallocArenas > 0 {
                    _ = mallopt(arenaMax, Int32(configuration.processing.mallocArenas))
                }
                if configuration.processing.mallocMmapThreshold > 0 {
                    let threshold = configuration.processing.mallocMmapThreshold
                    _ = mallopt(mmapThreshold, Int32(clamping: threshold))
                    _ = mallopt(trimThreshold, Int32(clamping: threshold * trimFactor))
                }
            }
            startTrimming(every: configuration.processing.mallocTrimInterval)
        #endif
    }

    /// glibc's tunable that makes malloc `madvise(MADV_HUGEPAGE)` its mmap'd chunks and heaps.
    static let hugePagesTunable = "glibc.malloc.hugetlb"

    /// The `GLIBC_TUNABLES` value with huge pages turned on, given the current value; nil when
    /// the current value names the tunable already (either way: an operator's `=0` is kept).
    static func tunablesWithHugePages(_ current: String?) -> String? {
        let setting = "\(hugePagesTunable)=1"
        guard let current, !current.isEmpty else { return setting }
        let named = current.split(separator: ":").contains { $0.hasPrefix("\(hugePagesTunable)=") }
        return named ? nil : "\(current):\(setting)"
    }

    /// Re-executes thumbd (same pid, arguments and environment) with glibc's huge-page tunable
    /// set, when `--malloc-huge-pages` is on, the kernel's THP mode is `madvise` (under `always`
    /// every mapping gets them anyway; under `never` none can) and `GLIBC_TUNABLES` does not name
    /// it yet. glibc reads tunables once, before `main`, so setting the variable and starting
    /// again is the only way a process turns one on for itself. Why: libvips' working buffers of
    /// 1 MiB and more are mapped afresh for every miss (`--malloc-mmap-threshold`), and faulting
    /// them in 4 KiB at a time was most of a cold miss's kernel time (docs/architecture.md,
    /// malloc). Call before any thread starts; returns when there is nothing to do or the exec
    /// failed (thumbd then runs without, as before).
    public static func reexecWithHugePagesIfWanted(_ configuration: ServiceConfiguration) {
        #if canImport(Glibc)
            guard configuration.processing.mallocHugePages, System.transparentHugePageMode == "madvise" else { return }
            let previous = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
            guard let tunables = tunablesWithHugePages(previous) else { return }
            setenv("GLIBC_TUNABLES", tunables, 1)
            _ = execv("/proc/self/exe", CommandLine.unsafeArgv)
            // Still here: the exec failed (no /proc, a seccomp filter); put the variable back.
            if let previous { setenv("GLIBC_TUNABLES", previous, 1) } else { unsetenv("GLIBC_TUNABLES") }
        #endif
    }

    #if canImport(Glibc)
        private static func startTrimming(every interval: Duration) {
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
        }
    #endif
}
