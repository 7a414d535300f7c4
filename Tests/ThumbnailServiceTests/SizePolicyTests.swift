import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// The settings that make thumbd safe without signing: `--allowed-widths` with the framework
/// keywords, `--snap-widths`, `--allowed-qualities` and `--source-base-url`.
@Suite struct SizePolicyTests {
    static let photo = Fixtures.jpeg(width: 1200, height: 800)

    func load(_ arguments: [String], _ environment: [String: String] = [:]) -> Result<
        ServiceConfiguration.Command, ConfigurationError
    > {
        ServiceConfiguration.load(arguments: arguments, environment: environment)
    }

    func configuration(_ arguments: [String]) throws -> ServiceConfiguration {
        guard case .success(.run(let config)) = load(arguments) else {
            Issue.record("\(load(arguments))")
            throw CancellationError()
        }
        return config
    }

    func problems(_ arguments: [String]) -> [String] {
        guard case .failure(let error) = load(arguments) else { return [] }
        return error.problems
    }

    @Test func allowedWidthsTakeTheFrameworkKeywords() throws {
        #expect(try configuration(["--allowed-widths", "next"]).access.allowedWidths == FrameworkWidths.next.sorted())
        #expect(try configuration(["--allowed-widths", "astro"]).access.allowedWidths == FrameworkWidths.astro)
        let mixed = try configuration(["--allowed-widths", "Next, astro,100,640"]).access.allowedWidths
        #expect(mixed == Set(FrameworkWidths.next + FrameworkWidths.astro + [100]).sorted())
        #expect(try configuration(["--allowed-widths", "300,100"]).access.allowedWidths == [100, 300])
        guard case .success(.run(let environment)) = load([], ["THUMBD_ALLOWED_WIDTHS": "next"]) else {
            Issue.record("environment")
            return
        }
        #expect(environment.access.allowedWidths == FrameworkWidths.next.sorted())
        for bad in ["nuxt", "0", "8193", "100,x"] {
            #expect(problems(["--allowed-widths", bad]).count == 1, "\(bad)")
        }
    }

    @Test func theNewSettingsAreCheckedAtStartUp() throws {
        #expect(try configuration(["--allowed-qualities", "75,90"]).access.allowedQualities == [75, 90])
        #expect(problems(["--allowed-qualities", "0"]).count == 1)
        #expect(problems(["--allowed-qualities", "101"]).count == 1)
        #expect(try configuration(["--allowed-widths", "100", "--snap-widths"]).access.snapWidths)
        #expect(problems(["--snap-widths"]) == ["--snap-widths: needs --allowed-widths (the widths to round to)"])

        let base = try configuration(["--source-base-url", "https://WWW.example.org/site/"]).fetch.sourceBaseURL
        #expect(base?.description == "https://www.example.org/site/")
        for bad in ["www.example.org", "ftp://example.org", "https://example.org/?a=1", "https://example.org/#x", "/a"]
        {
            #expect(problems(["--source-base-url", bad]).count == 1, "\(bad)")
        }
        // A base under which nothing may be fetched is a mistake worth stopping for.
        #expect(
            problems(["--source-base-url", "https://cdn.example.org", "--allowed-source-hosts", "img.example.org"])
                .count == 1)
        #expect(
            problems(["--source-base-url", "https://cdn.example.org", "--allowed-source-hosts", "*.example.org"])
                .isEmpty)
        #expect(problems(["--source-base-url", "http://127.0.0.1:9000"]).count == 1)
        #expect(problems(["--source-base-url", "http://127.0.0.1:9000", "--allow-loopback-sources"]).isEmpty)
    }

    /// `--allowed-qualities` holds on `/thumb` too; a request without `q` gets the default.
    @Test func qualitiesAreAllowedOnThumb() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) { $0.access.allowedQualities = [60, 75] }
        #expect(try await h.get(h.thumb("/p.jpg", "w=100&q=75")).status == 200)
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).status == 200)
        let refused = try await h.get(h.thumb("/p.jpg", "w=100&q=80"))
        try expectProblem(refused, 400)
        let params = try #require(try refused.problem()["invalid-params"] as? [[String: String]])
        #expect(params == [["name": "q", "reason": "must be one of 60, 75"]])
    }

    /// `--snap-widths` on `/thumb`: a width outside the list is the next allowed one up (the
    /// largest above all), the height scaled with it, one cache entry with the allowed width; and
    /// the remembered target's hits stay quick answers.
    @Test func thumbWidthsSnap() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) {
            $0.access.allowedWidths = [100, 200, 400]
            $0.access.snapWidths = true
        }
        for (params, size) in [
            ("w=150", (200, 133)), ("w=99", (100, 67)), ("w=5000", (400, 267)), ("w=150&h=150&fit=cover", (200, 200)),
            ("w=150&h=75&fit=fill", (200, 100)), ("w=150&dpr=2", (400, 267)),
        ] {
            let image = try await h.get(h.thumb("/p.jpg", params)).image()
            #expect((image.width, image.height) == size, "\(params)")
        }
        #expect(try await h.get(h.thumb("/p.jpg", "w=200")).header("x-cache") == "hit")
        let again = try await h.get(h.thumb("/p.jpg", "w=150"))
        #expect(again.header("x-cache") == "hit")
        #expect(again.header("x-request-id") == nil)

        let heights = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) {
            $0.access.allowedWidths = [100, 200]
            $0.access.allowedHeights = [50]
            $0.access.snapWidths = true
        }
        // Heights restricted: h stays as asked (scaling it would leave the allowed set).
        let image = try await heights.get(heights.thumb("/p.jpg", "w=150&h=50&fit=cover")).image()
        #expect((image.width, image.height) == (200, 50))
        try expectProblem(try await heights.get(heights.thumb("/p.jpg", "w=150&h=60&fit=cover")), 400)
    }
}
