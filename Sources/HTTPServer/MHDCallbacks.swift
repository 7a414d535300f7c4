internal import CMicroHTTPD
internal import CMicroHTTPDShims

// The C callbacks given to libmicrohttpd. Each recovers the ServerCore from `cls` and forwards.

private func core(_ cls: UnsafeMutableRawPointer?) -> ServerCore {
    Unmanaged<ServerCore>.fromOpaque(cls!).takeUnretainedValue()
}

let mhdAccessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, _, uploadDataSize, requestContext in
    core(cls).access(
        connection: connection!, url: url, method: method, version: version, uploadDataSize: uploadDataSize,
        requestContext: requestContext!)
}

let mhdRequestCompleted: MHD_RequestCompletedCallback = { cls, _, requestContext, _ in
    core(cls).requestCompleted(requestContext)
}

let mhdNotifyConnection: MHD_NotifyConnectionCallback = { cls, connection, socketContext, event in
    switch event {
    case .CONNECTION_NOTIFY_STARTED: core(cls).connectionStarted(connection!, socketContext: socketContext!)
    case .CONNECTION_NOTIFY_CLOSED: core(cls).connectionClosed(socketContext: socketContext!)
    default: break
    }
}

/// Called once the request line is parsed, with the raw request target; its result becomes the
/// request context, so this is where the per-request responder is made.
let mhdURILog:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
        cls, uri, _ in
        let target = uri.map { String(cString: $0) }
        return Unmanaged.passRetained(HTTPResponder(core: core(cls), target: target)).toOpaque()
    }

/// Free callback of a zero-copy response: releases the body's owner.
let mhdReleaseOwner: MHD_ContentReaderFreeCallback = { owner in
    if let owner { Unmanaged<AnyObject>.fromOpaque(owner).release() }
}

/// A libmicrohttpd response for `body` (headers added by the caller), or nil if it cannot be made.
func makeMHDResponse(_ body: HTTPBody) -> OpaquePointer? {
    switch body {
    case .empty:
        return MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    case .bytes(let bytes):
        return bytes.withUnsafeBytes {
            MHD_create_response_from_buffer(
                $0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
        }
    case .buffer(let buffer, let owner):
        let retained = Unmanaged.passRetained(owner).toOpaque()
        let response = MHD_create_response_from_buffer_with_free_callback_cls(
            buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), mhdReleaseOwner, retained)
        if response == nil { Unmanaged<AnyObject>.fromOpaque(retained).release() }
        return response
    }
}
