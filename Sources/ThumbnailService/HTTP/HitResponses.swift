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
///
/// `/_next/image` answers the same entry with more headers (`Style.nextImage`: `Vary: Accept`
/// and the hardening Next.js' optimizer sends). That pair is made on the entry's first such
/// quick answer, kept with it and charged to it, so an entry only `/thumb` asks for never carries it.
public final class HitResponses: PreparedAnswer {
    /// Which headers a route answers a cached thumbnail with.
    enum Style {
        /// `/thumb` and the other routes: the thumbnail's own headers.
        case plain
        /// `/_next/image`: plus `Vary: Accept`, `X-Content-Type-Options` and
        /// `Content-Security-Policy`, as Next.js' optimizer answers.
        case nextImage
    }

    /// A 200 and a 304 of one style.
    final class Pair: Sendable {
        let ok: HTTPPreparedResponse
        let notModified: HTTPPreparedResponse

        init(ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse) {
            self.ok = ok
            self.notModified = notModified
        }
    }

    let ok: HTTPPreparedResponse
    let notModified: HTTPPreparedResponse
    let etag: String
    private let mediaType: String
    private let cacheControl: String
    /// An animation made a still because of a limit: `X-Thumbd-First-Frame: <limit>` on every answer.
    private let firstFrameOnly: FirstFrameReason?
    /// True while the cache entry holding these is in the cache: a kept reference (`ParsedTargets`)
    /// may serve them only then. Cleared by the cache, under its lock, when the entry leaves.
    private let cached = Atomic<Bool>(true)
    /// The `.nextImage` pair once made (retained here, released in `deinit`); published with
    /// release/acquire, so a polling thread that loads it sees it whole.
    private let nextImagePair = Atomic<Unmanaged<Pair>?>(nil)

    var isCached: Bool { cached.load(ordering: .acquiring) }

    public func leftCache() { cached.store(false, ordering: .releasing) }

    init(_ image: EncodedImage, fingerprint: UInt64, cacheControl: String) {
        etag = ETag.strong(fingerprint: fingerprint)
        mediaType = image.mediaType
        self.cacheControl = cacheControl
        firstFrameOnly = image.firstFrameOnly
        let bytes = image.bytes
        // libmicrohttpd sends no 304 body but takes its Content-Length from it: the 200's, as RFC
        // 9110 allows, rather than a false 0.
        let body = HTTPBody.buffer(bytes.buffer, owner: bytes)
        let reason = image.firstFrameOnly
        ok = HTTPPreparedResponse(
            status: 200, headers: Self.headers(200, etag, mediaType, cacheControl, "hit", .plain, reason), body: body)
        notModified = HTTPPreparedResponse(
            status: 304, headers: Self.headers(304, etag, mediaType, cacheControl, "hit", .plain, reason), body: body)
    }

    deinit {
        nextImagePair.load(ordering: .acquiring)?.release()
    }

    /// The two responses and this object with its strings (128 B); the thumbnail's bytes are the
    /// entry's. 2,016 B for a 200 with four headers and a 304 with three, against 1,940 B measured
    /// (40,000 made in one process, RSS growth / count). Charged by the cache with the entry.
    ///
    /// The `.nextImage` pair is not in it: the charge must be the same for every preparation of a
    /// variant, and that pair exists only once `/_next/image` asked. Whoever makes it charges the
    /// entry for it then (`makeNextImagePair`, `ThumbnailPipeline.chargeGrowth`).
    public var residentBytes: Int { 128 + ok.residentBytes + notModified.residentBytes }

    /// The hit responses of a style; nil for `.nextImage` until `makeNextImagePair` made them.
    func pair(_ style: Style) -> (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse)? {
        switch style {
        case .plain: return (ok, notModified)
        case .nextImage:
            guard let pair = nextImagePair.load(ordering: .acquiring)?.takeUnretainedValue() else { return nil }
            return (pair.ok, pair.notModified)
        }
    }

    /// Makes the `.nextImage` pair unless it exists; returns the bytes it holds when this call
    /// made it (the caller charges them to the cache entry), 0 otherwise (a lost race releases
    /// its own copy).
    func makeNextImagePair() -> Int {
        if nextImagePair.load(ordering: .acquiring) != nil { return 0 }
        let pair = Pair(
            ok: HTTPPreparedResponse(
                status: 200,
                headers: Self.headers(200, etag, mediaType, cacheControl, "hit", .nextImage, firstFrameOnly),
                body: ok.body),
            notModified: HTTPPreparedResponse(
                status: 304,
                headers: Self.headers(304, etag, mediaType, cacheControl, "hit", .nextImage, firstFrameOnly),
                body: ok.body))
        let made = Unmanaged.passRetained(pair)
        let (exchanged, _) = nextImagePair.compareExchange(
            expected: nil, desired: made, ordering: .acquiringAndReleasing)
        guard exchanged else {
            made.release()
            return 0
        }
        // The pair object (16 B header, two references) as the allocator rounds it.
        return 48 + pair.ok.residentBytes + pair.notModified.residentBytes
    }

    /// Whether a request's `If-None-Match` matches this thumbnail.
    func isNotModified(ifNoneMatch: String?) -> Bool {
        ifNoneMatch.map { ETag.matches(ifNoneMatch: $0, etag: etag) } ?? false
    }

    /// The answer for a request that was not a plain hit (a miss, a coalesced wait, a negotiated
    /// format): the prepared response's status and body, with this request's `X-Cache` and `Vary`.
    func answer(notModified: Bool, cache: String, variesOnAccept: Bool, style: Style = .plain) -> HTTPResponse {
        let prepared = notModified ? self.notModified : ok
        var headers = Self.headers(prepared.status, etag, mediaType, cacheControl, cache, style, firstFrameOnly)
        if variesOnAccept && style == .plain { headers.append(("Vary", "Accept")) }
        return HTTPResponse(status: prepared.status, headers: headers, body: prepared.body)
    }

    /// A response of this thumbnail made for one request, with its own `X-Cache`: a hit the quick
    /// answer found on disk rather than in memory (`disk`), which the kept responses would call
    /// `hit`.
    func prepared(notModified: Bool, cache: String, style: Style) -> HTTPPreparedResponse {
        let base = notModified ? self.notModified : ok
        return HTTPPreparedResponse(
            status: base.status,
            headers: Self.headers(base.status, etag, mediaType, cacheControl, cache, style, firstFrameOnly),
            body: base.body)
    }

    /// What Next.js' optimizer sends with every image, to keep a browser from reading it as
    /// anything else (an SVG passed through would otherwise run scripts).
    static let nextImageHardening = [
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "script-src 'none'; frame-src 'none'; sandbox;"),
    ]

    private static func headers(
        _ status: Int, _ etag: String, _ mediaType: String, _ cacheControl: String, _ cache: String, _ style: Style,
        _ firstFrameOnly: FirstFrameReason?
    )
        -> [(String, String)]
    {
        var headers = [("ETag", etag), ("Cache-Control", cacheControl), ("X-Cache", cache)]
        // Said on the 304 as well: a cache refreshing its copy keeps the header with it.
        if let firstFrameOnly { headers.append(("X-Thumbd-First-Frame", firstFrameOnly.rawValue)) }
        if status != 304 { headers.insert(("Content-Type", mediaType), at: 0) }
        if style == .nextImage {
            headers.append(("Vary", "Accept"))
            if status != 304 { headers += nextImageHardening }
        }
        return headers
    }
}
