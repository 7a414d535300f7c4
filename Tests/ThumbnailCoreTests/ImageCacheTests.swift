import Foundation
import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

/// A cache value of a given payload size.
struct Blob: CacheCosted {
    let payloadBytes: Int
}

extension String {
    /// A distinct original key per string (for tests).
    var key: CacheKey { .original(try! SourceURL(parsing: "http://cache.example/\(self)")) }
}

@Suite struct ImageCacheTests {
    func image(_ size: Int) -> Blob { Blob(payloadBytes: size) }

    @Test func evictsLeastRecentlyUsedFirst() {
        let cache = ImageCache<Blob>(budget: 80_000)  // eight entries of the largest storable cost
        let size = cache.maxEntryCost - ImageCache<Blob>.perEntryOverhead
        let keys = ["a", "b", "c", "d", "e", "f", "g", "h"]
        for key in keys { #expect(cache.insert(image(size), forKey: key.key)) }
        #expect(cache.metrics.total.evictions == 0)
        _ = cache.value(forKey: "a".key)  // a is now the most recent: b goes first
        cache.insert(image(size), forKey: "i".key)
        #expect(cache.peek("b".key) == nil)
        #expect(cache.peek("a".key) != nil)
        #expect(cache.peek("c".key) != nil)
        #expect(cache.peek("i".key) != nil)
        #expect(cache.metrics.total.evictions == 1)
        #expect(cache.metrics.total.bytes == 80_000)
    }

    /// The hit path's lookup counts its hits; its misses are counted by the full path's lookup that
    /// follows each of them, so a miss is one miss (the disk bench found two per miss).
    @Test func theHitPathsLookupCountsHitsOnly() {
        let cache = ImageCache<Blob>(budget: 80_000)
        cache.insert(image(100), forKey: "a".key)
        #expect(cache.valueCountingHit(forKey: "a".key) != nil)
        #expect(cache.valueCountingHit(forKey: "b".key) == nil)
        #expect(cache.metrics.total.hits == 1)
        #expect(cache.metrics.total.misses == 0)
        #expect(cache.value(forKey: "b".key) == nil)
        #expect(cache.metrics.total.misses == 1)
    }

    @Test func entryOverTheFractionIsNotStored() {
        let cache = ImageCache<Blob>(budget: 80_000)
        #expect(cache.maxEntryCost == 10_000)
        #expect(!cache.insert(image(10_000), forKey: "big".key))
        #expect(cache.peek("big".key) == nil)
        #expect(cache.insert(image(9_000), forKey: "small".key))
        #expect(cache.metrics.total.rejected == 1)
    }

    @Test func replacingAKeyKeepsTheAccountingRight() {
        let cache = ImageCache<Blob>(budget: 1_000_000)
        cache.insert(image(5000), forKey: "k".key)
        cache.insert(image(3000), forKey: "k".key)
        #expect(cache.metrics.total.bytes == 3000 + ImageCache<Blob>.perEntryOverhead)
        #expect(cache.metrics.total.entries == 1)
        cache.removeValue(forKey: "k".key)
        #expect(cache.metrics.total.bytes == 0)
    }

    /// A value that grows after it is stored (the service's second prepared pair) is charged for
    /// it: the total follows, room is made least recent first, and a replaced value's growth
    /// leaves with it.
    @Test func growthIsChargedAndEvictsToStayInBudget() {
        let overhead = ImageCache<Blob>.perEntryOverhead
        let cache = ImageCache<Blob>(budget: 80_000)
        let size = cache.maxEntryCost - overhead
        for key in ["a", "b", "c", "d", "e", "f", "g", "h"] { cache.insert(image(size), forKey: key.key) }
        #expect(cache.metrics.total.bytes == 80_000)
        #expect(!cache.charge(500, growthOf: "a".key) { $0.payloadBytes != size }, "not the current value")
        #expect(cache.metrics.total.bytes == 80_000)
        // "h" grows: the budget is full, so the least recent entry ("a") goes.
        #expect(cache.charge(500, growthOf: "h".key) { _ in true })
        #expect(cache.peek("a".key) == nil)
        #expect(cache.metrics.total.evictions == 1)
        #expect(cache.metrics.total.bytes == 7 * 10_000 + 500)
        var audit = cache.auditedBytes()
        #expect(audit.listed == audit.counted)
        // Replacing "h" with a value of its stored cost drops the growth.
        #expect(cache.replaceValue(image(size), forKey: "h".key) { _ in true })
        #expect(cache.metrics.total.bytes == 70_000)
        audit = cache.auditedBytes()
        #expect(audit.listed == audit.counted)
        // An entry that is the least recent and grows past what is left goes itself.
        let lone = ImageCache<Blob>(budget: 80_000)
        lone.insert(image(9_000), forKey: "x".key)
        #expect(!lone.charge(80_000, growthOf: "x".key) { _ in true })
        #expect(lone.peek("x".key) == nil && lone.metrics.total.bytes == 0)
    }

    @Test func concurrentHammeringNeverExceedsTheBudget() async {
        let budget = 200_000
        let cache = ImageCache<Blob>(budget: budget)
        // Threads of their own, not `concurrentPerform`, whose iterations would take every
        // thread of the cooperative pool, and so every other test of the run, while this lasts.
        let overBudget = await TestThreads.run(8, name: "hammer") { thread in
            var overBudget = 0
            var seed = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<20_000 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let key = "k\(seed >> 54)"
                switch seed >> 62 {
                case 0: cache.insert(image(Int(seed >> 40 & 0x3FFF) + 1), forKey: key.key)
                case 1: cache.removeValue(forKey: key.key)
                default: _ = cache.value(forKey: key.key)
                }
                if cache.metrics.total.bytes > budget { overBudget += 1 }
            }
            return overBudget
        }
        let audit = cache.auditedBytes()
        #expect(overBudget == Array(repeating: 0, count: 8))
        #expect(audit.listed == audit.counted)
        #expect(audit.nodes == cache.metrics.total.entries)
        #expect(audit.counted <= budget)
        #expect(cache.metrics.total.evictions > 0)
    }

