import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

/// Originals stay fresh: lifetimes, revalidation, stale-while-revalidate, stale-if-error,
/// no-store, and the lifetime a variant may promise — all on a clock the test moves.
@Suite struct FreshnessTests {
    let photo = "http://origin.example/photo.jpg"

    /// A pipeline on `clock` whose `prepare` records the lifetime each prepared answer promises.
    final class Rig: Sendable {
        let clock = FakeClock()
        let fetcher: FakeFetcher
        let imaging = FakeImaging()
        let promises = Promises()
        let pipeline: FakePipeline

        init(
            _ fetcher: FakeFetcher, policy: FreshnessPolicy = FreshnessPolicy.test(staleWhileRevalidate: .zero),
            maxPromise: Duration = .seconds(86_400), errorTTL: Duration = .seconds(10)
        ) {
            self.fetcher = fetcher
            let clock = clock
            let promises = promises
            pipeline = FakePipeline(
                cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000),
                workers: WorkerPool(workers: 2, queueCapacity: 16), fetcher: fetcher, imaging: imaging,
                limits: .test(errorTTL: errorTTL, freshness: policy, maxPromisedLifetime: maxPromise),
                now: { clock.now }
            ) { image, _, promise in
                promises.log.withLock { $0.append(promise) }
                return String(decoding: image.bytes.array, as: UTF8.self)
            }
        }

        var lastPromise: Duration? { promises.log.withLock { $0.last } }

