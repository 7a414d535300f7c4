/// What the pipeline keeps under a `CacheKey`. `Decoded` is the image library's opaque decoded
/// copy (Core never looks inside it); `Prepared` is whatever the host makes from a variant once,
/// when it is stored (the HTTP layer's ready-made hit responses), so it lives and dies with the
/// entry, is never kept past eviction, and is charged with it (`PreparedAnswer`). Every entry
/// carries the freshness of the original it is (or was made from), shared by reference, so
/// renewing the original renews them all.
public enum CacheEntry<Decoded: Sendable, Prepared: PreparedAnswer>: CacheCosted {
    case original(ImageBytes, SourceFreshness)
    case decoded(DecodedSource<Decoded>, SourceFreshness)
    case variant(CachedVariant<Prepared>)

    public var payloadBytes: Int {
        switch self {
        case .original(let bytes, _): bytes.count
        case .decoded(let decoded, _): decoded.byteCount
        // The prepared answer shares the bytes; what it holds besides them is charged too.
        case .variant(let variant): variant.image.bytes.count + variant.prepared.residentBytes
        }
    }

    public func leftCache() {
        if case .variant(let variant) = self { variant.prepared.leftCache() }
    }
}

/// An encoded thumbnail as cached: the image, a fingerprint of its bytes, the host's prepared
/// form of it, and the freshness of the original it was made from.
///
/// The prepared answer promises downstream caches a lifetime (`Cache-Control: max-age` in the
/// service) fixed when it was prepared; `preparedValidUntil` is the last instant at which that
/// promise still ends before the original goes stale. Until then a hit serves it as is (one clock
/// read, no lock, no allocation); after it the pipeline prepares it again with a shorter promise.
public struct CachedVariant<Prepared: PreparedAnswer>: Sendable {
    public let image: EncodedImage
    /// 64-bit FNV-1a of the bytes: identical bytes, identical fingerprint, on every instance.
    public let fingerprint: UInt64
    public let prepared: Prepared
    public let freshness: SourceFreshness
    public let preparedValidUntil: ContinuousClock.Instant

    public init(
        image: EncodedImage, fingerprint: UInt64, prepared: Prepared, freshness: SourceFreshness,
        preparedValidUntil: ContinuousClock.Instant
    ) {
        self.image = image
        self.fingerprint = fingerprint
        self.prepared = prepared
        self.freshness = freshness
        self.preparedValidUntil = preparedValidUntil
    }

    /// FNV-1a of the bytes and their length. Not cryptographic: a validator, not a signature.
    public static func fingerprint(of bytes: ImageBytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBytes { buffer in
            for byte in buffer {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return hash ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
    }
}
