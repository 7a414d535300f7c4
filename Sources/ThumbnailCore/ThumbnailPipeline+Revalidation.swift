/// Keeping originals fresh: what a request does with a stale entry, and the one conditional fetch
/// per source that settles it.
extension ThumbnailPipeline {
    /// What a revalidation found.
    enum Revalidation: Sendable {
        /// Unchanged: the same freshness record now runs later, for everything made from it — and
        /// to `until`, any other record of the same validators (entries read from disk before
        /// their source had one record in memory).
        case renewed(until: ContinuousClock.Instant, validators: SourceValidators)
        /// Changed (or not to be kept): the old original and everything made from it are gone.
        case replaced
    }

    /// A stale variant: within stale-while-revalidate it is answered at once while a revalidation
    /// runs in the background; past it the request waits for the revalidation, then answers the
    /// renewed variant, a new one made from the changed source, the stale one (stale-if-error), or
    /// the error.
    func answerStale(
        _ cached: Variant, _ source: SourceURL, _ product: Product, _ key: CacheKey, priority: WorkerPool.Priority,
        onlyIfCached: Bool, _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        if mayServeWhileRevalidating(cached.freshness) {
            revalidate(source, cached.freshness) { _ in }
            return serveStale(cached, completion)
        }
        // Past the window only the origin can say whether the copy is still good.
        if onlyIfCached { return completion(.failure(ThumbnailError(.notCached)), .miss) }
        revalidate(source, cached.freshness) { [self] result in
            switch result {
            case .success(.renewed(let until, let validators)):
                if cached.freshness.validators == validators { cached.freshness.renew(until: until) }
                completion(.success(renewPromise(cached, key, at: now())), .revalidated)
            case .success(.replaced):
                // Everything made from the old bytes is gone: make it again from the new ones.
                make(source, product, key, priority: priority, allowStale: true, completion)
            case .failure(let error):
                if mayServeStale(cached.freshness, despite: error) {
                    serveStale(cached, completion)
                } else {
                    completion(.failure(error), .miss)
                }
            }
        }
    }

    /// A miss whose source's original (or decoded copy) is cached but stale. Returns true when
    /// the caller should go on making the variant now (within stale-while-revalidate, with a
    /// revalidation started); false when this takes over and goes on after the revalidation.
    func revalidateBeforeMaking(
        _ source: SourceURL, _ product: Product, _ key: CacheKey, priority: WorkerPool.Priority,
        _ freshness: SourceFreshness,
        _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) -> Bool {
        if mayServeWhileRevalidating(freshness) {
            revalidate(source, freshness) { _ in }
            return true
        }
        revalidate(source, freshness) { [self] result in
            switch result {
            case .success:
                // Renewed, or replaced by the new bytes: either way fresh now.
                make(source, product, key, priority: priority, allowStale: true, completion)
            case .failure(let error):
                guard mayServeStale(freshness, despite: error) else {
                    return completion(.failure(error), .miss)
                }
                make(source, product, key, priority: priority, allowStale: true) { [self] result, outcome in
                    if case .success = result { counters.withLock { $0.stale += 1 } }
                    completion(result, result.isSuccess ? .stale : outcome)
                }
            }
        }
        return false
    }

    /// Answers a stale variant as it is, prepared to promise nothing (it is past its freshness).
    private func serveStale(
        _ cached: Variant, _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        counters.withLock { $0.stale += 1 }
        completion(.success(variant(cached.image, cached.fingerprint, cached.freshness, at: now())), .stale)
    }

    /// Asks the origin whether `source` changed since `freshness` was recorded: one conditional
    /// fetch per source at a time, whoever asks. A failure the origin gave recently (negative
    /// caching) is answered without asking again, so a stale source of a down origin is not
    /// re-fetched on every request.
    func revalidate(
        _ source: SourceURL, _ freshness: SourceFreshness,
        completion: @escaping @Sendable (Result<Revalidation, ThumbnailError>) -> Void
    ) {
        if let failure = failures.failure(of: source) {
            counters.withLock { $0.fetches.remembered += 1 }
            return completion(.failure(failure))
        }
        let key = CacheKey.original(source)
        guard revalidations.join(key, completion) else { return }
        counters.withLock { $0.fetches.revalidations += 1 }
        fetchWithinOriginLimit(source, revalidating: freshness.validators, slot: nil, priority: .interactive) {
            [self] answer in
            revalidations.complete(key, with: settle(source, freshness, answer))
        }
    }

    /// Applies a revalidation's answer to the cache (on the fetcher's thread, before any waiter
    /// hears it).
    private func settle(
        _ source: SourceURL, _ freshness: SourceFreshness, _ answer: Result<FetchedSource, ThumbnailError>
    ) -> Result<Revalidation, ThumbnailError> {
        let now = now()
        switch answer {
        case .success(.notModified(let directives)):
            failures.forget(source)
            counters.withLock { $0.fetches.notModified += 1 }
            guard !directives.noStore else {
                replace(source, with: nil)
                return .success(.replaced)
            }
            return renewed(source, freshness, until: now.advanced(by: policy.lifetime(directives)))
        case .success(.modified(let bytes, let directives)):
            failures.forget(source)
            let key = CacheKey.original(source)
            // An origin that ignores conditions sends the same bytes again: that is "not modified".
            if !directives.noStore, case .original(let old, let current) = cache.peek(key), current === freshness,
                Self.same(old, bytes)
            {
                counters.withLock { $0.fetches.notModified += 1 }
                return renewed(source, freshness, until: now.advanced(by: policy.lifetime(directives)))
            }
            counters.withLock {
                $0.fetches.changed += 1
                $0.fetches.bytes += bytes.count
            }
            let renewed = policy.freshness(directives, at: now)
            replace(source, with: renewed.isStorable ? Original(bytes: bytes, freshness: renewed) : nil)
            return .success(.replaced)
        case .failure(let error):
            counters.withLock { $0.fetches.failed[error.code, default: 0] += 1 }
            failures.remember(error, of: source)
            // The origin's definite answer (404/410, too large, not an image, not allowed any more)
            // ends the source's life here; a transient failure leaves the stale copy for
            // stale-if-error.
            if !Self.isTransient(error) { replace(source, with: nil) }
            return .failure(error)
        }
    }

    /// The source has not changed: its record (and its disk entries) fresh until `until`.
    private func renewed(
        _ source: SourceURL, _ freshness: SourceFreshness, until: ContinuousClock.Instant
    ) -> Result<Revalidation, ThumbnailError> {
        freshness.renew(until: until)
        renewOnDisk(source, freshness)
        return .success(.renewed(until: freshness.freshUntil, validators: freshness.validators))
    }

    /// Whether a stale copy recorded with `freshness` is used at once while it is revalidated
    /// (within stale-while-revalidate).
    func mayServeWhileRevalidating(_ freshness: SourceFreshness) -> Bool {
        freshness.overdue(at: now()) <= policy.staleWhileRevalidate
    }

    /// Whether a stale copy recorded with `freshness` stands in for the origin's `error`: a
    /// transient failure, within stale-if-error.
    func mayServeStale(_ freshness: SourceFreshness, despite error: ThumbnailError) -> Bool {
        Self.isTransient(error) && freshness.overdue(at: now()) <= policy.staleIfError
    }

    /// Failures that say nothing about the source itself (the origin or the way to it is down,
    /// slow, or we are stopping): a stale copy may stand in for them.
    static func isTransient(_ error: ThumbnailError) -> Bool {
        [.originFailed, .originTimeout, .shuttingDown, .internal].contains(error.code)
    }

    private static func same(_ a: ImageBytes, _ b: ImageBytes) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