    func variant(_ name: String, _ width: Int = 100) -> CacheKey {
        .variant(try! SourceURL(parsing: "http://cache.example/\(name)"), TransformSpec(width: width))
    }

    /// Scan resistance: thumbnails asked for again survive a burst of entries used once that is
    /// far larger than the whole budget; under plain LRU the burst would flush them.
    @Test func hotThumbnailsSurviveABurstOfNewSources() {
        let cache = ImageCache<Blob>(budget: 1_000_000)
        let hot = (0..<20).map { variant("hot-\($0)") }
        for key in hot { cache.insert(Blob(payloadBytes: 10_000), forKey: key) }
        for key in hot { _ = cache.value(forKey: key) }  // asked for again: protected
        #expect(hot.allSatisfy(cache.isProtected))
        // A crawl: 500 new originals of 100 kB and a thumbnail of each, each used once (50 MB).
        for index in 0..<500 {
            cache.insert(Blob(payloadBytes: 100_000), forKey: "crawl-\(index)".key)
            cache.insert(Blob(payloadBytes: 10_000), forKey: variant("crawl-\(index)"))
        }
        #expect(hot.allSatisfy { cache.peek($0) != nil })
        let audit = cache.auditedBytes()
        #expect(audit.listed == audit.counted && audit.counted <= 1_000_000)
        #expect(cache.metrics[.original].evictions > 400)
    }

    @Test func originalsAreNeverPromotedAndProtectedKeepsItsShare() {
        let cache = ImageCache<Blob>(budget: 1_000_000)
        cache.insert(Blob(payloadBytes: 50_000), forKey: "o".key)
        _ = cache.value(forKey: "o".key)
        _ = cache.value(forKey: "o".key)
        #expect(!cache.isProtected("o".key))
        // More hot variants than protected may hold: the least recent fall back to probation.
        let keys = (0..<100).map { variant("v\($0)") }
        for key in keys {
            cache.insert(Blob(payloadBytes: 9_000), forKey: key)
            _ = cache.value(forKey: key)
        }
        #expect(cache.isProtected(keys.last!))
        #expect(!cache.isProtected(keys.first!))
        #expect(cache.peek(keys.first!) != nil)  // demoted, not evicted: there is still room
        _ = cache.auditedBytes()  // checks protected ≤ its share, and every list sum
    }

