import Testing
import ThumbnailCore

@testable import ThumbnailService

/// `Accept` → the negotiated format, read in place (the `/_next/image` hit path does this).
@Suite struct AcceptNegotiationTests {
    /// What the client names: the format is picked per source (`RequestedFormat.resolve`).
    static let avif = RequestedFormat.negotiated(avif: true, webp: false)
    static let webp = RequestedFormat.negotiated(avif: false, webp: true)
    static let both = RequestedFormat.negotiated(avif: true, webp: true)

    @Test func explicitAVIFThenWebPWithAPositiveQuality() {
        let cases: [(String?, RequestedFormat)] = [
            (nil, .source), ("", .source), ("*/*", .source), ("image/*,*/*;q=0.8", .source),
            ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", Self.both),
            ("image/webp,*/*", Self.webp), ("IMAGE/AVIF", Self.avif),
            (" image/webp ; q=0.5 ", Self.webp),
            ("image/avif;q=0,image/webp", Self.webp), ("image/avif;q=0.000, image/webp;q=0", .source),
            ("image/avif;q=1.0", Self.avif), ("image/avif;q=x", .source), ("image/avif;q=", .source),
            ("image/avif;Q=0.1", Self.avif), ("image/avif;level=1;q=0", .source),
            ("image/avif;level=1", Self.avif),
            ("image/avifx,image/webpp", .source), ("text/html,,image/webp", Self.webp), (",", .source),
            ("image/avif;q=0.5.5", .source), ("\timage/avif\t", Self.avif),
        ]
        for (accept, expected) in cases {
            #expect(AcceptNegotiation.preferredFormat(accept: accept) == expected, "\(accept ?? "nil")")
        }
    }

    /// Only the first 64 entries are read (a header of thousands of them costs no more).
    @Test func onlyTheFirst64EntriesCount() {
        let filler = Array(repeating: "text/plain", count: 64).joined(separator: ",")
        #expect(AcceptNegotiation.preferredFormat(accept: filler + ",image/webp") == .source)
        #expect(AcceptNegotiation.preferredFormat(accept: "image/webp," + filler) == Self.webp)
    }
}
