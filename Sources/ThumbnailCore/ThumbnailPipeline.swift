import Synchronization

/// The thumbnail pipeline: cache → coalescing → fetch (coalesced per source) → bounded workers
/// → cache. Callback-driven on purpose: the server thread, curl's I/O thread and the worker
/// threads hand work to each other directly, and nothing ever waits on Swift's cooperative pool.
///
/// Generic over the image library (`Imaging`, whose decoded copies it caches without looking
/// inside) and over what the host prepares from each stored variant (`Prepared`: the HTTP layer's
/// ready-made hit responses), so both travel typed and nothing is cast.
public final class ThumbnailPipeline<Imaging: ImageProcessing, Prepared: PreparedForm>: Sendable {
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
    }

    public struct Limits: Sendable {
        /// A source whose first page has more pixels than this is refused before decoding.
        public var maxSourcePixels: Int
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
            maxFetchesPerOrigin: Int, fetchTimeout: Duration, fetchReservation: Int
        ) {
            self.maxSourcePixels = maxSourcePixels
            self.errorTTL = errorTTL
            self.freshness = freshness
            self.maxPromisedLifetime = maxPromisedLifetime
            self.maxFetchesPerOrigin = maxFetchesPerOrigin
            self.fetchTimeout = fetchTimeout
            self.fetchReservation = fetchReservation
        }
    }

    /// A fetched original and its freshness.
    struct Original: Sendable {
        let bytes: ImageBytes
        let freshness: SourceFreshness
    }

    /// What a revalidation found.
    enum Revalidation: Sendable {
        /// Unchanged: the same freshness record now runs later, for everything made from it.
        case renewed
        /// Changed (or not to be kept): the old original and everything made from it are gone.
        case replaced
    }

    @usableFromInline let cache: any ImageCaching<Entry>
    private let workers: WorkerPool
    let fetcher: any ImageFetching
    private let renderer: ThumbnailRenderer<Imaging>
    private let prepare: @Sendable (EncodedImage, UInt64, Duration) -> Prepared
    let failures: FailedFetches
    /// Fetch slots per origin (`Limits.maxFetchesPerOrigin`).
    let originSlots: OriginSlots
    private let fetchReservation: Int
    private let fetchTimeout: Duration
    let policy: FreshnessPolicy
    private let maxPromisedLifetime: Duration
    @usableFromInline let now: @Sendable () -> ContinuousClock.Instant
    let variantFlights = Flights<Variant>()
    let sourceFlights = Flights<Original>()
    /// One revalidation per source at a time (keyed by the source's original key).
    let revalidations = Flights<Revalidation>()
    /// Miss-path counters only: a hit counts inside the cache's own lock, or, served from a
    /// variant the host kept, with one atomic add (`countKeptHit`).
    let counters = Mutex<
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

    /// `prepare` runs once per stored variant (on the worker that made it), and again when a
    /// variant's promise must shrink or a stale one is served; its `Duration` is the lifetime the
    /// prepared form may promise downstream (whole seconds, zero for a stale or unkept variant).
    /// `now` is the clock freshness and remembered failures run by (tests move it).
    public init(
        cache: any ImageCaching<Entry>, workers: WorkerPool, fetcher: any ImageFetching, imaging: Imaging,
        limits: Limits, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
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
            imaging: imaging, maxSourcePixels: limits.maxSourcePixels, timings: renderTimings)
        self.prepare = prepare
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
        return metrics
    }

    /// The hit path: a cached variant whose prepared form is still true (fresh, and promising no
    /// more than its original's remaining freshness), or nil — then `thumbnail` decides (renew
    /// the promise, revalidate, serve stale). Cheap, synchronous, no queue, no copy; one lock and
    /// one clock read. Inlinable so that the service's call is specialised for its image types (no
    /// generic metadata looked up per hit).
    @inlinable
    public func cachedVariant(_ key: CacheKey) -> Variant? {
        guard case .variant(let variant) = cache.value(forKey: key), now() < variant.preparedValidUntil else {
            return nil
        }
        return variant
    }

    /// The clock freshness runs by: what a host compares `preparedValidUntil` with when it serves
    /// a variant it kept (see `countKeptHit`).
    @inlinable
    public var clockNow: ContinuousClock.Instant { now() }

    /// Counts a hit the host served from a variant it kept from `cachedVariant` instead of asking
    /// again: the variant's prepared form told it the entry is still cached (`PreparedForm.leftCache`
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
        let key = CacheKey.variant(request.source, spec)
        if case .variant(let cached) = cache.value(forKey: key) {
            let now = now()
            if now < cached.preparedValidUntil {
                completion(.success(cached), .hit)
            } else if cached.freshness.isFresh(at: now) {
                completion(.success(renewPromise(cached, key, at: now)), .hit)
            } else {
                answerStale(cached, request, key, priority: priority, onlyIfCached: onlyIfCached, completion)
            }
            return
        }
        if onlyIfCached {
            completion(.failure(ThumbnailError(.notCached)), .miss)
            return
        }
        // A remembered failure answers at once — unless a stale original is cached, which
        // stale-if-error may still make this size from (the revalidation hears the same failure).
        if let failure = failures.failure(of: request.source), cachedFreshness(of: request.source) == nil {
            counters.withLock { $0.fetches.remembered += 1 }
            completion(.failure(failure), .negative)
            return
        }
        make(request, spec, key, priority: priority, allowStale: false, completion)
    }

    /// The miss path: makes the variant, from a cached decoded copy or the original (fetched once
    /// however many ask). A stale original is revalidated first — in the background while within
    /// stale-while-revalidate, else before anything is made from it.
    func make(
        _ request: ThumbnailRequest, _ spec: TransformSpec, _ key: CacheKey, priority: WorkerPool.Priority,
        allowStale: Bool, _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        if !allowStale, let freshness = cachedFreshness(of: request.source), !freshness.isFresh(at: now()) {
            guard revalidateBeforeMaking(request, spec, key, priority: priority, freshness, completion) else { return }
        }
        let started = Atomic<Bool>(false)
        let leader = variantFlights.join(key) { result in
            completion(result, started.load(ordering: .acquiring) ? .miss : .coalesced)
        }
        guard leader else {
            counters.withLock { $0.coalesced += 1 }
            return
        }
        started.store(true, ordering: .releasing)
        // A second look: the previous flight may have stored it between our lookup and join.
        if case .variant(let hit) = cache.peek(key) {
            variantFlights.complete(key, with: .success(hit))
            return
        }
        guard let ticket = workers.reserve(priority) else {
            variantFlights.complete(key, with: .failure(ThumbnailError(.queueFull, "worker queue full")))
            return
        }
        let copyKey = CacheKey.decoded(request.source)
        if case .decoded(let copy, let freshness) = cache.value(forKey: copyKey), copy.canServe(spec) {
            // A new size of a recently decoded source: cut it from the copy, no fetch, no decode.
            ticket.run(costing: { [renderer] _ in renderer.cutEstimate(copy, spec: spec) }) { [self] deadline in
                store(
                    render(\.fromCopy) { () throws(ThumbnailError) in
                        try renderer.render(decoded: copy, spec: spec, deadline: deadline)
                    }, key, freshness)
            } orElse: { [self] late in
                .failure(lateFailure(late, request.source))
            } then: { [self] result in
                complete(key, request.source, with: result)
            }
            return
        }
        // The original must be fetched and its origin is at its limit: wait for a fetch slot
        // without holding a place in the pool (another origin's request could use it), then take a
        // place again — or hear 503 then, as anyone arriving at that moment would.
        let originalKey = CacheKey.original(request.source)
        if cache.peek(originalKey) == nil, !sourceFlights.isInFlight(originalKey) {
            if let slot = originSlots.tryAcquire(request.source.origin) {
                return makeFromOriginal(request, spec, key, ticket: ticket, slot: slot)
            }
            ticket.release()
            return originSlots.acquire(request.source.origin) { [self] slot in
                guard let slot else {
                    return variantFlights.complete(key, with: .failure(slotTimeout(request.source.origin)))
                }
                guard let ticket = workers.reserve(priority) else {
                    slot.release()
                    return variantFlights.complete(key, with: .failure(ThumbnailError(.queueFull, "worker queue full")))
                }
                makeFromOriginal(request, spec, key, ticket: ticket, slot: slot)
            }
        }
        makeFromOriginal(request, spec, key, ticket: ticket, slot: nil)
    }

    /// No fetch slot of `origin` came free in time. When fetches waited for working memory during
    /// that wait (some still do, or one stopped waiting since it began: a slot wait lasts the
    /// fetch timeout), the slots were most likely held by them — the service is busy, not the
    /// origin slow: 503, not 504.
    private func slotTimeout(_ origin: OriginKey) -> ThumbnailError {
        let since = now() - fetchTimeout
        let recentRoomWait = counters.withLock { $0.lastRoomWaitEnded.map { $0 >= since } ?? false }
        if recentRoomWait || workers.statistics.waitingForRoom > 0 {
            counters.withLock { $0.renders.noRoomInTime += 1 }
            return ThumbnailError(.queueFull, "no fetch slot of \(origin) in time: fetches wait for working memory")
        }
        return ThumbnailError(.originTimeout, "no fetch slot of \(origin) in time")
    }

    /// What a job's client hears when the pool gave the job up. Queued past `--queue-timeout`: 503,
    /// retry shortly (its answer minutes later would help nobody). Running past `--job-timeout`:
    /// the source is remembered as failed for `--error-ttl` and its original and decoded copy are
    /// dropped, so one source that makes the decoder spin cannot take a worker per request.
    private func lateFailure(_ late: WorkerPool.Late, _ source: SourceURL) -> ThumbnailError {
        switch late {
        case .queueTimeout:
            counters.withLock { $0.renders.expiredInQueue += 1 }
            return ThumbnailError(.queueFull, "waited in the queue past --queue-timeout")
        case .jobTimeout:
            let error = countedFailure(ThumbnailError(.processingTimeout, "ran past --job-timeout: \(source)"))
            giveUp(on: source, error)
            return error
        }
    }

    /// A source whose job ran past its deadline (given up by the pool, or stopped by the image
    /// library itself): remembered as failed, its original and decoded copy dropped.
    private func giveUp(on source: SourceURL, _ error: ThumbnailError) {
        failures.remember(error, of: source)
        cache.removeValue(forKey: .original(source))
        cache.removeValue(forKey: .decoded(source))
    }

    /// Hands a job's result to its waiters, giving up on the source first if the work itself
    /// stopped at the deadline.
    private func complete(
        _ key: CacheKey, _ source: SourceURL, with result: Result<Variant, ThumbnailError>
    ) {
        if case .failure(let error) = result, error.code == .processingTimeout { giveUp(on: source, error) }
        variantFlights.complete(key, with: result)
    }

    /// The miss path from the original (cached, or fetched now with `slot` or one taken later).
    private func makeFromOriginal(
        _ request: ThumbnailRequest, _ spec: TransformSpec, _ key: CacheKey, ticket: WorkerPool.Ticket,
        slot: OriginSlots.Slot?
    ) {
        let copyKey = CacheKey.decoded(request.source)
        original(request.source, slot: slot, priority: ticket.priority) { [self] result, wasCached in
            switch result {
            case .failure(let error):
                ticket.release()
                variantFlights.complete(key, with: .failure(error))
            case .success(let original):
                let bytes = original.bytes
                let freshness = original.freshness
                // A fetched original is outside the cache budget until its job is done: it counts
                // against the work budget meanwhile (a cached one is in the cache's already).
                let held = workers.charge(wasCached ? 0 : bytes.count)
                ticket.run(costing: { [self] _ in estimate(bytes, spec, keepingCopy: wasCached) }) { [self] deadline in
                    defer { held.end() }
                    if let refusal = memoryRefusal(bytes, spec, keepingCopy: wasCached) {
                        return .failure(countedFailure(refusal))
                    }
                    guard wasCached else {
                        // The first size of this source: streamed, nothing else kept.
                        return store(
                            render(\.fromOriginal) { () throws(ThumbnailError) in
                                try renderer.render(original: bytes, spec: spec, deadline: deadline)
                            }, key, freshness)
                    }
                    // Asked for before: this is a further size, so a reusable copy will pay.
                    let made = Result { () throws(ThumbnailError) in
                        try renderer.renderKeepingCopy(original: bytes, spec: spec, deadline: deadline)
                    }
                    if case .success(let (_, copy?)) = made {
                        variantFlights.storeUnlessStale(key) { keep(copy, freshness, forKey: copyKey) }
                    }
                    let counter: WritableKeyPath<PipelineMetrics.Renders, Int> =
                        (try? made.get().copy) != nil ? \.copiesMade : \.fromOriginal
                    return store(render(counter) { () throws(ThumbnailError) in try made.get().image }, key, freshness)
                } orElse: { [self] late in
                    held.end()
                    return .failure(lateFailure(late, request.source))
                } then: { [self] result in
                    complete(key, request.source, with: result)
                }
            }
        }
    }

    /// A job's decode memory, from the header (`DecodeMemory`): what the work budget charges it.
    /// An unreadable header costs nothing (the job fails at once); an estimate over the whole
    /// budget neither (the job is refused at once, `memoryRefusal`).
    private func estimate(_ bytes: ImageBytes, _ spec: TransformSpec, keepingCopy: Bool) -> Int {
        guard let info = try? renderer.inspect(bytes) else { return 0 }
        let estimate = jobEstimate(info, spec, keepingCopy: keepingCopy)
        return estimate > workers.workBudget ? 0 : estimate
    }

    private func jobEstimate(_ info: SourceInfo, _ spec: TransformSpec, keepingCopy: Bool) -> Int {
        let first = renderer.estimate(info, spec: spec)
        guard keepingCopy else { return first }
        // A later size decodes the reusable copy and cuts from it, or streams as a first size does.
        let box = ThumbnailRenderer<Imaging>.copyBox(for: info)
        return max(first, renderer.copyEstimate(info) + box.width * box.height * max(1, info.bands))
    }

    /// `tooMuchMemory` when the job's estimate alone is over the work budget: refused before any
    /// decode (waiting could never make it fit).
    private func memoryRefusal(_ bytes: ImageBytes, _ spec: TransformSpec, keepingCopy: Bool) -> ThumbnailError? {
        guard workers.workBudget < .max, let info = try? renderer.inspect(bytes) else { return nil }
        let estimate = jobEstimate(info, spec, keepingCopy: keepingCopy)
        guard estimate > workers.workBudget else { return nil }
        return ThumbnailError(
            .tooMuchMemory, "decode estimate \(estimate) bytes is over the \(workers.workBudget)-byte work budget")
    }

    private func countedFailure(_ error: ThumbnailError) -> ThumbnailError {
        counters.withLock { $0.renders.failed[error.code, default: 0] += 1 }
        return error
    }

    /// Runs one render and counts it under `counter`, or its failure by code.
    private func render(
        _ counter: WritableKeyPath<PipelineMetrics.Renders, Int>, _ body: () throws(ThumbnailError) -> EncodedImage
    ) -> Result<EncodedImage, ThumbnailError> {
        let result = Result(catching: body)
        counters.withLock { counters in
            switch result {
            case .success: counters.renders[keyPath: counter] += 1
            case .failure(let error): counters.renders.failed[error.code, default: 0] += 1
            }
        }
        return result
    }

    /// Caches a made thumbnail under its variant key, with the host's prepared form (unless its
    /// original is not to be kept).
    private func store(
        _ result: Result<EncodedImage, ThumbnailError>, _ key: CacheKey, _ freshness: SourceFreshness
    ) -> Result<Variant, ThumbnailError> {
        result.map { image in
            let variant = variant(image, Variant.fingerprint(of: image.bytes), freshness, at: now())
            if freshness.isStorable {
                variantFlights.storeUnlessStale(key) { cache.insert(.variant(variant), forKey: key) }
            }
            return variant
        }
    }

    /// A variant with its prepared form, promising downstream caches at most the original's
    /// remaining freshness: 7/8 of it (capped by `maxPromisedLifetime`, in whole seconds), so the
    /// prepared form stays true — and hits serve it untouched — for the last eighth at least, and
    /// is prepared again about log(remaining)/log(8/7) times per lifetime rather than per hit.
    func variant(
        _ image: EncodedImage, _ fingerprint: UInt64, _ freshness: SourceFreshness, at now: ContinuousClock.Instant
    ) -> Variant {
        let freshUntil = freshness.freshUntil
        let remaining = freshUntil - now
        var promise = Duration.zero
        if freshness.isStorable && remaining > .zero {
            promise = .seconds(min(maxPromisedLifetime, remaining - remaining / 8).components.seconds)
        }
        return Variant(
            image: image, fingerprint: fingerprint, prepared: prepare(image, fingerprint, promise),
            freshness: freshness, preparedValidUntil: freshness.isStorable ? freshUntil - promise : now)
    }

    /// A fresh variant whose promise no longer holds: prepared again with a shorter one, and put in
    /// place of the old one in the cache (keeping its place in the LRU).
    func renewPromise(_ cached: Variant, _ key: CacheKey, at now: ContinuousClock.Instant) -> Variant {
        let renewed = variant(cached.image, cached.fingerprint, cached.freshness, at: now)
        cache.replaceValue(.variant(renewed), forKey: key) { current in
            guard case .variant(let current) = current else { return false }
            return current.freshness === cached.freshness && current.fingerprint == cached.fingerprint
        }
        return renewed
    }

    /// Keeps a decoded copy unless the cache already has a larger one of the same source (or the
    /// source is not to be kept).
    private func keep(_ copy: DecodedSource<Imaging.Decoded>, _ freshness: SourceFreshness, forKey key: CacheKey) {
        guard freshness.isStorable else { return }
        if case .decoded(let existing, _) = cache.peek(key),
            existing.width * existing.height >= copy.width * copy.height
        {
            return
        }
        cache.insert(.decoded(copy, freshness), forKey: key)
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
        original(request.source, slot: nil, priority: .background) { _, _ in ticket.release() }
    }

    /// Removes the source's original, decoded copy and every variant, and keeps work already in
    /// flight for it from putting any of them back (it still answers its own waiters).
    @discardableResult
    public func purge(_ source: SourceURL) -> CacheRemoval {
        failures.forget(source)
        // Lock order, here and in `replace`: revalidations, variant flights, source flights, cache.
        return revalidations.markStale(source: source) {
            variantFlights.markStale(source: source) {
                sourceFlights.markStale(source: source) { cache.removeAll(of: source) }
            }
        }
    }

    /// Lets the workers finish what is queued, then end; new work is refused.
    public func stop() { workers.stop() }

    /// The source's bytes: from the cache (`wasCached`), or fetched once however many ask at the
    /// same time (with `slot`, a fetch slot of its origin the caller took; given back when unused).
    private func original(
        _ source: SourceURL, slot: OriginSlots.Slot?, priority: WorkerPool.Priority,
        completion: @escaping @Sendable (_ result: Result<Original, ThumbnailError>, _ wasCached: Bool) -> Void
    ) {
        let key = CacheKey.original(source)
        if case .original(let bytes, let freshness) = cache.value(forKey: key) {
            slot?.release()
            completion(.success(Original(bytes: bytes, freshness: freshness)), true)
            return
        }
        guard sourceFlights.join(key, { completion($0, false) }) else {
            slot?.release()
            return
        }
        counters.withLock { $0.fetches.started += 1 }
        fetchWithinOriginLimit(source, revalidating: nil, slot: slot, priority: priority) { [self] answer in
            let result = answer.flatMap { answer -> Result<Original, ThumbnailError> in
                switch answer {
                case .modified(let bytes, let directives):
                    .success(Original(bytes: bytes, freshness: policy.freshness(directives, at: now())))
                case .notModified:
                    .failure(ThumbnailError(.originFailed, "not modified, to an unconditional fetch of \(source)"))
                }
            }
            counters.withLock { counters in
                switch result {
                case .success(let original):
                    counters.fetches.succeeded += 1
                    counters.fetches.bytes += original.bytes.count
                case .failure(let error):
                    counters.fetches.failed[error.code, default: 0] += 1
                }
            }
            switch result {
            case .success: failures.forget(source)
            case .failure(let error): failures.remember(error, of: source)
            }
            if case .success(let original) = result, original.freshness.isStorable {
                sourceFlights.storeUnlessStale(key) {
                    cache.insert(.original(original.bytes, original.freshness), forKey: key)
                }
            }
            sourceFlights.complete(key, with: result)
        }
    }

    /// Fetches `source` holding a fetch slot of its origin (`slot` when the caller took one, else
    /// one taken now or waited for) and a charge of the work budget: the fetch starts once the
    /// budget has room, charged `fetchReservation` until it reports its size, then by that. It gets
    /// what is left of the slot's deadline, so waiting and fetching stay within the fetch timeout.
    /// The slot is given back before `completion` runs (whoever hears "done" can use it), the
    /// charge after it (by then the original's waiters have charged what they keep of it).
    func fetchWithinOriginLimit(
        _ source: SourceURL, revalidating validators: SourceValidators?, slot: OriginSlots.Slot?,
        priority: WorkerPool.Priority, completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        let start: @Sendable (OriginSlots.Slot) -> Void = { [self] slot in
            let askedForRoom = now()
            workers.whenRoom(priority, reserving: fetchReservation) { [self] charge in
                if charge.waited {
                    let now = now()
                    counters.withLock { $0.lastRoomWaitEnded = now }
                }
                let left = slot.deadline - now()
                guard left > .zero else {
                    slot.release()
                    charge.end()
                    // Whoever spent the deadline says what the client hears: the origin's slots
                    // (504, as a slow origin), or our own working memory (503: we are busy).
                    let busy = askedForRoom < slot.deadline
                    if busy { counters.withLock { $0.renders.noRoomInTime += 1 } }
                    return completion(
                        .failure(
                            busy
                                ? ThumbnailError(.queueFull, "no working memory for the fetch within its deadline")
                                : ThumbnailError(.originTimeout, "deadline spent waiting for \(source.origin)")))
                }
                let options = FetchOptions(timeLimit: left, progress: { charge.update($0) })
                let started = ContinuousClock.now
                fetcher.fetch(source, revalidating: validators, options: options) { [fetchDurations] answer in
                    fetchDurations.record(
                        nanoseconds: UInt64(max(.zero, ContinuousClock.now - started) / .nanoseconds(1)))
                    slot.release()
                    completion(answer)
                    charge.end()
                }
            }
        }
        if let slot { return start(slot) }
        originSlots.acquire(source.origin) { [self] slot in
            guard let slot else {
                return completion(.failure(slotTimeout(source.origin)))
            }
            start(slot)
        }
    }
}