    /// From 64 entries on, recency is kept to a quarter of the cache: a hit on an entry pushed
    /// within the last quarter of pushes leaves it in place; an older one still moves to the
    /// recent end and outlives everything it passed.
    @Test func aHitOnARecentEntryOfALargeCacheLeavesItInPlace() {
        let cost = 1000
        let cache = ImageCache<Blob>(budget: 100 * cost)
        let blob = Blob(payloadBytes: cost - ImageCache<Blob>.perEntryOverhead)
        let keys = (0..<100).map { "o\($0)".key }
        for key in keys { cache.insert(blob, forKey: key) }
        // o0 is the oldest: the hit moves it, so the next insert evicts o1 instead.
        _ = cache.value(forKey: keys[0])
        cache.insert(blob, forKey: "n0".key)
        #expect(cache.peek(keys[0]) != nil)
        #expect(cache.peek(keys[1]) == nil)
        // o90 went in 12 pushes ago (< 101 / 4): its hit moves nothing, so it is evicted right
        // after o2…o89, ahead of o91…o99 (had it moved, it would outlive all of those).
        _ = cache.value(forKey: keys[90])
        for index in 1...89 { cache.insert(blob, forKey: "n\(index)".key) }
        #expect(cache.peek(keys[89]) == nil)
        #expect(cache.peek(keys[90]) == nil)
        #expect(cache.peek(keys[91]) != nil)
        #expect(cache.peek(keys[0]) != nil)
        let audit = cache.auditedBytes()
        #expect(audit.listed == audit.counted && audit.nodes == 100)
    }

    @Test func countersAreKeptByKind() {
        let cache = ImageCache<Blob>(budget: 1_000_000)
        let source = try! SourceURL(parsing: "http://k.example/p.jpg")
        cache.insert(Blob(payloadBytes: 1000), forKey: .original(source))
        cache.insert(Blob(payloadBytes: 500), forKey: .variant(source, TransformSpec(width: 10)))
        _ = cache.value(forKey: .variant(source, TransformSpec(width: 10)))
        _ = cache.value(forKey: .variant(source, TransformSpec(width: 11)))
        _ = cache.value(forKey: .decoded(source))
        let metrics = cache.metrics
        #expect(metrics.budget == 1_000_000)
        #expect(metrics[.original].bytes == 1000 + ImageCache<Blob>.perEntryOverhead)
        #expect(metrics[.variant].entries == 1 && metrics[.variant].hits == 1 && metrics[.variant].misses == 1)
        #expect(metrics[.decoded].misses == 1 && metrics[.decoded].entries == 0)
        #expect(metrics.total.entries == 2)
    }

    /// A value with a name, to see which one a key holds.
    struct Tagged: CacheCosted {
        let payloadBytes: Int
        let tag: String
    }

    @Test func replacingAValueKeepsItsPlaceAndOnlyReplacesWhatIsThere() {
        let cache = ImageCache<Tagged>(budget: 80_000)
        let size = cache.maxEntryCost - ImageCache<Tagged>.perEntryOverhead
        for key in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            cache.insert(Tagged(payloadBytes: size, tag: key), forKey: key.key)
        }
        // "a" is the least recent; replacing it does not make it recent.
        #expect(cache.replaceValue(Tagged(payloadBytes: size, tag: "a2"), forKey: "a".key) { $0.tag == "a" })
        #expect(cache.peek("a".key)?.tag == "a2")
        #expect(!cache.replaceValue(Tagged(payloadBytes: size, tag: "a3"), forKey: "a".key) { $0.tag == "a" })
        #expect(!cache.replaceValue(Tagged(payloadBytes: size - 1, tag: "a3"), forKey: "a".key) { _ in true })
        #expect(!cache.replaceValue(Tagged(payloadBytes: size, tag: "z"), forKey: "z".key) { _ in true })
        #expect(cache.peek("z".key) == nil)
        cache.insert(Tagged(payloadBytes: size, tag: "i"), forKey: "i".key)
        #expect(cache.peek("a".key) == nil)  // evicted first, as before the replacement
        #expect(cache.peek("b".key) != nil)
        let audit = cache.auditedBytes()
        #expect(audit.listed == audit.counted)
    }

    /// Regression (LeakSanitizer): the recency lists link nodes both ways, so a cache dropped with
    /// entries in it leaked them all, payloads included.
    @Test func droppingTheCacheReleasesItsEntries() {
        let released = ReleaseCounter()
        do {
            let cache = ImageCache<TrackedBlob>(budget: 80_000)
            for key in ["a", "b", "c"] { cache.insert(TrackedBlob(released), forKey: key.key) }
            _ = cache.value(forKey: "a".key)
            _ = cache.value(forKey: "a".key)
            #expect(released.count == 0)
        }
        #expect(released.count == 3)
    }

    @Test func fingerprintsDependOnTheBytes() {
        let a = CachedVariant<String>.fingerprint(of: ImageBytes([1, 2, 3]))
        #expect(a == CachedVariant<String>.fingerprint(of: ImageBytes([1, 2, 3])))
        #expect(a != CachedVariant<String>.fingerprint(of: ImageBytes([1, 2, 4])))
        #expect(a != CachedVariant<String>.fingerprint(of: ImageBytes([1, 2, 3, 0])))
    }
}

