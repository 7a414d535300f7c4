import HTTPServer
import ThumbnailCore

/// The one place where a `ThumbnailError` becomes an HTTP answer: RFC 9457
/// `application/problem+json` with a fixed, safe `detail` per code (the internal detail goes to
/// the log only), the request id, and `invalid-params` for a 400.
enum ProblemResponse {
    struct Row {
        let status: Int
        let slug: String
        let title: String
        let detail: String
    }

    static func row(for code: ThumbnailError.Code) -> Row {
        switch code {
        case .invalidParameter:
            Row(status: 400, slug: "invalid-parameter", title: "Invalid parameter", detail: "")
        case .sourceNotAllowed:
            Row(
                status: 403, slug: "source-not-allowed", title: "Source not allowed",
                detail: "The source URL may not be fetched.")
        case .sourceNotFound:
            Row(
                status: 404, slug: "source-not-found", title: "Source not found",
                detail: "The origin has no image at this URL.")
        case .sourceTooLarge:
            Row(
                status: 413, slug: "source-too-large", title: "Source too large",
                detail: "The source is larger than this service accepts.")
        case .unsupportedSource:
            Row(
                status: 415, slug: "unsupported-source", title: "Unsupported source",
                detail: "The source is not an image in a supported format (JPEG, PNG, WebP, GIF, AVIF/HEIF, TIFF).")
        case .undecodableSource:
            Row(
                status: 422, slug: "undecodable-source", title: "Undecodable source",
                detail: "The source could not be decoded.")
        case .tooManyPixels:
            Row(
                status: 422, slug: "too-many-pixels", title: "Source has too many pixels",
                detail: "The source's dimensions are over this service's pixel limit.")
        case .tooMuchMemory:
            Row(
                status: 422, slug: "too-much-memory", title: "Source needs too much memory",
                detail: "Decoding the source would need more working memory than this service has.")
        case .originFailed:
            Row(
                status: 502, slug: "origin-failed", title: "Origin failed",
                detail: "The origin could not be reached or answered with an error.")
        case .originTimeout:
            Row(
                status: 504, slug: "origin-timeout", title: "Origin timed out",
                detail: "The origin did not deliver the source in time.")
        case .queueFull:
            Row(
                status: 503, slug: "queue-full", title: "Busy",
                detail: "Too many images are being made right now; retry shortly.")
        case .processingTimeout:
            Row(
                status: 503, slug: "processing-timeout", title: "Processing timed out",
                detail: "The image could not be made in time.")
        case .notCached:
            Row(
                status: 504, slug: "not-cached", title: "Not cached",
                detail: "The thumbnail is not in the cache (only-if-cached).")
        case .shuttingDown:
            Row(
                status: 503, slug: "shutting-down", title: "Shutting down",
                detail: "The service is stopping; retry on another instance.")
        case .internal:
            Row(status: 500, slug: "internal", title: "Internal error", detail: "Something went wrong on our side.")
        }
    }

    static func make(_ error: ThumbnailError, requestID: String, retryAfter: Int) -> HTTPResponse {
        let row = row(for: error.code)
        let detail = error.code == .invalidParameter ? error.detail : row.detail
        var fields = [
            ("type", JSON.string("urn:thumbd:problem:\(row.slug)")),
            ("title", JSON.string(row.title)),
            ("status", String(row.status)),
            ("detail", JSON.string(detail)),
            ("requestId", JSON.string(requestID)),
        ]
        if !error.invalidParams.isEmpty {
            let items = error.invalidParams.map {
                "{\"name\":\(JSON.string($0.name)),\"reason\":\(JSON.string($0.reason))}"
            }
            fields.append(("invalid-params", "[" + items.joined(separator: ",") + "]"))
        }
        return make(status: row.status, fields: fields, retryAfter: error.code == .queueFull ? retryAfter : nil)
    }

    /// Problems that are about HTTP itself (unknown route, wrong method, a body), not Core.
    static func http(_ status: Int, title: String, detail: String, requestID: String, allow: String? = nil)
        -> HTTPResponse
    {
        let slug = title.lowercased().replacingOccurrences(of: " ", with: "-")
        var response = make(
            status: status,
            fields: [
                ("type", JSON.string("urn:thumbd:problem:\(slug)")), ("title", JSON.string(title)),
                ("status", String(status)),
                ("detail", JSON.string(detail)), ("requestId", JSON.string(requestID)),
            ], retryAfter: nil)
        if let allow { response.headers.append(("Allow", allow)) }
        return response
    }

    private static func make(status: Int, fields: [(String, String)], retryAfter: Int?) -> HTTPResponse {
        let body = "{" + fields.map { "\(JSON.string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
        var headers = [("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")]
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(Array(body.utf8)))
    }
}
