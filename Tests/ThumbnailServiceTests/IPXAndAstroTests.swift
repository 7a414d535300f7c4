import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// Nuxt Image's IPX path (`/_ipx/…`) and Astro's image endpoint (`/_image`), mapped onto `/thumb`.
@Suite struct IPXAndAstroTests {
    static let photo = Fixtures.jpeg(width: 1200, height: 800)

    static func harness(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> Harness {
        try Harness(routes: ["/images/a.jpg": .ok(photo)], sourceBase: "/", configure)
    }

    static func names(_ response: TestHTTPResponse) throws -> [String] {
        let params = try #require(try response.problem()["invalid-params"] as? [[String: String]])
        return params.compactMap { $0["name"] }
    }

    @Test func ipxModifiersAreThumbsParameters() async throws {
        let h = try Self.harness()
        let absolute = h.origin.url("/images/a.jpg")
        for (target, size, type) in [
            ("/_ipx/w_300/images/a.jpg", (300, 200), "image/jpeg"),
            ("/_ipx/s_200x100&f_webp&q_70&fit_cover/images/a.jpg", (200, 100), "image/webp"),
            ("/_ipx/s_200x100,f_webp,q_70,fit_cover/images/a.jpg", (200, 100), "image/webp"),
            ("/_ipx/width_120&height_120&fit_cover&pos_attention&format_png/images/a.jpg", (120, 120), "image/png"),
            ("/_ipx/h_100/images/a.jpg", (150, 100), "image/jpeg"),
            ("/_ipx/_/images/a.jpg", (1200, 800), "image/jpeg"),
            ("/_ipx/w_100&f_avif/\(absolute)", (100, 67), "image/avif"),
            // Separators percent-encoded, as a client that encodes every path byte sends them.
            ("/_ipx/w_90%26f_webp%2Cq_60/images/a.jpg", (90, 60), "image/webp"),
        ] {
            let response = try await h.get(target)
            #expect(response.status == 200, "\(target): \(response.text)")
            #expect(response.header("content-type") == type, "\(target)")
            let image = try response.image()
            #expect((image.width, image.height) == size, "\(target)")
        }
        // The same entry as /thumb (and as the comma-joined spelling above).
        let thumb = try await h.get(h.thumb("/images/a.jpg", "w=200&h=100&fit=cover&format=webp&q=70"))
        #expect(thumb.header("x-cache") == "hit")
        #expect(h.origin.requestCount(path: "/images/a.jpg") == 1)
    }

    @Test func ipxRefusesWhatThumbdDoesNotDo() async throws {
        let h = try Self.harness()
        for (target, names) in [
            ("/_ipx/blur_5/images/a.jpg", ["blur"]), ("/_ipx/f_gif/images/a.jpg", ["f"]),
            ("/_ipx/w_100&fit_contain&h_100/images/a.jpg", ["fit"]), ("/_ipx/grayscale/images/a.jpg", ["grayscale"]),
            ("/_ipx/s_100/images/a.jpg", ["s"]), ("/_ipx/w_abc/images/a.jpg", ["w"]),
            ("/_ipx/w_100&pos_top/images/a.jpg", ["pos"]), ("/_ipx/w_100", ["path"]), ("/_ipx/w_100/", ["path"]),
            ("/_ipx/w_100//example.org/a.jpg", ["path"]),
        ] {
            let response = try await h.get(target)
            try expectProblem(response, 400)
            #expect(try Self.names(response) == names, "\(target)")
        }
        let unset = try Harness(routes: [:])
        #expect(try Self.names(try await unset.get("/_ipx/w_100/images/a.jpg")) == ["path"])
        try expectProblem(try await h.get("/_ipx/w_100/http://169.254.169.254/x"), 403)
        try expectProblem(try await h.get("/_ipx"), 404)
        try expectProblem(try await h.get("/_ipx/w_100/images/a.jpg", method: "DELETE"), 405)
    }

    @Test func astroQueryIsThumbsParameters() async throws {
        let h = try Self.harness()
        let first = try await h.get("/_image?href=%2Fimages%2Fa.jpg&w=300&h=200&q=high&f=webp")
        #expect(first.status == 200, "\(first.text)")
        #expect(first.header("content-type") == "image/webp")
        #expect(try first.image().width == 300)
        // q=high is q=80: one entry, shared with /thumb.
        #expect(try await h.get("/_image?href=%2Fimages%2Fa.jpg&w=300&h=200&q=80&f=webp").header("x-cache") == "hit")
        #expect(try await h.get(h.thumb("/images/a.jpg", "w=300&h=200&q=80&format=webp")).header("x-cache") == "hit")
        let remote = Harness.encode(h.origin.url("/images/a.jpg"))
        for (query, size) in [
            ("href=\(remote)&w=100&h=100&fit=cover&position=attention&f=png", (100, 100)),
            ("href=\(remote)&w=120&q=low&f=jpg", (120, 80)), ("href=\(remote)&h=100&q=max&f=avif", (150, 100)),
            ("href=\(remote)&w=100&h=30&fit=fill", (100, 30)),
        ] {
            let response = try await h.get("/_image?\(query)")
            #expect(response.status == 200, "\(query): \(response.text)")
            let image = try response.image()
            #expect((image.width, image.height) == size, "\(query)")
        }
        for (query, names) in [
            ("href=%2Fimages%2Fa.jpg&w=100&fit=contain&h=10", ["fit"]), ("href=%2Fimages%2Fa.jpg&w=100&f=svg", ["f"]),
            ("href=%2Fimages%2Fa.jpg&w=100&q=best", ["q"]),
            ("href=%2Fimages%2Fa.jpg&w=100&background=red", ["background"]),
            ("href=%2Fimages%2Fa.jpg&w=100&position=top&fit=cover&h=10", ["position"]), ("w=100", ["href"]),
            ("href=&w=100", ["href"]), ("href=a&href=b&w=1", ["href"]), ("href=%2F%2Fexample.org%2Fa.jpg", ["href"]),
        ] {
            let response = try await h.get("/_image?\(query)")
            try expectProblem(response, 400)
            #expect(try Self.names(response) == names, "\(query)")
        }
    }

    @Test func widthsSnapOnIPXAndAstro() async throws {
        let h = try Self.harness {
            $0.access.allowedWidths = FrameworkWidths.astro
            $0.access.snapWidths = true
        }
        #expect(try await h.get("/_ipx/w_300/images/a.jpg").image().width == 640)
        let astro = try await h.get("/_image?href=%2Fimages%2Fa.jpg&w=700&h=350&f=webp")
        // Snapped to 750 and the box with it (heights are free): 750 × 375, the source's 3:2 inside.
        #expect(try astro.image().height == 375)
        #expect(try await h.get(h.thumb("/images/a.jpg", "w=640")).header("x-cache") == "hit")
    }
}
