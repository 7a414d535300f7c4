import Foundation
import Synchronization
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

    @Test func concurrentHammeringNeverExceedsTheBudget() async {
        let budget = 200_000
        let cache = ImageCache<Blob>(budget: budget)
        let overBudget = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var seed = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<20_000 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let key = "k\(seed >> 54)"
                switch seed >> 62 {
                case 0: cache.insert(image(Int(seed >> 40 & 0x3FFF) + 1), forKey: key.key)
                case 1: cache.removeValue(forKey: key.key)
                default: _ = cache.value(forKey: key.key)
                }
                if cache.metrics.total.bytes > budget { overBudget.add(1, ordering: .relaxed) }
            }
        }
        let audit = cache.auditedBytes()
        #expect(overBudget.load(ordering: .relaxed) == 0)
        #expect(audit.listed == audit.counted)
        #expect(audit.nodes == cache.metrics.total.entries)
        #expect(audit.counted <= budget)
        #expect(cache.metrics.total.evictions > 0)
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

    @Test func fingerprintsDependOnTheBytes() {
        let a = CachedVariant<Void>.fingerprint(of: ImageBytes([1, 2, 3]))
        #expect(a == CachedVariant<Void>.fingerprint(of: ImageBytes([1, 2, 3])))
        #expect(a != CachedVariant<Void>.fingerprint(of: ImageBytes([1, 2, 4])))
        #expect(a != CachedVariant<Void>.fingerprint(of: ImageBytes([1, 2, 3, 0])))
    }
}
