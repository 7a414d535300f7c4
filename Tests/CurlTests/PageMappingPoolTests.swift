import Testing

@testable import Curl

/// Freed bodies' mappings are reused by the next body, within the pool's bounds, and let go of
/// when nothing takes them. Each test has a pool of its own (the shared one is process-wide).
@Suite struct PageMappingPoolTests {
    private func pattern(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 131 &+ 7) }
    }

    /// A body of `count` bytes with a declared length, filled, from `pool`.
    private func body(_ count: Int, seed: Int, pool: PageMappingPool) -> CurlBody {
        let body = CurlBody(pool: pool)
        body.reserve(count, limit: 64 << 20)
        let data = pattern(count, seed: seed)
        #expect(data.withUnsafeBytes { body.append($0.baseAddress, $0.count, limit: 64 << 20) })
        body.shrinkToFit()
        return body
    }

    @Test func aFreedBodysPagesCarryTheNextSmallerBody() {
        let pool = PageMappingPool(capacityBytes: 8 << 20, maxMappings: 4)
        var first: CurlBody? = body(1 << 20, seed: 1, pool: pool)
        let address = first?.pointer
        first = nil
        #expect(pool.idleBytes == 1 << 20)
        let second = body(600_000, seed: 2, pool: pool)
        #expect(second.pointer == address, "the idle mapping is reused")
        #expect(pool.idleBytes == 0, "its tail beyond the new size is unmapped, not kept")
        #expect(second.withUnsafeBytes { Array($0) } == pattern(600_000, seed: 2))
        #expect(second.count == 600_000)
    }

    @Test func aLargerBodyGetsNewPagesAndTheIdleMappingStays() {
        let pool = PageMappingPool(capacityBytes: 8 << 20, maxMappings: 4)
        var first: CurlBody? = body(300_000, seed: 1, pool: pool)
        let address = first?.pointer
        first = nil
        let idle = pool.idleBytes
        #expect(idle >= 300_000)
        let second = body(2 << 20, seed: 3, pool: pool)
        #expect(second.pointer != address)
        #expect(pool.idleBytes == idle)
        #expect(second.withUnsafeBytes { Array($0) } == pattern(2 << 20, seed: 3))
    }

    @Test func idleBytesAndMappingsStayWithinTheBounds() {
        let pool = PageMappingPool(capacityBytes: 3 << 20, maxMappings: 2)
        var bodies: [CurlBody] = (0..<5).map { body(1 << 20, seed: $0, pool: pool) }
        bodies.removeAll()
        #expect(pool.idleBytes == 2 << 20, "two mappings at most, though three megabytes would fit")
        let tooLarge = PageMappingPool(capacityBytes: 1 << 20, maxMappings: 4)
        var large: CurlBody? = body(2 << 20, seed: 9, pool: tooLarge)
        #expect(large?.count == 2 << 20)
        large = nil
        #expect(tooLarge.idleBytes == 0, "a mapping larger than the whole pool is unmapped at once")
    }

    @Test func mappingsNobodyTookAreReleasedOnTheSecondCall() {
        let pool = PageMappingPool(capacityBytes: 8 << 20, maxMappings: 4)
        var first: CurlBody? = body(1 << 20, seed: 1, pool: pool)
        first = nil
        pool.releaseIdle()
        #expect(pool.idleBytes == 1 << 20, "one interval's grace")
        var second: CurlBody? = body(1 << 20, seed: 2, pool: pool)
        #expect(pool.idleBytes == 0)
        second = nil
        pool.releaseIdle()
        #expect(pool.idleBytes == 1 << 20, "given back after the last call: another interval's grace")
        pool.releaseIdle()
        #expect(pool.idleBytes == 0)
        _ = (first, second)
    }
}
