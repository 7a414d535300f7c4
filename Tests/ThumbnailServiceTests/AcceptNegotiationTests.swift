import Testing
import ThumbnailCore

@testable import ThumbnailService

/// `Accept` → the negotiated format, read in place (the `/_next/image` hit path does this).
@Suite struct AcceptNegotiationTests {
    @Test func explicitAVIFThenWebPWithAPositiveQuality() {
        let cases: [(String?, RequestedFormat)] = [
            (nil, .source), ("", .source), ("*/*", .source), ("image/*,*/*;q=0.8", .source),
            ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", .exactly(.avif)),
            ("image/webp,*/*", .exactly(.webp)), ("IMAGE/AVIF", .exactly(.avif)),
            (" image/webp ; q=0.5 ", .exactly(.webp)),
            ("image/avif;q=0,image/webp", .exactly(.webp)), ("image/avif;q=0.000, image/webp;q=0", .source),
            ("image/avif;q=1.0", .exactly(.avif)), ("image/avif;q=x", .source), ("image/avif;q=", .source),
            ("image/avif;Q=0.1", .exactly(.avif)), ("image/avif;level=1;q=0", .source),
            ("image/avif;level=1", .exactly(.avif)),
            ("image/avifx,image/webpp", .source), ("text/html,,image/webp", .exactly(.webp)), (",", .source),
            ("image/avif;q=0.5.5", .source), ("\timage/avif\t", .exactly(.avif)),
        ]
        for (accept, expected) in cases {
            #expect(AcceptNegotiation.preferredFormat(accept: accept) == expected, "\(accept ?? "nil")")
        }
    }

    /// Only the first 64 entries are read (a header of thousands of them costs no more).
    @Test func onlyTheFirst64EntriesCount() {
        let filler = Array(repeating: "text/plain", count: 64).joined(separator: ",")
        #expect(AcceptNegotiation.preferredFormat(accept: filler + ",image/webp") == .source)
        #expect(AcceptNegotiation.preferredFormat(accept: "image/webp," + filler) == .exactly(.webp))
    }
}