        func get(_ url: String, width: Int = 100) async throws -> (
            Result<FakePipeline.Variant, ThumbnailError>, FakePipeline.Outcome
        ) {
            await pipeline.thumbnail(try request(url, [("w", "\(width)")]))
        }
    }

    /// The lifetimes the prepared answers promised, in order.
    final class Promises: Sendable {
        let log = Locked<[Duration]>([])
    }

    static let lifetime = OriginDirectives(lifetime: .seconds(600))

    @Test func aLifetimeIsTheOriginsClampedOrTheDefault() {
        let policy = FreshnessPolicy.test(minimum: .seconds(60), maximum: .seconds(3600), fallback: .seconds(300))
        #expect(policy.lifetime(OriginDirectives(lifetime: .seconds(120))) == .seconds(120))
        #expect(policy.lifetime(OriginDirectives(lifetime: .zero)) == .seconds(60))
        #expect(policy.lifetime(OriginDirectives(lifetime: .seconds(86_400))) == .seconds(3600))
        #expect(policy.lifetime(OriginDirectives()) == .seconds(300))
        // Crossed bounds: the maximum (how soon a change shows) wins.
        let crossed = FreshnessPolicy.test(minimum: .seconds(100), maximum: .seconds(10))
        #expect(crossed.lifetime(OriginDirectives(lifetime: .seconds(50))) == .seconds(10))
    }

    @Test func aStaleVariantIsRevalidatedAndNotModifiedRenewsEverythingWithoutARender() async throws {
        let rig = Rig(FakeFetcher([photo: .success([200, 100])], directives: Self.lifetime))
        #expect(try await rig.get(photo).0.get().image.width == 100)
        #expect(try await rig.get(photo, width: 50).0.get().image.width == 50)  // makes the decoded copy
        #expect(rig.pipeline.metrics.renders.copiesMade == 1)
        let renders = rig.imaging.encodes
        rig.clock.advance(.seconds(601))

        let (renewed, outcome) = try await rig.get(photo)
        #expect(outcome == .revalidated)
        #expect(try text(renewed) == "w=100,h=50")
        #expect(rig.fetcher.conditionalFetches(photo) == [SourceValidators(etag: FakeFetcher.etag(of: [200, 100]))])
        #expect(rig.fetcher.count(photo) == 2)
        #expect(rig.pipeline.metrics.fetches.notModified == 1)
        // The other width, and a new one cut from the decoded copy: renewed too, no fetch, no decode.
        #expect(try await rig.get(photo, width: 50).1 == .hit)
        #expect(try await rig.get(photo, width: 40).0.get().image.width == 40)
        #expect(rig.fetcher.count(photo) == 2)
        #expect(rig.imaging.encodes == renders + 1)
        #expect(rig.pipeline.metrics.renders.fromCopy == 1)
        #expect(rig.imaging.decodes.withLock { $0 } == 1)
    }

    @Test func changedBytesReplaceTheOriginalAndDropEverythingMadeFromIt() async throws {
        let rig = Rig(FakeFetcher([photo: .success([200, 100])], directives: Self.lifetime))
        _ = try await rig.get(photo).0.get()
        _ = try await rig.get(photo, width: 50).0.get()
        rig.fetcher.set(photo, .success([100, 100]))
        rig.clock.advance(.seconds(601))

        let (first, outcome) = try await rig.get(photo)
        #expect(outcome == .miss)
        #expect(try text(first) == "w=100,h=100")
        #expect(rig.pipeline.metrics.fetches.changed == 1)
        // Every width is made again from the new bytes, without another fetch.
        let (second, secondOutcome) = try await rig.get(photo, width: 50)
        #expect(try text(second) == "w=50,h=50")
        #expect(secondOutcome == .miss)
        #expect(rig.fetcher.count(photo) == 2)
    }

    @Test func withinStaleWhileRevalidateTheStaleVariantIsAnsweredAtOnceAndRevalidatedOnce() async throws {
        let gate = Gate(open: true)
        let rig = Rig(
            FakeFetcher([photo: .success([200, 100])], gate: gate, directives: Self.lifetime),
            policy: FreshnessPolicy.test(staleWhileRevalidate: .seconds(60)))
        _ = try await rig.get(photo).0.get()
        gate.close()
        rig.clock.advance(.seconds(630))

        let (stale, outcome) = try await rig.get(photo)
        #expect(outcome == .stale)
        #expect(try text(stale) == "w=100,h=50")
        #expect(rig.lastPromise == .zero)  // a stale answer promises nothing downstream
        #expect(try await rig.get(photo).1 == .stale)
        #expect(rig.fetcher.conditionalFetches(photo).count == 1)  // one revalidation for both
        gate.open()
        #expect(await eventually(rig.pipeline.metrics) { $0.fetches.notModified == 1 })
        #expect(try await rig.get(photo).1 == .hit)
        #expect(rig.fetcher.count(photo) == 2)
        #expect(rig.pipeline.metrics.servedStale == 2)
    }

    @Test func pastTheWindowConcurrentRequestsWaitForOneRevalidation() async throws {
        let gate = Gate(open: true)
        let rig = Rig(FakeFetcher([photo: .success([200, 100])], gate: gate, directives: Self.lifetime))
        _ = try await rig.get(photo).0.get()
        gate.close()
        rig.clock.advance(.seconds(601))
        async let first = rig.get(photo)
        async let second = rig.get(photo)
        // Both have found the stale variant (each lookup counts a hit) and the one revalidation is out.
        #expect(
            await eventually { rig.pipeline.metrics.cache[.variant].hits == 2 && rig.fetcher.count(photo) == 2 })
        gate.open()
        let outcomes = try await [first.1, second.1]
        #expect(outcomes.contains(.revalidated))
        #expect(outcomes.allSatisfy { $0 == .revalidated || $0 == .hit })
        #expect(rig.fetcher.count(photo) == 2)
        #expect(rig.pipeline.metrics.fetches.revalidations == 1)
    }

    @Test func aFailedRevalidationServesTheStaleCopyUntilStaleIfError() async throws {
        let rig = Rig(
            FakeFetcher([photo: .success([200, 100])], directives: Self.lifetime),
            policy: FreshnessPolicy.test(staleWhileRevalidate: .zero, staleIfError: .seconds(3600)),
            errorTTL: .seconds(3600))
        _ = try await rig.get(photo).0.get()
        rig.fetcher.set(photo, .failure(ThumbnailError(.originFailed)))
        rig.clock.advance(.seconds(601))

        let (stale, outcome) = try await rig.get(photo)
        #expect(outcome == .stale)
        #expect(try text(stale) == "w=100,h=50")
        #expect(rig.fetcher.conditionalFetches(photo).count == 1)
        // A new width of the stale source, origin still down (and its failure remembered, so not
        // asked again): made from the stale original.
        let (newWidth, newOutcome) = try await rig.get(photo, width: 60)
        #expect(newOutcome == .stale)
        #expect(try text(newWidth) == "w=60,h=30")
        #expect(rig.fetcher.count(photo) == 2)

        rig.clock.advance(.seconds(3600))
        let (late, lateOutcome) = try await rig.get(photo)
        #expect(throws: ThumbnailError(.originFailed)) { try late.get() }
        #expect(lateOutcome == .miss)
    }

    @Test func notFoundOnRevalidationDropsTheSourceAndEverythingMadeFromIt() async throws {
        let rig = Rig(FakeFetcher([photo: .success([200, 100])], directives: Self.lifetime))
        _ = try await rig.get(photo).0.get()
        _ = try await rig.get(photo, width: 50).0.get()
        #expect(rig.pipeline.metrics.cache.total.entries == 4)  // original, copy, two variants
        rig.fetcher.set(photo, .failure(ThumbnailError(.sourceNotFound)))
        rig.clock.advance(.seconds(601))

        let (gone, _) = try await rig.get(photo)
        #expect(throws: ThumbnailError(.sourceNotFound)) { try gone.get() }
        #expect(rig.pipeline.metrics.cache.total.entries == 0)
    }

    @Test func aPurgeDuringARevalidationIsNotUndoneByItsAnswer() async throws {
        let gate = Gate(open: true)
        let rig = Rig(FakeFetcher([photo: .success([200, 100])], gate: gate, directives: Self.lifetime))
        _ = try await rig.get(photo).0.get()
        gate.close()
        rig.fetcher.set(photo, .success([100, 100]))
        rig.clock.advance(.seconds(601))
        async let waiting = rig.get(photo)
        #expect(await eventually { rig.fetcher.count(photo) == 2 })
        let removed = rig.pipeline.purge(try SourceURL(parsing: photo))
        #expect(removed.entries == 2)  // the original and the stale variant
        gate.open()
        // The waiter still gets its answer (made from the new bytes) ...
        #expect(try text(await waiting.0) == "w=100,h=100")
        // ... but the changed original the revalidation brought was not put back by it: making the
        // thumbnail again after the purge had to fetch the source anew.
        #expect(rig.fetcher.count(photo) == 3)
    }

    @Test func noStoreIsUsedForTheRequestButNothingIsKept() async throws {
        let rig = Rig(FakeFetcher([photo: .success([200, 100])], directives: OriginDirectives(noStore: true)))
        let (first, _) = try await rig.get(photo)
        #expect(try text(first) == "w=100,h=50")
        #expect(rig.lastPromise == .zero)
        #expect(rig.pipeline.metrics.cache.total.entries == 0)
        _ = try await rig.get(photo).0.get()
        #expect(rig.fetcher.count(photo) == 2)
    }

    @Test func aVariantPromisesNoMoreThanItsOriginalsRemainingFreshness() async throws {
        let rig = Rig(
            FakeFetcher([photo: .success([200, 100])], directives: OriginDirectives(lifetime: .seconds(800))))
        let key = CacheKey.variant(try SourceURL(parsing: photo), try #require(try request(photo).spec))
        _ = try await rig.get(photo).0.get()
        #expect(rig.lastPromise == .seconds(700))  // 7/8 of 800 s
        #expect(rig.pipeline.cachedVariant(key) != nil)

        // At 100 s a 700-s promise would outlive the original (800 s): the hit path lets go of it,
        // and the next request prepares a shorter one, honest again.
        rig.clock.advance(.seconds(100))
        #expect(rig.pipeline.cachedVariant(key) == nil)
        #expect(try await rig.get(photo).1 == .hit)
        #expect(rig.lastPromise == .seconds(612))  // 7/8 of 700 s, in whole seconds
        #expect(rig.pipeline.cachedVariant(key) != nil)
        #expect(rig.fetcher.count(photo) == 1)
        #expect(rig.imaging.encodes == 1)

        // And never more than the cap.
        let capped = Rig(
            FakeFetcher([photo: .success([200, 100])], directives: OriginDirectives(lifetime: .seconds(800))),
            maxPromise: .seconds(30))
        _ = try await capped.get(photo).0.get()
        #expect(capped.lastPromise == .seconds(30))
    }
}
