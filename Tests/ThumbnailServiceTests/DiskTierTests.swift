import Foundation
import Primitives
import TestSupport
import Testing
import ThumbnailCore

@testable import DiskCache
@testable import ThumbnailService

/// The disk tier end to end (`--disk-cache-dir`): a real folder, a real origin on 127.0.0.1, real
/// libvips, the service stopped and started again on the same folder as a deploy does — what it
/// had is served from disk with the same bytes and ETag and no origin fetch, and freshness,
/// revalidation, stale-if-error and purges hold for those entries as for memory ones.
@Suite struct DiskTierTests {
    static let photo = Fixtures.jpeg(width: 600, height: 400)
    static let adminToken = "disk-tier-admin-token-0123"

    static func harness(
        _ routes: [String: TestOrigin.Reply] = ["/p.jpg": .ok(photo)],
        folder: String = makeTemporaryFolder("thumbd-disk"),
        log: LogCapture? = nil, _ configure: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws -> Harness {
        try Harness(routes: routes, log: log) { configuration in
            configuration.cache.diskDirectory = folder
            configuration.access.adminToken = adminToken
            configure(&configuration)
        }
    }

    /// The next life of a service: the previous one stopped (its disk writes done), a new one on
    /// the same settings — folder, origin — with a clock of its own.
    final class Life: Sendable {
        let app: ThumbnailApp
        let clock = MovableClock()

        init(after previous: ThumbnailApp, log: LogCapture? = nil) throws {
            previous.shutdown()
            let clock = clock
            app = try ThumbnailApp(configuration: previous.configuration, clock: { clock.now }, logSink: log?.sink)
            try app.start()
        }

        deinit { app.shutdown() }

        func get(_ target: String, _ headers: [(String, String)] = [], method: String = "GET") async throws
            -> TestHTTPResponse
        {
            try await TestHTTPClient.request(method, port: app.port, target: target, headers: headers)
        }

        func purge(_ url: String) async throws -> TestHTTPResponse {
            try await get(
                "/cache?url=\(Harness.encode(url))", [("Authorization", "Bearer \(DiskTierTests.adminToken)")],
                method: "DELETE")
        }
    }

    static func entryFiles(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".d1") }.sorted()
    }

    @Test func aRestartServesWhatItHadFromDiskWithoutAFetch() async throws {
        let h = try Self.harness()
        let first = try await h.get(h.thumb("/p.jpg", "w=100"))
        #expect(first.status == 200 && first.header("x-cache") == "miss")
        let info = try await h.get("/info?url=\(Harness.encode(h.origin.url("/p.jpg")))")
        #expect(info.status == 200)
        #expect(h.origin.totalRequests == 1)

        let next = try Life(after: h.app)
        let again = try await next.get(h.thumb("/p.jpg", "w=100"))
        #expect(again.status == 200)
        #expect(again.header("x-cache") == "disk")
        #expect(again.body == first.body)
        #expect(again.header("etag") == first.header("etag"))
        #expect(again.header("content-type") == "image/jpeg")
        // In memory from now on.
        #expect(try await next.get(h.thumb("/p.jpg", "w=100")).header("x-cache") == "hit")
        // A 304 for the ETag the client had from before the restart.
        let revalidated = try await next.get(h.thumb("/p.jpg", "w=100"), [("If-None-Match", first.header("etag")!)])
        #expect(revalidated.status == 304)
        // The info document too, and a new size made from the original on disk.
        let infoAgain = try await next.get("/info?url=\(Harness.encode(h.origin.url("/p.jpg")))")
        #expect(infoAgain.header("x-cache") == "disk")
        #expect(infoAgain.body == info.body)
        let newSize = try await next.get(h.thumb("/p.jpg", "w=200"))
        #expect(newSize.status == 200 && newSize.header("x-cache") == "miss")
        #expect(try newSize.image().width == 200)
        #expect(h.origin.totalRequests == 1)
        let metrics = try #require(next.app.pipeline.diskMetrics)
        #expect(metrics.served == 3)  // the thumbnail, the info document, the original
        let page = try await next.get("/metrics").text
        #expect(page.contains("thumbd_disk_cache_served_total 3"))
        #expect(page.contains("cache=\"disk\""))
        // /cache/stats says the same, in its `disk` object.
        let stats = try InfoTests.json(
            try await next.get("/cache/stats", [("Authorization", "Bearer \(Self.adminToken)")]))
        let disk = try #require(stats["disk"] as? [String: Any], "\(stats)")
        #expect(disk["served"] as? Int == 3)
        #expect(disk["budget"] as? Int == h.app.configuration.cache.diskBytes)
        #expect((disk["entries"] as? Int ?? 0) >= 3)
        #expect((disk["bytes"] as? Int ?? 0) > 0)
        #expect(disk["writesDisabled"] as? Bool == false)
    }

    @Test func aPurgeRemovesTheDiskEntriesAcrossRestarts() async throws {
        let h = try Self.harness()
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).status == 200)
        #expect(try await h.get(h.thumb("/p.jpg", "w=150")).status == 200)
        let folder = h.app.configuration.cache.diskDirectory

        // Entries written in an earlier life are found by their source's name alone.
        let second = try Life(after: h.app)
        let purged = try await second.purge(h.origin.url("/p.jpg"))
        #expect(purged.status == 200)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(purged.body)) as? [String: Any])
        let disk = try #require(body["disk"] as? [String: Any])
        #expect(disk["entries"] as? Int == 3)  // the original and two sizes
        #expect(Self.entryFiles(folder).isEmpty)

        let third = try Life(after: second.app)
        let after = try await third.get(h.thumb("/p.jpg", "w=100"))
        #expect(after.status == 200 && after.header("x-cache") == "miss")
        #expect(h.origin.totalRequests == 2)
    }

    @Test func aRevalidationRenewsTheDiskEntries() async throws {
        // An hour: the disk's expiry runs on the wall clock, and under a sanitizer on a busy machine
        // minutes can pass between two lives.
        let h = try Self.harness(["/p.jpg": .cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=3600")]) {
            $0.freshness.minSourceTTL = .zero
            $0.freshness.staleWhileRevalidate = .zero
        }
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).header("cache-control") == "public, max-age=3150")

        let second = try Life(after: h.app)
        #expect(try await second.get(h.thumb("/p.jpg", "w=100")).header("x-cache") == "disk")
        // Stale now; the origin says "not modified", and now allows a day.
        second.clock.advance(.seconds(3601))
        h.routes.set("/p.jpg", .cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=86400"))
        let renewed = try await second.get(h.thumb("/p.jpg", "w=100"))
        #expect(renewed.header("x-cache") == "revalidated")
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)

        // The next life reads the renewed expiry: a day, not what was left of the hour.
        let third = try Life(after: second.app)
        let read = try await third.get(h.thumb("/p.jpg", "w=100"))
        #expect(read.header("x-cache") == "disk")
        let maxAge = read.header("cache-control").flatMap { Int($0.split(separator: "=").last ?? "") } ?? 0
        #expect(maxAge > 70_000)
        #expect(h.origin.totalRequests == 2)
    }

    @Test func aStaleDiskEntryIsServedWhenItsOriginFails() async throws {
        let h = try Self.harness(["/p.jpg": .cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=1")]) {
            $0.freshness.minSourceTTL = .zero
            $0.freshness.staleWhileRevalidate = .zero
        }
        let first = try await h.get(h.thumb("/p.jpg", "w=100"))
        #expect(first.status == 200)
        h.app.shutdown()
        // The disk's expiry is on the wall clock: let it pass.
        try await Task.sleep(for: .milliseconds(1_500))
        h.routes.set("/p.jpg", .status(503))

        let second = try Life(after: h.app)
        let stale = try await second.get(h.thumb("/p.jpg", "w=100"))
        #expect(stale.status == 200)
        #expect(stale.header("x-cache") == "stale")
        #expect(stale.body == first.body)
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)
    }

    /// A service whose source was written to disk with a one-second lifetime, stopped, and the
    /// second passed: the next life finds the original on disk stale. (The disk's expiry runs on
    /// the wall clock, so a test clock cannot make it pass.)
    static func staleOnDisk(_ configure: @escaping (inout ServiceConfiguration) -> Void = { _ in }) async throws
        -> Harness
    {
        let h = try harness(["/p.jpg": .cacheable(photo, etag: "\"v1\"", cacheControl: "max-age=1")]) {
            $0.freshness.minSourceTTL = .zero
            $0.freshness.staleWhileRevalidate = .zero
            configure(&$0)
        }
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).status == 200)
        h.app.shutdown()
        try await Task.sleep(for: .milliseconds(1_500))
        return h
    }

    static func maxAge(_ response: TestHTTPResponse) -> Int {
        response.header("cache-control").flatMap { Int($0.split(separator: "=").last ?? "") } ?? 0
    }

    /// A new size of a source whose original on disk is stale: the origin is asked whether it
    /// changed (one conditional request), and "not modified" makes it from the disk's bytes and
    /// renews them — on disk too, for the next life.
    @Test func aStaleOriginalOnDiskIsRevalidatedNotFetchedAgain() async throws {
        let h = try await Self.staleOnDisk()
        h.routes.set("/p.jpg", .cacheable(Self.photo, etag: "\"v1\"", cacheControl: "max-age=86400"))
        let second = try Life(after: h.app)
        let made = try await second.get(h.thumb("/p.jpg", "w=200"))
        #expect(made.status == 200 && made.header("x-cache") == "miss")
        #expect(try made.image().width == 200)
        #expect(h.origin.totalRequests == 2)
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)
        #expect(Self.maxAge(made) > 70_000)
        // The renewal reached the disk: the next life reads a day, and asks nothing.
        let third = try Life(after: second.app)
        let read = try await third.get(h.thumb("/p.jpg", "w=200"))
        #expect(read.header("x-cache") == "disk")
        #expect(Self.maxAge(read) > 70_000)
        #expect(h.origin.totalRequests == 2)
    }

    /// The same, the source changed meanwhile: made from the new bytes, and what was made from
    /// the old ones is gone from the disk.
    @Test func aChangedSourceReplacesItsStaleOriginalOnDisk() async throws {
        let h = try await Self.staleOnDisk()
        h.routes.set("/p.jpg", .cacheable(Fixtures.jpeg(width: 400, height: 400), etag: "\"v2\""))
        let second = try Life(after: h.app)
        let changed = try await second.get(h.thumb("/p.jpg", "w=300"))
        #expect(changed.status == 200)
        #expect(try changed.image().height == 300)
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)
        let remade = try await second.get(h.thumb("/p.jpg", "w=100"))
        #expect(remade.header("x-cache") == "miss")
        #expect(try remade.image().height == 100)
        #expect(h.origin.totalRequests == 2)
    }

    /// A stale original on disk whose origin fails (transiently) stands in for it within
    /// stale-if-error; past it, the failure is the answer.
    @Test func aStaleOriginalOnDiskStandsInForAFailingOriginWithinStaleIfError() async throws {
        let h = try await Self.staleOnDisk { $0.freshness.staleIfError = .seconds(600) }
        h.routes.set("/p.jpg", .status(503))
        let second = try Life(after: h.app)
        let made = try await second.get(h.thumb("/p.jpg", "w=200"))
        #expect(made.status == 200)
        #expect(try made.image().width == 200)
        #expect(h.origin.conditionalRequests(path: "/p.jpg").count == 1)

        // The origin holds its failure while stale-if-error runs out.
        let gate = TestGate()
        h.routes.set("/p.jpg", .gated(gate, .status(503)))
        let third = try Life(after: second.app)
        async let answer = third.get(h.thumb("/p.jpg", "w=300"))
        #expect(await eventually { h.origin.conditionalRequests(path: "/p.jpg").count == 2 })
        third.clock.advance(.seconds(601))
        gate.open()
        #expect(try await answer.status == 502)
    }

    @Test func aTornOrEmptyFileIsDroppedAndNeverServed() async throws {
        let h = try Self.harness()
        let first = try await h.get(h.thumb("/p.jpg", "w=100"))
        #expect(first.status == 200)
        h.app.shutdown()
        let folder = h.app.configuration.cache.diskDirectory
        let files = Self.entryFiles(folder)
        #expect(files.count == 2)  // the original and the thumbnail
        // One file cut short (a crash mid-write that was renamed anyway), one emptied.
        for (index, name) in files.enumerated() {
            let path = "\(folder)/\(name)"
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(truncate(path, off_t(index == 0 ? 0 : size / 2)) == 0)
        }

        let second = try Life(after: h.app)
        let again = try await second.get(h.thumb("/p.jpg", "w=100"))
        #expect(again.status == 200)
        #expect(again.header("x-cache") == "miss")
        #expect(again.body == first.body)
        #expect(h.origin.totalRequests == 2)
        let metrics = try #require(second.app.pipeline.diskMetrics)
        // The empty one is dropped when the folder is opened, the torn one when it is read.
        #expect(metrics.store.corruptDropped >= 1)
        #expect(metrics.served == 0)
    }

    @Test func aFolderInUseOrUnusableStopsTheStart() throws {
        let h = try Self.harness()
        #expect {
            _ = try ThumbnailApp(configuration: h.app.configuration)
        } throws: { error in
            guard let error = error as? DiskStoreError, case .locked = error.reason else { return false }
            return error.description.contains(h.app.configuration.cache.diskDirectory)
        }
        let file = makeTemporaryFolder("thumbd-disk-file") + "/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
        var configuration = h.app.configuration
        configuration.cache.diskDirectory = file
        #expect {
            _ = try ThumbnailApp(configuration: configuration)
        } throws: { error in
            (error as? DiskStoreError)?.reason == .notADirectory
        }
    }

    @Test func theFolderStaysWithinItsBudget() async throws {
        var routes: [String: TestOrigin.Reply] = [:]
        for index in 0..<24 { routes["/p\(index).jpg"] = .ok(Fixtures.jpeg(width: 400 + index, height: 300)) }
        // Every entry takes a 4-KiB block at least: 24 thumbnails cannot fit in 64 KiB (and the
        // originals, over an eighth of it, are not stored at all).
        let budget = 64 << 10
        let h = try Self.harness(routes) { $0.cache.diskBytes = budget }
        for index in 0..<24 { #expect(try await h.get(h.thumb("/p\(index).jpg", "w=100")).status == 200) }
        h.app.shutdown()
        let folder = h.app.configuration.cache.diskDirectory
        let metrics = try #require(h.app.pipeline.diskMetrics)
        #expect(metrics.store.evictions > 0)
        #expect(metrics.store.bytes <= budget)
        var onDisk = 0
        for name in Self.entryFiles(folder) {
            var status = stat()
            #expect(stat("\(folder)/\(name)", &status) == 0)
            onDisk += Int(status.st_blocks) * 512
        }
        #expect(onDisk <= budget)
        // The most recent source is still there after a restart.
        let next = try Life(after: h.app)
        #expect(try await next.get(h.thumb("/p23.jpg", "w=100")).header("x-cache") == "disk")
    }

    /// A disk that fails every write (`ENOSPC` injected into the store's writes: what a full disk
    /// answers, on any machine; the next test fills a real one where a tmpfs can be mounted).
    @Test func aFailingDiskStopsWritesAndTheServiceKeepsServing() async throws {
        let log = LogCapture()
        var options = DiskStoreOptions()
        options.faults.writeError = { ENOSPC }
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)], log: log) { configuration in
            configuration.cache.diskDirectory = makeTemporaryFolder("thumbd-disk")
        }
        // The harness's app has no faults: a second one, on a folder of its own, has them.
        h.app.shutdown()
        var configuration = h.app.configuration
        configuration.cache.diskDirectory = makeTemporaryFolder("thumbd-disk-failing")
        let app = try ThumbnailApp(configuration: configuration, logSink: log.sink, diskOptions: options)
        defer { app.shutdown() }
        try app.start()
        let first = try await TestHTTPClient.request("GET", port: app.port, target: h.thumb("/p.jpg", "w=100"))
        #expect(first.status == 200 && first.header("x-cache") == "miss")
        #expect(await eventually(app.pipeline.diskMetrics!) { $0.store.writesDisabled && $0.writeQueue == 0 })
        #expect(app.pipeline.diskMetrics!.store.writeFailures >= 1)
        #expect(await log.line(in: app.log) { $0.contains("event=disk-cache-writes-stopped") } != nil)
        #expect(Self.entryFiles(configuration.cache.diskDirectory).isEmpty)
        // Still serving: from memory, and new work from the origin.
        try await Self.expectStillServing(app, hit: h.thumb("/p.jpg", "w=100"), new: h.thumb("/p.jpg", "w=60"))
    }

    @Test(.enabled(if: PrivateMount.isAvailable, "needs CAP_SYS_ADMIN to mount a tmpfs in a private namespace"))
    func aFullDiskStopsWritesAndTheServiceKeepsServing() async throws {
        var routes: [String: TestOrigin.Reply] = [:]
        for index in 0..<6 { routes["/p\(index).jpg"] = .ok(Fixtures.detailedJPEG(width: 600 + index, height: 400)) }
        let h = try Harness(routes: routes)
        var base = h.app.configuration
        base.cache.diskBytes = 64 << 20  // far more than the 256 KiB file system holds
        let settings = base
        let log = LogCapture()
        // The app opens its folder on the thread that sees the tmpfs; it works through the
        // descriptor from then on.
        let app = try await PrivateMount.run(options: "size=262144") { path in
            var configuration = settings
            configuration.cache.diskDirectory = path
            return try ThumbnailApp(configuration: configuration, logSink: log.sink)
        }
        defer { app.shutdown() }
        try app.start()
        for index in 0..<6 {
            let response = try await TestHTTPClient.request(
                "GET", port: app.port, target: h.thumb("/p\(index).jpg", "w=300"))
            #expect(response.status == 200)
        }
        #expect(await eventually(app.pipeline.diskMetrics!) { $0.store.writesDisabled && $0.writeQueue == 0 })
        let metrics = try #require(app.pipeline.diskMetrics)
        #expect(metrics.store.writeFailures >= 1)
        #expect(log.lines.contains { $0.contains("event=disk-cache-writes-stopped") })
        // Still serving: from memory, and from the origin.
        try await Self.expectStillServing(app, hit: h.thumb("/p0.jpg", "w=300"), new: h.thumb("/p5.jpg", "w=120"))
    }

    /// With its disk writes stopped, `app` still answers `hit` from memory and makes `new` from
    /// the origin, and `/metrics` says the writes are stopped.
    static func expectStillServing(
        _ app: ThumbnailApp, hit: String, new: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let answer = try await TestHTTPClient.request("GET", port: app.port, target: hit)
        #expect(answer.status == 200 && answer.header("x-cache") == "hit", sourceLocation: sourceLocation)
        let made = try await TestHTTPClient.request("GET", port: app.port, target: new)
        #expect(made.status == 200, sourceLocation: sourceLocation)
        let page = try await TestHTTPClient.request("GET", port: app.port, target: "/metrics").text
        #expect(page.contains("thumbd_disk_cache_writes_disabled 1"), sourceLocation: sourceLocation)
    }
}

