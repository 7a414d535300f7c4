import Foundation
import TestSupport
import Testing
import ThumbnailCore
import Vips

@testable import ThumbnailService

/// `GET /metrics`: the Prometheus page moves as requests are answered, passes `promtool check
/// metrics`, and moves to its own listener with `--metrics-listen`.
@Suite struct MetricsTests {
    static let photo = Fixtures.jpeg(width: 300, height: 200)

    @Test func countersMoveAsRequestsAreAnswered() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let before = try await Self.scrape(h.port)
        #expect(before["thumbd_build_info{version=\"\(ThumbnailApp.version)\",libvips=\"\(Vips.version)\"}"] == 1)
        #expect(before[Self.thumb(200, "miss")] == nil)

        let target = h.thumb("/p.jpg")
        #expect(try await h.get(target).status == 200)  // a miss: fetched, rendered
        #expect(try await h.get(target).status == 200)  // a hit, answered by the fast path
        #expect(try await h.get(target, method: "HEAD").status == 200)
        #expect(try await h.get("/nowhere").status == 404)
        #expect(try await h.get("/thumb?w=0").status == 400)

        let after = try await Self.scrape(h.port)
        #expect(after[Self.thumb(200, "miss")] == 1)
        #expect(after[Self.thumb(200, "hit")] == 1)
        #expect(after[Self.thumb(200, "hit", method: "HEAD")] == 1)
        #expect(after[Self.thumb(400, "none")] == 1)
        #expect(after[Self.requests("other", "GET", 404, "none")] == 1)
        // The first scrape was answered before the second was made.
        #expect(after[Self.requests("/metrics", "GET", 200, "none")] == 1)
        #expect(after["thumbd_request_duration_seconds_count{route=\"/thumb\",cache=\"hit\"}"] == 2)
        #expect(after["thumbd_request_duration_seconds_bucket{route=\"/thumb\",cache=\"hit\",le=\"+Inf\"}"] == 2)
        #expect(after["thumbd_cache_hits_total{kind=\"variant\"}"] == 2)
        #expect(after["thumbd_cache_entries{kind=\"variant\"}"] == 1)
        #expect(after["thumbd_cache_entries{kind=\"original\"}"] == 1)
        #expect(after["thumbd_source_fetches_total{result=\"ok\"}"] == 1)
        #expect(after["thumbd_source_bytes_total"] == Double(Self.photo.count))
        #expect(after["thumbd_source_fetch_duration_seconds_count"] == 1)
        #expect(after["thumbd_renders_total{path=\"original\"}"] == 1)
        #expect(after["thumbd_encode_duration_seconds_count{format=\"jpeg\",input=\"original\"}"] == 1)
        #expect(after["thumbd_jobs_admitted_total"] == 1)
        #expect(after["thumbd_jobs_in_flight"] == 0)
        #expect((after["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((after["process_open_fds"] ?? 0) > 0)
        #expect((after["process_start_time_seconds"] ?? 0) > 1_600_000_000)
        #expect(after["thumbd_work_memory_budget_bytes"] == Double(h.app.configuration.processing.workBytes))
        #expect(after["thumbd_workers_usable"] == Double(h.app.configuration.processing.workers))
        #expect(after["thumbd_workers_stuck"] == 0)
        #expect(after["thumbd_workers_replaced_total"] == 0)
        #expect(after["thumbd_jobs_timed_out_total"] == 0)
    }

    @Test func aDecodedCopyAndItsCutAreTimedByFormat() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).status == 200)
        #expect(try await h.get(h.thumb("/p.jpg", "w=120&format=png")).status == 200)  // makes the copy
        #expect(try await h.get(h.thumb("/p.jpg", "w=90&format=webp")).status == 200)  // cut from it
        let page = try await Self.scrape(h.port)
        #expect(page["thumbd_decode_duration_seconds_count{format=\"jpeg\"}"] == 1)
        #expect(page["thumbd_encode_duration_seconds_count{format=\"png\",input=\"copy\"}"] == 1)
        #expect(page["thumbd_encode_duration_seconds_count{format=\"webp\",input=\"copy\"}"] == 1)
        #expect(page["thumbd_renders_total{path=\"copy_made\"}"] == 1)
        #expect(page["thumbd_renders_total{path=\"from_copy\"}"] == 1)
    }

    @Test func signatureFailuresAreCountedByReason() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) { $0.access.signingKeys = [SigningTests.keyA] }
        #expect(try await h.get(h.thumb("/p.jpg")).status == 403)
        let now = Int(Date().timeIntervalSince1970)
        let expired = URLSigner.sign(h.thumb("/p.jpg", "w=100&exp=\(now - 10)"), key: SigningTests.keyA)
        #expect(try await h.get(expired).status == 403)
        let page = try await Self.scrape(h.port)
        #expect(page["thumbd_signature_failures_total{reason=\"invalid\"}"] == 1)
        #expect(page["thumbd_signature_failures_total{reason=\"expired\"}"] == 1)
    }

    /// promtool (Debian `prometheus`, installed by scripts/test.sh) must be there: without it this
    /// fails rather than skips.
    @Test func thePagePassesPromtool() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo), "/boom": .status(500)])
        _ = try await h.get(h.thumb("/p.jpg"))
        _ = try await h.get(h.thumb("/p.jpg"))
        _ = try await h.get(h.thumb("/boom"))
        _ = try await h.get("/livez", method: "HEAD")
        _ = try await h.get("/metrics", method: "POST")
        let response = try await h.get("/metrics")
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        let promtool = try #require(Self.which("promtool"), "promtool not found: scripts/setup.sh prometheus")
        let outcome = try await ChildProcess.run(
            promtool, ["check", "metrics"], input: response.body, mergeErrors: true)
        let output = outcome.outputText
        #expect(outcome.status == 0, "\(output)")
        #expect(output.isEmpty, "lint: \(output)")
        #expect(response.text.contains("thumbd_source_fetches_total{result=\"origin_failed\"} 1"))
        #expect(response.text.contains(Self.requests("/metrics", "POST", 405, "none")))
    }

    @Test func aSeparateListenerServesMetricsAndTheMainPortDoesNot() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) {
            $0.server.metricsListen = ListenAddress(host: "127.0.0.1", port: 0)
        }
        let metricsPort = try #require(h.app.metricsPort)
        #expect(metricsPort != h.port)
        try expectProblem(try await h.get("/metrics"), 404)
        #expect(try await h.get(h.thumb("/p.jpg")).status == 200)
        let page = try await Self.scrape(metricsPort)
        #expect(page[Self.thumb(200, "miss")] == 1)
        #expect(page[Self.requests("/metrics", "GET", 404, "none")] == 1)
        try expectProblem(
            try await TestHTTPClient.request(port: metricsPort, target: h.thumb("/p.jpg")), 404)
        #expect(try await TestHTTPClient.request("HEAD", port: metricsPort, target: "/metrics").status == 200)
    }

    @Test func metricsListenIsReadAsAddressAndPort() {
        #expect(ListenAddress(parsing: "127.0.0.1:9464") == ListenAddress(host: "127.0.0.1", port: 9464))
        #expect(ListenAddress(parsing: "[::1]:0") == ListenAddress(host: "::1", port: 0))
        #expect(ListenAddress(parsing: "[::1]:0")?.description == "[::1]:0")
        for bad in ["localhost:9464", "::1:80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "[::1]", "1.2.3.4:+9"] {
            #expect(ListenAddress(parsing: bad) == nil, "\(bad)")
        }
        guard
            case .success(.run(let config)) = ServiceConfiguration.load(
                arguments: [], environment: ["THUMBD_METRICS_LISTEN": "127.0.0.1:9464"])
        else {
            Issue.record("not loaded")
            return
        }
        #expect(config.server.metricsListen == ListenAddress(host: "127.0.0.1", port: 9464))
        guard case .failure = ServiceConfiguration.load(arguments: ["--metrics-listen", "nope"], environment: [:])
        else {
            Issue.record("accepted a bad address")
            return
        }
    }

    /// A test of the format writer itself: escaping, and histograms cumulative with +Inf = count.
    @Test func theWriterEscapesAndCumulates() {
        var text = PrometheusText()
        text.counter("x_total", "Help.", [([("a", "q\"b\\n\nc")], 3)])
        text.histogram(
            "d_seconds", "Help.",
            [([], HistogramSnapshot(bounds: [0.5, 1], cumulativeCounts: [1, 2], count: 3, sum: 2.25))])
        #expect(
            text.text == """
                # HELP x_total Help.
                # TYPE x_total counter
                x_total{a="q\\"b\\\\n\\nc"} 3
                # HELP d_seconds Help.
                # TYPE d_seconds histogram
                d_seconds_bucket{le="0.5"} 1
                d_seconds_bucket{le="1"} 2
                d_seconds_bucket{le="+Inf"} 3
                d_seconds_sum 2.25
                d_seconds_count 3

                """)
    }

    // MARK: Helpers

    static func requests(_ route: String, _ method: String, _ status: Int, _ cache: String) -> String {
        "thumbd_requests_total{route=\"\(route)\",method=\"\(method)\",status=\"\(status)\",cache=\"\(cache)\"}"
    }

    static func thumb(_ status: Int, _ cache: String, method: String = "GET") -> String {
        requests("/thumb", method, status, cache)
    }

    /// The page's samples, by name and labels exactly as written.
    static func scrape(_ port: Int) async throws -> [String: Double] {
        let response = try await TestHTTPClient.request(port: port, target: "/metrics")
        #expect(response.status == 200)
        var samples: [String: Double] = [:]
        for line in response.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        return samples
    }

    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
