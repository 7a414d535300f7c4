import Foundation

/// A response read by ``TestHTTPClient``.
public struct TestHTTPResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    /// The body as framed by Content-Length or chunked encoding, or everything up to the end of the
    /// stream when neither is given. For a response that cannot have a body (to HEAD, 204, 304) it
    /// is everything that followed the head before the server closed: empty unless the server
    /// wrongly sent one, so `body.isEmpty` is a real check there.
    public let body: [UInt8]
    /// Bytes that followed a length-framed body before the server closed the connection: empty
    /// unless the server sent more than it announced.
    public let trailingBytes: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8], trailingBytes: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.trailingBytes = trailingBytes
    }

    /// Parses the first response (skipping interim 1xx ones) in everything a server sent on a
    /// connection it then closed, e.g. the bytes of ``TestHTTPClient/exchange(host:port:pieces:pause:timeout:)``.
    /// `isHead`: the request was HEAD (its response has no body).
    public init(parsing bytes: [UInt8], isHead: Bool = false) throws {
        guard let (response, end) = try Self.parse(bytes, from: 0, isHead: isHead, atEndOfStream: true) else {
            throw TestHTTPClientError.malformedResponse("incomplete response in \(bytes.count) bytes")
        }
        self.init(
            status: response.status, headers: response.headers, body: response.body,
            trailingBytes: Array(bytes[end...]))
    }

    /// The first header called `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// Parses one response (skipping interim 1xx ones) starting at `start`; returns it and the index
    /// just past it, or nil when more bytes are needed. `atEndOfStream`: the server has closed, so
    /// nothing more will come (a body without framing, or one after a bodiless head, ends here).
    static func parse(
        _ bytes: [UInt8], from start: Int, isHead: Bool, atEndOfStream: Bool
    ) throws -> (TestHTTPResponse, Int)? {
        func incomplete(_ why: @autoclosure () -> String) throws -> (TestHTTPResponse, Int)? {
            if atEndOfStream { throw TestHTTPClientError.malformedResponse(why()) }
            return nil
        }
        var start = start
        while true {
            guard let headEnd = find([13, 10, 13, 10], in: bytes, from: start) else {
                return try incomplete("no complete head in \(bytes.count - start) bytes")
            }
            let lines = String(decoding: bytes[start..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = lines[0].split(separator: " ", maxSplits: 2)
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
                throw TestHTTPClientError.malformedResponse("status line \(lines[0])")
            }
            var headers: [(String, String)] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers.append((String(line[..<colon]), value))
            }
            let bodyStart = headEnd + 4
            if (100..<200).contains(status) {
                start = bodyStart
                continue
            }
            let head = TestHTTPResponse(status: status, headers: headers, body: [])
            let rest = Array(bytes[bodyStart...])
            if isHead || status == 204 || status == 304 {
                // On a closed connection whatever followed is this response's (wrong) body.
                guard atEndOfStream else { return (head, bodyStart) }
                return (TestHTTPResponse(status: status, headers: headers, body: rest), bytes.count)
            }
            if head.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                guard let (body, length) = try decodeChunked(rest) else { return try incomplete("truncated chunks") }
                return (TestHTTPResponse(status: status, headers: headers, body: body), bodyStart + length)
            }
            if let lengthText = head.header("Content-Length") {
                guard let length = Int(lengthText) else {
                    throw TestHTTPClientError.malformedResponse("Content-Length \(lengthText)")
                }
                guard length <= rest.count else {
                    return try incomplete("Content-Length \(lengthText), got \(rest.count)")
                }
                return (
                    TestHTTPResponse(status: status, headers: headers, body: Array(rest.prefix(length))),
                    bodyStart + length
                )
            }
            guard atEndOfStream else { return nil }
            return (TestHTTPResponse(status: status, headers: headers, body: rest), bytes.count)
        }
    }

    /// The decoded body and how many bytes its chunks took, or nil when they are not all there.
    static func decodeChunked(_ bytes: [UInt8]) throws -> ([UInt8], Int)? {
        var body: [UInt8] = []
        var position = 0
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: position) else { return nil }
            let sizeText =
                String(decoding: bytes[position..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16) else {
                throw TestHTTPClientError.malformedResponse("chunk size \(sizeText)")
            }
            position = lineEnd + 2
            if size == 0 {
                // No trailer fields are expected: the last chunk is followed by an empty line.
                guard position + 2 <= bytes.count else { return nil }
                return (body, position + 2)
            }
            guard position + size + 2 <= bytes.count else { return nil }
            body += bytes[position..<position + size]
            position += size + 2
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count)
        where haystack[index] == needle[0] && Array(haystack[index..<index + needle.count]) == needle {
            return index
        }
        return nil
    }
}