/// The quick answer's disk path: a target seen before whose thumbnail left memory is answered from
/// disk on the polling thread when its file is in the kernel's caches.
@Suite struct DiskQuickAnswerTests {
    @Test func aThumbnailEvictedFromMemoryIsAnsweredFromDisk() async throws {
        var routes: [String: TestOrigin.Reply] = [:]
        for index in 0..<16 { routes["/p\(index).jpg"] = .ok(Fixtures.jpeg(width: 300 + index, height: 200)) }
        // A memory cache of a few thumbnails: the first is evicted by the others.
        let h = try DiskTierTests.harness(routes) { $0.cache.bytes = 48 << 10 }
        let first = try await h.get(h.thumb("/p0.jpg", "w=100"))
        #expect(first.status == 200)
        for index in 1..<16 { #expect(try await h.get(h.thumb("/p\(index).jpg", "w=100")).status == 200) }
        #expect(await eventually(h.app.pipeline.diskMetrics!) { $0.writeQueue == 0 })
        #expect(h.app.pipeline.metrics.cache[.variant].evictions > 0)
        let fetches = h.origin.totalRequests
        let misses = h.app.pipeline.metrics.cache[.variant].misses

        let again = try await h.get(h.thumb("/p0.jpg", "w=100"))
        #expect(again.status == 200)
        #expect(again.header("x-cache") == "disk")
        // The quick answer's (no request id: that is the full path's).
        #expect(again.header("x-request-id") == nil)
        #expect(again.body == first.body)
        #expect(again.header("etag") == first.header("etag"))
        #expect(h.origin.totalRequests == fetches)
        // One memory miss, counted once.
        #expect(h.app.pipeline.metrics.cache[.variant].misses == misses + 1)
        let notModified = try await h.get(h.thumb("/p0.jpg", "w=100"), [("If-None-Match", first.header("etag")!)])
        #expect(notModified.status == 304)
    }
}
