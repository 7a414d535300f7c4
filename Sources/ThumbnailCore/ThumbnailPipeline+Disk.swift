public import DiskCache

/// The disk tier (`DiskTier`, when the service has a folder): what the memory cache keeps is also
/// written there, off the request path, and a memory miss that is on disk is answered from it —
/// after a restart too — with the same bytes and ETag, kept fresh, revalidated and purged exactly as
/// a memory entry is.
///
/// - Written: originals, variants and info documents of storable sources, when they are stored in
///   memory (never decoded copies, which are large and quick to remake from the original).
/// - Read: a variant (or info document) on a memory miss, once however many ask at the same time
///   (`diskReads`); an original inside the source's fetch job, before any fetch.
/// - A read entry joins the memory cache with the freshness record its source already has there
///   (one record per source, as when it was fetched); one whose validators disagree with that
///   record is another version of the source and is removed, not served.
extension ThumbnailPipeline {
    // MARK: Variants and info documents

    /// A memory miss of `key`: when the disk may have it, reads it (coalesced) and answers from it,
    /// or goes on as a miss (`miss`) when it is not usable. Returns false, having done nothing,
    /// when there is no disk tier or its index has no such entry.
    func answerFromDisk(
        _ key: CacheKey, miss: @escaping @Sendable () -> Void,
        found: @escaping @Sendable (Variant) -> Void
    ) -> Bool {
        // The index first: most misses are not on disk either, and that costs one digest.
        guard let disk, disk.mayHave(key) else { return false }
        // In place when the file is in the kernel's caches: no thread hop, no wait.
        if let (entry, generation) = disk.readNow(key),
            let variant = variant(from: entry, key, disk, readIn: generation)
        {
            found(variant)
            return true
        }
        let leader = diskReads.join(key) { result in
            switch result {
            case .success(let variant): found(variant)
            case .failure: miss()
            }
        }
        guard leader else { return true }
        let queued = disk.read(key) { [self] entry in
            let result: Result<Variant, ThumbnailError>
            if let entry, let variant = variant(from: entry, key, disk) {
                result = .success(variant)
            } else {
                result = .failure(ThumbnailError(.notCached))
            }
            diskReads.complete(key, with: result)
        }
        if !queued { diskReads.complete(key, with: .failure(ThumbnailError(.notCached))) }
        return true
    }

    /// The hit path's disk tier (a server's polling thread): the variant under `key` when it is on
    /// disk, fresh, and its file in the kernel's caches so that reading it cannot wait for the disk
    /// (`DiskTier.readNow`); stored in memory, so the next hit is a memory one. Nil otherwise — then
    /// `thumbnail` decides, and reads on a reader thread if need be.
    public func diskVariantNow(_ key: CacheKey) -> Variant? {
        // `readNow` looks in the index itself: one key text and one digest per disk hit.
        guard let disk, let (entry, generation) = disk.readNow(key) else { return nil }
        guard let variant = variant(from: entry, key, disk, readIn: generation) else { return nil }
        guard now() < variant.preparedValidUntil else { return nil }
        // The memory miss this answers: the hit path's lookup left it to the full path, which
        // this request does not take.
        cache.countMiss(key.kind)
        return variant
    }

    /// The variant a disk entry holds, stored in memory (unless a purge came meanwhile: read by a
    /// reader thread, its coalesced read is marked stale; read in place, `generation` has moved),
    /// or nil when the entry is not usable (then it is removed) or was read before a purge.
    private func variant(from entry: DiskEntry, _ key: CacheKey, _ disk: DiskTier, readIn generation: UInt64? = nil)
        -> Variant?
    {
        guard let record = DiskRecord(decoding: entry.meta.extra), record.kind != .original,
            !record.dependsOnAnimationLimits || record.animationTag == animationTag,
            let freshness = sharedFreshness(of: key.source, entry.meta)
        else {
            disk.countUnusable()
            disk.remove(key)
            return nil
        }
        let body = entry.body
        let bytes = ImageBytes(base: body.base, count: body.count, owner: body)
        var image: EncodedImage
        if let format = record.format {
            image = EncodedImage(
                bytes: bytes, format: format, width: record.width, height: record.height, frames: record.frames,
                firstFrameOnly: record.firstFrameOnly)
        } else {
            image = EncodedImage(
                document: bytes, mediaType: entry.meta.contentType, width: record.width, height: record.height)
        }
        let made = variant(image, record.fingerprint, freshness, at: now())
        var current = true
        diskReads.storeUnlessStale(key) {
            if let generation, !disk.noPurgeSince(generation) {
                current = false
            } else {
                cache.insert(.variant(made), forKey: key)
            }
        }
        guard current else { return nil }
        disk.countServed()
        return made
    }

