import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// The weserv-style query at `/`, as Nuxt Image's `weserv` provider builds it.
@Suite struct WeservTests {
    static let photo = Fixtures.jpeg(width: 1200, height: 800)

    static func names(_ response: TestHTTPResponse) throws -> [String] {
        let params = try #require(try response.problem()["invalid-params"] as? [[String: String]])
        return params.compactMap { $0["name"] }
    }

    /// Nuxt's URL, `url` unencoded and last: the thumbnail, named for download, and the same cache
    /// entry as the equivalent `/thumb`.
    @Test func nuxtsURLIsTheEquivalentThumb() async throws {
        let h = try Harness(routes: ["/img/a.jpg": .ok(Self.photo)])
        let url = h.origin.url("/img/a.jpg")
        let response = try await h.get(
            "/?filename=a.jpg&we&w=300&h=200&q=80&output=webp&fit=cover&url=\(url)")
        #expect(response.status == 200, "\(response.text)")
        #expect(response.header("content-type") == "image/webp")
        #expect(response.header("content-disposition") == "inline; filename=\"a.webp\"")
        #expect(response.header("x-cache") == "miss")
        let image = try response.image()
        #expect((image.width, image.height) == (300, 200))
        let thumb = try await h.get(h.thumb("/img/a.jpg", "w=300&h=200&fit=cover&q=80&format=webp"))
        #expect(thumb.header("x-cache") == "hit")
        #expect(thumb.body == response.body)
        #expect(thumb.header("content-disposition") == nil)
        // Nuxt's current provider encodes url (URLSearchParams): the same request.
        let encoded = try await h.get(
            "/?filename=a.jpg&we&w=300&h=200&q=80&output=webp&fit=cover&url=\(Harness.encode(url))")
        #expect(encoded.header("x-cache") == "hit")
        #expect(encoded.header("content-disposition") == "inline; filename=\"a.webp\"")
        #expect(h.origin.requestCount(path: "/img/a.jpg") == 1)
    }

    /// An unencoded url takes the rest of the target, `&` and all: the origin gets that query.
    @Test func anUnencodedURLTakesTheRestOfTheTarget() async throws {
        let h = try Harness(routes: ["/img": .ok(Self.photo)])
        let response = try await h.get("/?w=100&url=\(h.origin.url("/img?id=7&size=large&w=5"))")
        #expect(response.status == 200, "\(response.text)")
        #expect(try response.image().width == 100)
        #expect(h.origin.requests.map(\.target) == ["/img?id=7&size=large&w=5"])
        // Not written out (no http:// or https:// after url=): an ordinary, encoded parameter.
        let relative = try await h.get("/?url=\(Harness.encode(h.origin.url("/img?id=7")))&w=50")
        #expect(try relative.image().width == 50)
        #expect(h.origin.requests.last?.target == "/img?id=7")
    }

