import HTTPServer
import Synchronization
import ThumbnailCore

/// The two answers a cached thumbnail ever gets on a hit — 200 with its bytes, 304 — built once
/// and kept as the cache entry's attachment, so a hit costs a lookup and a queue, not a response
/// build. They carry no per-request header (no `X-Request-Id`: the log line has the id).
final class HitResponses: Sendable {
    let ok: HTTPPreparedResponse
    let notModified: HTTPPreparedResponse
    let etag: String

    init(_ image: CachedImage, cacheControl: String) {
        etag = image.etag
        let bytes = image.bytes
        let body = HTTPBody.buffer(bytes.buffer, owner: bytes)
        let common = [("ETag", image.etag), ("Cache-Control", cacheControl), ("X-Cache", "hit")]
        ok = HTTPPreparedResponse(status: 200, headers: [("Content-Type", image.mediaType)] + common, body: body)
        // libmicrohttpd sends no 304 body but takes its Content-Length from it: the 200's, as RFC
        // 9110 allows, rather than a false 0.
        notModified = HTTPPreparedResponse(status: 304, headers: common, body: body)
    }
}

/// Request targets already parsed, mapped to their variant key: a repeated `/thumb?…` (the
/// same `<img src>` on every page view) skips parsing and key building on its way to the cache.
/// Only for requests whose key does not depend on headers (not `format=auto`). Bounded: emptied
/// when full (re-filling is just parsing again).
final class TargetMemo: Sendable {
    private let table = Mutex<[String: String]>([:])
    let capacity: Int

    init(capacity: Int = 8192) { self.capacity = capacity }

    func key(for target: String) -> String? { table.withLock { $0[target] } }

    func remember(_ target: String, key: String) {
        guard target.utf8.count <= 2048 else { return }
        table.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[target] = key
        }
    }
}
