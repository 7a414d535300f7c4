import Foundation
import Synchronization
import Testing

@testable import ThumbnailCore

@Suite struct ImageCacheTests {
    func image(_ size: Int) -> CachedImage {
        CachedImage(bytes: ImageBytes([UInt8](repeating: 7, count: size)), kind: .original, etag: "\"x\"")
    }

    @Test func evictsLeastRecentlyUsedFirst() {
        let cache = ImageCache(budget: 80_000)  // eight entries of the largest storable cost
        let size = cache.maxEntryCost - ImageCache.perEntryOverhead
        let keys = ["a", "b", "c", "d", "e", "f", "g", "h"]
        for key in keys { #expect(cache.insert(image(size), forKey: key)) }
        #expect(cache.statistics.evictions == 0)
        _ = cache.value(forKey: "a")  // a is now the most recent: b goes first
        cache.insert(image(size), forKey: "i")
        #expect(cache.peek("b") == nil)
        #expect(cache.peek("a") != nil)
        #expect(cache.peek("c") != nil)
        #expect(cache.peek("i") != nil)
        #expect(cache.statistics.evictions == 1)
        #expect(cache.statistics.bytes == 80_000)
    }

    @Test func entryOverTheFractionIsNotStored() {
        let cache = ImageCache(budget: 80_000)
        #expect(cache.maxEntryCost == 10_000)
        #expect(!cache.insert(image(10_000), forKey: "big"))
        #expect(cache.peek("big") == nil)
        #expect(cache.insert(image(9_000), forKey: "small"))
        #expect(cache.statistics.rejected == 1)
    }

    @Test func replacingAKeyKeepsTheAccountingRight() {
        let cache = ImageCache(budget: 1_000_000)
        cache.insert(image(5000), forKey: "k")
        cache.insert(image(3000), forKey: "k")
        #expect(cache.statistics.bytes == 3000 + ImageCache.perEntryOverhead)
        #expect(cache.statistics.count == 1)
        cache.removeValue(forKey: "k")
        #expect(cache.statistics.bytes == 0)
    }

    @Test func concurrentHammeringNeverExceedsTheBudget() async {
        let budget = 200_000
        let cache = ImageCache(budget: budget)
        let overBudget = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var seed = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<20_000 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let key = "k\(seed >> 54)"
                switch seed >> 62 {
                case 0: cache.insert(image(Int(seed >> 40 & 0x3FFF) + 1), forKey: key)
                case 1: cache.removeValue(forKey: key)
                default: _ = cache.value(forKey: key)
                }
                if cache.statistics.bytes > budget { overBudget.add(1, ordering: .relaxed) }
            }
        }
        let audit = cache.auditedBytes()
        #expect(overBudget.load(ordering: .relaxed) == 0)
        #expect(audit.listed == audit.counted)
        #expect(audit.nodes == cache.statistics.count)
        #expect(audit.counted <= budget)
        #expect(cache.statistics.evictions > 0)
    }

    @Test func etagsDependOnTheBytes() {
        let a = ETag.strong(for: ImageBytes([1, 2, 3]))
        #expect(a == ETag.strong(for: ImageBytes([1, 2, 3])))
        #expect(a != ETag.strong(for: ImageBytes([1, 2, 4])))
        #expect(a.hasPrefix("\"") && a.hasSuffix("\"") && a.count == 18)
        #expect(ETag.matches(ifNoneMatch: "\"zz\", \(a)", etag: a))
        #expect(ETag.matches(ifNoneMatch: "W/\(a)", etag: a))
        #expect(ETag.matches(ifNoneMatch: "*", etag: a))
        #expect(!ETag.matches(ifNoneMatch: "\"zz\"", etag: a))
    }
}
