internal import CMicroHTTPD
internal import CMicroHTTPDShims
internal import Primitives
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

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
    let quickAnswer: QuickAnswer?
    let connections = ConnectionRegistry()
    /// Requests handed to the handler or quickly answered whose request-completed notification
    /// has not come yet (shutdown waits for them to be sent).
    let inFlight = Atomic<Int>(0)
    /// Shutdown has begun: responses carry `Connection: close` so keep-alive clients leave.
    let draining = Atomic<Bool>(false)
    private let suspensions = Locked(Suspensions())

    /// Extra time (ns) a keep-alive connection gets for its next head, beyond the head deadline, so
    /// that an idle keep-alive connection lives for the idle timeout, not just the head timeout.
    private let keepAliveAllowance: Int64
    private let limits: HeadLimits

    init(
        keepAliveAllowance: Duration, limits: HeadLimits, quickAnswer: QuickAnswer?,
        handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
    ) {
        self.keepAliveAllowance = max(0, keepAliveAllowance.nanoseconds)
        self.limits = limits
        self.quickAnswer = quickAnswer
        self.handler = handler
    }

    // MARK: Access handler

    /// libmicrohttpd's access handler (see the callbacks in `MHDCallbacks.swift`).
    ///
    /// First call (head complete): mark the head deadline met; refuse what is not acceptable
    /// HTTP/1.x (``refusal(for:method:target:fields:)``) with a problem answer that closes the
    /// connection; a request with a body is handled at once (a response queued later, while body
    /// data is pending, would be dropped silently); otherwise wait for the second call (queueing
    /// on the first call makes every response `Connection: close`), which offers the request to
    /// the quick answer first and builds the ``HTTPRequest`` for the handler only if that declines.
    /// Body data is discarded. After a resume, queue the stored answer.
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
                // Answered before libmicrohttpd read anything: close without a handler.
                if state.refused.load(ordering: .relaxed) { return .NO }
            }
            let fields = FieldScan(connection)
            if let refusal = refusal(for: connection, method: method, target: responder.target, fields: fields) {
                return queue(refusal.response, on: connection)
            }
            guard fields.framing.announcesBody else { return .YES }
            responder.request = HTTPRequest(
                url: url, method: method, version: version, target: responder.target,
                headers: HTTPRequest.headerFields(of: connection), hasBody: true)
            return dispatch(responder, connection: connection)
        }
        if let uploadDataSize, uploadDataSize.pointee > 0 {
            uploadDataSize.pointee = 0
            return .YES
        }
        if responder.answeredQuickly { return .YES }
        if responder.request == nil {
            if let answer = quickAnswer(connection, url: url, method: method, version: version, responder: responder) {
                return answer
            }
            responder.request = HTTPRequest(
                url: url, method: method, version: version, target: responder.target,
                headers: HTTPRequest.headerFields(of: connection), hasBody: false)
        }
        if !responder.dispatched {
            return dispatch(responder, connection: connection)
        }
        if let response = responder.takeAnswer() {
            return queue(response, on: connection)
        }
        return .YES
    }

    /// The quick answer's response queued for a request without a body, or nil when there is no
    /// quick answer, it declines, or the server is draining (the handler's answer then carries
    /// `Connection: close`). Marks the responder, so a later call cannot answer it again.
    private func quickAnswer(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?, responder: HTTPResponder
    ) -> MHD_Result? {
        guard let quickAnswer, let url, let method, let version, let target = responder.target,
            !draining.load(ordering: .relaxed)
        else { return nil }
        let head = RequestHead(connection: connection, method: method, path: url, version: version, target: target)
        guard let prepared = quickAnswer(head), let pointer = prepared.pointer else { return nil }
        responder.answeredQuickly = true
        inFlight.add(1, ordering: .relaxed)
        return queue(prepared, pointer, on: connection)
    }

    /// What the server refuses itself, for every request (a connection's first request was also
    /// screened before libmicrohttpd read it, see ``screenFirstBytes(_:)``). libmicrohttpd has
    /// already refused, with its own pages, request lines it cannot parse, versions other than
    /// HTTP/1.x and heads beyond its memory; what is left to check here is what it lets through.
    private func refusal(
        for connection: OpaquePointer, method: UnsafePointer<CChar>?, target: String?, fields: FieldScan
    ) -> HTTPRefusal? {
        guard let method, RequestHeadCheck.isMethod(UnsafeRawBufferPointer(start: method, count: strlen(method)))
        else { return .malformed }
        // libmicrohttpd always reports the target through the URI log callback; nil cannot happen.
        guard let target else { return .malformed }
        guard target.utf8.count <= limits.maxTargetBytes else { return .targetTooLong }
        // libmicrohttpd takes a target up to the last space, spaces and all.
        guard RequestHeadCheck.isTarget(target.utf8) else { return .malformed }
        guard cmhd_connection_header_size(connection) <= limits.maxHeadBytes else { return .headTooLarge }
        let arguments = Int(MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, nil, nil))
        guard fields.count + arguments <= limits.maxFields else { return .headTooLarge }
        // libmicrohttpd keeps whitespace before the colon in the name ("Content-Length ").
        guard fields.namesAreTokens else { return .malformed }
        return fields.framing.isAmbiguous ? .ambiguousFraming : nil
    }

    private func dispatch(_ responder: HTTPResponder, connection: OpaquePointer) -> MHD_Result {
        responder.dispatched = true
        inFlight.add(1, ordering: .relaxed)
        responder.begin(connection)
        handler(responder.request!, responder)
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

    /// A prepared response queued as is (libmicrohttpd takes its own reference).
    private func queue(
        _ prepared: HTTPPreparedResponse, _ pointer: OpaquePointer, on connection: OpaquePointer
    ) -> MHD_Result {
        withExtendedLifetime(prepared) { MHD_queue_response(connection, UInt32(clamping: prepared.status), pointer) }
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        // A shared prepared response cannot take a per-request header; while draining (which adds
        // `Connection: close`) it is sent as a one-off copy instead.
        if let prepared = response.prepared, let pointer = prepared.pointer, !draining.load(ordering: .relaxed) {
            return queue(prepared, pointer, on: connection)
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
        if responder.dispatched || responder.answeredQuickly { inFlight.subtract(1, ordering: .relaxed) }
        responder.connectionState?.requestEnded(allowance: keepAliveAllowance)
    }

    func connectionStarted(_ connection: OpaquePointer, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let fd = cmhd_connection_fd(connection)
        let state = ConnectionState(fd: fd)
        connections.add(state)
        socketContext.pointee = Unmanaged.passRetained(state).toOpaque()
        if fd >= 0 && screenFirstBytes(fd) {
            state.refused.store(true, ordering: .relaxed)
            state.headReceived()  // nothing for the head deadline to do
        }
    }

    /// Looks at what the client has sent so far (TCP_DEFER_ACCEPT makes that its first bytes, as
    /// a rule) without taking it off the socket, and refuses a first request that is not acceptable
    /// HTTP/1.x right away (see `RequestHeadCheck` for why libmicrohttpd cannot be left to it).
    /// Returns whether it refused.
    ///
    /// Runs in libmicrohttpd's connection-started notification, on the polling thread that owns the
    /// connection, before libmicrohttpd has read from the socket or could write to it; so reading,
    /// writing and shutting down here race with nothing. The descriptor stays libmicrohttpd's: it
    /// sees the end of the stream on its first read and closes it.
    private func screenFirstBytes(_ fd: Int32) -> Bool {
        // Most heads fit a small first look; a second, larger one only when the first was full.
        var capacity = 4096
        while true {
            let refused: Bool? = withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
                screen(fd, buffer, capacity: &capacity)
            }
            if let refused { return refused }
        }
    }

    /// One look at the first bytes into `buffer`: whether it refused, or nil to look again with
    /// the larger `capacity` it sets.
    private func screen(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, capacity: inout Int) -> Bool? {
        let count = recv(fd, buffer.baseAddress, capacity, Int32(MSG_PEEK | MSG_DONTWAIT))
        guard count > 0 else { return false }
        switch RequestHeadCheck.check(UnsafeRawBufferPointer(rebasing: buffer[..<count]), limits: limits) {
        case .acceptable:
            return false
        case .incomplete:
            // Room for the largest acceptable head and one byte more, to see that it is larger.
            guard count == capacity, capacity <= limits.maxHeadBytes else { return false }
            capacity = limits.maxHeadBytes + 1
        case .refuse(let refusal, let headOnly):
            // Take what was looked at off the socket, so libmicrohttpd finds nothing to parse.
            _ = recv(fd, buffer.baseAddress, count, Int32(MSG_DONTWAIT))
            // A few hundred bytes into a fresh socket's empty send buffer: never partial.
            let answer = refusal.wireBytes(headOnly: headOnly)
            _ = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            // The client reads the answer, then the end of the stream; libmicrohttpd's first read
            // sees the end and closes the connection.
            _ = shutdown(fd, Int32(SHUT_RDWR))
            return true
        }
        return nil
    }

    func connectionClosed(socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let context = socketContext.pointee else { return }
        socketContext.pointee = nil
        let state = Unmanaged<ConnectionState>.fromOpaque(context).takeRetainedValue()
        connections.remove(state)
    }
}
