import Synchronization

/// The thumbnail pipeline: cache → coalescing → fetch (coalesced per source) → bounded workers
/// → cache. Callback-driven on purpose: the server thread, curl's I/O thread and the worker
/// threads hand work to each other directly, and nothing ever waits on Swift's cooperative pool.
public final class ThumbnailPipeline: Sendable {
    /// How a request was answered (for the log line and tests).
    public enum Outcome: String, Sendable {
        /// Served from the cache.
        case hit
        /// This request did the work.
        case miss
        /// Joined work another request had started.
        case coalesced
    }

    public struct Limits: Sendable {
        /// A source whose first page has more pixels than this is refused before decoding.
        public var maxSourcePixels: Int
        public init(maxSourcePixels: Int = 75_000_000) { self.maxSourcePixels = maxSourcePixels }
    }

    /// Counters for tests and, later, metrics.
    public struct Statistics: Sendable, Equatable {
        public var fetches = 0
        public var transforms = 0
    }

    public let cache: ImageCache
    public let workers: WorkerPool
    private let fetcher: any ImageFetching
    private let transformer: any ImageTransforming
    private let limits: Limits
    private let variantFlights = Flights<CachedImage>()
    private let sourceFlights = Flights<ImageBytes>()
    private let counters = Mutex(Statistics())

    public init(
        cache: ImageCache, workers: WorkerPool, fetcher: any ImageFetching, transformer: any ImageTransforming,
        limits: Limits = Limits()
    ) {
        self.cache = cache
        self.workers = workers
        self.fetcher = fetcher
        self.transformer = transformer
        self.limits = limits
    }

    public var statistics: Statistics { counters.withLock { $0 } }

    /// The hit path: a cached variant, or nil. Cheap, synchronous, no queue, no copy.
    public func cachedVariant(_ request: ThumbnailRequest) -> CachedImage? {
        guard let key = request.variantKey else { return nil }
        return cache.value(forKey: key)
    }

    /// Finds or makes the variant. `completion` runs once, on any thread.
    public func thumbnail(
        _ request: ThumbnailRequest, priority: WorkerPool.Priority = .interactive,
        completion: @escaping @Sendable (Result<CachedImage, ThumbnailError>, Outcome) -> Void
    ) {
        guard let spec = request.spec, let key = request.variantKey else {
            completion(.failure(ThumbnailError(.internal, "thumbnail without a spec")), .miss)
            return
        }
        if let hit = cache.value(forKey: key) {
            completion(.success(hit), .hit)
            return
        }
        let started = Atomic<Bool>(false)
        let leader = variantFlights.join(key) { result in
            completion(result, started.load(ordering: .acquiring) ? .miss : .coalesced)
        }
        guard leader else { return }
        started.store(true, ordering: .releasing)
        // A second look: the previous flight may have stored it between our lookup and join.
        if let hit = cache.peek(key) {
            variantFlights.complete(key, with: .success(hit))
            return
        }
        guard let ticket = workers.reserve(priority) else {
            variantFlights.complete(key, with: .failure(ThumbnailError(.queueFull, "worker queue full")))
            return
        }
        original(request.source) { [self] result in
            switch result {
            case .failure(let error):
                ticket.release()
                variantFlights.complete(key, with: .failure(error))
            case .success(let bytes):
                ticket.run { [self] in
                    let result = Result { () throws(ThumbnailError) -> CachedImage in
                        try render(bytes, spec: spec)
                    }
                    if case .success(let variant) = result { cache.insert(variant, forKey: key) }
                    return result
                } then: { [self] result in
                    variantFlights.complete(key, with: result)
                }
            }
        }
    }

    /// `POST /prefetch`: admits the work now (or throws `queueFull`), then loads the original —
    /// and the variant when the request has a spec — at background priority.
    public func prefetch(_ request: ThumbnailRequest) throws(ThumbnailError) {
        if request.spec != nil {
            if cachedVariant(request) != nil { return }
            // Checked here so the client hears "full" now, not never.
            guard let probe = workers.reserve(.background) else { throw ThumbnailError(.queueFull, "queue full") }
            probe.release()
            thumbnail(request, priority: .background) { _, _ in }
            return
        }
        if cache.peek(request.sourceKey) != nil { return }
        guard let ticket = workers.reserve(.background) else { throw ThumbnailError(.queueFull, "queue full") }
        original(request.source) { _ in ticket.release() }
    }

    /// The source's bytes: from the cache, or fetched once however many ask at the same time.
    private func original(
        _ source: SourceURL, completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void
    ) {
        let key = CacheKey.original(source)
        if let cached = cache.value(forKey: key) {
            completion(.success(cached.bytes))
            return
        }
        guard sourceFlights.join(key, completion) else { return }
        counters.withLock { $0.fetches += 1 }
        fetcher.fetch(source) { [self] result in
            if case .success(let bytes) = result {
                cache.insert(CachedImage(bytes: bytes, kind: .original, etag: ""), forKey: key)
            }
            sourceFlights.complete(key, with: result)
        }
    }

    /// Header check, then the transform. Runs on a worker thread.
    private func render(_ bytes: ImageBytes, spec: TransformSpec) throws(ThumbnailError) -> CachedImage {
        let info = try transformer.inspect(bytes)
        guard info.pixels <= limits.maxSourcePixels else {
            throw ThumbnailError(
                .tooManyPixels, "\(info.width)x\(info.height) is over the \(limits.maxSourcePixels)-pixel limit")
        }
        counters.withLock { $0.transforms += 1 }
        let image = try transformer.transform(bytes, info: info, spec: spec, format: spec.format.resolve(for: info))
        return CachedImage(bytes: image.bytes, kind: .variant(image.format, width: image.width, height: image.height))
    }
}
