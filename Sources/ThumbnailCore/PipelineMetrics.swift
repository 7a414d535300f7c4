/// Every counter of the pipeline at one moment, gathered into one plain value: the cache (by
/// kind), the worker pool, the fetches and the renders. The seam the service's `/metrics` reads.
public struct PipelineMetrics: Sendable, Equatable {
    public var cache: CacheMetrics
    /// Admission and queues, and the working-memory budget: `workBudget` (`--work-bytes`),
    /// `workInUse` (fetches, waiting originals, running decodes' estimates), `waitingForRoom`.
    public var workers: WorkerPool.Statistics
    public var fetches: Fetches
    public var renders: Renders
    /// Requests that joined work another request had started (variant coalescing).
    public var coalesced: Int
    /// Requests answered with a stale entry (while it was revalidated, or because revalidation
    /// failed).
    public var servedStale = 0
    /// The disk tier's counters; nil without one.
    public var disk: DiskTierMetrics?
    /// Decode and encode times by format (see `RenderTimings`).
    public var renderTimings = RenderTimings.Snapshot()
    /// Source fetch times, from the request going out to its answer (revalidations included).
    public var fetchDurations = HistogramSnapshot()

    public struct Fetches: Sendable, Equatable {
        /// Source fetches started (after coalescing: one per source however many asked).
        public var started = 0
        public var succeeded = 0
        /// Failed fetches by error code.
        public var failed: [ThumbnailError.Code: Int] = [:]
        /// Bytes of fetched sources.
        public var bytes = 0
        /// Requests answered with a remembered failure instead of a fetch (negative caching).
        public var remembered = 0
        /// Conditional fetches of stale sources started (after coalescing: one per source at a time).
        public var revalidations = 0
        /// Revalidations that found the source unchanged (a 304, or the same bytes again).
        public var notModified = 0
        /// Revalidations that brought different bytes (the old original and all made from it dropped).
        public var changed = 0
        /// Now: fetches holding a slot of their origin, requests waiting for one (holding no place
        /// in the pool), and origins with either (`--max-fetches-per-host`).
        public var holdingOriginSlot = 0
        public var waitingForOriginSlot = 0
        public var busyOrigins = 0
        /// Now: origins by circuit-breaker state (the fetcher's `originHealth`).
        public var origins = OriginHealth()

        public init() {}
    }

    public struct Renders: Sendable, Equatable {
        /// First sizes, made straight from the original (no reusable copy).
        public var fromOriginal = 0
        /// Reusable decoded copies made (each a full decode).
        public var copiesMade = 0
        /// Thumbnails cut from a cached decoded copy (no decode).
        public var fromCopy = 0
        /// Info documents made (`/info`: one small decode each).
        public var infos = 0
        /// Renders that failed (header checks included), by error code.
        public var failed: [ThumbnailError.Code: Int] = [:]
        /// Admitted jobs not run because they waited in the queue past `--queue-timeout` (503),
        /// and fetches that got no working memory within their deadline (503).
        public var expiredInQueue = 0
        public var noRoomInTime = 0

        public init() {}

        /// Sources decoded: first sizes plus copies (a cut from a copy decodes nothing).
        public var decodes: Int { fromOriginal + copiesMade }
        /// Thumbnails made, however.
        public var thumbnails: Int { fromOriginal + copiesMade + fromCopy }
    }

    public init(
        cache: CacheMetrics, workers: WorkerPool.Statistics, fetches: Fetches = Fetches(),
        renders: Renders = Renders(), coalesced: Int = 0
    ) {
        self.cache = cache
        self.workers = workers
        self.fetches = fetches
        self.renders = renders
        self.coalesced = coalesced
    }
}
