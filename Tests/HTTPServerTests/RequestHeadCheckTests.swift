import Testing

@testable import HTTPServer

/// The first-bytes check on its own: what it refuses, and that it never refuses a valid head for
/// having seen only part of it.
@Suite struct RequestHeadCheckTests {
    static let limits = HeadLimits(maxTargetBytes: 64, maxHeadBytes: 256, maxFields: 4)

    static func check(_ bytes: [UInt8], _ limits: HeadLimits = limits) -> RequestHeadCheck.Verdict {
        bytes.withUnsafeBytes { RequestHeadCheck.check($0, limits: limits) }
    }

    static func check(_ text: String, _ limits: HeadLimits = limits) -> RequestHeadCheck.Verdict {
        check(Array(text.utf8), limits)
    }

    static let validHeads = [
        "GET /thumb?url=x&w=10 HTTP/1.1\r\nHost: a\r\n\r\n",
        "\r\n\nHEAD / HTTP/1.0\r\n\r\n",
        "BREW /pot HTTP/1.1\nHost: a\nX-Folded: one\n two\n\n",
        "OPTIONS * HTTP/1.2\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
        "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
    ]

    @Test(arguments: validHeads) func everyPrefixOfAValidHeadIsLetThrough(_ head: String) {
        let bytes = Array(head.utf8)
        #expect(Self.check(bytes) == .acceptable)
        for end in 0..<bytes.count {
            let verdict = Self.check(Array(bytes[..<end]))
            #expect(verdict == .incomplete || verdict == .acceptable, "\(head.prefix(end).debugDescription)")
        }
    }

    @Test func refusesAtTheFirstByteThatCannotBeHTTP() {
        #expect(Self.check([0]) == .refuse(.malformed, headOnly: false))
        #expect(Self.check([0x16, 0x03, 0x01]) == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GE\u{0}") == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GET /a\u{7F}") == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GET /a b") == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GET / HTTQ") == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GET / HTTP/1.1 \r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GET / HTTP/1.1\rX") == .refuse(.malformed, headOnly: false))
        #expect(Self.check(" / HTTP/1.1\r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check("GET  / HTTP/1.1\r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check(String(repeating: "M", count: 65)) == .refuse(.malformed, headOnly: false))
    }

    @Test func versions() {
        #expect(Self.check("GET / HTTP/2.0\r\n") == .refuse(.versionNotSupported, headOnly: false))
        #expect(Self.check("GET / HTTP/0.9\r\n") == .refuse(.versionNotSupported, headOnly: false))
        #expect(Self.check("HEAD / HTTP/3.0\r\n") == .refuse(.versionNotSupported, headOnly: true))
        // The version is only judged once its line has ended.
        #expect(Self.check("GET / HTTP/2.0") == .incomplete)
        #expect(Self.check("GET / HTTP/1.9\r\n") == .incomplete)
    }

    @Test func headerLines() {
        let start = "GET / HTTP/1.1\r\nHost: a\r\n"
        #expect(Self.check(start + "NoColon\r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check(start + "X-A : 1\r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check(start + ": 1\r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check(start + "X-A: a\u{0}b\r\n") == .refuse(.malformed, headOnly: false))
        #expect(Self.check(start + "X-A: tab\tand é\r\n\r\n") == .acceptable)
        // Only complete lines are judged.
        #expect(Self.check(start + "NoColon") == .incomplete)
    }

    @Test func framing() {
        let start = "POST / HTTP/1.1\r\nHost: a\r\n"
        #expect(
            Self.check(start + "Content-Length: 1\r\ncontent-length: 1\r\n\r\n")
                == .refuse(.ambiguousFraming, headOnly: false))
        #expect(
            Self.check(start + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
                == .refuse(.ambiguousFraming, headOnly: false))
        #expect(Self.check(start + "Content-Length: -1\r\n\r\n") == .refuse(.ambiguousFraming, headOnly: false))
        #expect(
            Self.check(start + "Content-Length: 12345678901234567890\r\n\r\n")
                == .refuse(.ambiguousFraming, headOnly: false))
        #expect(Self.check(start + "Content-Length:  42 \r\n\r\n") == .acceptable)
        #expect(Self.check(start + "Transfer-Encoding: chunked\r\n\r\n") == .acceptable)
    }

    @Test func limits() {
        #expect(Self.check("GET /\(String(repeating: "a", count: 63)) HTTP/1.1\r\n\r\n") == .acceptable)
        #expect(Self.check("GET /\(String(repeating: "a", count: 64))") == .refuse(.targetTooLong, headOnly: false))
        // Fields: header lines plus query arguments (empty ones between `&&` do not count).
        #expect(Self.check("GET /?a&&b HTTP/1.1\r\nHost: a\r\nX-1: 1\r\n\r\n") == .acceptable)
        #expect(Self.check("GET /?a&b&c HTTP/1.1\r\nHost: a\r\nX-1: 1\r\n") == .refuse(.headTooLarge, headOnly: false))
        let padded = { (count: Int) in "GET / HTTP/1.1\r\nX: \(String(repeating: "p", count: count))\r\n\r\n" }
        let fixed = padded(0).utf8.count
        #expect(Self.check(padded(256 - fixed)) == .acceptable)
        #expect(Self.check(padded(257 - fixed)) == .refuse(.headTooLarge, headOnly: false))
        // Too large before it has even ended.
        #expect(
            Self.check("GET / HTTP/1.1\r\nX: \(String(repeating: "p", count: 300))")
                == .refuse(.headTooLarge, headOnly: false))
    }

    /// Query arguments as libmicrohttpd counts them: the non-empty pieces between `&` after `?`.
    @Test(arguments: [
        ("/", 0), ("/?", 0), ("/?&", 0), ("/?a", 1), ("/?a&", 1), ("/?&&a&&b&", 2), ("/p?a=1&b=&c", 3),
        ("/?a=x?y&b", 2),
    ])
    func argumentsAreCountedLikeLibmicrohttpd(_ target: String, _ expected: Int) {
        let count = Array(target.utf8).withUnsafeBytes { RequestHeadCheck.argumentCount($0) }
        #expect(count == expected)
    }
}
