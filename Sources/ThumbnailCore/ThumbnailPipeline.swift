import Synchronization

/// The thumbnail pipeline: cache → coalescing → fetch (coalesced per source) → bounded workers
/// → cache. Callback-driven on purpose: the server thread, curl's I/O thread and the worker
/// threads hand work to each other directly, and nothing ever waits on Swift's cooperative pool.
///
/// Generic over the image library (`Imaging`, whose decoded copies it caches without looking
/// inside) and over what the host prepares from each stored variant (`Prepared`: the HTTP layer's
/// ready-made hit responses), so both travel typed and nothing is cast.
public final class ThumbnailPipeline<Imaging: ImageProcessing, Prepared: Sendable>: Sendable {
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
    }

    public struct Limits: Sendable {
        /// A source whose first page has more pixels than this is refused before decoding.
        public var maxSourcePixels: Int
        /// How long an origin's failure for a source is remembered and answered without a fetch;
        /// zero turns negative caching off.
        public var errorTTL: Duration

        public init(maxSourcePixels: Int = 75_000_000, errorTTL: Duration = .seconds(10)) {
            self.maxSourcePixels = maxSourcePixels
            self.errorTTL = errorTTL
        }
    }

    private let cache: any ImageCaching<Entry>
    private let workers: WorkerPool
    private let fetcher: any ImageFetching
    private let renderer: ThumbnailRenderer<Imaging>
    private let prepare: @Sendable (EncodedImage, UInt64) -> Prepared
    private let failures: FailedFetches
    private let variantFlights = Flights<Variant>()
    private let sourceFlights = Flights<ImageBytes>()
    /// Miss-path counters only: a hit counts inside the cache's own lock.
    private let counters = Mutex<(fetches: PipelineMetrics.Fetches, renders: PipelineMetrics.Renders, coalesced: Int)>(
        (.init(), .init(), 0))

    /// `prepare` runs once per stored variant, on the worker that made it. `now` is the clock
    /// remembered failures expire by (tests move it).
    public init(
        cache: any ImageCaching<Entry>, workers: WorkerPool, fetcher: any ImageFetching, imaging: Imaging,
        limits: Limits = Limits(), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        prepare: @escaping @Sendable (EncodedImage, UInt64) -> Prepared
    ) {
        self.failures = FailedFetches(ttl: limits.errorTTL, now: now)
        self.cache = cache
        self.workers = workers
        self.fetcher = fetcher
        self.renderer = ThumbnailRenderer(imaging: imaging, maxSourcePixels: limits.maxSourcePixels)
        self.prepare = prepare
    }

    /// Every counter, as one value.
    public var metrics: PipelineMetrics {
        let (fetches, renders, coalesced) = counters.withLock { $0 }
        return PipelineMetrics(
            cache: cache.metrics, workers: workers.statistics, fetches: fetches, renders: renders, coalesced: coalesced)
    }

    /// The hit path: a cached variant, or nil. Cheap, synchronous, no queue, no copy; one lock.
    public func cachedVariant(_ key: CacheKey) -> Variant? {
        guard case .variant(let variant) = cache.value(forKey: key) else { return nil }
        return variant
    }

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
        if let hit = cachedVariant(key) {
            completion(.success(hit), .hit)
            return
        }
        if onlyIfCached {
            completion(.failure(ThumbnailError(.notCached)), .miss)
            return
        }
        if let failure = failures.failure(of: request.source) {
            counters.withLock { $0.fetches.remembered += 1 }
            completion(.failure(failure), .negative)
            return
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
        if case .decoded(let copy) = cache.value(forKey: copyKey), copy.canServe(spec) {
            // A new size of a recently decoded source: cut it from the copy, no fetch, no decode.
            ticket.run { [self] in
                store(
                    render(\.fromCopy) { () throws(ThumbnailError) in try renderer.render(decoded: copy, spec: spec) },
                    key)
            } then: { [self] result in
                variantFlights.complete(key, with: result)
            }
            return
        }
        original(request.source) { [self] result, wasCached in
            switch result {
            case .failure(let error):
                ticket.release()
                variantFlights.complete(key, with: .failure(error))
            case .success(let bytes):
                ticket.run { [self] in
                    guard wasCached else {
                        // The first size of this source: streamed, nothing else kept.
                        return store(
                            render(\.fromOriginal) { () throws(ThumbnailError) in
                                try renderer.render(original: bytes, spec: spec)
                            }, key)
                    }
                    // Asked for before: this is a further size, so a reusable copy will pay.
                    let made = Result { () throws(ThumbnailError) in
                        try renderer.renderKeepingCopy(original: bytes, spec: spec)
                    }
                    if case .success(let (_, copy?)) = made {
                        variantFlights.storeUnlessStale(key) { keep(copy, forKey: copyKey) }
                    }
                    let counter: WritableKeyPath<PipelineMetrics.Renders, Int> =
                        (try? made.get().copy) != nil ? \.copiesMade : \.fromOriginal
                    return store(render(counter) { () throws(ThumbnailError) in try made.get().image }, key)
                } then: { [self] result in
                    variantFlights.complete(key, with: result)
                }
            }
        }
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

    /// Caches a made thumbnail under its variant key, with the host's prepared form.
    private func store(_ result: Result<EncodedImage, ThumbnailError>, _ key: CacheKey) -> Result<
        Variant, ThumbnailError
    > {
        result.map { image in
            let fingerprint = Variant.fingerprint(of: image.bytes)
            let variant = Variant(image: image, fingerprint: fingerprint, prepared: prepare(image, fingerprint))
            variantFlights.storeUnlessStale(key) { cache.insert(.variant(variant), forKey: key) }
            return variant
        }
    }

    /// Keeps a decoded copy unless the cache already has a larger one of the same source.
    private func keep(_ copy: DecodedSource<Imaging.Decoded>, forKey key: CacheKey) {
        if case .decoded(let existing) = cache.peek(key), existing.width * existing.height >= copy.width * copy.height {
            return
        }
        cache.insert(.decoded(copy), forKey: key)
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
        if cache.peek(.original(request.source)) != nil { return }
        // A remembered failure: nothing to do until it expires.
        if failures.failure(of: request.source) != nil { return }
        guard let ticket = workers.reserve(.background) else { throw ThumbnailError(.queueFull, "queue full") }
        original(request.source) { _, _ in ticket.release() }
    }

    /// Removes the source's original, decoded copy and every variant, and keeps work already in
    /// flight for it from putting any of them back (it still answers its own waiters).
    @discardableResult
    public func purge(_ source: SourceURL) -> CacheRemoval {
        failures.forget(source)
        return variantFlights.markStale(source: source) {
            sourceFlights.markStale(source: source) { cache.removeAll(of: source) }
        }
    }

    /// Lets the workers finish what is queued, then end; new work is refused.
    public func stop() { workers.stop() }

    /// The source's bytes: from the cache (`wasCached`), or fetched once however many ask at the
    /// same time.
    private func original(
        _ source: SourceURL,
        completion: @escaping @Sendable (_ result: Result<ImageBytes, ThumbnailError>, _ wasCached: Bool) -> Void
    ) {
        let key = CacheKey.original(source)
        if case .original(let bytes) = cache.value(forKey: key) {
            completion(.success(bytes), true)
            return
        }
        guard sourceFlights.join(key, { completion($0, false) }) else { return }
        counters.withLock { $0.fetches.started += 1 }
        fetcher.fetch(source) { [self] result in
            counters.withLock { counters in
                switch result {
                case .success(let bytes):
                    counters.fetches.succeeded += 1
                    counters.fetches.bytes += bytes.count
                case .failure(let error):
                    counters.fetches.failed[error.code, default: 0] += 1
                }
            }
            switch result {
            case .success: failures.forget(source)
            case .failure(let error): failures.remember(error, of: source)
            }
            if case .success(let bytes) = result {
                sourceFlights.storeUnlessStale(key) { cache.insert(.original(bytes), forKey: key) }
            }
            sourceFlights.complete(key, with: result)
        }
    }
}
