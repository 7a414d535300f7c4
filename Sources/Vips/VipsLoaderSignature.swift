/// The libvips loader for a source, told from its first bytes by thumbd itself, for the formats
/// the service can allow. Why not libvips' own search (`vips_foreign_find_load_buffer`): it runs the
/// sniffer of every loader, blocked ones included, and 8.14's SVG sniffer inflates gzip data and
/// never returns when bytes follow the gzip stream (a source of under 100 bytes held a worker at
/// 100 % CPU for ever; fixed upstream in 8.17.3, bookworm ships 8.14).
///
/// Each signature is the one its libvips loader's sniffer checks (8.14 source), or stricter, so
/// that sniffer agrees (`VipsPipeline.checkLoader` asks it) and the search that
/// `vips_thumbnail_buffer` still runs stops at the same loader (see `checkLoader`).
enum VipsLoaderSignature {
    /// HEIF major brands that 8.14's heifload accepts (`heif_magic` in heifload.c); AVIF is "avif".
    static let heifBrands: Set<String> = [
        "heic", "heix", "hevc", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "avif",
    ]

    /// The loader nickname ("jpegload_buffer", ...), nil for bytes in none of the formats.
    static func loader(of bytes: UnsafeRawBufferPointer) -> String? {
        func has(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + signature.count
                && zip(bytes[offset..<offset + signature.count], signature).allSatisfy { $0 == $1 }
        }
        func has(_ text: String, at offset: Int = 0) -> Bool { has(Array(text.utf8), at: offset) }

        // libvips checks FF D8; every JPEG goes on with a marker (FF xx).
        if has([0xFF, 0xD8, 0xFF]) { return "jpegload_buffer" }
        if has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "pngload_buffer" }
        if has("RIFF") && has("WEBP", at: 8) { return "webpload_buffer" }
        // libvips checks "GIF8"; the two versions there are.
        if has("GIF87a") || has("GIF89a") { return "gifload_buffer" }
        // Classic TIFF and BigTIFF, both byte orders. libvips' sniffer then opens the header with
        // libtiff, which `checkLoader` runs.
        if has("II*\0") || has("MM\0*") || has("II+\0") || has("MM\0+") { return "tiffload_buffer" }
        if isHEIF(bytes) { return "heifload_buffer" }
        return nil
    }

    /// An ISO-BMFF file whose first box is `ftyp` with a HEIF/AVIF major brand. Like 8.14's sniffer,
    /// the box size must be a multiple of 4 and at most 2048 (it also holds the compatible brands);
    /// stricter than it, at least the 16 bytes of size, type, major brand and minor version.
    private static func isHEIF(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 12 else { return false }
        let size = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard size % 4 == 0, (16...2048).contains(size), String(decoding: bytes[4..<8], as: UTF8.self) == "ftyp"
        else { return false }
        return heifBrands.contains(String(decoding: bytes[8..<12], as: UTF8.self))
    }
}
