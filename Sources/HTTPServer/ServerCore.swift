import CMicroHTTPD
import CMicroHTTPDShims
import Synchronization

/// The state the libmicrohttpd callbacks reach through their `cls` pointer (unretained: the
/// ``HTTPServer`` owns it and outlives the daemon).
final class ServerCore: @unchecked Sendable {
    private struct Suspensions {
        /// Set once shutdown's grace period has passed: every request still unanswered, and every
        /// one handled from now on, gets this answer.
        var lateResponse: HTTPResponse?
        var suspended: [ObjectIdentifier: HTTPResponder] = [:]
    }

    let handler: @Sendable (HTTPRequest, HTTPResponder) -> Void
    let connections = ConnectionRegistry()
    /// Requests handed to the handler whose request-completed notification has not come yet.
    let inFlight = Atomic<Int>(0)
    /// Shutdown has begun: responses carry `Connection: close` so keep-alive clients leave.
    let draining = Atomic<Bool>(false)
    private let suspensions = Mutex(Suspensions())

    /// Extra time (ns) a keep-alive connection gets for its next head, beyond the head deadline, so
    /// that an idle keep-alive connection lives for the idle timeout, not just the head timeout.
    private let keepAliveAllowance: Int64

    init(keepAliveAllowance: Duration = .zero, handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void) {
        self.keepAliveAllowance = max(0, keepAliveAllowance.nanoseconds)
        self.handler = handler
    }

    // MARK: Access handler

    /// libmicrohttpd's access handler (see the callbacks in `MHDCallbacks.swift`).
    ///
    /// First call (head complete): mark the head deadline met; a request with a body is handled at
    /// once (a response queued later, while body data is pending, would be dropped silently);
    /// otherwise wait for the second call (queueing on the first call makes every response
    /// `Connection: close`). Body data is discarded. After a resume, queue the stored answer.
    func access(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>?,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let responder: HTTPResponder
        if let context = requestContext.pointee {
            responder = Unmanaged<HTTPResponder>.fromOpaque(context).takeUnretainedValue()
        } else {
            responder = HTTPResponder(core: self, target: nil)
            requestContext.pointee = Unmanaged.passRetained(responder).toOpaque()
        }
        if !responder.headSeen {
            responder.headSeen = true
            if let socketContext = cmhd_connection_socket_context(connection) {
                let state = Unmanaged<ConnectionState>.fromOpaque(socketContext).takeUnretainedValue()
                state.headReceived()
                responder.connectionState = state
            }
            guard Self.announcesBody(connection) else { return .YES }
            responder.hasBody = true
            return dispatch(responder, connection: connection, url: url, method: method, version: version)
        }
        if let uploadDataSize, uploadDataSize.pointee > 0 {
            uploadDataSize.pointee = 0
            return .YES
        }
        if !responder.dispatched {
            return dispatch(responder, connection: connection, url: url, method: method, version: version)
        }
        if let response = responder.takeAnswer() {
            return queue(response, on: connection)
        }
        return .YES
    }

    private func dispatch(
        _ responder: HTTPResponder, connection: OpaquePointer, url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?
    ) -> MHD_Result {
        responder.dispatched = true
        inFlight.add(1, ordering: .relaxed)
        let request = HTTPRequest(
            connection: connection, url: url, method: method, version: version, target: responder.target,
            hasBody: responder.hasBody)
        responder.begin(connection)
        handler(request, responder)
        switch responder.afterHandler() {
        case .queue(let response):
            return queue(response, on: connection)
        case .suspended:
            registerSuspended(responder)
            return .YES
        case .nothing:
            // Not reachable; answering nothing without suspending would make libmicrohttpd call
            // again at once, so close the connection instead.
            return .NO
        }
    }

    // MARK: Responses

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        // A shared prepared response cannot take a per-request header; while draining (which adds
        // `Connection: close`) it is sent as a one-off copy instead.
        if let prepared = response.prepared, let pointer = prepared.pointer, !draining.load(ordering: .relaxed) {
            return withExtendedLifetime(prepared) {
                MHD_queue_response(connection, UInt32(clamping: prepared.status), pointer)
            }
        }
        guard let mhdResponse = makeMHDResponse(response.body) else { return .NO }
        var hasConnectionHeader = false
        for (name, value) in response.headers {
            if HTTPRequest.equalsIgnoringASCIICase(name, "Connection") { hasConnectionHeader = true }
            _ = name.withCString { name in value.withCString { MHD_add_response_header(mhdResponse, name, $0) } }
        }
        if !hasConnectionHeader && draining.load(ordering: .relaxed) {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        let status = UInt32(clamping: response.status)
        let result = MHD_queue_response(connection, status, mhdResponse)
        // libmicrohttpd holds its own reference while sending.
        MHD_destroy_response(mhdResponse)
        return result
    }

    // MARK: Suspended requests

    /// A request's handler returned without answering and its connection is now suspended. Record it
    /// so shutdown can answer it, or answer it now if shutdown has already given up waiting.
    private func registerSuspended(_ responder: HTTPResponder) {
        let late: HTTPResponse? = suspensions.withLock { suspensions in
            if let late = suspensions.lateResponse { return late }
            // An answer may have raced in since the suspend; then it is already resumed.
            if responder.isSuspended { suspensions.suspended[ObjectIdentifier(responder)] = responder }
            return nil
        }
        if let late { responder.respond(late) }
    }

    func unregisterSuspended(_ responder: HTTPResponder) {
        _ = suspensions.withLock { $0.suspended.removeValue(forKey: ObjectIdentifier(responder)) }
    }

    /// Answers every suspended request with `response`, and every request handled from now on
    /// that is not answered by its handler before it returns.
    func answerAllSuspended(with response: HTTPResponse) {
        let pending: [HTTPResponder] = suspensions.withLock { suspensions in
            suspensions.lateResponse = response
            return Array(suspensions.suspended.values)
        }
        for responder in pending { responder.respond(response) }
    }

    // MARK: Notifications

    /// Request-completed notification: release the request's responder, count it out, and restart
    /// the connection's head deadline (keep-alive).
    func requestCompleted(_ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let requestContext, let context = requestContext.pointee else { return }
        requestContext.pointee = nil
        let responder = Unmanaged<HTTPResponder>.fromOpaque(context).takeRetainedValue()
        responder.finish()
        if responder.dispatched { inFlight.subtract(1, ordering: .relaxed) }
        responder.connectionState?.requestEnded(allowance: keepAliveAllowance)
    }

    func connectionStarted(_ connection: OpaquePointer, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let state = ConnectionState(fd: cmhd_connection_fd(connection))
        connections.add(state)
        socketContext.pointee = Unmanaged.passRetained(state).toOpaque()
    }

    func connectionClosed(socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let context = socketContext.pointee else { return }
        socketContext.pointee = nil
        let state = Unmanaged<ConnectionState>.fromOpaque(context).takeRetainedValue()
        connections.remove(state)
    }

    // MARK: Helpers

    /// Content-Length other than zero, or any Transfer-Encoding.
    private static func announcesBody(_ connection: OpaquePointer) -> Bool {
        if MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil { return true }
        guard var length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") else {
            return false
        }
        while length.pointee != 0 {
            let byte = UInt8(bitPattern: length.pointee)
            if byte != UInt8(ascii: "0") && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { return true }
            length += 1
        }
        return false
    }
}
