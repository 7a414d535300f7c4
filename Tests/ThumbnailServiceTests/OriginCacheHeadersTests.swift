import Testing
import ThumbnailCore

@testable import ThumbnailService

/// Reading an origin's caching headers: strict, bounded, and what RFC 9111 asks of a shared cache.
@Suite struct OriginCacheHeadersTests {
    func directives(_ headers: [String: [String]], now: Double = 0) -> OriginDirectives {
        OriginCacheHeaders.directives(headers, now: now)
    }

    @Test func sharedMaxAgeWinsOverMaxAgeWhichWinsOverExpires() {
        let expires = ["expires": ["Sun, 06 Nov 1994 09:49:37 GMT"], "date": ["Sun, 06 Nov 1994 08:49:37 GMT"]]
        #expect(directives(expires).lifetime == .seconds(3600))  // against Date, not our clock
        #expect(
            directives(expires.merging(["cache-control": ["public, max-age=120"]]) { $1 }).lifetime == .seconds(120))
        #expect(
            directives(expires.merging(["cache-control": ["max-age=120", "S-MaxAge=\"30\""]]) { $1 }).lifetime
                == .seconds(30))
        #expect(directives([:]).lifetime == nil)
    }

    @Test func expiresWithoutDateCountsFromNowAndAnUnreadableOneHasExpired() {
        #expect(
            directives(["expires": ["Sun, 06 Nov 1994 08:49:37 GMT"]], now: 784_111_777 - 50).lifetime == .seconds(50))
        #expect(directives(["expires": ["0"]], now: 784_111_777).lifetime == .zero)
        // The obsolete RFC 850 form is not read.
        #expect(directives(["expires": ["Sunday, 06-Nov-94 08:49:37 GMT"]], now: 1).lifetime == .zero)
    }

    @Test func noStorePrivateAndNoCache() {
        #expect(directives(["cache-control": ["no-store"]]).noStore)
        #expect(directives(["cache-control": ["max-age=60, private"]]).noStore)
        #expect(directives(["cache-control": ["no-cache"]]).lifetime == .zero)
        #expect(!directives(["cache-control": ["public, max-age=60"]]).noStore)
    }

    @Test func malformedDirectivesAreIgnored() {
        #expect(directives(["cache-control": ["max-age=-1"]]).lifetime == nil)
        #expect(directives(["cache-control": ["max-age=12s"]]).lifetime == nil)
        #expect(directives(["cache-control": ["max-age"]]).lifetime == nil)
        // Huge values saturate (the policy clamps them).
        #expect(directives(["cache-control": ["max-age=99999999999999999999"]]).lifetime == .seconds(Int(Int32.max)))
    }

    @Test func validatorsAreKeptOnlyWhenWellFormedAndShort() {
        let good = OriginCacheHeaders.validators([
            "etag": ["W/\"a-1\""], "last-modified": ["Sun, 06 Nov 1994 08:49:37 GMT"],
        ])
        #expect(good == SourceValidators(etag: "W/\"a-1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT"))
        for bad in ["abc", "\"a\"b\"", "\"a b\"", "\"\(String(repeating: "x", count: 300))\"", "\""] {
            #expect(OriginCacheHeaders.validators(["etag": [bad]]).etag == nil, "\(bad)")
        }
        #expect(OriginCacheHeaders.validators(["last-modified": ["yesterday"]]).lastModified == nil)
    }

    @Test func httpDatesAreIMFFixdateOnly() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.parse("Tue, 29 Feb 2028 23:59:59 GMT") == 1_835_481_599)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == nil)
        #expect(HTTPDate.parse("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
    }
}
