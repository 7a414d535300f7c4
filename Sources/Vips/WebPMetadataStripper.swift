/// Removes the metadata chunks (EXIF, XMP, ICC) from an encoded WebP, in place.
///
/// Why: libvips 8.14's webpsave always writes an EXIF chunk that it synthesises from the image
/// (orientation, resolution, dimensions), even with `strip` and even when the image has no
/// metadata at all (measured with `vips copy x.v y.webp[strip]`). The output must carry no
/// metadata, and editing the RIFF container in the buffer libvips gave us costs no copy.
enum WebPMetadataStripper {
    private static let removed: Set<String> = ["EXIF", "XMP ", "ICCP"]
    /// VP8X flag bits for ICC (0x20), EXIF (0x08) and XMP (0x04).
    private static let metadataFlags: UInt8 = 0x20 | 0x08 | 0x04

    /// Compacts the WebP in `bytes[0..<count]` and returns its new length. Leaves the bytes
    /// untouched (returning `count`) if they are not a well-formed RIFF/WEBP container.
    static func strip(_ bytes: UnsafeMutableRawBufferPointer) -> Int {
        let count = bytes.count
        guard count >= 12, fourCC(bytes, 0) == "RIFF", fourCC(bytes, 8) == "WEBP",
            Int(littleEndian32(bytes, 4)) + 8 == count
        else { return count }

        // Validate the chunk layout first so that a surprise never leaves a half-edited buffer.
        var offset = 12
        while offset < count {
            guard offset + 8 <= count else { return count }
            let size = Int(littleEndian32(bytes, offset + 4))
            let next = offset + 8 + size + (size & 1)
            guard next <= count else { return count }
            offset = next
        }

        var read = 12
        var write = 12
        var vp8xFlagsOffset: Int? = nil
        while read < count {
            let size = Int(littleEndian32(bytes, read + 4))
            let length = 8 + size + (size & 1)
            let name = fourCC(bytes, read)
            if !removed.contains(name) {
                if name == "VP8X", size >= 1 { vp8xFlagsOffset = write + 8 }
                if write != read {
                    (bytes.baseAddress! + write).copyMemory(from: bytes.baseAddress! + read, byteCount: length)
                }
                write += length
            }
            read += length
        }
        if let flags = vp8xFlagsOffset { bytes[flags] &= ~metadataFlags }
        storeLittleEndian32(UInt32(write - 8), bytes, 4)
        return write
    }

    /// The frames of the (stripped) WebP in `bytes`: its ANMF chunks, 1 for a still. libwebp's
    /// animation encoder merges a frame identical to the one before into it (adding its delay),
    /// so an animation may hold fewer frames than it was given.
    static func frameCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        var frames = 0
        var offset = 12
        while offset + 8 <= bytes.count {
            if fourCC(bytes, offset) == "ANMF" { frames += 1 }
            let size = Int(littleEndian32(bytes, offset + 4))
            offset += 8 + size + (size & 1)
        }
        return max(frames, 1)
    }

    private static func fourCC(_ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) -> String {
        fourCC(UnsafeRawBufferPointer(bytes), offset)
    }

    private static func fourCC(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 4)]), as: UTF8.self)
    }

    private static func littleEndian32(_ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) -> UInt32 {
        littleEndian32(UnsafeRawBufferPointer(bytes), offset)
    }

    private static func littleEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func storeLittleEndian32(_ value: UInt32, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
}
