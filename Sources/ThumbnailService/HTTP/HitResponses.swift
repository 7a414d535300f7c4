import HTTPServer
import Synchronization
import ThumbnailCore

/// The two answers a cached thumbnail (or `/info` document) ever gets on a hit — 200 with its
/// bytes, 304 — built once, on the worker that stored the variant, and kept in its cache entry
/// (the pipeline's `Prepared`), so a hit costs a lookup and a queue, not a response build, and
/// they go when the entry goes.
/// They carry no per-request header (no `X-Request-Id`: the log line has the id).
///
/// The one place a thumbnail's 200 and 304 are built: a miss is answered with the same status,
/// headers and body (`answer`), plus its own `X-Cache` and `Vary`.
public final class HitResponses: PreparedAnswer {
    let ok: HTTPPreparedResponse
    let notModified: HTTPPreparedResponse
    let etag: String
    private let mediaType: String
    private let cacheControl: String
    /// True while the cache entry holding these is in the cache: a kept reference (`ParsedTargets`)
    /// may serve them only then. Cleared by the cache, under its lock, when the entry leaves.
    private let cached = Atomic<Bool>(true)

    var isCached: Bool { cached.load(ordering: .acquiring) }

    public func leftCache() { cached.store(false, ordering: .releasing) }

    init(_ image: EncodedImage, fingerprint: UInt64, cacheControl: String) {
        etag = ETag.strong(fingerprint: fingerprint)
        mediaType = image.mediaType
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
