internal import CCurl
internal import CCurlShims
internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// `curl_global_init` must run once before any other libcurl call; a global is initialised
/// lazily and exactly once (swift_once), whichever thread gets there first.
private let curlGlobalInitialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

/// An HTTP(S) client on one libcurl multi handle, driven by one dedicated I/O thread. Only that
/// thread touches the network, creates and frees easy handles, and calls completions.
public final class CurlMulti: @unchecked Sendable {
    private let engine: CurlMultiEngine

    /// `maxConnections` bounds open connections across all transfers
    /// (CURLMOPT_MAX_TOTAL_CONNECTIONS); transfers beyond it wait for a free one. Default: 64.
    public init(maxConnections: Int = 64) {
        precondition(curlGlobalInitialized, "curl_global_init failed")
        engine = CurlMultiEngine(maxConnections: maxConnections)
    }

    deinit {
        engine.shutdown()
    }

    /// Starts a transfer and returns at once. `completion` is called exactly once, on the I/O
    /// thread, so it must not block (starting another transfer from it is fine). After
    /// ``shutdown()`` it is called at once, on the caller's thread, with
    /// ``CurlTransferError/cancelled``.
    public func start(
        _ request: CurlTransferRequest,
        completion: @escaping @Sendable (Result<CurlTransferResult, CurlTransferError>) -> Void
    ) {
        engine.enqueue(CurlTransfer(request: request, completion: completion))
    }

    /// Completes every unfinished transfer with ``CurlTransferError/cancelled``, stops the I/O
    /// thread and waits until its loop has ended (unless called from a completion, on that thread
    /// itself). Idempotent, and concurrent calls all wait; also run by `deinit`.
    public func shutdown() {
        engine.shutdown()
    }
}

/// The multi handle and its loop. Separate from `CurlMulti` so the running thread keeps only
/// this alive, and dropping the last `CurlMulti` reference can still stop it.
final class CurlMultiEngine: @unchecked Sendable {
    private struct Shared {
        var queued: [CurlTransfer] = []
        var stopping = false
        /// The I/O thread, once its loop runs: `shutdown` from a completion must not wait for it.
        var ioThread: pthread_t?
    }

    /// CURLM*; freed in deinit, after the loop has ended, so `curl_multi_wakeup` from `enqueue`
    /// or `shutdown` can never reach a freed handle.
    private let multi: UnsafeMutableRawPointer
    private let shared = Locked(Shared())
    /// Set by the I/O thread as the last thing its loop does; `shutdown` waits for it.
    private let loopEnded = Monitor(false)
    /// Transfers added to `multi`; touched only on the I/O thread.
    private var active: [ObjectIdentifier: CurlTransfer] = [:]
    /// Closes every socket of `multi`, so it lives until after `curl_multi_cleanup`.
    private let connections = CurlKeptConnections()

    init(maxConnections: Int) {
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(maxConnections, 1))
        // Its own thread, never the cooperative pool: the loop blocks in curl_multi_poll. libcurl
        // and OpenSSL need little stack; the completions it runs are the callers' code.
        do {
            try DetachedThread.start(name: "curl-io", stackSize: 1 << 20) { self.run() }
        } catch {
            fatalError("CurlMulti: cannot start its I/O thread: \(error)")
        }
    }

    deinit {
        curl_multi_cleanup(multi)
    }

    func enqueue(_ transfer: CurlTransfer) {
        let accepted = shared.withLock { shared in
            guard !shared.stopping else { return false }
            shared.queued.append(transfer)
            return true
        }
        guard accepted else {
            transfer.completion(.failure(.cancelled))
            return
        }
        _ = curl_multi_wakeup(multi)
    }

    func shutdown() {
        let onIOThread = shared.withLock { shared in
            shared.stopping = true
            return shared.ioThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        }
        _ = curl_multi_wakeup(multi)
        // From a completion: the loop sees `stopping` once that completion returns.
        guard !onIOThread else { return }
        loopEnded.wait(until: { $0 })
    }

    // MARK: I/O thread

    private func run() {
        shared.withLock { $0.ioThread = pthread_self() }
        defer { loopEnded.withLock { $0 = true } }
        var running: Int32 = 0
        while true {
            let (incoming, stopping) = shared.withLock { shared in
                defer { shared.queued = [] }
                return (shared.queued, shared.stopping)
            }
            if stopping {
                incoming.forEach { $0.completion(.failure(.cancelled)) }
                break
            }
            incoming.forEach(add)
            _ = curl_multi_perform(multi, &running)
            finishCompleted()
            // Returns early on socket activity, on libcurl's next timeout, or on a wakeup.
            if curl_multi_poll(multi, nil, 0, 1000, nil) != CURLM_OK {
                finishAll(with: .failed(code: Int(CURLE_FAILED_INIT.rawValue)))
            }
        }
        finishAll(with: .cancelled)
    }

    private func add(_ transfer: CurlTransfer) {
        if let error = transfer.makeEasyHandle(connections: connections) {
            transfer.cleanUp()
            transfer.completion(.failure(error))
            return
        }
        guard curl_multi_add_handle(multi, transfer.easy) == CURLM_OK else {
            transfer.cleanUp()
            transfer.completion(.failure(.failed(code: Int(CURLE_FAILED_INIT.rawValue))))
            return
        }
        active[ObjectIdentifier(transfer)] = transfer
    }

    private func finishCompleted() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            // The message is only valid until the handle is removed: copy what we need first.
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            _ = ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context)
            guard let context else { continue }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            connections.transferEnded(easy)
            _ = curl_multi_remove_handle(multi, easy)
            let outcome = transfer.outcome(code)
            transfer.cleanUp()
            active[ObjectIdentifier(transfer)] = nil
            transfer.completion(outcome)
        }
    }

    private func finishAll(with error: CurlTransferError) {
        let transfers = active.values
        active = [:]
        for transfer in transfers {
            _ = curl_multi_remove_handle(multi, transfer.easy)
            transfer.cleanUp()
            transfer.completion(.failure(error))
        }
    }
}
