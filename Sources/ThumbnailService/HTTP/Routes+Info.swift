import HTTPServer
import ThumbnailCore

/// `GET|HEAD /info?url=`: what a source is (displayed size, format, alpha, frames, orientation,
/// bytes) and its placeholders (dominant colour, BlurHash, ThumbHash, a tiny WebP `data:` URI),
/// as JSON. Admitted as `/thumb` is (the signature over this target, the source policy, `exp`),
/// made on the workers from the cached or fetched original, cached beside the source's variants
/// and answered as a thumbnail is: ETag and 304, Cache-Control, X-Cache, `only-if-cached`.
extension Routes {
    /// The /thumb parameters that shape an output, which /info has none of: refused by name, not
    /// ignored, so that one answer never has two spellings.
    static let outputParameters = Set(
        RequestParameter.all.filter { $0.key != .source && $0.key != .never }.map(\.name))

    func info(_ exchange: Exchange) {
        // Before `admit`, whose parser would ask for `w` once any of them is given. A refusal by
        // name tells a forger nothing of the cache, so it may come before the signature check.
        let output = Set(exchange.request.query.map { $0.name }.filter { Self.outputParameters.contains($0) })
        guard output.isEmpty else {
            return fail(exchange, .invalid(output.sorted().map { .init(name: $0, reason: "is not taken by /info") }))
        }
        guard let request = admit(exchange, requireSpec: false) else { return }
        let onlyIfCached = Self.onlyIfCached(exchange.request.header("cache-control"))
        pipeline.info(request.source, onlyIfCached: onlyIfCached) { [self, request] result, outcome in
            switch result {
            case .success(let document): answer(exchange, request, document, outcome: outcome)
            case .failure(let error): fail(exchange, error, cache: outcome.rawValue)
            }
        }
    }
}
