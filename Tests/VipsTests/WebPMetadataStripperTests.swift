import TestSupport
import Testing

@testable import Vips

/// `WebPMetadataStripper` runs on every WebP the pipeline writes, animated ones included: it must
/// drop EXIF, XMP and ICCP (and their VP8X flags) and keep the animation (VP8X's animation flag,
/// ANIM, every ANMF frame) intact.
@Suite("WebP metadata stripper")
struct WebPMetadataStripperTests {
    /// The top-level chunks of a RIFF/WEBP file, in order, and VP8X's flags byte.
    static func chunks(_ bytes: [UInt8]) -> (names: [String], flags: UInt8?) {
        func littleEndian32(_ offset: Int) -> Int {
            (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        #expect(String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF")
        #expect(littleEndian32(4) + 8 == bytes.count)
        var names: [String] = []
        var flags: UInt8?
        var offset = 12
        while offset + 8 <= bytes.count {
            let name = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            if name == "VP8X" { flags = bytes[offset + 8] }
            names.append(name)
            let size = littleEndian32(offset + 4)
            offset += 8 + size + (size & 1)
        }
        #expect(offset == bytes.count)
        return (names, flags)
    }

    static let animationFlag: UInt8 = 0x02
    static let alphaFlag: UInt8 = 0x10
    static let metadataFlags: UInt8 = 0x20 | 0x08 | 0x04

    @Test func anAnimatedWebPKeepsItsFramesAndLosesItsMetadata() throws {
        var bytes = Fixtures.animatedWebPWithMetadata(width: 60, height: 40, frames: 3)
        let before = Self.chunks(bytes)
        #expect(Set(before.names).isSuperset(of: ["VP8X", "ICCP", "ANIM", "EXIF", "XMP "]))
        #expect(before.names.filter { $0 == "ANMF" }.count == 3)
        #expect(before.flags.map { $0 & Self.metadataFlags == Self.metadataFlags } == true)

        let length = bytes.withUnsafeMutableBytes { WebPMetadataStripper.strip($0) }
        bytes.removeSubrange(length...)
        let after = Self.chunks(bytes)
        #expect(after.names == before.names.filter { !["ICCP", "EXIF", "XMP "].contains($0) })
        #expect(after.flags == before.flags.map { $0 & ~Self.metadataFlags })
        #expect(after.flags.map { $0 & Self.animationFlag != 0 && $0 & Self.alphaFlag != 0 } == true)

        let decoded = try Fixtures.decode(bytes, allPages: true)
        #expect(decoded.frames == 3 && decoded.pageHeight == 40 && decoded.width == 60)
        #expect(decoded.delays == [100, 100, 100] && decoded.loop == 2)
        #expect(!decoded.hasICCProfile && !decoded.hasEXIF)
        // The pixels are untouched (the profile is only dropped, not applied).
        #expect(decoded.pixel(30, 30, frame: 2) == Fixtures.perceptualOnlyStored.map(Double.init) + [255])
    }

    /// The pipeline's own animated WebP: 8.14.1's webpsave writes an EXIF chunk even when told to
    /// strip; what comes out has none, and is still an animation.
    @Test func thePipelinesAnimatedWebPIsStrippedAndAnimated() throws {
        let source = Fixtures.animatedGIF(width: 60, height: 40, frames: 3, delays: [100, 200, 300], loop: 3)
        let result = try thumbnail(source, .exact(width: 30, height: 20), format: .webp, keepsAnimation: true)
        let (names, flags) = Self.chunks(result.buffer.bytes)
        #expect(!names.contains("EXIF") && !names.contains("XMP ") && !names.contains("ICCP"))
        #expect(names.first == "VP8X" && names.contains("ANIM"))
        #expect(names.filter { $0 == "ANMF" }.count == 3)
        #expect(flags.map { $0 & Self.animationFlag != 0 && $0 & Self.metadataFlags == 0 } == true)
    }
}
