internal import CVips

extension Fixtures {
    /// Number of live libvips objects (images, regions, operations, ...) in the process. Compare
    /// before and after many calls to catch a missing unref (other tests running in parallel add
    /// noise, so allow some slack).
    public static func liveVipsObjectCount() -> Int {
        _ = started
        var count = 0
        withUnsafeMutablePointer(to: &count) { counter in
            _ = vips_object_map(
                { _, counter, _ in
                    counter!.assumingMemoryBound(to: Int.self).pointee += 1
                    return nil
                }, counter, nil)
        }
        return count
    }
}