/// A cache value that counts how often the cache said its entry left (`leftCache`).
final class DepartingBlob: CacheCosted, Sendable {
    let payloadBytes: Int
    private let departures = Locked(0)
    var left: Int { departures.withLock { $0 } }
    init(_ payloadBytes: Int) { self.payloadBytes = payloadBytes }
    func leftCache() { departures.withLock { $0 += 1 } }
}

extension ImageCacheTests {
    /// A host that serves from a reference it kept must learn that the entry is gone, whichever
    /// way it went: evicted, removed, replaced by an insert or in place, purged with its source.
    @Test func everyWayOutOfTheCacheTellsTheValueOnce() {
        let cache = ImageCache<DepartingBlob>(budget: 80_000)
        let size = cache.maxEntryCost - ImageCache<DepartingBlob>.perEntryOverhead
        let evicted = DepartingBlob(size)
        cache.insert(evicted, forKey: "evicted".key)
        let removed = DepartingBlob(size)
        cache.insert(removed, forKey: "removed".key)
        let overwritten = DepartingBlob(size)
        cache.insert(overwritten, forKey: "overwritten".key)
        let replaced = DepartingBlob(size)
        cache.insert(replaced, forKey: "replaced".key)
        let purged = DepartingBlob(size)
        let source = try! SourceURL(parsing: "http://cache.example/purged")
        cache.insert(purged, forKey: .original(source))
        let stays = DepartingBlob(size)
        cache.insert(stays, forKey: "stays".key)
        for blob in [evicted, removed, overwritten, replaced, purged, stays] { #expect(blob.left == 0) }

        cache.removeValue(forKey: "removed".key)
        cache.insert(DepartingBlob(size), forKey: "overwritten".key)
        #expect(cache.replaceValue(DepartingBlob(size), forKey: "replaced".key) { $0 === replaced })
        #expect(cache.removeAll(of: source).entries == 1)
        _ = cache.value(forKey: "stays".key)
        for filler in ["f1", "f2", "f3", "f4", "f5", "f6"] { cache.insert(DepartingBlob(size), forKey: filler.key) }
        #expect(cache.peek("evicted".key) == nil)
        for blob in [evicted, removed, overwritten, replaced, purged] { #expect(blob.left == 1) }
        #expect(cache.peek("stays".key) != nil)
        #expect(stays.left == 0)
    }

    @Test func hitsCountedOutsideTheLookupAreInTheMetrics() {
        let cache = ImageCache<Blob>(budget: 80_000)
        cache.insert(image(100), forKey: "a".key)
        _ = cache.value(forKey: "a".key)
        cache.countHit(.variant)
        cache.countHit(.variant)
        #expect(cache.metrics[.original].hits == 1)
        #expect(cache.metrics[.variant].hits == 2)
        #expect(cache.metrics.total.hits == 3)
    }
}

/// Counts the `TrackedBlob` values that went away.
final class ReleaseCounter: Sendable {
    private let value = Locked(0)
    var count: Int { value.withLock { $0 } }
    func increment() { value.withLock { $0 += 1 } }
}

/// A cache value that says when it is freed.
final class TrackedBlob: CacheCosted, Sendable {
    let payloadBytes = 1000
    let counter: ReleaseCounter
    init(_ counter: ReleaseCounter) { self.counter = counter }
    deinit { counter.increment() }
}
