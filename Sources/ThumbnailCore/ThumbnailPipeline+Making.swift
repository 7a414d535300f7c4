import Synchronization

/// Making a variant (or an info document: `Product`): one job per key however many ask
/// (`variantJobs`), a place in the worker pool, then the work on a worker — a cut from a cached
/// decoded copy, or a render from the original (`+Loading`). A job is charged its decode-memory
/// estimate against the work budget and starts when that fits; a job the pool gave up (queued or running too long) is answered with
/// its late failure instead of its result.
extension ThumbnailPipeline {
    /// The miss path: makes the product, a thumbnail from a cached decoded copy or the original, an
    /// info document from the original (fetched once however many ask). A stale original is
    /// revalidated first — in the background while within stale-while-revalidate, else before
    /// anything is made from it.
    func make(
        _ source: SourceURL, _ product: Product, _ key: CacheKey, priority: WorkerPool.Priority, allowStale: Bool,
        _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        if !allowStale, let freshness = cachedFreshness(of: source), !freshness.isFresh(at: now()) {
            guard revalidateBeforeMaking(source, product, key, priority: priority, freshness, completion) else {
                return
            }
        }
        let started = Atomic<Bool>(false)
        let leader = variantJobs.join(key) { result in
            completion(result, started.load(ordering: .acquiring) ? .miss : .coalesced)
        }
        guard leader else {
            counters.withLock { $0.coalesced += 1 }
            return
        }
        started.store(true, ordering: .releasing)
        // A second look: the previous job may have stored it between our lookup and join.
        if case .variant(let hit) = cache.peek(key) {
            variantJobs.complete(key, with: .success(hit))
            return
        }
        guard let ticket = workers.reserve(priority) else {
            variantJobs.complete(key, with: .failure(ThumbnailError(.queueFull, "worker queue full")))
            return
        }
        if case .thumbnail(let spec) = product, cutFromCopy(source, spec, key, ticket: ticket) { return }
        makeFromOriginal(source, product, key, ticket: ticket)
    }

    /// A new size of a recently decoded source: cut from its cached copy, no fetch, no decode.
    /// False, and nothing done, when no cached copy can serve `spec`.
    private func cutFromCopy(
        _ source: SourceURL, _ spec: TransformSpec, _ key: CacheKey, ticket: WorkerPool.Ticket
    ) -> Bool {
        guard case .decoded(let copy, let freshness) = cache.value(forKey: .decoded(source)),
            copy.canServe(spec), !renderer.animates(copy.source, spec)
        else { return false }
        ticket.run(costing: { [renderer] _ in renderer.cutEstimate(copy, spec: spec) }) { [self] deadline in
            storeVariant(
                render(\.fromCopy) { () throws(ThumbnailError) in
                    try renderer.render(decoded: copy, spec: spec, deadline: deadline)
                }, key, freshness)
        } orElse: { [self] late in
            .failure(lateFailure(late, source))
        } then: { [self] result in
            complete(key, source, with: result)
        }
        return true
    }

    /// The miss path from the original. When it must be fetched and its origin is at its limit,
    /// waits for a fetch slot without holding a place in the pool (another origin's request could
    /// use it), then takes a place again — or hears 503 then, as anyone arriving at that moment
    /// would.
    private func makeFromOriginal(_ source: SourceURL, _ product: Product, _ key: CacheKey, ticket: WorkerPool.Ticket) {
        let originalKey = CacheKey.original(source)
        // A fetch slot only for a fetch: not when the original is cached, on its way, or on disk.
        guard cache.peek(originalKey) == nil, !sourceFetches.isInFlight(originalKey), disk?.mayHave(originalKey) != true
        else {
            return loadOriginalAndRender(source, product, key, ticket: ticket, slot: nil)
        }
        if let slot = originSlots.tryAcquire(source.origin) {
            return loadOriginalAndRender(source, product, key, ticket: ticket, slot: slot)
        }
        let priority = ticket.priority
        ticket.release()
        originSlots.acquire(source.origin) { [self] slot in
            guard let slot else {
                return variantJobs.complete(key, with: .failure(slotTimeout(source.origin)))
            }
            guard let ticket = workers.reserve(priority) else {
                slot.release()
                return variantJobs.complete(key, with: .failure(ThumbnailError(.queueFull, "worker queue full")))
            }
            loadOriginalAndRender(source, product, key, ticket: ticket, slot: slot)
        }
    }

