/// A response body.
public enum HTTPBody: @unchecked Sendable {
    case empty
    /// Copied once into libmicrohttpd's response object.
    case bytes([UInt8])
    /// Zero-copy: libmicrohttpd sends straight from this memory; `owner` (whatever keeps the memory
    /// alive) is retained until libmicrohttpd releases the response. The memory must not change meanwhile.
    case buffer(UnsafeRawBufferPointer, owner: AnyObject)

    /// Number of body bytes.
    public var count: Int {
        switch self {
        case .empty: 0
        case .bytes(let bytes): bytes.count
        case .buffer(let buffer, _): buffer.count
        }
    }
}
