internal import Vips

extension Fixtures {
    /// The stored pixel value of `pngWithPerceptualOnlyProfile`.
    public static let perceptualOnlyStored: [UInt8] = [200, 30, 40]

    /// What `perceptualOnlyStored` means in sRGB through the embedded profile: linear light
    /// (0.78, 0.12, 0.16) with red and blue swapped is linear sRGB (0.16, 0.12, 0.78), encoded
    /// (110, 96, 229). lcms2 gives exactly that (checked with a small C program); read unconverted
    /// it would be a red (200, 30, 40) instead of a blue.
    public static let perceptualOnlyMeant: [UInt8] = [110, 96, 229]

    /// A uniform PNG of `perceptualOnlyStored` with `perceptualOnlyProfile()` embedded.
    public static func pngWithPerceptualOnlyProfile(width: Int, height: Int) -> [UInt8] {
        uniform(perceptualOnlyStored, profile: perceptualOnlyProfile(), width: width, height: height)
    }

    /// A uniform RGB image of `colour` with `profile` embedded: a PNG (libvips' saver drops a
    /// profile lcms2 cannot parse), or with `jpeg` a JPEG (quality 95) whose APP2 ICC_PROFILE
    /// marker is written here, so it carries any bytes as they are.
    public static func uniform(_ colour: [UInt8], profile: [UInt8], width: Int, height: Int, jpeg: Bool = false)
        -> [UInt8]
    {
        let pixels = [UInt8]((0..<(width * height)).lazy.flatMap { _ in colour })
        let image = VipsFixtureImage(pixels: pixels, width: width, height: height, bands: 3)
        guard jpeg else {
            image.setBlob("icc-profile-data", profile)
            return image.save("pngsave_buffer", options: "compression=6,strip=false")
        }
        let plain = image.save("jpegsave_buffer", options: jpegOptions(quality: 95, strip: true))
        // After SOI: FF E2, the segment length (itself included), "ICC_PROFILE\0", chunk 1 of 1.
        let length = 2 + 12 + 2 + profile.count
        precondition(length <= 65_535, "one APP2 marker holds the profile")
        let marker = [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE\0".utf8) + [1, 1]
        return Array(plain[..<2]) + marker + profile + Array(plain[2...])
    }

    /// An ICC v2 RGB display profile that supports only the perceptual intent, like jpegli's XYB
    /// profiles: an A2B0 lookup table and nothing else (no A2B1 for relative colorimetric, no
    /// matrix and curves). Its device space is linear-light sRGB with red and blue swapped, so a
    /// conversion that skipped it would be plainly wrong. A 2 × 2 × 2 table (lut16Type, PCS XYZ)
    /// is exact for that linear map. 300 bytes, built here so that no binary fixture is needed.
    public static func perceptualOnlyProfile() -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
        func u32(_ value: Int) -> [UInt8] { u16(value >> 16) + u16(value) }
        func s15Fixed16(_ value: Double) -> [UInt8] { u32(Int((value * 65536).rounded())) }
        func text(_ value: String) -> [UInt8] { Array(value.utf8) }
        // sRGB's primaries and white in the D50 PCS (Bradford-adapted), X Y Z each.
        let red = [0.4360747, 0.2225045, 0.0139322]
        let green = [0.3850649, 0.7168786, 0.0971045]
        let blue = [0.1430804, 0.0606169, 0.7141733]
        let d50 = [0.9642, 1.0, 0.8249]

        let whitePoint = text("XYZ ") + [0, 0, 0, 0] + d50.flatMap(s15Fixed16)
        var lut = text("mft2") + [0, 0, 0, 0] + [3, 3, 2, 0]  // 3 in, 3 out, 2 grid points
        for row in 0..<3 { for column in 0..<3 { lut += s15Fixed16(row == column ? 1 : 0) } }
        lut += u16(2) + u16(2)  // identity input and output curves of 2 entries
        let identityCurves = Array(repeating: u16(0) + u16(65535), count: 3).flatMap { $0 }
        lut += identityCurves
        for r in 0...1 {
            for g in 0...1 {
                for b in 0...1 {
                    // Device (r, g, b) is linear sRGB (b, g, r). PCS XYZ in lut16: 0x8000 is 1.0.
                    let xyz = (0..<3).map { Double(b) * red[$0] + Double(g) * green[$0] + Double(r) * blue[$0] }
                    lut += xyz.flatMap { u16(min(65535, Int(($0 * 32768).rounded()))) }
                }
            }
        }
        lut += identityCurves

        let tags = [(text("wtpt"), whitePoint), (text("A2B0"), lut)]
        var offset = 128 + 4 + 12 * tags.count
        var table = u32(tags.count)
        var data = [UInt8]()
        for (signature, body) in tags {
            table += signature + u32(offset) + u32(body.count)
            data += body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            offset += body.count + (4 - body.count % 4) % 4
        }
        var header = u32(128 + table.count + data.count) + u32(0) + [2, 0x10, 0, 0]  // version 2.1
        header += text("mntr") + text("RGB ") + text("XYZ ") + [UInt8](repeating: 0, count: 12) + text("acsp")
        header += [UInt8](repeating: 0, count: 24) + u32(0)  // rendering intent: perceptual
        header += d50.flatMap(s15Fixed16) + [UInt8](repeating: 0, count: 48)
        precondition(header.count == 128)
        return header + table + data
    }
}
