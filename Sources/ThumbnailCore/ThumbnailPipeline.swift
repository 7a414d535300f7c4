public import DiskCache
internal import Primitives

/// The thumbnail pipeline: cache → coalescing → fetch (coalesced per source) → bounded workers
/// → cache. Callback-driven on purpose: the server thread, curl's I/O thread and the worker
/// threads hand work to each other directly, and nothing ever waits on Swift's cooperative pool.
///
/// Generic over the image library (`Imaging`, whose decoded copies it caches without looking
/// inside) and over what the host prepares from each stored variant (`Prepared`: the HTTP layer's
/// ready-made hit responses), so both travel typed and nothing is cast.
///
/// This file is the façade: the public entry points (a hit, `thumbnail`, `info`, `prefetch`, `purge`) and
/// the state every stage shares. Each stage of a miss is a file of its own:
/// - `ThumbnailPipeline+Loading.swift`: the source's original, from the cache or fetched once
///   however many ask, within its origin's fetch slots and the work budget;
/// - `ThumbnailPipeline+Revalidation.swift`: what a stale entry is answered with, and the one
///   conditional fetch per source that keeps it fresh;
/// - `ThumbnailPipeline+Making.swift`: one job per variant on the worker pool, charged its memory
///   estimate, and the answer when the pool gives a job up;
/// - `ThumbnailPipeline+Storing.swift`: variants with their prepared answer and its promise,
///   decoded copies and originals, kept only when no purge came in between;
/// - `ThumbnailPipeline+Disk.swift`: the disk tier behind the memory cache, when there is one.
public final class ThumbnailPipeline<Imaging: ImageProcessing, Prepared: PreparedAnswer>: Sendable {
    public typealias Entry = CacheEntry<Imaging.Decoded, Prepared>
    public typealias Variant = CachedVariant<Prepared>

    /// How a request was answered (for the log line and tests).
    public enum Outcome: String, Sendable {
        /// Served from the cache.
        case hit
        /// This request did the work.
        case miss
        /// Joined work another request had started.
        case coalesced
        /// Answered with a remembered origin failure (negative caching), without a fetch.
        case negative
        /// Answered from a stale entry: while its revalidation runs (stale-while-revalidate), or
        /// because the revalidation failed (stale-if-error).
        case stale
        /// The entry was stale; its origin said it had not changed, so it was renewed and served.
        case revalidated
        /// Not in memory: read from the disk tier (and in memory from now on).
        case disk
    }

    public struct Limits: Sendable {
        /// A source whose first page has more pixels than this is refused before decoding; an
        /// animation whose frames together have more is made a still of its first frame.
        public var maxSourcePixels: Int
        /// An animation with more frames is made a still of its first frame (`--max-frames`).
        public var maxFrames: Int
        /// How long an origin's failure for a source is remembered and answered without a fetch;
        /// zero turns negative caching off.
        public var errorTTL: Duration
        /// How long originals (and all made from them) stay fresh, and may be served stale.
        public var freshness: FreshnessPolicy
        /// The longest lifetime a prepared variant may promise downstream caches (the service's
        /// `--cache-max-age`); it never promises more than its original's remaining freshness.
        public var maxPromisedLifetime: Duration
        /// At most this many fetches to one origin (scheme, host, port) at a time; more wait,
        /// holding no place in the worker pool (`--max-fetches-per-host`).
        public var maxFetchesPerOrigin: Int
        /// How long a request may wait for a fetch slot of its origin and fetch, together (the
        /// fetcher's deadline, `--fetch-timeout`).
        public var fetchTimeout: Duration
        /// What a fetch charges the work budget from its start until it reports its size (the
        /// declared Content-Length, or the cap when none is declared): a fetch starts only when
        /// this fits beside what is charged, so fetches never start into more than the budget.
        /// The service sets it to `--max-source-bytes`, the most a fetch can grow to.
        public var fetchReservation: Int

        /// No defaults: the service's settings (`ServiceConfiguration`) are where they are written.
        public init(
            maxSourcePixels: Int, errorTTL: Duration, freshness: FreshnessPolicy, maxPromisedLifetime: Duration,
            maxFetchesPerOrigin: Int, fetchTimeout: Duration, fetchReservation: Int, maxFrames: Int = 256
        ) {
            self.maxSourcePixels = maxSourcePixels
            self.maxFrames = maxFrames
            self.errorTTL = errorTTL
            self.freshness = freshness
            self.maxPromisedLifetime = maxPromisedLifetime
            self.maxFetchesPerOrigin = maxFetchesPerOrigin
            self.fetchTimeout = fetchTimeout
            self.fetchReservation = fetchReservation
        }
    }