    /// What thumbd does not do is a 400 naming each parameter, never ignored; weserv's other
    /// spellings of what it does are taken.
    @Test func whatThumbdDoesNotDoIsNamed() async throws {
        let h = try Harness(routes: ["/a.jpg": .ok(Self.photo)])
        let url = h.origin.url("/a.jpg")
        for (query, names) in [
            ("fit=contain&w=100&h=100", ["fit"]), ("fit=outside&w=100&h=100", ["fit"]),
            ("a=top&fit=cover&w=100&h=100", ["a"]), ("a=entropy&fit=cover&w=100&h=100", ["a"]),
            ("output=gif&w=100", ["output"]), ("output=json", ["output"]), ("output=tiff&w=10", ["output"]),
            ("blur=5&w=100", ["blur"]), ("filt=greyscale&w=100", ["filt"]), ("mask=circle&w=100", ["mask"]),
            ("bg=white&flip&ro=90&w=100", ["bg", "flip", "ro"]), ("w=0", ["w"]), ("w=100&dpr=9", ["dpr"]),
            ("q=101&w=100", ["q"]), ("a=attention&w=100", ["a"]), ("fit=cover&w=100", ["h"]),
            ("we=maybe&w=100", ["we"]), ("w=1&w=2", ["w"]),
            ("filename=a&filename=b&w=1", ["filename"]),
        ] {
            let response = try await h.get("/?\(query)&url=\(url)")
            try expectProblem(response, 400)
            #expect(try Self.names(response) == names, "\(query)")
        }
        for (query, size) in [
            ("w=100&h=100&fit=cover&a=center", (100, 100)), ("w=100&h=100&fit=cover&a=centre", (100, 100)),
            ("w=100&h=100&fit=cover&a=attention", (100, 100)), ("w=100&h=100&fit=fill", (100, 100)),
            ("w=100&h=100&fit=inside", (100, 67)), ("w=100&output=jpg", (100, 67)), ("w=100&output=png", (100, 67)),
            ("w=100&output=avif", (100, 67)), ("h=100", (150, 100)), ("w=100&dpr=2", (200, 133)), ("we=", (1200, 800)),
        ] {
            let response = try await h.get("/?\(query)&url=\(url)")
            #expect(response.status == 200, "\(query): \(response.text)")
            let image = try response.image()
            #expect((image.width, image.height) == size, "\(query)")
        }
        try expectProblem(try await h.get("/"), 400)
        #expect(try Self.names(try await h.get("/?w=100")) == ["url"])
        #expect(try Self.names(try await h.get("/?w=100&url=")) == ["url"])
        #expect(try Self.names(try await h.get("/?url=%2F%2Fexample.org%2Fa.jpg")) == ["url"])
        try expectProblem(try await h.get("/?w=10&url=http://169.254.169.254/x"), 403)
        // A URL of the longest length taken, whose canonical form is a byte longer (`/` before `?`).
        let longest = "http://127.0.0.1:1?" + String(repeating: "0", count: 4096 - 19)
        try expectProblem(try await h.get("/?w=10&url=\(Harness.encode(longest))"), 502)
        try expectProblem(try await h.get("/?w=10&url=\(url)", method: "POST"), 405)
    }

    /// `filename` names the download, made safe for the header (never refused: Nuxt sends the
    /// source's file name, whatever it is); the extension is the answer's.
    @Test func theFilenameIsSanitised() async throws {
        let h = try Harness(routes: ["/a.jpg": .ok(Self.photo)])
        let url = h.origin.url("/a.jpg")
        for (filename, header) in [
            ("photo.png", "photo.jpg"), ("..%2F..%2Fetc%2Fpasswd%22%3B%20x%3Dy", "passwdxy.jpg"),
            ("my%20holiday%E2%80%94best.jpeg", "myholidaybest.jpg"),
            (String(repeating: "n", count: 300), String(repeating: "n", count: 100) + ".jpg"),
            ("..%2F..", "image.jpg"), ("", "image.jpg"), ("%E2%80%94.png", "image.jpg"),
        ] {
            let response = try await h.get("/?filename=\(filename)&w=50&url=\(url)")
            #expect(response.header("content-disposition") == "inline; filename=\"\(header)\"", "\(filename)")
        }
        let png = try await h.get("/?filename=x&w=50&output=png&url=\(url)")
        #expect(png.header("content-disposition") == "inline; filename=\"x.png\"")
        let etag = try #require(png.header("etag"))
        let notModified = try await h.get("/?filename=x&w=50&output=png&url=\(url)", [("If-None-Match", etag)])
        #expect(notModified.status == 304)
    }

    /// With `--snap-widths` weserv's arbitrary widths (Nuxt's screens × densities) round up to an
    /// allowed one, sharing its entry; without, they are a 400.
    @Test func widthsSnapToTheAllowedOnes() async throws {
        let snapping = try Harness(routes: ["/a.jpg": .ok(Self.photo)]) {
            $0.access.allowedWidths = [100, 200, 400]
            $0.access.snapWidths = true
        }
        let url = snapping.origin.url("/a.jpg")
        for (query, width) in [("w=150", 200), ("w=1000", 400), ("w=100", 100), ("h=50", 75)] {
            let response = try await snapping.get("/?\(query)&url=\(url)")
            #expect(try response.image().width == width, "\(query)")
        }
        #expect(try await snapping.get(snapping.thumb("/a.jpg", "w=200")).header("x-cache") == "hit")
        let strict = try Harness(routes: ["/a.jpg": .ok(Self.photo)]) { $0.access.allowedWidths = [100, 200] }
        let refused = try await strict.get("/?w=150&url=\(strict.origin.url("/a.jpg"))")
        try expectProblem(refused, 400)
        #expect(try Self.names(refused) == ["w"])
        #expect(try Self.names(try await strict.get("/?url=\(strict.origin.url("/a.jpg"))")) == ["w"])
    }
}
