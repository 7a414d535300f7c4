import HTTPServer
import ThumbnailCore

/// The framework routes: `/_next/image` (Next.js' optimizer), the weserv-style query at `/` (Nuxt
/// Image's `weserv` provider), `/_ipx/…` (its IPX shape) and `/_image` (Astro's endpoint). Each
/// turns its request into the `/thumb` request it stands for (the same checks, policy and cache
/// entry) and answers like `/thumb`, with the headers its framework expects.
extension Routes {
    func frontend(_ exchange: Exchange) {
        let request = exchange.request
        guard request.method == "GET" || request.method == "HEAD" else { return notAllowed(exchange, "GET, HEAD") }
        // Next.js' optimizer hardens its errors as its images: a problem page is not run either.
        let hardening = request.path == "/_next/image" ? HitResponses.nextImageHardening : []
        if signer != nil {
            // A framework's loader runs in the browser and cannot sign; a signed instance keeps
            // these routes closed rather than open a way around its signatures.
            return problem(
                exchange, 403, "Signed URLs only",
                "Signed URLs are on (--signing-keys): the framework routes, which carry no signature, are off.",
                error: "frontend-signed-only", extraHeaders: hardening)
        }
        let parsed: Parsed
        do {
            guard let found = try parseFrontend(request) else {
                return problem(exchange, 404, "Not found", "No such route. See openapi.yaml for the API.")
            }
            parsed = found
        } catch {
            return fail(exchange, error, extraHeaders: hardening)
        }
        var thumbnail = parsed.request
        let (style, filename) = (parsed.style, parsed.filename)
        if thumbnail.formatIsNegotiated {
            let format = AcceptNegotiation.preferredFormat(accept: request.header("accept"))
            thumbnail = thumbnail.choosingFormat(format)
            if let key = thumbnail.variantKey {
                // Its hits are answered on the polling thread, per outcome of `Accept`.
                parsedTargets.remember(request.target, flavour: Self.acceptFlavour(format), key: key)
            }
        }
        let onlyIfCached = Self.onlyIfCached(request.header("cache-control"))
        pipeline.thumbnail(thumbnail, onlyIfCached: onlyIfCached) { [self] result, outcome in
            switch result {
            case .success(let variant):
                let notModified = variant.prepared.isNotModified(ifNoneMatch: request.header("if-none-match"))
                var response = variant.prepared.answer(
                    notModified: notModified, cache: outcome.rawValue, variesOnAccept: false, style: style)
                // A thumbnail always has a format (only /info's document has none).
                if let filename, !notModified, let format = variant.image.format {
                    let name = "\(filename).\(WeservQuery.fileExtension(format))"
                    response.headers.append(("Content-Disposition", "inline; filename=\"\(name)\""))
                }
                reply(
                    exchange, response, cache: outcome.rawValue, bytes: notModified ? 0 : variant.image.bytes.count)
            case .failure(let error):
                fail(exchange, error, cache: outcome.rawValue, extraHeaders: hardening)
            }
        }
    }

    /// A framework route's request as `/thumb`'s, with how to answer it.
    struct Parsed {
        let request: ThumbnailRequest
        let style: HitResponses.Style
        /// weserv's `filename`, sanitised: the download's name.
        var filename: String? = nil
    }

    /// The request of the framework route at `request.path`; nil for a path under `/_ipx/` that
    /// only decodes to it (the source is read from the target as sent).
    private func parseFrontend(_ request: HTTPRequest) throws(ThumbnailError) -> Parsed? {
        switch request.path {
        case "/_next/image":
            return Parsed(request: try NextImageQuery.parse(request.query, frontends: frontends), style: .nextImage)
        case "/":
            let (thumbnail, filename) = try WeservQuery.parse(
                target: request.target, query: request.query, frontends: frontends)
            return Parsed(request: thumbnail, style: .plain, filename: filename)
        case "/_image":
            return Parsed(request: try AstroQuery.parse(request.query, frontends: frontends), style: .plain)
        default:
            guard request.target.hasPrefix(IPXPath.prefix) else { return nil }
            return Parsed(request: try IPXPath.parse(target: request.target, frontends: frontends), style: .plain)
        }
    }

    /// The quick answer of a `/_next/image` target seen before: its format follows `Accept`, so
    /// the target is remembered once per outcome, which is worked out first (in place, no
    /// allocation).
    func nextImageHit(_ head: RequestHead, start: ContinuousClock.Instant, isGet: Bool) -> HTTPPreparedResponse? {
        let format = head.withHeader("accept") { AcceptNegotiation.preferredFormat(acceptBytes: $0) }
        return keptHit(head, .nextImage, flavour: Self.acceptFlavour(format), start: start, isGet: isGet)
    }

    /// The `ParsedTargets` flavour of an `Accept` outcome (0 is a target without one).
    static func acceptFlavour(_ format: RequestedFormat) -> UInt8 {
        switch format {
        case .negotiated(let avif, let webp): (avif ? 1 : 0) + (webp ? 2 : 0)
        case .source: 4
        case .exactly(let other): 5 + UInt8(OutputFormat.allCases.firstIndex(of: other) ?? 0)
        }
    }
}
