/// libvips' tracked allocator at one moment (`Vips.trackedMemory`).
public struct VipsTrackedMemory: Sendable, Equatable {
    /// Bytes held now.
    public let bytes: Int
    /// The most bytes held at once since start.
    public let highWater: Int
    /// Allocations live now.
    public let allocations: Int
}
