import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// Purge and stats behind the admin bearer token.
@Suite struct AdminTests {
    static let token = "test-admin-token-0123456789"
    static let auth = [("Authorization", "Bearer \(token)")]

    /// Without a token the routes are off: a 404 that says so, with or without an Authorization
    /// header and whatever the method (no 401: there is no token to find).
    @Test func withoutATokenTheEndpointsAreDisabled() async throws {
        let h = try Harness(routes: [:])
        for (target, method) in [("/cache?url=x", "DELETE"), ("/cache/stats", "GET"), ("/cache/stats", "PUT")] {
            for headers in [Self.auth, []] {
                let response = try await h.get(target, headers, method: method)
                try expectProblem(response, 404)
                #expect(try response.problem()["type"] as? String == "urn:thumbd:problem:admin-routes-disabled")
                #expect(response.header("www-authenticate") == nil)
            }
        }
        #expect(try await h.get("/cache/other").problem()["type"] as? String == "urn:thumbd:problem:not-found")
    }

    @Test func onlyTheRightBearerTokenIsLetIn() async throws {
        let h = try Harness(routes: [:]) { $0.access.adminToken = Self.token }
        for headers in [
            [], [("Authorization", "Bearer wrong")], [("Authorization", Self.token)],
            [("Authorization", "Bearer \(Self.token)x")],
        ] {
            let response = try await h.get("/cache/stats", headers)
            try expectProblem(response, 401)
            #expect(response.header("www-authenticate") == "Bearer")
        }
        #expect(try await h.get("/cache/stats", Self.auth).status == 200)
        let wrongMethod = try await h.get("/cache/stats", Self.auth, method: "POST")
        try expectProblem(wrongMethod, 405)
    }

    @Test func purgeRemovesEveryVariantOfTheSourceAndItIsFetchedAgain() async throws {
        let photo = Fixtures.jpeg(width: 640, height: 480)
        let h = try Harness(routes: ["/p.jpg": .ok(photo), "/q.jpg": .ok(photo)]) { $0.access.adminToken = Self.token }
        for params in ["w=100", "w=200", "w=150&format=webp", "w=80&h=80&fit=cover"] {
            #expect(try await h.get(h.thumb("/p.jpg", params)).status == 200)
        }
        #expect(try await h.get(h.thumb("/q.jpg", "w=100")).status == 200)
        let source = Harness.encode(h.origin.url("/p.jpg"))
        let before = try await stats(h)
        let purged = try await h.get("/cache?url=\(source)", Self.auth, method: "DELETE")
        #expect(purged.status == 200)
        let removed = try #require(try json(purged)["removed"] as? [String: Int])
        // The original, the decoded copy the second size made, and the four variants.
        #expect(removed["entries"] == 6)
        let after = try await stats(h)
        #expect(removed["bytes"] == before.bytes - after.bytes)
        #expect(after.entries == 2)  // q.jpg's original and thumbnail
        let again = try await h.get(h.thumb("/p.jpg", "w=200"))
        #expect(again.header("x-cache") == "miss")
        #expect(h.origin.requestCount(path: "/p.jpg") == 2)
        #expect(try await h.get(h.thumb("/q.jpg", "w=100")).header("x-cache") == "hit")
        try expectProblem(try await h.get("/cache?url=%2Frelative", Self.auth, method: "DELETE"), 400)
        try expectProblem(try await h.get("/cache", Self.auth, method: "DELETE"), 400)
        try expectProblem(try await h.get("/cache?url=\(source)", Self.auth), 405)
    }

    /// Hits after the first are served from the responses `ParsedTargets` kept, without the cache's
    /// lookup; they are still counted as variant hits, and a purge ends them at once.
    @Test func keptHitsAreCountedAndEndWithAPurge() async throws {
        let photo = Fixtures.jpeg(width: 640, height: 480)
        let h = try Harness(routes: ["/p.jpg": .ok(photo)]) { $0.access.adminToken = Self.token }
        let target = h.thumb("/p.jpg", "w=120")
        #expect(try await h.get(target).header("x-cache") == "miss")
        for _ in 0..<4 { #expect(try await h.get(target).header("x-cache") == "hit") }
        let kinds = try #require(
            try json(try await h.get("/cache/stats", Self.auth))["kinds"] as? [String: [String: Int]])
        #expect(kinds["variant"]?["hits"] == 4)
        let source = Harness.encode(h.origin.url("/p.jpg"))
        #expect(try await h.get("/cache?url=\(source)", Self.auth, method: "DELETE").status == 200)
        #expect(try await h.get(target).header("x-cache") == "miss")
        #expect(h.origin.requestCount(path: "/p.jpg") == 2)
        #expect(try await h.get(target).header("x-cache") == "hit")
    }

    func json(_ response: TestHTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// Entries and bytes from `GET /cache/stats`, checking its shape on the way.
    func stats(_ h: Harness) async throws -> (entries: Int, bytes: Int) {
        let response = try await h.get("/cache/stats", Self.auth)
        let body = try json(response)
        #expect(body["budget"] as? Int == 64 << 20)
        let kinds = try #require(body["kinds"] as? [String: [String: Int]])
        #expect(Set(kinds.keys) == ["original", "decoded", "variant", "info"])
        let total = try #require(body["total"] as? [String: Int])
        #expect(total["entries"] == kinds.values.reduce(0) { $0 + ($1["entries"] ?? 0) })
        return (total["entries"] ?? -1, total["bytes"] ?? -1)
    }
}
