/// Loading a source: its original from the cache, or fetched once however many ask at the same
/// time (`sourceFetches`), holding one of its origin's fetch slots (`originSlots`) and a charge of
/// the work budget while the fetch runs. A fetch's failure is remembered for `--error-ttl`
/// (`failures`), and a fetched original is cached with the freshness its origin gave it.
extension ThumbnailPipeline {
    /// A fetched original and its freshness.
    struct Original: Sendable {
        let bytes: ImageBytes
        let freshness: SourceFreshness
    }

    /// The source's bytes: from the cache (`wasCached`), or fetched once however many ask at the
    /// same time (with `slot`, a fetch slot of its origin the caller took; given back when unused).
    func loadOriginal(
        _ source: SourceURL, slot: OriginSlots.Slot?, priority: WorkerPool.Priority,
        completion: @escaping @Sendable (_ result: Result<Original, ThumbnailError>, _ wasCached: Bool) -> Void
    ) {
        let key = CacheKey.original(source)
        if case .original(let bytes, let freshness) = cache.value(forKey: key) {
            slot?.release()
            completion(.success(Original(bytes: bytes, freshness: freshness)), true)
            return
        }
        guard sourceFetches.join(key, { completion($0, false) }) else {
            slot?.release()
            return
        }
        // Written to disk before (a restart since, or evicted from memory): no fetch, or only a
        // conditional one when it is stale.
        let onDisk = readOriginal(source) { [self] original in
            guard let original else { return fetchOriginal(source, slot: slot, priority: priority) }
            slot?.release()
            guard original.freshness.isFresh(at: now()) else {
                return revalidateRead(original, of: source, priority: priority)
            }
            sourceFetches.complete(key, with: .success(original))
        }
        if !onDisk { fetchOriginal(source, slot: slot, priority: priority) }
    }

    /// A stale original read from disk (in memory now, stale), settled as a stale original found
    /// in memory is: used at once within stale-while-revalidate while the origin is asked;
    /// past it, the origin is asked first (`revalidate`: one conditional fetch, whoever asks).
    /// Not modified: the same bytes, renewed (on disk too). Changed: the new bytes, and
    /// everything made from the old ones gone. A transient failure within stale-if-error: the
    /// stale bytes. Otherwise the error.
    private func revalidateRead(_ original: Original, of source: SourceURL, priority: WorkerPool.Priority) {
        let key = CacheKey.original(source)
        let freshness = original.freshness
        if mayServeWhileRevalidating(freshness) {
            revalidate(source, freshness) { _ in }
            return sourceFetches.complete(key, with: .success(original))
        }
        revalidate(source, freshness) { [self] result in
            switch result {
            case .success(.renewed(let until, let validators)):
                // A revalidation begun for another record of the source may have answered.
                if freshness.validators == validators { freshness.renew(until: until) }
                sourceFetches.complete(key, with: .success(original))
            case .success(.replaced):
                // The new bytes are in memory, unless the origin now says not to keep them: then
                // this job fetches them for itself.
                guard case .original(let bytes, let renewed) = cache.peek(key) else {
                    return fetchOriginal(source, slot: nil, priority: priority)
                }
                sourceFetches.complete(key, with: .success(Original(bytes: bytes, freshness: renewed)))
            case .failure(let error):
                guard mayServeStale(freshness, despite: error) else {
                    return sourceFetches.complete(key, with: .failure(error))
                }
                sourceFetches.complete(key, with: .success(original))
            }
        }
    }

    /// The fetch job of `source`'s original (begun by `loadOriginal`): fetched, stored, handed to
    /// every waiter.
    private func fetchOriginal(_ source: SourceURL, slot: OriginSlots.Slot?, priority: WorkerPool.Priority) {
        let key = CacheKey.original(source)
        counters.withLock { $0.fetches.started += 1 }
        fetchWithinOriginLimit(source, revalidating: nil, slot: slot, priority: priority) { [self] answer in
            let result = fetchedOriginal(answer, of: source)
            if case .success(let original) = result { storeOriginal(original, of: source) }
            sourceFetches.complete(key, with: result)
        }
    }

    /// What an unconditional fetch brought, counted, and its failure remembered (or an earlier
    /// one forgotten).
    private func fetchedOriginal(
        _ answer: Result<FetchedSource, ThumbnailError>, of source: SourceURL
    ) -> Result<Original, ThumbnailError> {
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
        return result
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
        if let slot {
            return fetchWhenRoom(source, revalidating: validators, slot: slot, priority: priority, completion)
        }
        originSlots.acquire(source.origin) { [self] slot in
            guard let slot else {
                return completion(.failure(slotTimeout(source.origin)))
            }
            fetchWhenRoom(source, revalidating: validators, slot: slot, priority: priority, completion)
        }
    }

    /// Holding `slot`: waits for room in the work budget, then fetches with what is left of the
    /// slot's deadline — or, when waiting spent it, answers without fetching.
    private func fetchWhenRoom(
        _ source: SourceURL, revalidating validators: SourceValidators?, slot: OriginSlots.Slot,
        priority: WorkerPool.Priority, _ completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
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
                fetchDurations.record(since: started)
                slot.release()
                completion(answer)
                charge.end()
            }
        }
    }

    /// No fetch slot of `origin` came free in time. When fetches waited for working memory during
    /// that wait (some still do, or one stopped waiting since it began: a slot wait lasts the
    /// fetch timeout), the slots were most likely held by them — the service is busy, not the
    /// origin slow: 503, not 504.
    func slotTimeout(_ origin: OriginKey) -> ThumbnailError {
        let since = now() - fetchTimeout
        let recentRoomWait = counters.withLock { $0.lastRoomWaitEnded.map { $0 >= since } ?? false }
        if recentRoomWait || workers.statistics.waitingForRoom > 0 {
            counters.withLock { $0.renders.noRoomInTime += 1 }
            return ThumbnailError(.queueFull, "no fetch slot of \(origin) in time: fetches wait for working memory")
        }
        return ThumbnailError(.originTimeout, "no fetch slot of \(origin) in time")
    }
}
