import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// What the running service writes to its log, captured through the log's sink: request lines
/// (every cache outcome, client ids, error texts) and service events, in both formats.
@Suite struct ServiceLogTests {
    static let photo = Fixtures.jpeg(width: 300, height: 200)

    static func harness(
        _ format: LogFormat, _ capture: LogCapture, routes: [String: TestOrigin.Reply] = ["/p.jpg": .ok(photo)],
        _ configure: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws -> Harness {
        try Harness(routes: routes, log: capture) { configuration in
            configuration.logging.requests = true
            configuration.logging.format = format
            configure(&configuration)
        }
    }

    @Test func jsonLinesParseWithTheirKeysAndEscapedTexts() async throws {
        let capture = LogCapture()
        let h = try Self.harness(.json, capture)
        let thumb = h.thumb("/p.jpg")
        #expect(try await h.get(thumb, [("X-Request-Id", "trace-7")]).status == 200)
        #expect(try await h.get(thumb, [("X-Request-Id", "trace-8")]).status == 200)  // the fast hit path
        // A client's id that is not plain is replaced, so nothing of it reaches the line.
        let odd = try await h.get("/livez", [("X-Request-Id", #"evil"id\x"#)])
        let oddID = try #require(odd.header("x-request-id"))
        #expect(oddID != #"evil"id\x"#)
        // An unknown parameter's name (the client's bytes) is in the error text.
        let bad = try await h.get(thumb + "&a%22b%5C%0A%01=1")
        try expectProblem(bad, 400)

        let log = h.app.log
        _ = await capture.line(in: log) { $0.contains("\"route\":\"/livez\"") }
        _ = await capture.line(in: log) { $0.contains("\"status\":400") }
        let objects = capture.objects
        #expect(objects.allSatisfy { $0 != nil }, "\(capture.lines)")
        let all = objects.compactMap { $0 }
        let requests = all.filter { $0["event"] == nil }
        for request in requests {
            #expect(
                Set(request.keys).isSuperset(of: ["ts", "id", "method", "route", "status", "bytes", "ms", "cache"]))
            #expect(request["status"] is Int && request["bytes"] is Int)
        }
        let outcomes = requests.filter { $0["route"] as? String == "/thumb" }.map {
            "\($0["id"] as? String ?? "?") \($0["cache"] as? String ?? "?")"
        }
        #expect(outcomes.starts(with: ["trace-7 miss", "trace-8 hit"]), "\(outcomes)")
        #expect(requests.contains { $0["id"] as? String == oddID && $0["route"] as? String == "/livez" })
        let error = try #require(requests.first { $0["status"] as? Int == 400 }?["error"] as? String)
        #expect(error.contains("a\"b\\\n\u{1}"), "\(error)")
        // The service events in the same format.
        let events = all.compactMap { $0["event"] as? String }
        #expect(events.starts(with: ["settings", "start"]), "\(events)")
        let start = try #require(all.first { $0["event"] as? String == "start" })
        #expect(start["port"] as? Int == h.port)
        #expect((start["msg"] as? String)?.hasSuffix("listening on 127.0.0.1:\(h.port)") == true)
    }

    @Test func theSettingsEventLeavesTheSecretsOut() async throws {
        let capture = LogCapture()
        let token = AdminTests.token
        let h = try Self.harness(.json, capture) { configuration in
            configuration.access.signingKeys = [SigningTests.keyA]
            configuration.access.adminToken = token
        }
        h.app.log.flush()
        let key = SigningTests.keyA.map { String(format: "%02x", $0) }.joined()
        let text = capture.lines.joined(separator: "\n")
        #expect(!text.lowercased().contains(key))
        #expect(!text.contains(token))
        let settings = try #require(capture.objects.compactMap { $0 }.first { $0["event"] as? String == "settings" })
        #expect(settings["signing-keys"] as? String == "(1 keys)")
        #expect(settings["admin-token"] as? String == "(set)")
        // Every setting, typed: counts and seconds are numbers, switches booleans.
        #expect(Set(ServiceConfiguration.settings.map(\.name)).isSubset(of: Set(settings.keys)))
        #expect(settings["port"] as? Int == 0)
        #expect(settings["shutdown-grace"] as? Int == 3)
        #expect(settings["log-requests"] as? Bool == true)
        #expect(settings["log-format"] as? String == "json")
        #expect(settings["cache-bytes"] as? String == "64M")
    }

    @Test func everyCacheOutcomeIsLoggedStaleIncluded() async throws {
        let capture = LogCapture()
        let h = try Self.harness(
            .logfmt, capture, routes: ["/p.jpg": .cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=60")]
        ) { configuration in
            configuration.freshness.minSourceTTL = .zero
            configuration.freshness.staleWhileRevalidate = .zero
        }
        let thumb = h.thumb("/p.jpg")
        #expect(try await h.get(thumb).header("x-cache") == "miss")
        #expect(try await h.get(thumb).status == 200)  // a hit
        // The origin goes down past expiry: the stale thumbnail is answered (stale-if-error).
        h.routes.set("/p.jpg", .raw([]))
        h.monotonic.advance(.seconds(61))
        let stale = try await h.get(thumb)
        #expect(stale.header("x-cache") == "stale")
        let log = h.app.log
        for outcome in ["miss", "hit", "stale"] {
            let line = await capture.line(in: log) { $0.hasSuffix(" cache=\(outcome)") }
            #expect(line?.contains(" route=/thumb status=200 ") == true, "cache=\(outcome): \(capture.lines)")
        }
        #expect(capture.lines.contains { $0.contains(" event=start msg=\"thumbd ") })
    }
}
