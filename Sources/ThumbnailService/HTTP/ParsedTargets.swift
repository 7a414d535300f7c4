internal import Primitives
import ThumbnailCore

/// The request targets already parsed, each with the variant key it names: a repeated `/thumb?…`
/// (the same `<img src>` on every page view) skips parsing and key building on its way to the
/// cache. A key that depends on a header (`/_next/image`'s format, from `Accept`) is remembered
/// per `flavour`, the header's outcome, which the hit works out first (`format=auto` on `/thumb` is
/// not remembered). Bounded: emptied when full (re-filling is just parsing again).
///
/// With signed URLs only targets whose signature was checked are remembered, with their `exp`:
/// the signature of one exact target never changes (the keys are fixed for the process), so a
/// remembered target skips the HMAC, but its expiry is checked on every hit.
///
/// A target found in the cache also keeps, for up to `keptFor`, a weak reference to the hit
/// responses it was answered with (`Entry.kept`): the hits after it are served from that, without the
/// cache's lock and lookup, while the entry is still cached (`HitResponses.isCached`, cleared by
/// the cache when it evicts, purges or replaces the entry) and its prepared answer still true
/// (`preparedValidUntil`). Weak, so this table never holds a thumbnail the cache let go of: its
/// memory stays the cache's budget. Once `keptFor` has passed the next hit asks the cache again,
/// which renews the entry's place in the recency order (memcached likewise moves an item at most
/// once a minute): a hot thumbnail touches the cache once a second, not on every hit.
final class ParsedTargets: Sendable {
    /// A remembered target. A class, so that a lookup reads it in place: copying a value with a
    /// weak reference out of the table cost a weak-reference copy and destroy per hit. Its `kept`
    /// fields change only under the table's lock.
    final class Entry: @unchecked Sendable {
        let key: CacheKey
        let expires: Int?
        /// The responses it was last found with (weak), their body's size, and until when they
        /// may be served without asking the cache: the earlier of the prepared answer's own end and
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

    /// A target as remembered: its text and, for a key that depends on a header, that header's
    /// outcome (0 otherwise).
    struct Target: Hashable {
        let text: String
        let flavour: UInt8
    }

    private let table = Locked<[Target: Entry]>([:])
    let capacity: Int

    init(capacity: Int = 8192) { self.capacity = capacity }

    /// The kept responses of `target`, when they may still be served at `now`, with its `exp` and
    /// byte count; otherwise what is remembered of it (its key); nil when it is not remembered.
    func lookup(_ target: String, flavour: UInt8 = 0, now: ContinuousClock.Instant) -> Lookup? {
        table.withLock { table in
            guard let entry = table[Target(text: target, flavour: flavour)] else { return nil }
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
    func keep(
        _ target: String, flavour: UInt8 = 0, _ variant: CachedVariant<HitResponses>, now: ContinuousClock.Instant
    ) {
        let until = min(variant.preparedValidUntil, now + Self.keptFor)
        table.withLock { table in
            guard let entry = table[Target(text: target, flavour: flavour)] else { return }
            entry.kept = variant.prepared
            entry.keptBytes = variant.image.bytes.count
            entry.keptUntil = until
        }
    }

    func remember(_ target: String, flavour: UInt8 = 0, key: CacheKey, expires: Int? = nil) {
        guard target.utf8.count <= 2048 else { return }
        table.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[Target(text: target, flavour: flavour)] = Entry(key: key, expires: expires)
        }
    }
}
