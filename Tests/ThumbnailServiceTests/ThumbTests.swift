import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// `GET /thumb` end to end: dimensions, formats, orientation, colour, headers.
@Suite struct ThumbTests {
    static let photo = Fixtures.jpeg(width: 600, height: 400)

    @Test func widthOnlyKeepsAspectAndSetsTheHeaders() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let response = try await h.get(h.thumb("/p.jpg", "w=300"))
        #expect(response.status == 200)
        #expect(response.header("content-type") == "image/jpeg")
        #expect(response.header("content-length") == String(response.body.count))
        // The origin said nothing: fresh for --default-source-ttl (3600 s); a thumbnail promises
        // 7/8 of what is left (the harness's clock stands still).
        #expect(response.header("cache-control") == "public, max-age=3150")
        let etag = try #require(response.header("etag"))
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        #expect(response.header("x-request-id") != nil)
        #expect(response.header("vary") == nil)
        let image = try response.image()
        #expect((image.width, image.height) == (300, 200))
        #expect(image.loader.hasPrefix("jpegload"))
    }

    @Test(arguments: ["jpeg", "png", "webp", "avif"])
    func everyFitInEveryFormat(format: String) async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let cases: [(String, (Int, Int))] = [
            ("w=300", (300, 200)),
            ("w=300&h=100", (150, 100)),
            ("w=300&h=100&fit=inside", (150, 100)),
            ("w=100&h=100&fit=cover", (100, 100)),
            ("w=100&h=100&fit=cover&crop=attention", (100, 100)),
            ("w=100&h=30&fit=fill", (100, 30)),
        ]
        for (params, size) in cases {
            let response = try await h.get(h.thumb("/p.jpg", "\(params)&format=\(format)&q=70"))
            #expect(response.status == 200, "\(params): \(response.text.prefix(200))")
            #expect(response.header("content-type") == "image/\(format)")
            let image = try response.image()
            #expect((image.width, image.height) == size, "\(params) as \(format)")
            #expect(image.loader.hasPrefix(format == "avif" ? "heifload" : "\(format)load"))
        }
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
    }

    @Test func neverUpscales() async throws {
        let h = try Harness(routes: ["/small.jpg": .ok(Fixtures.jpeg(width: 200, height: 100))])
        for (params, size) in [
            ("w=1000", (200, 100)), ("w=1000&h=1000", (200, 100)), ("w=1000&h=1000&fit=cover", (100, 100)),
            ("w=1000&h=50&fit=fill", (200, 50)), ("w=8192&h=8192&fit=fill", (200, 100)),
        ] {
            let image = try await h.get(h.thumb("/small.jpg", params)).image()
            #expect(image.width <= 200 && image.height <= 100, "\(params)")
            #expect((image.width, image.height) == size, "\(params)")
        }
    }

    /// `fit=cover` of a source smaller than the box in one direction or both keeps the box's
    /// shape: the largest such box the source fills (an avatar stays square; it was 290 × 300).
    /// The answer is one thumbnail: the same bytes and ETag as asking for that box directly.
    @Test func coverOfASmallerSourceKeepsTheBoxShape() async throws {
        let h = try Harness(routes: [
            "/tall.jpg": .ok(Fixtures.jpeg(width: 290, height: 442)),
            "/wide.jpg": .ok(Fixtures.jpeg(width: 442, height: 290)),
            "/tiny.jpg": .ok(Fixtures.jpeg(width: 100, height: 50)),
            // Stored 442 × 290 with orientation 6: shown 290 × 442.
            "/turned.jpg": .ok(Fixtures.jpeg(width: 442, height: 290, orientation: 6)),
        ])
        for (path, params, size) in [
            ("/tall.jpg", "w=300&h=300&fit=cover", (290, 290)), ("/wide.jpg", "w=300&h=300&fit=cover", (290, 290)),
            ("/tiny.jpg", "w=300&h=300&fit=cover", (50, 50)), ("/turned.jpg", "w=300&h=300&fit=cover", (290, 290)),
            ("/turned.jpg", "w=300&h=300&fit=cover&crop=attention", (290, 290)),
            ("/tall.jpg", "w=600&h=300&fit=cover", (290, 145)),
        ] {
            let image = try await h.get(h.thumb(path, params)).image()
            #expect((image.width, image.height) == size, "\(path) \(params)")
        }
        let asked = try await h.get(h.thumb("/tall.jpg", "w=300&h=300&fit=cover&format=png"))
        let direct = try await h.get(h.thumb("/tall.jpg", "w=290&h=290&fit=cover&format=png"))
        #expect(asked.body == direct.body)
        #expect(asked.header("etag") != nil && asked.header("etag") == direct.header("etag"))
    }

    @Test func appliesExifOrientationToThePixels() async throws {
        // Stored 200×100 with orientation 6 (rotate 90° clockwise to display): shown 100×200,
        // and the stored bottom-left (blue) quadrant ends up top-left.
        let h = try Harness(routes: ["/o.jpg": .ok(Fixtures.jpeg(width: 200, height: 100, orientation: 6))])
        let image = try await h.get(h.thumb("/o.jpg", "w=100")).image()
        #expect((image.width, image.height) == (100, 200))
        #expect(image.orientation == nil || image.orientation == 1)
        let topLeft = image.pixel(25, 50)
        #expect(topLeft[2] > 180 && topLeft[0] < 80 && topLeft[1] < 80, "top-left should be blue: \(topLeft)")
    }

    @Test func convertsCMYKToSRGBAndStripsMetadata() async throws {
        let h = try Harness(routes: [
            "/cmyk.jpg": .ok(Fixtures.cmykJPEG(width: 120, height: 80)),
            "/icc.jpg": .ok(Fixtures.jpegWithICC(width: 120, height: 80)),
            "/exif.jpg": .ok(Fixtures.jpeg(width: 120, height: 80, orientation: 1)),
        ])
        let cmyk = try await h.get(h.thumb("/cmyk.jpg", "w=60")).image()
        #expect(cmyk.bands == 3)
        #expect(cmyk.interpretation == "srgb")
        let colour = cmyk.pixel(30, 20)
        #expect(colour[0] > 150 && colour[1] < 110 && colour[2] < 110, "CMYK magenta+yellow should be red: \(colour)")
        let icc = try await h.get(h.thumb("/icc.jpg", "w=60")).image()
        #expect(!icc.hasICCProfile)
        #expect(icc.interpretation == "srgb")
        let exif = try await h.get(h.thumb("/exif.jpg", "w=60")).image()
        #expect(!exif.hasEXIF)
    }

    /// A profile with only perceptual tables is used (it was ignored: a red instead of a blue);
    /// one whose table cannot be read is a 422, not pixels passed on unconverted.
    @Test func perceptualOnlyProfilesAreConvertedAndBrokenTablesAre422() async throws {
        var broken = Fixtures.perceptualOnlyProfile()
        let table = try #require((0...(broken.count - 4)).first { broken[$0..<$0 + 4].elementsEqual("mft2".utf8) })
        broken.replaceSubrange(table..<table + 4, with: Array("junk".utf8))
        let h = try Harness(routes: [
            "/xyb.png": .ok(Fixtures.pngWithPerceptualOnlyProfile(width: 120, height: 80)),
            "/broken.jpg": .ok(Fixtures.uniform([200, 30, 40], profile: broken, width: 120, height: 80, jpeg: true)),
        ])
        let converted = try await h.get(h.thumb("/xyb.png", "w=60&format=png")).image()
        let pixel = converted.pixel(30, 20)
        #expect(zip(pixel, Fixtures.perceptualOnlyMeant).allSatisfy { abs($0 - Double($1)) <= 3 }, "got \(pixel)")
        try expectProblem(try await h.get(h.thumb("/broken.jpg", "w=60")), 422)
        #expect(try await h.get(h.thumb("/xyb.png", "w=30")).status == 200)
    }

    @Test func keepsTheSourceFamilyByDefault() async throws {
        let h = try Harness(routes: [
            "/a.png": .ok(Fixtures.png(width: 100, height: 80, alpha: true), contentType: "image/png"),
            "/b.png": .ok(Fixtures.png(width: 100, height: 80), contentType: "image/png"),
            "/c.webp": .ok(Fixtures.webp(width: 100, height: 80), contentType: "image/webp"),
            "/d.gif": .ok(Fixtures.gif(width: 100, height: 80, frames: 3), contentType: "image/gif"),
            "/e.tiff": .ok(Fixtures.tiff(width: 100, height: 80), contentType: "image/tiff"),
            "/f.avif": .ok(Fixtures.avif(width: 100, height: 80), contentType: "image/avif"),
            // The Content-Type lies: the bytes decide.
            "/g.jpg": .ok(Fixtures.png(width: 100, height: 80), contentType: "image/jpeg"),
        ])
        for (path, type, bands) in [
            ("/a.png", "image/png", 4), ("/b.png", "image/png", 3), ("/c.webp", "image/webp", 3),
            ("/d.gif", "image/gif", 4), ("/e.tiff", "image/jpeg", 3), ("/f.avif", "image/jpeg", 3),
            ("/g.jpg", "image/png", 3),
        ] {
            let response = try await h.get(h.thumb(path, "w=50"))
            #expect(response.status == 200, "\(path): \(response.text.prefix(200))")
            #expect(response.header("content-type") == type, "\(path)")
            let image = try response.image()
            #expect(image.bands == bands, "\(path)")
            #expect(image.width == 50, "\(path)")
        }
    }

    @Test func aStillFormatOfAnAnimationGivesItsFirstFrame() async throws {
        let h = try Harness(routes: ["/anim.gif": .ok(Fixtures.gif(width: 80, height: 60, frames: 3))])
        let response = try await h.get(h.thumb("/anim.gif", "w=40&format=png"))
        let image = try response.image()
        #expect(image.pageCount == 1)
        #expect((image.width, image.height) == (40, 30))
        let colour = image.pixel(20, 15)
        let first = Fixtures.gifFrameColours[0].map(Double.init)
        #expect(zip(colour, first).allSatisfy { abs($0 - $1) < 40 }, "\(colour) should be frame 0's \(first)")
    }

    @Test func jpegOutputFlattensAlphaOntoWhite() async throws {
        let h = try Harness(routes: ["/a.png": .ok(Fixtures.png(width: 100, height: 80, alpha: true))])
        let image = try await h.get(h.thumb("/a.png", "w=50&format=jpeg")).image()
        #expect(image.bands == 3)
        let bottom = image.pixel(25, 35)  // transparent half
        #expect(bottom.allSatisfy { $0 > 230 }, "transparent pixels become white: \(bottom)")
    }

    @Test func autoFormatNegotiatesAndVaries() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let webp = try await h.get(h.thumb("/p.jpg", "w=100&format=auto"), [("Accept", "image/webp,*/*")])
        #expect(webp.header("content-type") == "image/webp")
        #expect(webp.header("vary") == "Accept")
        let avif = try await h.get(h.thumb("/p.jpg", "w=100&format=auto"), [("Accept", "image/avif,image/webp,*/*")])
        #expect(avif.header("content-type") == "image/avif")
        let plain = try await h.get(h.thumb("/p.jpg", "w=100&format=auto"), [("Accept", "*/*")])
        #expect(plain.header("content-type") == "image/jpeg")
        #expect(plain.header("vary") == "Accept")
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
    }

    @Test func headAnswersHeadersOnly() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let get = try await h.get(h.thumb("/p.jpg"))
        let head = try await h.get(h.thumb("/p.jpg"), method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("content-length") == String(get.body.count))
        #expect(head.header("etag") == get.header("etag"))
    }

    @Test func ifNoneMatchGives304WithoutBody() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let first = try await h.get(h.thumb("/p.jpg"))
        let etag = try #require(first.header("etag"))
        let again = try await h.get(h.thumb("/p.jpg"), [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("content-length") == nil || again.header("content-length") == String(first.body.count))
        #expect(again.header("etag") == etag)
        let other = try await h.get(h.thumb("/p.jpg"), [("If-None-Match", "\"nope\"")])
        #expect(other.status == 200)
        #expect(other.body == first.body)
    }
}
