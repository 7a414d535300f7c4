import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// `GET|HEAD /info?url=`: what a source is, and its placeholders, against a real origin and real
/// libvips; the BlurHash and ThumbHash checked with their reference decoders (`PlaceholderReferenceTests`).
@Suite struct InfoTests {
    /// `/info?url=<origin path>`, and any more parameters.
    static func target(_ h: Harness, _ path: String, _ more: String = "") -> String {
        "/info?url=\(Harness.encode(h.origin.url(path)))" + (more.isEmpty ? "" : "&\(more)")
    }

    static func json(_ response: TestHTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response.text)")
    }

    /// `width` × `height` pixels of one colour per column range: `columns` pairs a colour with how
    /// many columns of it, left to right.
    static func stripes(height: Int, _ columns: [([UInt8], Int)]) -> [UInt8] {
        let width = columns.reduce(0) { $0 + $1.1 }
        var row: [UInt8] = []
        for (colour, count) in columns { for _ in 0..<count { row += colour } }
        return Fixtures.png(
            pixels: Array([[UInt8]](repeating: row, count: height).joined()), width: width, height: height,
            bands: columns[0].0.count)
    }

    @Test func aRotatedJPEGIsDescribedAsDisplayed() async throws {
        let photo = Fixtures.jpeg(width: 300, height: 200, orientation: 6)
        let h = try Harness(routes: ["/p.jpg": .ok(photo)])
        let response = try await h.get(Self.target(h, "/p.jpg"))
        #expect(response.status == 200)
        #expect(response.header("content-type") == "application/json")
        let info = try Self.json(response)
        #expect(info["width"] as? Int == 200)
        #expect(info["height"] as? Int == 300)
        #expect(info["orientation"] as? Int == 6)
        #expect(info["format"] as? String == "jpeg")
        #expect(info["hasAlpha"] as? Bool == false)
        #expect(info["frames"] as? Int == 1)
        #expect(info["bytes"] as? Int == photo.count)
        let blurhash = try #require(info["blurhash"] as? String)
        #expect(blurhash.count == 28)  // 4 × 3 terms
        // The LQIP is upright too: at most 32 px, the displayed shape.
        let lqip = try Self.lqip(info)
        #expect(lqip.width == 21 && lqip.height == 32)
    }

    /// The `data:` URI: a WebP of at most 32 × 32, the whole URI at most 1 KB — also for a
    /// source whose 32-px WebP would not fit (noise), which then gets a smaller one.
    @Test(arguments: ["plain", "noise"])
    func theLQIPIsATinyWebPWithinOneKilobyte(kind: String) async throws {
        var seed: UInt32 = 7
        let noise = (0..<(200 * 200 * 3)).map { _ -> UInt8 in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: seed >> 24)
        }
        let source =
            kind == "plain"
            ? Fixtures.jpeg(width: 400, height: 300) : Fixtures.png(pixels: noise, width: 200, height: 200, bands: 3)
        let h = try Harness(routes: ["/s": .ok(source)])
        let info = try Self.json(try await h.get(Self.target(h, "/s")))
        let uri = try #require(info["lqip"] as? String)
        #expect(uri.hasPrefix("data:image/webp;base64,"))
        #expect(uri.utf8.count <= 1024, "\(uri.utf8.count) bytes")
        let image = try Self.lqip(info)
        #expect(image.loader == "webpload_buffer")
        #expect(image.width <= 32 && image.height <= 32)
        if kind == "plain" { #expect(image.width == 32 && image.height == 24) }
    }

    static func lqip(_ info: [String: Any]) throws -> DecodedImage {
        let uri = try #require(info["lqip"] as? String)
        let encoded = try #require(uri.split(separator: ",", maxSplits: 1).last)
        let bytes = try #require(Data(base64Encoded: String(encoded)))
        return try Fixtures.decode(Array(bytes))
    }

    @Test func alphaIsReportedWhenSomePixelUsesIt() async throws {
        let h = try Harness(routes: [
            "/alpha.png": .ok(Fixtures.png(width: 80, height: 60, alpha: true)),
            "/opaque.png": .ok(Fixtures.png(width: 80, height: 60)),
        ])
        let alpha = try Self.json(try await h.get(Self.target(h, "/alpha.png")))
        #expect(alpha["format"] as? String == "png")
        #expect(alpha["hasAlpha"] as? Bool == true)
        #expect(try Self.lqip(alpha).bands == 4)
        let opaque = try Self.json(try await h.get(Self.target(h, "/opaque.png")))
        #expect(opaque["hasAlpha"] as? Bool == false)
    }

    @Test func anAnimatedGIFCountsItsFrames() async throws {
        let h = try Harness(routes: ["/a.gif": .ok(Fixtures.gif(width: 40, height: 30, frames: 3))])
        let info = try Self.json(try await h.get(Self.target(h, "/a.gif")))
        #expect(info["format"] as? String == "gif")
        #expect(info["frames"] as? Int == 3)
        #expect(info["width"] as? Int == 40)
        #expect(info["height"] as? Int == 30)
        // The first frame is red (`Fixtures.gifFrameColours`).
        #expect(info["dominantColor"] as? String == "#ff0000")
    }

    /// Each format by its name; AVIF is told from other HEIF by its AV1 coding.
    @Test func formatsAreNamed() async throws {
        let h = try Harness(routes: [
            "/w": .ok(Fixtures.webp(width: 50, height: 40)), "/a": .ok(Fixtures.avif(width: 50, height: 40)),
            "/t": .ok(Fixtures.tiff(width: 50, height: 40)),
        ])
        for (path, format) in [("/w", "webp"), ("/a", "avif"), ("/t", "tiff")] {
            let info = try Self.json(try await h.get(Self.target(h, path)))
            #expect(info["format"] as? String == format)
            #expect(info["width"] as? Int == 50 && info["height"] as? Int == 40, "\(format)")
        }
    }

    /// The most populated colour, not the mean: 70 % red, 30 % blue is red (the mean would be a
    /// purple that is nowhere in the image).
    @Test func theDominantColourOfAMostlyRedImageIsRed() async throws {
        let image = Self.stripes(height: 60, [([255, 0, 0], 70), ([0, 0, 255], 30)])
        let h = try Harness(routes: ["/red.png": .ok(image)])
        let info = try Self.json(try await h.get(Self.target(h, "/red.png")))
        #expect(info["dominantColor"] as? String == "#ff0000")
    }

    /// Cached like a thumbnail: the second request is a hit with the same ETag, If-None-Match gets
    /// a 304, HEAD the headers alone; the original fetched for it serves /thumb too, and the
    /// counters see the route, the cache kind and the render.
    @Test func itIsCachedAndAnsweredLikeAThumbnail() async throws {
        let photo = Fixtures.jpeg(width: 300, height: 200)
        let h = try Harness(routes: ["/p.jpg": .ok(photo)]) { $0.access.adminToken = AdminTests.token }
        let target = Self.target(h, "/p.jpg")
        let first = try await h.get(target)
        #expect(first.header("x-cache") == "miss")
        let etag = try #require(first.header("etag"))
        #expect(first.header("cache-control")?.hasPrefix("public, max-age=") == true)
        let second = try await h.get(target)
        #expect(second.header("x-cache") == "hit")
        #expect(second.header("etag") == etag)
        #expect(second.body == first.body)
        let notModified = try await h.get(target, [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        let head = try await h.get(target, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("content-length") == String(first.body.count))
        #expect(try await h.get(h.thumb("/p.jpg")).status == 200)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)

        let page = try await MetricsTests.scrape(h.port)
        #expect(page[MetricsTests.requests("/info", "GET", 200, "miss")] == 1)
        #expect(page[MetricsTests.requests("/info", "GET", 200, "hit")] == 1)
        #expect(page[MetricsTests.requests("/info", "GET", 304, "hit")] == 1)
        #expect(page["thumbd_cache_entries{kind=\"info\"}"] == 1)
        #expect(page["thumbd_renders_total{path=\"info\"}"] == 1)
        let stats = try Self.json(try await h.get("/cache/stats", AdminTests.auth))
        let kinds = try #require(stats["kinds"] as? [String: [String: Int]])
        #expect(kinds["info"]?["entries"] == 1)
        #expect(kinds["info"]?["hits"] == 3)
        #expect(stats["disk"] == nil)  // no disk tier here
    }

    /// The work is a job of the worker pool: concurrent requests join one job (one fetch, one
    /// render), and while the only worker is taken another source's /info hears 503, as a
    /// thumbnail would.
    @Test func itIsMadeOnceOnTheWorkerPool() async throws {
        let gate = TestGate()
        let h = try Harness(routes: [
            "/p.jpg": .gated(gate, .ok(Fixtures.jpeg(width: 300, height: 200))),
            "/q.jpg": .ok(Fixtures.jpeg(width: 300, height: 200)),
        ]) {
            $0.processing.workers = 1
            $0.processing.queueCapacity = 0
        }
        async let results = TestHTTPClient.concurrent(10, port: h.port, target: Self.target(h, "/p.jpg"))
        #expect(await eventually { h.app.pipeline.metrics.coalesced == 9 })
        #expect(h.app.pipeline.metrics.workers.admitted == 1)
        let busy = try await h.get(Self.target(h, "/q.jpg"))
        try expectProblem(busy, 503)
        #expect(busy.header("retry-after") != nil)
        gate.open()
        let responses = try await results.map { try $0.get() }
        #expect(responses.allSatisfy { $0.status == 200 })
        #expect(Set(responses.map(\.body)).count == 1)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        #expect(h.app.pipeline.metrics.renders.infos == 1)
        #expect(try await h.get(Self.target(h, "/q.jpg")).status == 200)
    }

    /// `DELETE /cache?url=` takes the info document with the source's original and variants; the
    /// next request makes it again from a new fetch.
    @Test func purgeRemovesTheInfoWithTheSource() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))]) {
            $0.access.adminToken = AdminTests.token
        }
        let target = Self.target(h, "/p.jpg")
        #expect(try await h.get(target).status == 200)
        #expect(try await h.get(h.thumb("/p.jpg")).status == 200)
        func entries() async throws -> (total: Int?, info: Int?) {
            let stats = try Self.json(try await h.get("/cache/stats", AdminTests.auth))
            let kinds = stats["kinds"] as? [String: [String: Int]]
            return ((stats["total"] as? [String: Int])?["entries"], kinds?["info"]?["entries"])
        }
        let before = try await entries()
        #expect(before.info == 1)
        let purged = try await h.get(
            "/cache?url=\(Harness.encode(h.origin.url("/p.jpg")))", AdminTests.auth, method: "DELETE")
        let removed = try #require(try Self.json(purged)["removed"] as? [String: Int])
        // Everything of the one source: its original, info document, thumbnail (and decoded copy).
        #expect(removed["entries"] == before.total)
        let after = try await entries()
        #expect(after.total == 0 && after.info == 0)
        let again = try await h.get(target)
        #expect(again.status == 200)
        #expect(again.header("x-cache") == "miss")
        #expect(h.origin.requestCount(path: "/p.jpg") == 2)
    }

    /// With signing keys, /info needs a signature over its own target (a /thumb signature does
    /// not carry over) and honours `exp`.
    @Test func signedURLsAreCheckedAsForThumbnails() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))]) {
            $0.access.signingKeys = [SigningTests.keyA]
        }
        let target = Self.target(h, "/p.jpg")
        try expectProblem(try await h.get(target), 403)
        #expect(try await h.get(URLSigner.sign(target, key: SigningTests.keyA)).status == 200)
        let thumbSignature = try #require(
            URLSigner.sign(h.thumb("/p.jpg", ""), key: SigningTests.keyA).split(separator: "&").last)
        try expectProblem(try await h.get(target + "&" + thumbSignature), 403)
        let expired = URLSigner.sign(
            target + "&exp=\(Int(Date().timeIntervalSince1970) - 10)", key: SigningTests.keyA)
        let refused = try await h.get(expired)
        try expectProblem(refused, 403)
        #expect(try refused.problem()["title"] as? String == "URL expired")
    }

    /// Bad input is a problem+json naming it, and the service goes on serving.
    @Test func badRequestsAreProblems() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200)), "/text": .ok([1, 2, 3])])
        let output = try await h.get(Self.target(h, "/p.jpg", "w=100&format=webp"))
        try expectProblem(output, 400)
        let named = try #require(try output.problem()["invalid-params"] as? [[String: String]])
        #expect(named.compactMap { $0["name"] }.sorted() == ["format", "w"])
        try expectProblem(try await h.get("/info"), 400)
        try expectProblem(try await h.get(Self.target(h, "/p.jpg", "bogus=1")), 400)
        try expectProblem(try await h.get("/info?url=\(Harness.encode("http://169.254.169.254/x"))"), 403)
        try expectProblem(try await h.get(Self.target(h, "/missing")), 404)
        try expectProblem(try await h.get(Self.target(h, "/text")), 415)
        try expectProblem(try await h.get(Self.target(h, "/p.jpg"), [("Cache-Control", "only-if-cached")]), 504)
        try expectProblem(try await h.get(Self.target(h, "/p.jpg"), method: "POST"), 405)
        #expect(try await h.get(Self.target(h, "/p.jpg")).status == 200)
    }
}
