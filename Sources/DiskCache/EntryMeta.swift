/// What a disk entry says about its body, kept in the file's header: everything needed to serve the
/// body again after a restart and to revalidate it with its origin. The store reads and writes it
/// and interprets none of it (the pipeline does).
///
/// Each text field is bounded (see ``Limits``); a `put` with a field over its bound stores nothing.
public struct EntryMeta: Sendable, Equatable {
    /// The body's Content-Type.
    public var contentType: String
    /// The origin's entity tag, quotes included, to revalidate with (`If-None-Match`); for a
    /// variant, that of the source it was made from.
    public var etag: String?
    /// The origin's `Last-Modified`, as it wrote it (`If-Modified-Since`).
    public var lastModified: String?
    /// Fresh until this wall-clock time, in whole seconds since 1970-01-01 UTC. Wall clock because a
    /// monotonic clock's instants mean nothing to the next process: after a restart the pipeline
    /// turns it back into an instant on its own clock (`now + (expires − wall now)`).
    public var expires: Int64
    /// What the host needs to rebuild its value and the store has no business parsing: a variant's
    /// format, size and frame count, say. At most ``Limits/extraBytes``.
    public var extra: [UInt8]

    public init(
        contentType: String, etag: String? = nil, lastModified: String? = nil, expires: Int64,
        extra: [UInt8] = []
    ) {
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
        self.extra = extra
    }

    /// The bounds on what a header holds: a header is read whole before anything in it is trusted,
    /// so its size must be bounded, and these keep it under ``maxHeaderBytes``.
    public enum Limits {
        /// A key or a source key, in UTF-8 bytes (a source URL is at most 4 KiB in thumbd; a
        /// variant's key adds its canonical parameters).
        public static let keyBytes = 8192
        public static let contentTypeBytes = 255
        public static let validatorBytes = 1024
        public static let extraBytes = 4096
        /// The whole header: fixed part, the two keys and the fields above.
        public static let maxHeaderBytes =
            EntryHeader.fixedBytes + 2 * keyBytes + contentTypeBytes + 2 * validatorBytes + extraBytes
    }
}
