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
        /// Thumbnails made (from the original or from a decoded copy).
        public var transforms = 0
        /// Sources decoded (after the header checks passed).
        public var decodes = 0
        /// Thumbnails cut from a cached decoded copy, with no decode.
        public var fromDecoded = 0
    }

    public let cache: ImageCache
    public let workers: WorkerPool
    private let fetcher: any ImageFetching
    private let renderer: ThumbnailRenderer
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
        self.renderer = ThumbnailRenderer(transformer: transformer, maxSourcePixels: limits.maxSourcePixels)
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
        let decodedKey = CacheKey.decoded(request.source)
        if let decoded = cache.value(forKey: decodedKey)?.decoded, decoded.canServe(spec) {
            // A new size of a recently decoded source: cut it from the copy, no fetch, no decode.
            ticket.run { [self] in
                counters.withLock {
                    $0.transforms += 1
                    $0.fromDecoded += 1
                }
                return store(
                    Result { () throws(ThumbnailError) in try renderer.render(decoded: decoded, spec: spec) }, key)
            } then: { [self] result in
                variantFlights.complete(key, with: result)
            }
            return
        }
        original(request.source) { [self] result in
            switch result {
            case .failure(let error):
                ticket.release()
                variantFlights.complete(key, with: .failure(error))
            case .success(let bytes):
                ticket.run { [self] in
                    let rendered = Result { () throws(ThumbnailError) in
                        try renderer.render(original: bytes, spec: spec)
                    }
                    if case .success(let made) = rendered {
                        counters.withLock {
                            $0.transforms += 1
                            $0.decodes += 1
                        }
                        keep(made.decoded, forKey: decodedKey)
                    }
                    return store(rendered.map(\.image), key)
                } then: { [self] result in
                    variantFlights.complete(key, with: result)
                }
            }
        }
    }

    /// Caches a made thumbnail under its variant key.
    private func store(_ result: Result<EncodedImage, ThumbnailError>, _ key: String) -> Result<
        CachedImage, ThumbnailError
    > {
        result.map { image in
            let variant = CachedImage(
                bytes: image.bytes, kind: .variant(image.format, width: image.width, height: image.height))
            cache.insert(variant, forKey: key)
            return variant
        }
    }

    /// Keeps a decoded copy unless the cache already has a larger one of the same source.
    private func keep(_ decoded: DecodedSource, forKey key: String) {
        if let existing = cache.peek(key)?.decoded, existing.width * existing.height >= decoded.width * decoded.height {
            return
        }
        cache.insert(CachedImage(bytes: decoded.pixels, kind: .decoded(decoded), etag: ""), forKey: key)
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
}
