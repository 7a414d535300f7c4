/// What a pipeline job makes from a source's original, each under a key of its own: a thumbnail
/// (`/thumb`: a variant per spec) or the source's info document (`/info`: one per source). Both
/// are made on the workers, coalesced, cached, kept fresh, revalidated and purged alike.
enum Product: Sendable, Hashable {
    case thumbnail(TransformSpec)
    case info

    func key(of source: SourceURL) -> CacheKey {
        switch self {
        case .thumbnail(let spec): .variant(source, spec)
        case .info: .info(source)
        }
    }
}
