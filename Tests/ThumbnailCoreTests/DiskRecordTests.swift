import Testing

@testable import ThumbnailCore

/// What a disk entry says about its body (`DiskRecord`): written by this process, read by the next
/// one, and — since anything in the folder may have been changed by a crash or by hand — parsed
/// defensively: anything not exactly a record of this version is nil (the entry is then removed).
@Suite struct DiskRecordTests {
    static let image = EncodedImage(
        bytes: ImageBytes([1, 2, 3]), format: .webp, width: 300, height: 200, frames: 12, firstFrameOnly: nil)

    @Test func aVariantRoundTrips() throws {
        let record = DiskRecord(
            Self.image, fingerprint: 0xDEAD_BEEF_0123_4567, kind: .variant, animationTag: "frames:256")
        let read = try #require(DiskRecord(decoding: record.encoded))
        #expect(read == record)
        #expect(read.format == .webp && read.width == 300 && read.height == 200 && read.frames == 12)
        #expect(read.fingerprint == 0xDEAD_BEEF_0123_4567)
        #expect(read.dependsOnAnimationLimits)
    }

    @Test func aStillMadeByALimitAndAnInfoDocumentRoundTrip() throws {
        var still = Self.image
        still.frames = 1
        still.firstFrameOnly = .maxFrames
        let record = DiskRecord(still, fingerprint: 1, kind: .variant, animationTag: "t")
        #expect(DiskRecord(decoding: record.encoded) == record)
        #expect(record.dependsOnAnimationLimits)

        let document = EncodedImage(document: ImageBytes([0x7B]), mediaType: "application/json", width: 10, height: 20)
        let info = DiskRecord(document, fingerprint: 2, kind: .info, animationTag: "t")
        let read = try #require(DiskRecord(decoding: info.encoded))
        #expect(read.kind == .info && read.format == nil && !read.dependsOnAnimationLimits)
        #expect(DiskRecord(decoding: DiskRecord.original().encoded)?.kind == .original)
    }

    @Test func anythingElseIsNotARecord() {
        let valid = String(
            decoding: DiskRecord(Self.image, fingerprint: 7, kind: .variant, animationTag: "").encoded, as: UTF8.self)
        let broken = [
            "", "v2;k=variant", "v1", "v1;k=nothing", "v1;k=variant;f=webp;w=0;h=1;n=1;ff=;fp=1;t=",
            "v1;k=variant;f=bmp;w=1;h=1;n=1;ff=;fp=1;t=", "v1;k=variant;f=;w=1;h=1;n=1;ff=;fp=1;t=",
            "v1;k=info;f=png;w=1;h=1;n=1;ff=;fp=1;t=", "v1;k=variant;f=png;w=1;h=1;n=0;ff=;fp=1;t=",
            "v1;k=variant;f=png;w=1;h=1;n=1;ff=max-everything;fp=1;t=", "v1;k=variant;f=png;w=1;h=1;n=1;ff=;fp=zz;t=",
            "v1;k=variant;f=png;w=x;h=1;n=1;ff=;fp=1;t=", "v1;k=variant;noequals",
            valid.replacingOccurrences(of: "w=300", with: "w=-3"),
        ]
        for text in broken { #expect(DiskRecord(decoding: Array(text.utf8)) == nil, "\(text)") }
        #expect(DiskRecord(decoding: Array(valid.utf8)) != nil)
        #expect(DiskRecord(decoding: [0xFF, 0xFE, 0x00]) == nil)
    }
}
