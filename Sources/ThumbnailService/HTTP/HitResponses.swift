import HTTPServer
import Synchronization
import ThumbnailCore

/// The two answers a cached thumbnail ever gets on a hit — 200 with its bytes, 304 — built once,
/// on the worker that stored the variant, and kept in its cache entry (the pipeline's `Prepared`),
/// so a hit costs a lookup and a queue, not a response build, and they go when the entry goes.
/// They carry no per-request header (no `X-Request-Id`: the log line has the id).
///
/// The one place a thumbnail's 200 and 304 are built: a miss is answered with the same status,
/// headers and body (`answer`), plus its own `X-Cache` and `Vary`.
public final class HitResponses: PreparedForm {
    let ok: HTTPPreparedResponse
    let notModified: HTTPPreparedResponse
    let etag: String
    private let mediaType: String
    private let cacheControl: String
    /// True while the cache entry holding these is in the cache: a kept reference (`TargetMemo`)
    /// may serve them only then. Cleared by the cache, under its lock, when the entry leaves.
    private let cached = Atomic<Bool>(true)

    var isCached: Bool { cached.load(ordering: .acquiring) }

    public func leftCache() { cached.store(false, ordering: .releasing) }

    init(_ image: EncodedImage, fingerprint: UInt64, cacheControl: String) {
        etag = ETag.strong(fingerprint: fingerprint)
        mediaType = image.format.mediaType
        self.cacheControl = cacheControl
        let bytes = image.bytes
        // libmicrohttpd sends no 304 body but takes its Content-Length from it: the 200's, as RFC
        // 9110 allows, rather than a false 0.
        let body = HTTPBody.buffer(bytes.buffer, owner: bytes)
        ok = HTTPPreparedResponse(
            status: 200, headers: Self.headers(200, etag, mediaType, cacheControl, "hit"), body: body)
        notModified = HTTPPreparedResponse(
            status: 304, headers: Self.headers(304, etag, mediaType, cacheControl, "hit"), body: body)
    }

    /// The two responses and this object with its strings (128 B); the thumbnail's bytes are the
    /// entry's. 2,016 B for a 200 with four headers and a 304 with three, against 1,940 B measured
    /// (40,000 made in one process, RSS growth / count). Charged by the cache with the entry.
    public var residentBytes: Int { 128 + ok.residentBytes + notModified.residentBytes }

    /// Whether a request's `If-None-Match` matches this thumbnail.
    func isNotModified(ifNoneMatch: String?) -> Bool {
        ifNoneMatch.map { ETag.matches(ifNoneMatch: $0, etag: etag) } ?? false
    }

    /// The answer for a request that was not a plain hit (a miss, a coalesced wait, a negotiated
    /// format): the prepared response's status and body, with this request's `X-Cache` and `Vary`.
    func answer(notModified: Bool, cache: String, variesOnAccept: Bool) -> HTTPResponse {
        let prepared = notModified ? self.notModified : ok
        var headers = Self.headers(prepared.status, etag, mediaType, cacheControl, cache)
        if variesOnAccept { headers.append(("Vary", "Accept")) }
        return HTTPResponse(status: prepared.status, headers: headers, body: prepared.body)
    }

    private static func headers(
        _ status: Int, _ etag: String, _ mediaType: String, _ cacheControl: String, _ cache: String
    )
        -> [(String, String)]
    {
        let common = [("ETag", etag), ("Cache-Control", cacheControl), ("X-Cache", cache)]
        return status == 304 ? common : [("Content-Type", mediaType)] + common
    }
}

/// Request targets already parsed, mapped to their variant key: a repeated `/thumb?…` (the
/// same `<img src>` on every page view) skips parsing and key building on its way to the cache.
/// Only for requests whose key does not depend on headers (not `format=auto`). Bounded: emptied
/// when full (re-filling is just parsing again).
///
/// With signed URLs only targets whose signature was checked are remembered, with their `exp`:
/// the signature of one exact target never changes (the keys are fixed for the process), so a
/// remembered target skips the HMAC, but its expiry is checked on every hit.
///
/// A target found in the cache also keeps, for up to `keptFor`, a weak reference to the hit
/// responses it was answered with (`Entry.kept`): the hits after it are served from that, without the
/// cache's lock and lookup, while the entry is still cached (`HitResponses.isCached`, cleared by
/// the cache when it evicts, purges or replaces the entry) and its prepared form still true
/// (`preparedValidUntil`). Weak, so the memo never holds a thumbnail the cache let go of: its
/// memory stays the cache's budget. Once `keptFor` has passed the next hit asks the cache again,
/// which renews the entry's place in the recency order (memcached likewise moves an item at most
/// once a minute): a hot thumbnail touches the cache once a second, not on every hit.
final class TargetMemo: Sendable {
    /// A remembered target. A class, so that a lookup reads it in place: copying a value with a
    /// weak reference out of the table cost a weak-reference copy and destroy per hit. Its `kept`
    /// fields change only under the memo's lock.
    final class Entry: @unchecked Sendable {
        let key: CacheKey
        let expires: Int?
        /// The responses it was last found with (weak), their body's size, and until when they
        /// may be served without asking the cache: the earlier of the prepared form's own end and
        /// `keptFor` from when it was found.
        weak var kept: HitResponses?
        var keptBytes = 0
        var keptUntil: ContinuousClock.Instant?

        init(key: CacheKey, expires: Int?) {
            self.key = key
            self.expires = expires
        }
    }

    /// How long a hit may be served from a kept reference before the cache is asked again.
    static let keptFor = Duration.seconds(1)

    private let table = Mutex<[String: Entry]>([:])
    let capacity: Int

    init(capacity: Int = 8192) { self.capacity = capacity }

    /// The kept responses of `target`, when they may still be served at `now`, with its `exp` and
    /// byte count; otherwise what is remembered of it (its key); nil when it is not remembered.
    func lookup(_ target: String, now: ContinuousClock.Instant) -> Lookup? {
        table.withLock { table in
            guard let entry = table[target] else { return nil }
            if let until = entry.keptUntil, now < until, let responses = entry.kept, responses.isCached {
                return .kept(responses, bytes: entry.keptBytes, expires: entry.expires)
            }
            return .remembered(key: entry.key, expires: entry.expires)
        }
    }

    enum Lookup {
        case kept(HitResponses, bytes: Int, expires: Int?)
        case remembered(key: CacheKey, expires: Int?)
    }

    /// Keeps `variant`, found in the cache at `now` under `target`'s remembered key.
    func keep(_ target: String, _ variant: CachedVariant<HitResponses>, now: ContinuousClock.Instant) {
        let until = min(variant.preparedValidUntil, now + Self.keptFor)
        table.withLock { table in
            guard let entry = table[target] else { return }
            entry.kept = variant.prepared
            entry.keptBytes = variant.image.bytes.count
            entry.keptUntil = until
        }
    }

    func remember(_ target: String, key: CacheKey, expires: Int? = nil) {
        guard target.utf8.count <= 2048 else { return }
        table.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[target] = Entry(key: key, expires: expires)
        }
    }
}
