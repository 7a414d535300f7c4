#if canImport(Glibc)
    import Glibc
#endif

/// glibc malloc settings for a process that decodes images on several threads. Measured with
/// `bench/run.sh` (memory mode, see docs/architecture.md): with glibc's defaults, buffers that
/// libvips and libcurl allocate on one thread and free on another spread over many arenas, and
/// the dynamic mmap threshold climbs so that freed multi-megabyte buffers stay in the heap; RSS
/// then creeps up run after run. Call once, before the first worker thread starts.
public enum MallocTuning {
    /// From <malloc.h>, which Swift's Glibc module does not export.
    static let arenaMax: Int32 = -8  // M_ARENA_MAX
    static let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD

    public static func apply(_ configuration: ServiceConfiguration) {
        #if canImport(Glibc)
            // mallopt is glibc's own (not variadic); looked up at run time rather than adding a C
            // target for one declaration. Absent (another libc, or jemalloc preloaded): no-op.
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            if configuration.processing.mallocArenas > 0 {
                _ = mallopt(arenaMax, Int32(configuration.processing.mallocArenas))
            }
            if configuration.processing.mallocMmapThreshold > 0 {
                _ = mallopt(mmapThreshold, Int32(clamping: configuration.processing.mallocMmapThreshold))
            }
        #endif
    }
}
