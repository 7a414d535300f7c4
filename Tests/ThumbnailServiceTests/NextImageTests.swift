import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// `/_next/image` answers as Next.js' image optimizer does, from thumbd's cache.
@Suite struct NextImageTests {
    static let photo = Fixtures.jpeg(width: 1200, height: 800)
    static let browser = [("Accept", "image/avif,image/webp,image/apng,image/*,*/*;q=0.8")]
    static let csp = "script-src 'none'; frame-src 'none'; sandbox;"

    /// A harness whose `--source-base-url` is the origin, so `url=/p.jpg` is its `/p.jpg`.
    static func harness(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> Harness {
        try Harness(routes: ["/p.jpg": .ok(photo)], sourceBase: "/", configure)
    }

    static func next(_ url: String, w: Int = 640, q: Int = 75) -> String {
        "/_next/image?url=\(Harness.encode(url))&w=\(w)&q=\(q)"
    }

    @Test func answersWithNextsHeadersAndTheFormatAcceptNames() async throws {
        let h = try Self.harness()
        let first = try await h.get(Self.next("/p.jpg"), Self.browser)
        #expect(first.status == 200, "\(first.text)")
        #expect(first.header("content-type") == "image/avif")
        #expect(first.header("vary") == "Accept")
        #expect(first.header("x-content-type-options") == "nosniff")
        #expect(first.header("content-security-policy") == Self.csp)
        #expect(first.header("x-cache") == "miss")
        #expect(first.header("cache-control")?.hasPrefix("public, max-age=") == true)
        let etag = try #require(first.header("etag"))
        #expect(try first.image().width == 640)

        for (accept, type) in [
            ("image/webp,*/*", "image/webp"), ("*/*", "image/jpeg"), ("image/avif;q=0, image/webp", "image/webp"),
        ] {
            let response = try await h.get(Self.next("/p.jpg"), [("Accept", accept)])
            #expect(response.header("content-type") == type, "\(accept)")
            #expect(response.header("vary") == "Accept", "\(accept)")
        }
        let noAccept = try await h.get(Self.next("/p.jpg"))
        #expect(noAccept.header("content-type") == "image/jpeg")

        let again = try await h.get(Self.next("/p.jpg"), Self.browser + [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.header("vary") == "Accept")
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
    }

    /// The hit responses with Next's headers are made on the first quick hit and charged to the
    /// cache entry then, once: the budget counts them (they are about 2 KB a variant, more than a
    /// small thumbnail's bytes).
    @Test func nextImageResponsesAreChargedToTheEntryOnce() async throws {
        let h = try Self.harness()
        let target = Self.next("/p.jpg", w: 32)
        _ = try await h.get(target, Self.browser)  // miss: stored, remembered
        let stored = h.app.pipeline.metrics.cache[.variant].bytes
        #expect(try await h.get(target, Self.browser).header("x-request-id") == nil, "a quick hit")
        let grown = h.app.pipeline.metrics.cache[.variant].bytes
        #expect(grown > stored + 1_000 && grown < stored + 8_000, "\(stored) → \(grown)")
        for _ in 0..<3 { _ = try await h.get(target, Self.browser) }
        #expect(h.app.pipeline.metrics.cache[.variant].bytes == grown)
    }

    /// After its first answer a target is remembered per outcome of `Accept`: its hits are the
    /// quick answer (a prebuilt response, so no `X-Request-Id`), with Next's headers, and a
    /// browser that accepts another format is not handed the one kept for the first.
    @Test func hitsAreQuickAnswersPerAcceptOutcome() async throws {
        let h = try Self.harness()
        let target = Self.next("/p.jpg", w: 384)
        #expect(try await h.get(target, Self.browser).header("x-request-id") != nil)
        for accept in ["image/avif,image/webp,*/*", "image/webp,*/*", "*/*"] {
            _ = try await h.get(target, [("Accept", accept)])  // remembered for this outcome
        }
        for _ in 0..<2 {
            for (accept, type) in [
                ("image/avif,image/webp,*/*", "image/avif"), ("image/webp,*/*", "image/webp"), ("*/*", "image/jpeg"),
            ] {
                let hit = try await h.get(target, [("Accept", accept)])
                #expect(hit.status == 200)
                #expect(hit.header("content-type") == type, "\(accept)")
                #expect(hit.header("x-cache") == "hit")
                #expect(hit.header("x-request-id") == nil, "not the quick answer: \(accept)")
                #expect(hit.header("vary") == "Accept")
                #expect(hit.header("x-content-type-options") == "nosniff")
                #expect(hit.header("content-security-policy") == Self.csp)
                #expect(try hit.image().width == 384)
            }
        }
        let etag = try #require(try await h.get(target, Self.browser).header("etag"))
        let notModified = try await h.get(target, Self.browser + [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.header("vary") == "Accept")
        #expect(notModified.header("x-request-id") == nil)
        let head = try await h.get(target, Self.browser, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.header("content-type") == "image/avif")
    }

    /// The same thumbnail asked through `/thumb?…&format=auto` and through `/_next/image`, with
    /// the same `Accept`, is one cache entry, whichever comes first. (An explicit `format=webp` is
    /// another: with `auto` the format is picked once the source is read — an animation gets WebP
    /// where a still gets AVIF — so the key holds what the client takes.)
    @Test func sharesOneCacheEntryWithTheEquivalentThumb() async throws {
        let h = try Self.harness()
        let source = h.origin.url("/p.jpg")
        let webp = [("Accept", "image/webp")]
        let thumb = try await h.get(h.thumb("/p.jpg", "w=640&q=75&format=auto"), webp)
        #expect(thumb.header("x-cache") == "miss")
        #expect(thumb.header("content-type") == "image/webp")
        let next = try await h.get(Self.next("/p.jpg"), webp)
        #expect(next.header("x-cache") == "hit")
        #expect(next.header("etag") == thumb.header("etag"))
        #expect(next.body == thumb.body)

        let avif = try await h.get(Self.next(source, w: 256), Self.browser)
        #expect(avif.header("x-cache") == "miss")
        let thumbAfter = try await h.get(h.thumb("/p.jpg", "w=256&q=75&format=auto"), Self.browser)
        #expect(thumbAfter.header("x-cache") == "hit")
        #expect(thumbAfter.header("content-type") == "image/avif")
        #expect(thumbAfter.header("vary") == "Accept")
        #expect(thumbAfter.header("x-content-type-options") == nil)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        #expect(h.app.pipeline.metrics.cache[.variant].entries == 2)
    }

    /// Widths outside Next's defaults (with `--allowed-widths` empty) and qualities outside 1–100
    /// are a 400 with Next's own message, naming the parameter, and Next's hardening headers.
    @Test func widthsAndQualitiesAreNexts() async throws {
        let h = try Self.harness()
        for width in FrameworkWidths.next {
            #expect(try await h.get(Self.next("/p.jpg", w: width), method: "HEAD").status == 200, "w=\(width)")
        }
        let cases: [(String, String, String)] = [
            ("url=%2Fp.jpg&w=641&q=75", "w", "\"w\" parameter (width) of 641 is not allowed"),
            ("url=%2Fp.jpg&w=0&q=75", "w", "\"w\" parameter (width) must be an integer greater than 0"),
            ("url=%2Fp.jpg&w=-1&q=75", "w", "\"w\" parameter (width) must be an integer greater than 0"),
            ("url=%2Fp.jpg&q=75", "w", "\"w\" parameter (width) is required"),
            ("url=%2Fp.jpg&w=640&w=750&q=75", "w", "\"w\" parameter (width) cannot be an array"),
            ("url=%2Fp.jpg&w=640", "q", "\"q\" parameter (quality) is required"),
            ("url=%2Fp.jpg&w=640&q=0", "q", "\"q\" parameter (quality) must be an integer between 1 and 100"),
            ("url=%2Fp.jpg&w=640&q=101", "q", "\"q\" parameter (quality) must be an integer between 1 and 100"),
            ("url=%2Fp.jpg&w=640&q=high", "q", "\"q\" parameter (quality) must be an integer between 1 and 100"),
            ("w=640&q=75", "url", "\"url\" parameter is required"),
            ("url=%2Fp.jpg&w=640&q=75&fit=cover", "fit", "\"fit\" parameter is not supported"),
        ]
        for (query, name, message) in cases {
            let response = try await h.get("/_next/image?\(query)")
            try expectProblem(response, 400)
            let problem = try response.problem()
            #expect(problem["detail"] as? String == message, "\(query)")
            let params = try #require(problem["invalid-params"] as? [[String: String]], "\(query)")
            #expect(params.map { $0["name"] } == [name], "\(query)")
            // Hardened as Next.js hardens its errors.
            #expect(response.header("x-content-type-options") == "nosniff", "\(query)")
            #expect(response.header("content-security-policy") == Self.csp, "\(query)")
        }
        // A failure after parsing (the source is not there) too.
        let missing = try await h.get(Self.next("/nothing.jpg"))
        #expect(missing.status >= 400 && missing.header("content-security-policy") == Self.csp)
    }

    /// Next.js' default loader appends `&dpl=<deployment id>` to a `/_next/static/media/…` source
    /// when the build has one: taken, once, as a bounded token, and ignored: the same thumbnail
    /// and cache entry as without it, so a new deployment does not redo every image, and its
    /// repeats are quick answers like any target's.
    @Test func theDeploymentIDIsTakenAndIgnored() async throws {
        let h = try Self.harness()
        let plain = Self.next("/p.jpg")
        let first = try await h.get(plain, Self.browser)
        #expect(first.header("x-cache") == "miss")
        for id in ["abc", "dpl_01JV5V3CVXQNYFM2NHCRBM7KQH", String(repeating: "f", count: 64)] {
            let target = plain + "&dpl=\(id)"
            let response = try await h.get(target, Self.browser)
            #expect(response.status == 200, "\(id): \(response.text)")
            #expect(response.header("x-cache") == "hit", "\(id)")
            #expect(response.header("etag") == first.header("etag"), "\(id)")
            let sameBytes = response.body == first.body
            #expect(sameBytes, "\(id)")
            let again = try await h.get(target, Self.browser)
            #expect(again.header("x-cache") == "hit", "\(id)")
            #expect(again.header("x-request-id") == nil, "not the quick answer: \(id)")
            #expect(again.header("content-type") == "image/avif", "\(id)")
            #expect(again.header("vary") == "Accept", "\(id)")
        }
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        #expect(h.app.pipeline.metrics.cache[.variant].entries == 1)

        let message = "\"dpl\" parameter must be a deployment id: 1 to 64 letters, digits, - or _"
        for (tail, detail) in [
            ("&dpl=a&dpl=b", "\"dpl\" parameter cannot be an array"), ("&dpl=", message), ("&dpl", message),
            ("&dpl=" + String(repeating: "f", count: 65), message), ("&dpl=a.b", message), ("&dpl=a%2Fb", message),
        ] {
            let response = try await h.get(plain + tail)
            try expectProblem(response, 400)
            let problem = try response.problem()
            #expect(problem["detail"] as? String == detail, "\(tail)")
            let params = try #require(problem["invalid-params"] as? [[String: String]], "\(tail)")
            #expect(params.map { $0["name"] } == ["dpl"], "\(tail)")
        }
    }

    /// `--allowed-widths` replaces Next's defaults; `--allowed-qualities` narrows q; `--snap-widths`
    /// does not apply (Next's optimizer never rounds).
    @Test func theSettingsNarrowIt() async throws {
        let h = try Self.harness {
            $0.access.allowedWidths = [100, 200]
            $0.access.snapWidths = true
            $0.access.allowedQualities = [75]
        }
        #expect(try await h.get(Self.next("/p.jpg", w: 200)).status == 200)
        let other = try await h.get(Self.next("/p.jpg", w: 640))
        try expectProblem(other, 400)
        #expect(try other.problem()["detail"] as? String == "\"w\" parameter (width) of 640 is not allowed")
        try expectProblem(try await h.get(Self.next("/p.jpg", w: 150)), 400)
        let quality = try await h.get(Self.next("/p.jpg", w: 100, q: 80))
        try expectProblem(quality, 400)
        #expect(try quality.problem()["detail"] as? String == "\"q\" parameter (quality) of 80 is not allowed")
    }

    /// `url` is an absolute URL under the source policy or a path under `--source-base-url`;
    /// never protocol-relative, never an `/_next/image` itself.
    @Test func urlRules() async throws {
        let h = try Self.harness()
        let local = h.origin.url("/p.jpg")
        #expect(try await h.get(Self.next(local)).status == 200)
        let optimizer = h.origin.url("/_next/image?url=%2Fp.jpg&w=640&q=75")
        for (url, message) in [
            ("//example.org/p.jpg", "\"url\" parameter cannot be a protocol-relative URL (//)"),
            ("/_next/image?url=%2Fp.jpg&w=640&q=75", "\"url\" parameter cannot be recursive"),
            ("/a/_next/image/x", "\"url\" parameter cannot be recursive"),
            ("/%5Fnext/image", "\"url\" parameter cannot be recursive"),
            (optimizer, "\"url\" parameter cannot be recursive"),
            ("p.jpg", "\"url\" parameter is invalid: it must be an absolute http or https URL"),
            ("ftp://example.org/p.jpg", "\"url\" parameter is invalid: it must be an absolute http or https URL"),
            ("/" + String(repeating: "a", count: 3072), "\"url\" parameter is too long"),
        ] {
            let response = try await h.get(Self.next(url))
            try expectProblem(response, 400)
            #expect(try response.problem()["detail"] as? String == message, "\(url)")
        }
        try expectProblem(try await h.get(Self.next("http://169.254.169.254/latest")), 403)
        #expect(h.origin.requestCount(path: "/_next/image") == 0)

        let unset = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let relative = try await unset.get(Self.next("/p.jpg"))
        try expectProblem(relative, 400)
        let params = try #require(try relative.problem()["invalid-params"] as? [[String: String]])
        #expect(params.first?["name"] == "url")
        #expect(params.first?["reason"]?.contains("--source-base-url") == true)
        #expect(try await unset.get(Self.next(unset.origin.url("/p.jpg"))).status == 200)
    }

    /// A signed instance keeps the framework routes closed: their loaders cannot sign.
    @Test func signedInstancesRefuseIt() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)], sourceBase: "/") {
            $0.access.signingKeys = [SigningTests.keyA]
        }
        for target in [
            Self.next("/p.jpg"), "/?url=\(Harness.encode(h.origin.url("/p.jpg")))&w=10",
            "/_ipx/w_10/p.jpg", "/_image?href=%2Fp.jpg&w=10",
        ] {
            let response = try await h.get(target)
            try expectProblem(response, 403)
            #expect(try response.problem()["type"] as? String == "urn:thumbd:problem:signed-urls-only", "\(target)")
        }
        #expect(h.origin.totalRequests == 0)
    }
}
