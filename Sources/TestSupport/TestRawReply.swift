/// What came back on a raw connection (``TestHTTPClient/exchange(host:port:pieces:pause:timeout:)``).
public struct TestRawReply: Sendable {
    /// Every byte the server sent.
    public let bytes: [UInt8]
    /// The server closed the connection (end of stream or reset); false when the client gave up at
    /// its timeout with the connection still open.
    public let peerClosed: Bool
    /// How many of the pieces were sent before the server closed (all of them unless it closed early).
    public let piecesSent: Int

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The first response in ``bytes``.
    public func response(isHead: Bool = false) throws -> TestHTTPResponse {
        try TestHTTPResponse(parsing: bytes, isHead: isHead)
    }
}