    // The state the stages share. Where the stages keep things: the cache (every stage); the
    // fetcher, remembered failures, origin slots and source fetches (loading); the revalidations
    // and the freshness policy (revalidation); the workers, renderer and variant jobs
    // (making); the host's `prepare` and the longest promise (storing).
    @usableFromInline let cache: any ImageCaching<Entry>
    let workers: WorkerPool
    let fetcher: any ImageFetching
    let renderer: ThumbnailRenderer<Imaging>
    let prepare: @Sendable (EncodedImage, UInt64, Duration) -> Prepared
    /// The disk tier behind the cache, when the service has a folder.
    let disk: DiskTier?
    /// One read of a variant from disk at a time, however many requests miss it in memory.
    let diskReads = CoalescedWork<Variant>()
    /// The settings that decide whether an animated source stays animated (frames, pixels, work
    /// budget): recorded with each variant written to disk, and a variant whose content depends on
    /// them is not served from disk under other ones (`DiskRecord`).
    let animationTag: String
    let failures: FailedFetches
    /// Fetch slots per origin (`Limits.maxFetchesPerOrigin`).
    let originSlots: OriginSlots
    let fetchReservation: Int
    let fetchTimeout: Duration
    let policy: FreshnessPolicy
    let maxPromisedLifetime: Duration
    @usableFromInline let now: @Sendable () -> ContinuousClock.Instant
    /// One job per variant at a time, however many requests ask for it.
    let variantJobs = CoalescedWork<Variant>()
    /// One fetch per source at a time (keyed by the source's original key).
    let sourceFetches = CoalescedWork<Original>()
    /// One revalidation per source at a time (keyed by the source's original key).
    let revalidations = CoalescedWork<Revalidation>()
    /// Miss-path counters only: a hit counts inside the cache's own lock, or, served from a
    /// variant the host kept, with one atomic add (`countKeptHit`).
    let counters = Locked<
        (
            fetches: PipelineMetrics.Fetches, renders: PipelineMetrics.Renders, coalesced: Int, stale: Int,
            lastRoomWaitEnded: ContinuousClock.Instant?
        )
    >(
        (.init(), .init(), 0, 0, nil))
    /// Decode and encode times by format, taken on the workers (atomics: no lock).
    let renderTimings = RenderTimings()
    /// Source fetch times, from the request going out to its answer (revalidations included).
    let fetchDurations = DurationHistogram(bounds: DurationHistogram.workBounds)

    /// `disk`, when given, is the tier behind the memory cache (the pipeline stops it in `stop`).
    /// `prepare` runs once per stored variant (on the worker that made it), and again when a
    /// variant's promise must shrink or a stale one is served; its `Duration` is the lifetime the
    /// prepared answer may promise downstream (whole seconds, zero for a stale or unkept variant).
    /// `now` is the clock freshness and remembered failures run by (tests move it).
    public init(
        cache: any ImageCaching<Entry>, workers: WorkerPool, fetcher: any ImageFetching, imaging: Imaging,
        limits: Limits, disk: DiskTier? = nil, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        prepare: @escaping @Sendable (EncodedImage, UInt64, Duration) -> Prepared
    ) {
        self.failures = FailedFetches(ttl: limits.errorTTL, now: now)
        self.fetchReservation = limits.fetchReservation
        self.fetchTimeout = limits.fetchTimeout
        self.originSlots = OriginSlots(limit: limits.maxFetchesPerOrigin, wait: limits.fetchTimeout, now: now)
        self.policy = limits.freshness
        self.maxPromisedLifetime = limits.maxPromisedLifetime
        self.now = now
        self.cache = cache
        self.workers = workers
        self.fetcher = fetcher
        self.renderer = ThumbnailRenderer(
            imaging: imaging, maxSourcePixels: limits.maxSourcePixels, maxFrames: limits.maxFrames,
            maxAnimationMemory: workers.workBudget, timings: renderTimings)
        self.prepare = prepare
        self.disk = disk
        self.animationTag = "frames:\(limits.maxFrames),pixels:\(limits.maxSourcePixels),work:\(workers.workBudget)"
    }

