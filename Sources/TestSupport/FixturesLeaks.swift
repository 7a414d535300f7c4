internal import Vips

extension Fixtures {
    /// Number of live libvips objects (images, regions, operations, ...) in the process. Compare
    /// before and after many calls to catch a missing unref (other tests running in parallel add
    /// noise, so allow some slack).
    public static func liveVipsObjectCount() -> Int {
        Vips.liveObjectCount()
    }
}
