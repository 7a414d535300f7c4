import Crypto
import HTTPServer
internal import Primitives
import ThumbnailCore

/// Routes and answers requests. Runs on the HTTP server's polling threads, so it only parses,
/// looks up and answers; misses are handed to the pipeline and answered from whichever thread
/// finishes them.
final class Routes: Sendable {
    let pipeline: Pipeline
    let log: RequestLog
    let ids = RequestIDs()
    let parsedTargets = ParsedTargets()
    private let retryAfter: Int
    /// nil when signed URLs are off.
    let signer: URLSigner?
    private let policy: RequestPolicy
    /// What the framework routes (`/_next/image`, `/`, `/_ipx/`, `/_image`) allow and resolve against.
    let frontends: Frontends
    /// Unix seconds, for `exp`.
    private let now: @Sendable () -> Double
    /// `Bearer <token>` as the admin endpoints expect it; nil: they do not exist.
    private let adminAuthorization: [UInt8]?
    /// What `/readyz` answers.
    private let readiness: Readiness
    /// `/metrics`, and the counters every answer goes into.
    let metrics: MetricsPage
    let requestMetrics: RequestMetrics
    /// False when `/metrics` has its own listener (`--metrics-listen`): then it is 404 here.
    private let metricsOnMainPort: Bool

    init(
        pipeline: Pipeline, configuration: ServiceConfiguration, log: RequestLog, readiness: Readiness,
        metrics: MetricsPage, now: @escaping @Sendable () -> Double
    ) {
        self.now = now
        self.readiness = readiness
        self.metrics = metrics
        self.requestMetrics = metrics.requests
        self.metricsOnMainPort = configuration.server.metricsListen == nil
        self.adminAuthorization = configuration.access.adminToken.map { Array("Bearer \($0)".utf8) }
        self.pipeline = pipeline
        self.log = log
        self.retryAfter = configuration.server.retryAfter.wholeSeconds
        let access = configuration.access
        self.signer = access.signingKeys.isEmpty ? nil : URLSigner(keys: access.signingKeys)
        self.policy = RequestPolicy(
            allowedWidths: access.allowedWidths, allowedHeights: access.allowedHeights,
            allowedQualities: access.allowedQualities, snapWidths: access.snapWidths, signed: signer != nil)
        self.frontends = Frontends(configuration)
    }

    /// The routes, as the log names them (anything else is "other").
    static let routes: Set<String> = [
        "/thumb", "/prefetch", "/livez", "/healthz", "/readyz", "/cache", "/cache/stats", "/metrics", "/info",
        "/_next/image", "/", "/_ipx", "/_image",
    ]

