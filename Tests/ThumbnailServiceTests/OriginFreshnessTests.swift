import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// Originals stay fresh, end to end: a real origin on 127.0.0.1 answering with ETag and
/// Cache-Control and honouring conditional requests, real libcurl, real libvips, the service's
/// monotonic clock moved by the test.
@Suite struct OriginFreshnessTests {
    static let photo = Fixtures.jpeg(width: 600, height: 400)
    /// The same picture turned upside down (EXIF orientation 3, applied to the pixels): what was
    /// red at the top left is yellow now.
    static let changed = Fixtures.jpeg(width: 600, height: 400, orientation: 3)

    static func harness(
        _ reply: TestOrigin.Reply, _ configure: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws -> Harness {
        try Harness(routes: ["/p.jpg": reply]) { configuration in
            configuration.freshness.minSourceTTL = .zero
            configuration.freshness.staleWhileRevalidate = .zero
            configure(&configuration)
        }
    }

    @Test func aStaleThumbnailIsRevalidatedAndNotModifiedDownloadsNothing() async throws {
        let h = try Self.harness(.cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=120"))
        let first = try await h.get(h.thumb("/p.jpg", "w=100"))
        #expect(first.status == 200)
        #expect(first.header("cache-control") == "public, max-age=105")  // 7/8 of the origin's 120 s
        #expect(try await h.get(h.thumb("/p.jpg", "w=200")).status == 200)
        let renders = h.app.pipeline.metrics.renders.thumbnails
        #expect(h.origin.totalRequests == 1)

        h.monotonic.advance(.seconds(121))
        let renewed = try await h.get(h.thumb("/p.jpg", "w=100"))
        #expect(renewed.status == 200)
        #expect(renewed.header("x-cache") == "revalidated")
        #expect(renewed.header("etag") == first.header("etag"))
        #expect(renewed.body == first.body)
        // The origin saw one conditional request (answered 304), and nothing was downloaded or made.
        let conditional = h.origin.conditionalRequests(path: "/p.jpg")
        #expect(conditional.count == 1)
        #expect(conditional.first?.header("If-None-Match") == "\"v1\"")
        #expect(h.origin.totalRequests == 2)
        #expect(h.app.pipeline.metrics.fetches.notModified == 1)
        // The other width was renewed with it.
        let other = try await h.get(h.thumb("/p.jpg", "w=200"))
        #expect(other.header("x-cache") == "hit")
        #expect(h.origin.totalRequests == 2)
        #expect(h.app.pipeline.metrics.renders.thumbnails == renders)
    }

    /// Hits served from the responses `ParsedTargets` kept (every hit after the first) still end when
    /// their promise would outlive the original's freshness, and when the original goes stale.
    @Test func keptHitsEndWithTheirPromise() async throws {
        let h = try Self.harness(.cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=120"))
        let target = h.thumb("/p.jpg", "w=100")
        #expect(try await h.get(target).header("cache-control") == "public, max-age=105")
        for _ in 0..<3 { #expect(try await h.get(target).header("cache-control") == "public, max-age=105") }
        h.monotonic.advance(.seconds(30))
        let shorter = try await h.get(target)
        #expect(shorter.header("x-cache") == "hit")
        let promised = try #require(shorter.header("cache-control"))
        #expect(promised != "public, max-age=105")
        for _ in 0..<3 { #expect(try await h.get(target).header("cache-control") == promised) }
        h.monotonic.advance(.seconds(91))
        #expect(try await h.get(target).header("x-cache") == "revalidated")
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)
    }

    @Test func lastModifiedAloneIsRevalidatedWithIfModifiedSince() async throws {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        let h = try Self.harness(.cacheable(Self.photo, lastModified: date, cacheControl: "max-age=60"))
        #expect(try await h.get(h.thumb("/p.jpg")).status == 200)
        h.monotonic.advance(.seconds(61))
        #expect(try await h.get(h.thumb("/p.jpg")).header("x-cache") == "revalidated")
        #expect(h.origin.conditionalRequests(path: "/p.jpg").first?.header("If-Modified-Since") == date)
    }

    @Test func changedBytesGiveNewPixelsForEveryWidth() async throws {
        let h = try Self.harness(.cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=120"))
        for width in [100, 200] {
            let image = try await h.get(h.thumb("/p.jpg", "w=\(width)")).image()
            #expect(Self.isRed(image.pixel(5, 5)), "\(width)")
        }
        h.routes.set("/p.jpg", .cacheable(Self.changed, etag: "\"v2\"", cacheControl: "max-age=120"))
        h.monotonic.advance(.seconds(121))

        for width in [100, 200] {
            let response = try await h.get(h.thumb("/p.jpg", "w=\(width)"))
            #expect(response.status == 200)
            let image = try response.image()
            #expect(image.width == width)
            #expect(Self.isYellow(image.pixel(5, 5)), "\(width): \(image.pixel(5, 5))")
        }
        // One conditional request brought the new bytes; the second width needed no fetch.
        #expect(h.origin.totalRequests == 2)
        #expect(h.app.pipeline.metrics.fetches.changed == 1)
    }

    @Test func aDownOriginPastExpiryServesStaleThenNotFoundAnswers404() async throws {
        let h = try Self.harness(.cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=60"))
        let fresh = try await h.get(h.thumb("/p.jpg"))
        #expect(fresh.status == 200)

        // The origin goes down: it closes every connection without a word.
        h.routes.set("/p.jpg", .raw([]))
        h.monotonic.advance(.seconds(61))
        let stale = try await h.get(h.thumb("/p.jpg"))
        #expect(stale.status == 200)
        #expect(stale.header("x-cache") == "stale")
        #expect(stale.header("cache-control") == "public, max-age=0")  // nothing left to promise
        #expect(stale.body == fresh.body)
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)

        // Back, but the image is gone: once the remembered failure has expired, a 404.
        h.routes.set("/p.jpg", .status(404))
        h.monotonic.advance(h.app.configuration.fetch.errorTTL + .seconds(1))
        let gone = try await h.get(h.thumb("/p.jpg"))
        try expectProblem(gone, 404)
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 2)
        #expect(h.app.pipeline.metrics.cache.total.entries == 0)
    }

    @Test func pastStaleIfErrorADownOriginIsAnError() async throws {
        let h = try Self.harness(.cacheable(Self.photo, cacheControl: "max-age=60")) { configuration in
            configuration.freshness.staleIfError = .seconds(30)
        }
        #expect(try await h.get(h.thumb("/p.jpg")).status == 200)
        h.routes.set("/p.jpg", .status(503))
        h.monotonic.advance(.seconds(91))
        try expectProblem(try await h.get(h.thumb("/p.jpg")), 502)
    }

    @Test func maxAgeNeverOutlivesTheOriginalsFreshness() async throws {
        let h = try Self.harness(.cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=40"))
        var elapsed = 0
        for step in [0, 3, 4, 10, 12, 5] {
            h.monotonic.advance(.seconds(step))
            elapsed += step
            let response = try await h.get(h.thumb("/p.jpg"))
            let maxAge = try #require(response.header("cache-control")?.split(separator: "=").last.flatMap { Int($0) })
            #expect(maxAge + elapsed <= 40, "at \(elapsed) s: max-age=\(maxAge)")
            #expect(maxAge > 0, "at \(elapsed) s")
        }
        #expect(h.origin.totalRequests == 1)

        // And never more than --cache-max-age.
        let capped = try Self.harness(.cacheable(Self.photo, cacheControl: "max-age=1000")) { configuration in
            configuration.cache.maxAge = .seconds(50)
        }
        #expect(try await capped.get(capped.thumb("/p.jpg")).header("cache-control") == "public, max-age=50")
    }

    @Test func noStoreOriginalsAreNotKept() async throws {
        let h = try Self.harness(.cacheable(Self.photo, cacheControl: "no-store"))
        let first = try await h.get(h.thumb("/p.jpg"))
        #expect(first.status == 200)
        #expect(first.header("cache-control") == "public, max-age=0")
        #expect(try await h.get(h.thumb("/p.jpg")).header("x-cache") == "miss")
        #expect(h.origin.totalRequests == 2)
        #expect(h.app.pipeline.metrics.cache.total.entries == 0)
    }

    static func isRed(_ pixel: [Double]) -> Bool { pixel[0] > 200 && pixel[1] < 60 && pixel[2] < 60 }
    static func isYellow(_ pixel: [Double]) -> Bool { pixel[0] > 200 && pixel[1] > 200 && pixel[2] < 60 }
}
