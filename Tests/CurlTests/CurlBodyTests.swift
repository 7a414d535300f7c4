import Testing

@testable import Curl

/// The body's two homes: malloc for small bodies, pages of its own from `CurlBody.pagesFrom` on
/// (so an evicted original goes back to the system instead of leaving a hole in a heap).
@Suite struct CurlBodyTests {
    private func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 131 &+ 7) }
    }

    private func bytes(of body: CurlBody) -> [UInt8] {
        body.withUnsafeBytes { Array($0) }
    }

    @Test func smallBodyStaysInTheHeap() {
        let body = CurlBody()
        let data = pattern(40_000)
        #expect(data.withUnsafeBytes { body.append($0.baseAddress, $0.count, limit: 1 << 20) })
        body.shrinkToFit()
        #expect(!body.isMapped)
        #expect(bytes(of: body) == data)
    }

    @Test func declaredLengthAtTheThresholdIsMappedOnce() {
        let body = CurlBody()
        let data = pattern(CurlBody.pagesFrom + 123)
        body.reserve(data.count, limit: 32 << 20)
        #expect(body.isMapped)
        let before = body.pointer
        #expect(data.withUnsafeBytes { body.append($0.baseAddress, $0.count, limit: 32 << 20) })
        #expect(body.pointer == before, "a reserved body is not moved by its own bytes")
        body.shrinkToFit()
        #expect(bytes(of: body) == data)
    }

    @Test func chunkedBodyGrowsFromHeapIntoPagesKeepingEveryByte() {
        let body = CurlBody()
        var expected: [UInt8] = []
        for chunk in 0..<300 {  // 300 × 3 000 bytes: past pagesFrom by doubling
            let piece = pattern(3_000, seed: chunk)
            #expect(piece.withUnsafeBytes { body.append($0.baseAddress, $0.count, limit: 8 << 20) })
            expected += piece
        }
        #expect(body.isMapped)
        body.shrinkToFit()
        #expect(body.count == expected.count)
        #expect(bytes(of: body) == expected)
    }

    @Test func limitHoldsInBothHomes() {
        for limit in [10_000, CurlBody.pagesFrom * 2] {
            let body = CurlBody()
            let data = pattern(limit)
            #expect(data.withUnsafeBytes { body.append($0.baseAddress, $0.count, limit: limit) })
            let one: [UInt8] = [1]
            #expect(!one.withUnsafeBytes { body.append($0.baseAddress, 1, limit: limit) })
            #expect(body.count == limit)
            #expect(bytes(of: body) == data)
        }
    }
}
