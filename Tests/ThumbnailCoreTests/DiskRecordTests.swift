import Testing

@testable import ThumbnailCore

/// What a disk entry says about its body (`DiskRecord`): written by this process, read by the next
/// one, and — since anything in the folder may have been changed by a crash or by hand — read
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
        #expect(read.animationTag == "frames:256")
        #expect(read.dependsOnAnimationLimits)
    }

    @Test func aStillMadeByALimitAndAnInfoDocumentRoundTrip() throws {
        for format in OutputFormat.allCases {
            var still = Self.image
            still.format = format
            still.frames = 1
            still.firstFrameOnly = .workBytes
            let record = DiskRecord(still, fingerprint: 1, kind: .variant, animationTag: "t")
            #expect(DiskRecord(decoding: record.encoded) == record)
            #expect(record.dependsOnAnimationLimits)
        }
        let document = EncodedImage(
            document: ImageBytes([0x7B]), mediaType: "application/json", width: 10, height: 20)
        let info = DiskRecord(document, fingerprint: 2, kind: .info, animationTag: "t")
        let read = try #require(DiskRecord(decoding: info.encoded))
        #expect(read.kind == .info && read.format == nil && !read.dependsOnAnimationLimits)
        #expect(DiskRecord(decoding: DiskRecord.original().encoded)?.kind == .original)
    }

    @Test func anythingElseIsNotARecord() {
        let valid = DiskRecord(Self.image, fingerprint: 7, kind: .variant, animationTag: "")
        func changed(_ offset: Int, _ value: UInt8) -> [UInt8] {
            var bytes = valid.encoded
            bytes[offset] = value
            return bytes
        }
        let broken: [[UInt8]] = [
            [], [2], Array(valid.encoded.prefix(23)),
            changed(0, 1),  // another version (the text form was "v1…": 0x76)
            changed(1, 0), changed(1, 9),  // no such kind
            changed(2, 0),  // a thumbnail without a format
            changed(2, 6),  // no such format
            changed(3, 4),  // no such limit
            changed(12, 0),  // frames 0 (12 fits in the low byte)
            valid.encoded + [0xFF, 0xFE],  // a tag that is not UTF-8
            Array("v1;k=variant;f=webp;w=300;h=200;n=1;ff=;fp=1;t=".utf8),
        ]
        var widthZero = valid.encoded  // all four bytes: 300's low byte alone zeroed leaves 256
        widthZero.replaceSubrange(4..<8, with: [0, 0, 0, 0])
        var info = DiskRecord(Self.image, fingerprint: 7, kind: .info, animationTag: "").encoded
        info[2] = 1  // an info document with a format
        for bytes in broken + [widthZero, info] {
            #expect(DiskRecord(decoding: bytes) == nil, "\(bytes)")
        }
        #expect(DiskRecord(decoding: valid.encoded) == valid)
    }
}