    /// Every counter, as one value.
    public var metrics: PipelineMetrics {
        var (fetches, renders, coalesced, stale, _) = counters.withLock { $0 }
        (fetches.holdingOriginSlot, fetches.waitingForOriginSlot, fetches.busyOrigins) = originSlots.totals
        fetches.origins = fetcher.originHealth
        var metrics = PipelineMetrics(
            cache: cache.metrics, workers: workers.statistics, fetches: fetches, renders: renders, coalesced: coalesced)
        metrics.servedStale = stale
        metrics.renderTimings = renderTimings.snapshot
        metrics.fetchDurations = fetchDurations.snapshot()
        metrics.disk = disk?.metrics
        return metrics
    }

    /// The hit path: a cached variant whose prepared answer is still true (fresh, and promising no
    /// more than its original's remaining freshness), or nil — then `thumbnail` decides (renew
    /// the promise, revalidate, serve stale). Cheap, synchronous, no queue, no copy; one lock and
    /// one clock read. Inlinable so that the service's call is specialised for its image types (no
    /// generic metadata looked up per hit).
    @inlinable
    public func cachedVariant(_ key: CacheKey) -> Variant? {
        // A miss is counted once, by the full path's lookup that follows it.
        guard case .variant(let variant) = cache.valueCountingHit(forKey: key), now() < variant.preparedValidUntil
        else {
            return nil
        }
        return variant
    }

    /// The clock freshness runs by: what a host compares `preparedValidUntil` with when it serves
    /// a variant it kept (see `countKeptHit`).
    @inlinable
    public var clockNow: ContinuousClock.Instant { now() }

    /// The host's prepared answer of the variant under `key` came to hold `bytes` more after it was
    /// stored (it made a second form of itself on demand): charged to the entry, while the entry
    /// still holds a prepared answer `isCurrent` accepts, so the budget counts it. False when it
    /// does not, or when making room evicted the entry itself.
    @discardableResult
    public func chargeGrowth(_ bytes: Int, of key: CacheKey, where isCurrent: (Prepared) -> Bool) -> Bool {
        cache.charge(bytes, growthOf: key) { value in
            guard case .variant(let variant) = value else { return false }
            return isCurrent(variant.prepared)
        }
    }

    /// Counts a hit the host served from a variant it kept from `cachedVariant` instead of asking
    /// again: the variant's prepared answer told it the entry is still cached (`PreparedAnswer.leftCache`
    /// had not been called) and `clockNow` was before its `preparedValidUntil`. No lock. The host
    /// asks `cachedVariant` again every so often, which keeps the entry's place in the recency order.
    public func countKeptHit() { cache.countHit(.variant) }

    /// Finds or makes the variant. `completion` runs once, on any thread (at once, on the caller's,
    /// for a hit). With `onlyIfCached`, a miss is answered `notCached` without any work.
    public func thumbnail(
        _ request: ThumbnailRequest, priority: WorkerPool.Priority = .interactive, onlyIfCached: Bool = false,
        completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        guard let spec = request.spec else {
            completion(.failure(ThumbnailError(.internal, "thumbnail without a spec")), .miss)
            return
        }
        answer(request.source, .thumbnail(spec), priority: priority, onlyIfCached: onlyIfCached, completion)
    }

    /// Finds or makes the source's info document (`/info`: size, format, frames, orientation and
    /// placeholders, as JSON; see `SourceDescription`): made on a worker from the original, cached
    /// or fetched once however many ask, and cached beside the variants — answered, kept fresh,
    /// revalidated and purged exactly as a thumbnail is. `completion` as for `thumbnail`.
    public func info(
        _ source: SourceURL, priority: WorkerPool.Priority = .interactive, onlyIfCached: Bool = false,
        completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        answer(source, .info, priority: priority, onlyIfCached: onlyIfCached, completion)
    }

    /// The product from the cache (its promise renewed if need be, or stale), or made now.
    private func answer(
        _ source: SourceURL, _ product: Product, priority: WorkerPool.Priority, onlyIfCached: Bool,
        _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        let key = product.key(of: source)
        if case .variant(let cached) = cache.value(forKey: key) {
            let now = now()
            if now < cached.preparedValidUntil {
                completion(.success(cached), .hit)
            } else if cached.freshness.isFresh(at: now) {
                completion(.success(renewPromise(cached, key, at: now)), .hit)
            } else {
                answerStale(cached, source, product, key, priority: priority, onlyIfCached: onlyIfCached, completion)
            }
            return
        }
        let onDisk = answerFromDisk(key) { [self] in
            answerMiss(source, product, key, priority: priority, onlyIfCached: onlyIfCached, completion)
        } found: { [self] variant in
            answerRead(variant, source, product, key, priority: priority, onlyIfCached: onlyIfCached, completion)
        }
        if !onDisk { answerMiss(source, product, key, priority: priority, onlyIfCached: onlyIfCached, completion) }
    }