    /// A variant read from disk, answered as a cached one is: fresh (`disk`), or stale (served
    /// while it is revalidated, revalidated first, or served because the origin failed).
    func answerRead(
        _ variant: Variant, _ source: SourceURL, _ product: Product, _ key: CacheKey, priority: WorkerPool.Priority,
        onlyIfCached: Bool, _ completion: @escaping @Sendable (Result<Variant, ThumbnailError>, Outcome) -> Void
    ) {
        guard variant.freshness.isFresh(at: now()) else {
            return answerStale(
                variant, source, product, key, priority: priority, onlyIfCached: onlyIfCached, completion)
        }
        completion(.success(variant), .disk)
    }

    // MARK: Originals

    /// Inside the fetch job of `source`'s original: its original from disk, when it is there,
    /// stored in memory — fresh or stale (the caller revalidates a stale one, as it would one
    /// found in memory); or nil. Calls back on a reader thread; false, having done nothing, when
    /// there is nothing to read.
    func readOriginal(_ source: SourceURL, completion: @escaping @Sendable (Original?) -> Void) -> Bool {
        let key = CacheKey.original(source)
        guard let disk, disk.mayHave(key) else { return false }
        return disk.read(key) { [self] entry in
            guard let entry else { return completion(nil) }
            guard DiskRecord(decoding: entry.meta.extra)?.kind == .original,
                let freshness = sharedFreshness(of: source, entry.meta)
            else {
                disk.countUnusable()
                disk.remove(key)
                return completion(nil)
            }
            let body = entry.body
            let original = Original(
                bytes: ImageBytes(base: body.base, count: body.count, owner: body), freshness: freshness)
            sourceFetches.storeUnlessStale(key) { cache.insert(.original(original.bytes, freshness), forKey: key) }
            disk.countServed()
            completion(original)
        }
    }

    // MARK: Freshness

    /// The freshness record of a disk entry of `source`: the one its source has in memory when
    /// there is one (so a revalidation renews every entry of the source at once), or a new one
    /// from the entry's expiry. Nil when the memory's record has other validators: the entry is
    /// of another version of the source.
    private func sharedFreshness(of source: SourceURL, _ meta: EntryMeta) -> SourceFreshness? {
        let validators = SourceValidators(etag: meta.etag, lastModified: meta.lastModified)
        if let existing = cache.firstValue(of: source, { Self.freshness(of: $0) }) {
            return existing.validators == validators ? existing : nil
        }
        let remaining = Duration.seconds(meta.expires - DiskTier.wallSeconds())
        return SourceFreshness(validators: validators, freshUntil: now().advanced(by: remaining))
    }

    static func freshness(of entry: Entry) -> SourceFreshness {
        switch entry {
        case .original(_, let freshness), .decoded(_, let freshness): freshness
        case .variant(let variant): variant.freshness
        }
    }

    /// The metadata a disk entry of `freshness` carries: its validators and its expiry on the wall
    /// clock.
    func diskMeta(_ freshness: SourceFreshness, contentType: String, record: DiskRecord) -> EntryMeta {
        EntryMeta(
            contentType: contentType, etag: freshness.validators.etag, lastModified: freshness.validators.lastModified,
            expires: DiskTier.wallSeconds() + Int64((freshness.freshUntil - now()).wholeSeconds), extra: record.encoded)
    }

    // MARK: Writing

    /// Queues a made variant (or info document) for the disk.
    func writeVariant(_ variant: Variant, _ key: CacheKey) {
        guard let disk, variant.freshness.isStorable else { return }
        let image = variant.image
        let record = DiskRecord(
            image, fingerprint: variant.fingerprint, kind: key.kind == .info ? .info : .variant,
            animationTag: animationTag)
        disk.write(
            key, meta: diskMeta(variant.freshness, contentType: image.mediaType, record: record), bytes: image.bytes)
    }

    /// Queues a fetched original for the disk.
    func writeOriginal(_ original: Original, of source: SourceURL) {
        guard let disk, original.freshness.isStorable else { return }
        let meta = diskMeta(original.freshness, contentType: "application/octet-stream", record: .original())
        disk.write(.original(source), meta: meta, bytes: original.bytes)
    }

    /// A revalidation renewed `freshness`: its disk entries run as long.
    func renewOnDisk(_ source: SourceURL, _ freshness: SourceFreshness) {
        disk?.renew(source, expires: DiskTier.wallSeconds() + Int64((freshness.freshUntil - now()).wholeSeconds))
    }

    /// The disk tier's counters, when there is one.
    public var diskMetrics: DiskTierMetrics? { disk?.metrics }
}
