/// What a purge removed.
public struct CacheRemoval: Sendable, Equatable {
    public var entries = 0
    /// Resident cost freed (payload + per-entry overhead).
    public var bytes = 0

    public init(entries: Int = 0, bytes: Int = 0) {
        self.entries = entries
        self.bytes = bytes
    }
}
