/// Every setting of thumbd, with its default. Each is also a command-line flag (`--name`) and an
/// environment variable (`THUMBD_NAME`); the flag wins. `Setting.all` is the one list that
/// `--help`, the parser and the README table are made from.
public struct ServiceConfiguration: Sendable, Equatable {
    /// Address to listen on. Default 127.0.0.1 (put it behind nginx or a CDN; use 0.0.0.0 or :: to expose it).
    public var host = "127.0.0.1"
    /// TCP port. Default 8080; 0 picks a free one.
    public var port = 8080
    /// The one memory budget for originals and variants. Default: a quarter of the cgroup's or the
    /// machine's memory limit (the lower), at most 4 GiB.
    public var cacheBytes = MemoryLimit.defaultCacheBytes()
    /// Threads that decode and encode (libvips). Default: the number of cores.
    public var workers = System.coreCount
    /// Misses admitted beyond the ones running; past `workers + queueCapacity` a new miss gets 503.
    public var queueCapacity = 64
    /// Largest source accepted, counted while streaming (compressed or chunked bodies included). Default 32 MiB.
    public var maxSourceBytes = 32 << 20
    /// Largest source in pixels (width × height of the first page), checked before decoding. Default 75 MP.
    public var maxSourcePixels = 75_000_000
    /// Fetch from loopback addresses (127/8, ::1): local development and tests only.
    public var allowLoopbackSources = false
    /// Fetch from private (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT (100.64/10) addresses.
    public var allowPrivateSources = false
    /// When non-empty, the only source hosts allowed ("images.example.org", "*.example.org").
    public var allowedSourceHosts: [String] = []
    /// Connect timeout per source connection, seconds. Default 5.
    public var connectTimeout = 5.0
    /// Deadline for a whole source fetch, redirects included, seconds. Default 20.
    public var fetchTimeout = 20.0
    /// `Cache-Control: public, max-age=` of thumbnails, seconds. Default 86400.
    public var cacheMaxAge = 86_400
    /// HTTP server polling threads. Default: the number of cores.
    public var serverThreads = System.coreCount
    /// Most simultaneous client connections; more are refused. Default 1024.
    public var maxConnections = 1024
    /// A client must send a complete request head within this many seconds. Default 10.
    public var headTimeout = 10.0
    /// An idle keep-alive connection is closed after this many seconds. Default 30.
    public var idleTimeout = 30.0
    /// On SIGTERM/SIGINT, in-flight requests get this many seconds to finish. Default 10.
    public var shutdownGrace = 10.0
    /// The `Retry-After` of a 503 when the queue is full, seconds. Default 1.
    public var retryAfter = 1
    /// One log line per request on standard error. Default true.
    public var logRequests = true
    /// glibc malloc arenas (`M_ARENA_MAX`); 0 leaves glibc's default (8 × cores). Default 2:
    /// image buffers freed by other threads otherwise fragment many arenas and RSS creeps up.
    public var mallocArenas = 2
    /// Allocations at least this large are mmap'd and returned to the system when freed
    /// (`M_MMAP_THRESHOLD`); 0 leaves glibc's dynamic threshold, which climbs to 32 MiB and then
    /// keeps freed image buffers in the heap. Default 256K.
    public var mallocMmapThreshold = 256 << 10

    public init() {}
}
