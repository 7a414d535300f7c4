/// The widths web frameworks' image components ask for by default: what `--allowed-widths next`
/// and `astro` stand for, and what `/_next/image` allows when `--allowed-widths` is empty (as
/// Next.js' own optimizer does).
enum FrameworkWidths {
    /// Next.js' `deviceSizes` then `imageSizes` (16 is in 15.x's defaults, not 16's; allowed, as
    /// a site on either may ask for it).
    static let next = [640, 750, 828, 1080, 1200, 1920, 2048, 3840, 16, 32, 48, 64, 96, 128, 256, 384]
    /// Astro 5's default responsive-image breakpoints.
    static let astro = [640, 750, 828, 960, 1080, 1280, 1668, 1920, 2048, 2560, 3200, 3840, 4480, 5120, 6016]

    /// The keywords `--allowed-widths` takes besides numbers.
    static let keywords: [String: [Int]] = ["next": next, "astro": astro]
}