    /// Everything a reply needs to be answered and logged.
    struct Exchange: Sendable {
        let request: HTTPRequest
        let responder: HTTPResponder
        let id: RequestID
        /// When it arrived (`ContinuousClock`).
        let start: ContinuousClock.Instant
        let route: String
    }

    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let start = ContinuousClock.now
        guard let exchange = accept(request, responder, start: start) else { return }
        switch request.path {
        case "/thumb":
            guard request.method == "GET" || request.method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
            thumb(exchange)
        case "/prefetch":
            guard request.method == "POST" else { return notAllowed(exchange, "POST") }
            prefetch(exchange)
        case "/info":
            guard request.method == "GET" || request.method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
            info(exchange)
        case "/livez", "/healthz":
            // Liveness: the process answers. `/healthz` is the older name, kept as an alias.
            guard request.method == "GET" || request.method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
            let body = Array("{\"status\":\"ok\"}".utf8)
            reply(
                exchange,
                HTTPResponse(
                    status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                    body: .bytes(body)), cache: "-")
        case "/readyz":
            guard request.method == "GET" || request.method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
            ready(exchange)
        case "/metrics" where metricsOnMainPort:
            serveMetrics(exchange)
        case "/cache", "/cache/stats":
            // Without an admin token these routes do not exist: a 404 that says why, not a 401,
            // which would send the caller looking for a token when there is none to find.
            guard adminAuthorization != nil else {
                return problem(
                    exchange, 404, "Admin routes disabled",
                    "The admin routes are off: start thumbd with --admin-token to turn them on.",
                    error: "admin-disabled")
            }
            admin(exchange)
        case "/_next/image", "/", "/_image":
            frontend(exchange)
        case let path where path.hasPrefix("/_ipx/"):
            frontend(exchange)
        default:
            problem(exchange, 404, "Not found", "No such route. See openapi.yaml for the API.")
        }
    }

    /// Readiness: 200 while serving; a 503 problem while starting and from the first termination
    /// signal on (the drain), so a balancer stops sending here before anything is refused. No
    /// `Retry-After`: this instance will not become ready again, the balancer should go elsewhere.
    /// Also 503 while fewer than half the workers are usable (the rest stuck in calls that never
    /// returned, past what the pool replaces): such an instance would hang most misses, so it
    /// should leave the rotation (and be restarted) even though `/livez` still answers.
    private func ready(_ exchange: Exchange) {
        switch readiness.current {
        case .ready:
            let workers = pipeline.metrics.workers
            guard !Readiness.tooFewWorkers(usable: workers.usable, of: workers.workers) else {
                return problem(
                    exchange, 503, "Not ready", "Too few image workers are usable; this instance needs a restart.",
                    error: "not-ready: \(workers.usable) of \(workers.workers) workers usable")
            }
            json(exchange, 200, "{\"status\":\"ready\"}")
        case .starting:
            problem(exchange, 503, "Not ready", "The service is starting.", error: "not-ready: starting")
        case .draining:
            problem(
                exchange, 503, "Not ready", "The service is draining before it stops; use another instance.",
                error: "not-ready: draining")
        }
    }

    /// The `--metrics-listen` listener: `/metrics` and nothing else.
    func handleMetricsListener(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard let exchange = accept(request, responder, start: .now) else { return }
        guard request.path == "/metrics" else {
            return problem(exchange, 404, "Not found", "This listener serves /metrics only.")
        }
        serveMetrics(exchange)
    }

    /// The exchange of a request that takes the full path, or nil when it was answered already
    /// (a body, or HTTP/1.1 without Host).
    private func accept(_ request: HTTPRequest, _ responder: HTTPResponder, start: ContinuousClock.Instant) -> Exchange?
    {
        let route =
            Self.routes.contains(request.path) ? request.path : request.path.hasPrefix("/_ipx/") ? "/_ipx" : "other"
        let exchange = Exchange(
            request: request, responder: responder, id: ids.next(incoming: request.header("x-request-id")),
            start: start,
            route: route)

        if request.hasBody {
            problem(exchange, 413, "Request body not accepted", "This service takes no request bodies.")
            return nil
        }
        if request.version == "HTTP/1.1" && request.header("host") == nil {
            // Not a request we can trust the rest of: answer and close, as the HTTP layer does.
            var response = ProblemResponse.http(
                400, title: "Missing Host", detail: "HTTP/1.1 requests must carry a Host header.",
                requestID: exchange.id.description)
            response.headers.append(("Connection", "close"))
            reply(exchange, response, cache: "-")
            return nil
        }
        return exchange
    }

    /// `GET /metrics`: the Prometheus text page, made now (a scrape a second costs a few hundred
    /// microseconds: the pipeline's snapshot, a table of atomics, a few procfs reads).
    private func serveMetrics(_ exchange: Exchange) {
        let method = exchange.request.method
        guard method == "GET" || method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
        reply(
            exchange,
            HTTPResponse(
                status: 200, headers: [("Content-Type", PrometheusText.contentType), ("Cache-Control", "no-store")],
                body: .bytes(Array(metrics.render().utf8))), cache: "-")
    }

    /// The hot path, the server's quick answer: a `/thumb` (or `/_next/image`) target seen before
    /// whose thumbnail is cached, answered with the entry's ready-made response on the polling
    /// thread, read from the head in place (no `HTTPRequest` is built for it). Anything else (first
    /// sight, miss, odd request) returns nil and reaches `handle`.
    func hitResponse(for head: RequestHead) -> HTTPPreparedResponse? {
        let start = ContinuousClock.now
        let isThumb = head.hasPath("/thumb")
        guard isThumb || head.hasPath("/_next/image") else { return nil }
        let isGet = head.hasMethod("GET")
        guard isGet || head.hasMethod("HEAD"), !head.isHTTP11 || head.hasHeader("host") else { return nil }
        if isThumb { return keptHit(head, .thumb, flavour: 0, start: start, isGet: isGet) }
        return nextImageHit(head, start: start, isGet: isGet)
    }

    /// The quick answer of a route: the kept (or cached) responses of a remembered target, of the
    /// route's style, counted and logged as a hit; nil when there are none.
    func keptHit(
        _ head: RequestHead, _ route: HitRoute, flavour: UInt8, start: ContinuousClock.Instant, isGet: Bool
    ) -> HTTPPreparedResponse? {
        let now = pipeline.clockNow
        let hit: HitResponses
        let bytes: Int
        var fromDisk = false
        switch parsedTargets.lookup(head.target, flavour: flavour, now: now) {
        case .kept(let responses, let size, let expires):
            guard !hasExpired(expires) else { return nil }
            pipeline.countKeptHit()
            (hit, bytes) = (responses, size)
        case .remembered(let key, let expires):
            guard !hasExpired(expires) else { return nil }
            // Not in memory: on disk, when reading it cannot wait (else the full path reads it on a
            // disk thread). In memory from now on.
            var found = pipeline.cachedVariant(key)
            if found == nil {
                found = pipeline.diskVariantNow(key)
                fromDisk = found != nil
            }
            guard let variant = found else { return nil }
            let prepared = variant.prepared
            if route.style == .nextImage {
                // Made here, where the key is at hand, and charged to the entry (a kept reference
                // only ever serves a pair made on this path).
                let grown = prepared.makeNextImagePair()
                if grown > 0 { pipeline.chargeGrowth(grown, of: key) { $0 === prepared } }
            }
            parsedTargets.keep(head.target, flavour: flavour, variant, now: now)
            (hit, bytes) = (prepared, variant.image.bytes.count)
        case nil:
            return nil
        }
        guard let pair = hit.pair(route.style) else { return nil }
        let notModified = hit.isNotModified(ifNoneMatch: head.header("if-none-match"))
        let prepared =
            fromDisk
            ? hit.prepared(notModified: notModified, cache: "disk", style: route.style)
            : notModified ? pair.notModified : pair.ok
        let method = isGet ? "GET" : "HEAD"
        // Counted and logged before it is sent, so a client that has its answer knows it was.
        let elapsed = Self.nanoseconds(since: start)
        requestMetrics.record(
            route: route.metricsIndex, method: method, status: prepared.status,
            outcome: fromDisk ? RequestMetrics.diskOutcome : RequestMetrics.hitOutcome, elapsedNanos: elapsed)
        log.record(
            .init(
                requestID: ids.next(incoming: head.header("x-request-id")), method: method, route: route.name,
                status: prepared.status, bytes: notModified || !isGet ? 0 : bytes,
                elapsedNanos: elapsed, cache: fromDisk ? "disk" : "hit", error: nil))
        return prepared
    }

    /// A route the quick answer serves: its log name, its metrics label and its headers.
    struct HitRoute {
        let name: String
        let metricsIndex: Int
        let style: HitResponses.Style

        static let thumb = HitRoute(name: "/thumb", metricsIndex: RequestMetrics.thumbRoute, style: .plain)
        static let nextImage = HitRoute(
            name: "/_next/image", metricsIndex: RequestMetrics.routeIndex("/_next/image"), style: .nextImage)
    }

    /// The checks every `/thumb`, `/prefetch` and `/info` passes before anything else, the cache included
    /// (so a forged URL learns nothing of what is cached): the signature, when signed URLs are on;
    /// the parameters under the size policy; `exp`; then `format=auto` settled from `Accept`.
    /// Answers and returns nil when a check fails.
    func admit(_ exchange: Exchange, requireSpec: Bool) -> ThumbnailRequest? {
        if let signer, !signer.isValid(exchange.request.target) {
            // The same answer whatever was wrong (missing, malformed, wrong key, altered target).
            requestMetrics.recordSignatureFailure(expired: false)
            problem(
                exchange, 403, "Invalid signature", "This URL is not signed for this service.",
                error: "signature-invalid")
            return nil
        }
        var request: ThumbnailRequest
        do {
            request = try RequestParser.parse(query: exchange.request.query, requireSpec: requireSpec, policy: policy)
        } catch {
            fail(exchange, error)
            return nil
        }
        if hasExpired(request.expires) {
            requestMetrics.recordSignatureFailure(expired: true)
            problem(exchange, 403, "URL expired", "This signed URL has expired.", error: "signature-expired")
            return nil
        }
        if request.formatIsNegotiated {
            request = request.choosingFormat(
                AcceptNegotiation.preferredFormat(accept: exchange.request.header("accept")))
        }
        return request
    }

    /// `DELETE /cache?url=URL` (purge a source) and `GET /cache/stats`, behind the bearer token.
    private func admin(_ exchange: Exchange) {
        let request = exchange.request
        let sent = request.header("authorization").map { Array($0.utf8) } ?? []
        guard let expected = adminAuthorization, HMACSHA256.constantTimeEquals(sent, expected) else {
            var response = ProblemResponse.http(
                401, title: "Unauthorized", detail: "This endpoint needs the admin bearer token.",
                requestID: exchange.id.description)
            response.headers.append(("WWW-Authenticate", "Bearer"))
            return reply(exchange, response, cache: "-", error: "admin-unauthorized")
        }
        if request.path == "/cache/stats" {
            guard request.method == "GET" || request.method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
            let metrics = pipeline.metrics
            return json(exchange, 200, AdminJSON.stats(metrics.cache, disk: metrics.disk))
        }
        guard request.method == "DELETE" else { return notAllowed(exchange, "DELETE") }
        let query = request.query
        guard query.count == 1, query[0].name == "url", let text = query[0].value, !text.isEmpty else {
            return fail(exchange, .invalid([.init(name: "url", reason: "is required, and alone")]))
        }
        let source: SourceURL
        do { source = try SourceURL(parsing: text) } catch { return fail(exchange, error) }
        // Answered once the disk's files are gone too (on the disk writer's thread), so that a
        // 200 means the source cannot be served from anywhere here.
        pipeline.purge(source) { [self] memory, disk in json(exchange, 200, AdminJSON.removal(memory, disk: disk)) }
    }

    private func json(_ exchange: Exchange, _ status: Int, _ body: String) {
        reply(
            exchange,
            HTTPResponse(
                status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                body: .bytes(Array(body.utf8))), cache: "-")
    }

    /// Whether a signed URL's `exp` (Unix seconds) has passed.
    func hasExpired(_ expires: Int?) -> Bool {
        guard let expires else { return false }
        return Double(expires) < now()
    }

    private func thumb(_ exchange: Exchange) {
        guard let request = admit(exchange, requireSpec: true) else { return }
        if !request.formatIsNegotiated, let key = request.variantKey {
            // Only targets that passed every check above are remembered (with their `exp`).
            parsedTargets.remember(exchange.request.target, key: key, expires: request.expires)
        }
        // One cache lookup: a hit is answered at once, on this thread, through the same completion.
        let onlyIfCached = Self.onlyIfCached(exchange.request.header("cache-control"))
        pipeline.thumbnail(request, onlyIfCached: onlyIfCached) { [self, request] result, outcome in
            switch result {
            case .success(let image): answer(exchange, request, image, outcome: outcome)
            case .failure(let error): fail(exchange, error, cache: outcome.rawValue)
            }
        }
    }

    private func prefetch(_ exchange: Exchange) {
        guard let request = admit(exchange, requireSpec: false) else { return }
        do {
            try pipeline.prefetch(request)
            let body = Array("{\"status\":\"accepted\"}".utf8)
            reply(
                exchange,
                HTTPResponse(
                    status: 202, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                    body: .bytes(body)), cache: "-")
        } catch {
            fail(exchange, error)
        }
    }

    /// 200 with the cached bytes (zero copy), or 304 when the client's copy is current.
    func answer(
        _ exchange: Exchange, _ request: ThumbnailRequest, _ variant: Pipeline.Variant, outcome: Pipeline.Outcome
    ) {
        let notModified = variant.prepared.isNotModified(ifNoneMatch: exchange.request.header("if-none-match"))
        let response = variant.prepared.answer(
            notModified: notModified, cache: outcome.rawValue, variesOnAccept: request.formatIsNegotiated)
        reply(exchange, response, cache: outcome.rawValue, bytes: notModified ? 0 : variant.image.bytes.count)
    }

    /// `extraHeaders`: what a route adds to every answer (`/_next/image`'s hardening).
    func fail(
        _ exchange: Exchange, _ error: ThumbnailError, cache: String = "-", extraHeaders: [(String, String)] = []
    ) {
        var response = ProblemResponse.make(error, requestID: exchange.id.description, retryAfter: retryAfter)
        response.headers += extraHeaders
        reply(exchange, response, cache: cache, error: error.description)
    }

    func problem(
        _ exchange: Exchange, _ status: Int, _ title: String, _ detail: String, error: String? = nil,
        extraHeaders: [(String, String)] = []
    ) {
        var response = ProblemResponse.http(status, title: title, detail: detail, requestID: exchange.id.description)
        response.headers += extraHeaders
        reply(exchange, response, cache: "-", error: error)
    }

    func notAllowed(_ exchange: Exchange, _ allow: String) {
        let response = ProblemResponse.http(
            405, title: "Method not allowed", detail: "This route answers \(allow).",
            requestID: exchange.id.description,
            allow: allow)
        reply(exchange, response, cache: "-")
    }

    func reply(
        _ exchange: Exchange, _ response: HTTPResponse, cache: String, bytes: Int? = nil, error: String? = nil
    ) {
        var response = response
        response.headers.append(("X-Request-Id", exchange.id.description))
        let size: Int
        switch response.body {
        case .empty: size = 0
        case .bytes(let body): size = body.count
        case .buffer(let buffer, _): size = buffer.count
        }
        let elapsed = Self.nanoseconds(since: exchange.start)
        requestMetrics.record(
            route: RequestMetrics.routeIndex(exchange.route), method: exchange.request.method, status: response.status,
            outcome: RequestMetrics.outcomeIndex(cache), elapsedNanos: elapsed)
        exchange.responder.respond(response)
        log.record(
            .init(
                requestID: exchange.id, method: exchange.request.method, route: exchange.route, status: response.status,
                bytes: exchange.request.method == "HEAD" ? 0 : (bytes ?? size), elapsedNanos: elapsed,
                cache: cache,
                error: error))
    }

    /// What a request's log line and duration metric count: its arrival to now, in nanoseconds.
    static func nanoseconds(since start: ContinuousClock.Instant) -> UInt64 {
        UInt64(clamping: (ContinuousClock.now - start).nanoseconds)
    }

    /// `Cache-Control: only-if-cached` (RFC 9111 §5.2.1.7): answer from the cache or not at all.
    static func onlyIfCached(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { $0.trimmingSpacesLowercased() == "only-if-cached" }
    }
}

extension Substring {
    func trimmingSpacesLowercased() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
            .lowercased()
    }
}