    /// Loads the original (cached, or fetched now with `slot` or one taken later), then runs the
    /// job that renders the variant from it.
    private func loadOriginalAndRender(
        _ source: SourceURL, _ product: Product, _ key: CacheKey, ticket: WorkerPool.Ticket, slot: OriginSlots.Slot?
    ) {
        loadOriginal(source, slot: slot, priority: ticket.priority) { [self] result, wasCached in
            switch result {
            case .failure(let error):
                ticket.release()
                variantJobs.complete(key, with: .failure(error))
            case .success(let original):
                // A fetched original is outside the cache budget until its job is done: it counts
                // against the work budget meanwhile (a cached one is in the cache's already).
                let held = workers.charge(wasCached ? 0 : original.bytes.count)
                ticket.run(costing: { [self] _ in estimate(original.bytes, product, keepingCopy: wasCached) }) {
                    [self] deadline in
                    defer { held.end() }
                    return renderFromOriginal(original, source, product, key, keepingCopy: wasCached, deadline)
                } orElse: { [self] late in
                    held.end()
                    return .failure(lateFailure(late, source))
                } then: { [self] result in
                    complete(key, source, with: result)
                }
            }
        }
    }

    /// The job, on a worker: the first size of a source is streamed from its original, nothing
    /// else kept; a further size (the original was cached: it was asked for before) also keeps a
    /// decoded copy, since the next sizes will be cut from it. An info document keeps nothing.
    private func renderFromOriginal(
        _ original: Original, _ source: SourceURL, _ product: Product, _ key: CacheKey, keepingCopy: Bool,
        _ deadline: JobDeadline
    ) -> Result<Variant, ThumbnailError> {
        let bytes = original.bytes
        let freshness = original.freshness
        if let refusal = memoryRefusal(bytes, product, keepingCopy: keepingCopy) {
            return .failure(countedFailure(refusal))
        }
        guard case .thumbnail(let spec) = product else {
            return storeVariant(
                render(\.infos) { () throws(ThumbnailError) in
                    try renderer.describe(original: bytes, deadline: deadline).document
                }, key, freshness)
        }
        guard keepingCopy else {
            return storeVariant(
                render(\.fromOriginal) { () throws(ThumbnailError) in
                    try renderer.render(original: bytes, spec: spec, deadline: deadline)
                }, key, freshness)
        }
        let made = Result { () throws(ThumbnailError) in
            try renderer.renderKeepingCopy(original: bytes, spec: spec, deadline: deadline)
        }
        if case .success(let (_, copy?)) = made {
            storeDecodedCopy(copy, freshness, of: source, madeFor: key)
        }
        let counter: WritableKeyPath<PipelineMetrics.Renders, Int> =
            (try? made.get().copy) != nil ? \.copiesMade : \.fromOriginal
        return storeVariant(render(counter) { () throws(ThumbnailError) in try made.get().image }, key, freshness)
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
        disk?.remove(.original(source))
    }

    /// Hands a job's result to its waiters, giving up on the source first if the work itself
    /// stopped at the deadline.
    private func complete(_ key: CacheKey, _ source: SourceURL, with result: Result<Variant, ThumbnailError>) {
        if case .failure(let error) = result, error.code == .processingTimeout { giveUp(on: source, error) }
        variantJobs.complete(key, with: result)
    }

    /// A job's decode memory, from the header (`DecodeMemory`): what the work budget charges it.
    /// An unreadable header costs nothing (the job fails at once); an estimate over the whole
    /// budget neither (the job is refused at once, `memoryRefusal`).
    private func estimate(_ bytes: ImageBytes, _ product: Product, keepingCopy: Bool) -> Int {
        guard let info = try? renderer.inspect(bytes) else { return 0 }
        let estimate = jobEstimate(info, product, keepingCopy: keepingCopy)
        return estimate > workers.workBudget ? 0 : estimate
    }

    private func jobEstimate(_ info: SourceInfo, _ product: Product, keepingCopy: Bool) -> Int {
        guard case .thumbnail(let spec) = product else { return renderer.describeEstimate(info) }
        let first = renderer.estimate(info, spec: spec)
        // An animation is always made from its original: no copy.
        guard keepingCopy, !renderer.animates(info, spec) else { return first }
        // A later size decodes the reusable copy and cuts from it, or streams as a first size does.
        let box = ThumbnailRenderer<Imaging>.copyBox(for: info)
        return max(first, renderer.copyEstimate(info) + box.width * box.height * max(1, info.bands))
    }

    /// `tooMuchMemory` when the job's estimate alone is over the work budget: refused before any
    /// decode (waiting could never make it fit).
    private func memoryRefusal(_ bytes: ImageBytes, _ product: Product, keepingCopy: Bool) -> ThumbnailError? {
        guard workers.workBudget < .max, let info = try? renderer.inspect(bytes) else { return nil }
        let estimate = jobEstimate(info, product, keepingCopy: keepingCopy)
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
}