    /// Neither memory nor disk has the product: made now, unless the request only wants what is cached
    /// or the source's origin failed a moment ago.
    private func answerMiss(
        _ source: SourceURL, _ product: Product, _ key: CacheKey, priority: WorkerPool.Priority, onlyIfCached: Bool,
        _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        if onlyIfCached {
            completion(.failure(ThumbnailError(.notCached)), .miss)
            return
        }
        // A remembered failure answers at once — unless a stale original is cached, which
        // stale-if-error may still make this from (the revalidation hears the same failure).
        if let failure = failures.failure(of: source), cachedFreshness(of: source) == nil {
            counters.withLock { $0.fetches.remembered += 1 }
            completion(.failure(failure), .negative)
            return
        }
        make(source, product, key, priority: priority, allowStale: false, completion)
    }

    /// Prefetch: admits the work now (or throws `queueFull`), then loads the original — and the
    /// variant when the request has a spec — at background priority.
    public func prefetch(_ request: ThumbnailRequest) throws(ThumbnailError) {
        if let spec = request.spec {
            if cachedVariant(.variant(request.source, spec)) != nil { return }
            if failures.failure(of: request.source) != nil { return }
            // Checked here so the client hears "full" now, not never.
            guard let probe = workers.reserve(.background) else { throw ThumbnailError(.queueFull, "queue full") }
            probe.release()
            thumbnail(request, priority: .background) { _, _ in }
            return
        }
        if case .original(_, let freshness) = cache.peek(.original(request.source)) {
            // Kept fresh in the background: no worker needed for a conditional fetch.
            if !freshness.isFresh(at: now()) { revalidate(request.source, freshness) { _ in } }
            return
        }
        // A remembered failure: nothing to do until it expires.
        if failures.failure(of: request.source) != nil { return }
        guard let ticket = workers.reserve(.background) else { throw ThumbnailError(.queueFull, "queue full") }
        loadOriginal(request.source, slot: nil, priority: .background) { _, _ in ticket.release() }
    }

    /// Removes the source's original, decoded copy, every variant and its info document, and keeps work already in
    /// progress for it from putting any of them back (it still answers its own waiters). On disk too:
    /// no read answers from the source's entries from now on; the files go soon after, on the disk
    /// tier's writer thread.
    @discardableResult
    public func purge(_ source: SourceURL) -> CacheRemoval {
        // The disk first: a read that begins once the memory is clear must find nothing there.
        disk?.purge(source)
        return purgeMemory(source)
    }

    /// `purge`, answering once the disk's files are gone too (at once without a disk tier, whose
    /// removal is then nil): what the admin route reports.
    public func purge(_ source: SourceURL, completion: @escaping @Sendable (CacheRemoval, DiskRemoval?) -> Void) {
        guard let disk else { return completion(purgeMemory(source), nil) }
        let parts = Locked<(memory: CacheRemoval?, disk: DiskRemoval?)>((nil, nil))
        disk.purge(source) { removed in
            if let memory = parts.withLock({ parts in
                parts.disk = removed
                return parts.memory
            }) {
                completion(memory, removed)
            }
        }
        let memory = purgeMemory(source)
        if let removed = parts.withLock({ parts in
            parts.memory = memory
            return parts.disk
        }) {
            completion(memory, removed)
        }
    }

    private func purgeMemory(_ source: SourceURL) -> CacheRemoval {
        failures.forget(source)
        // Lock order, here and in `replace` (+Storing): revalidations, variant jobs, source fetches,
        // disk reads, cache.
        return revalidations.markStale(source: source) {
            variantJobs.markStale(source: source) {
                sourceFetches.markStale(source: source) {
                    diskReads.markStale(source: source) { cache.removeAll(of: source) }
                }
            }
        }
    }

    /// Whether purges also clear a disk tier.
    public var hasDiskTier: Bool { disk != nil }

    /// Lets the workers finish what is queued, then end; new work is refused. Then the disk tier
    /// writes what it has queued (for a few seconds at most) and stops.
    public func stop() {
        workers.stop()
        disk?.stop()
    }
}
