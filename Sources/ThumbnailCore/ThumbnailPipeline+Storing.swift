internal import Primitives

/// Storing: a made variant with the host's prepared answer and the lifetime it promises downstream
/// caches, a reusable decoded copy, a fetched original. Whatever work stores was started before
/// it finished; a purge (or a revalidation that found the source changed) in between marks that
/// work stale, and then nothing of it is stored (`CoalescedWork.storeUnlessStale`). Nothing is
/// stored of a source its origin said not to keep (`SourceFreshness.isStorable`).
extension ThumbnailPipeline {
    /// Caches a made thumbnail under its variant key, with the host's prepared answer (unless its
    /// original is not to be kept).
    func storeVariant(
        _ result: Result<EncodedImage, ThumbnailError>, _ key: CacheKey, _ freshness: SourceFreshness
    ) -> Result<Variant, ThumbnailError> {
        result.map { image in
            let variant = variant(image, Variant.fingerprint(of: image.bytes), freshness, at: now())
            if freshness.isStorable {
                variantJobs.storeUnlessStale(key) {
                    cache.insert(.variant(variant), forKey: key)
                    writeVariant(variant, key)
                }
            }
            return variant
        }
    }

    /// A variant with its prepared answer, promising downstream caches at most the original's
    /// remaining freshness: 7/8 of it (capped by `maxPromisedLifetime`, in whole seconds), so the
    /// prepared answer stays true — and hits serve it untouched — for the last eighth at least, and
    /// is prepared again about log(remaining)/log(8/7) times per lifetime rather than per hit.
    func variant(
        _ image: EncodedImage, _ fingerprint: UInt64, _ freshness: SourceFreshness, at now: ContinuousClock.Instant
    ) -> Variant {
        let freshUntil = freshness.freshUntil
        let remaining = freshUntil - now
        var promise = Duration.zero
        if freshness.isStorable && remaining > .zero {
            promise = .seconds(min(maxPromisedLifetime, remaining - remaining / 8).wholeSeconds)
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

    /// Keeps a decoded copy of `source`, made by the job for `variantKey`, unless that job's
    /// job went stale, the cache already has a larger copy of the source, or the source is not
    /// to be kept.
    func storeDecodedCopy(
        _ copy: DecodedSource<Imaging.Decoded>, _ freshness: SourceFreshness, of source: SourceURL,
        madeFor variantKey: CacheKey
    ) {
        guard freshness.isStorable else { return }
        let key = CacheKey.decoded(source)
        variantJobs.storeUnlessStale(variantKey) {
            if case .decoded(let existing, _) = cache.peek(key),
                existing.width * existing.height >= copy.width * copy.height
            {
                return
            }
            cache.insert(.decoded(copy, freshness), forKey: key)
        }
    }

    /// Caches a fetched original, unless its fetch was marked stale or it is not to be kept.
    func storeOriginal(_ original: Original, of source: SourceURL) {
        guard original.freshness.isStorable else { return }
        let key = CacheKey.original(source)
        sourceFetches.storeUnlessStale(key) {
            cache.insert(.original(original.bytes, original.freshness), forKey: key)
            writeOriginal(original, of: source)
        }
    }

    /// Drops the source's original and everything made from it, and keeps work in progress for
    /// it from putting any of it back (as a purge does), on disk too; then stores `original`, if
    /// any. Skipped when a purge came first during the revalidation. Takes the locks in `purge`'s
    /// order.
    func replace(_ source: SourceURL, with original: Original?) {
        revalidations.storeUnlessStale(.original(source)) {
            variantJobs.markStale(source: source) {
                sourceFetches.markStale(source: source) {
                    diskReads.markStale(source: source) {
                        disk?.purge(source)
                        cache.removeAll(of: source)
                        if let original {
                            cache.insert(.original(original.bytes, original.freshness), forKey: .original(source))
                            writeOriginal(original, of: source)
                        }
                    }
                }
            }
        }
    }

    /// The freshness of what is cached of `source` to make variants from (its original, else its
    /// decoded copy; both share one record when both are there).
    func cachedFreshness(of source: SourceURL) -> SourceFreshness? {
        if case .original(_, let freshness) = cache.peek(.original(source)) { return freshness }
        if case .decoded(_, let freshness) = cache.peek(.decoded(source)) { return freshness }
        return nil
    }
}
