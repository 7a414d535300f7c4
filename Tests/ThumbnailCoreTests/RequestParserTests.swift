import Testing

@testable import ThumbnailCore

@Suite struct RequestParserTests {
    func parse(_ query: [(String, String?)], accept: String? = nil, route: RequestParser.Route = .thumb)
        throws(ThumbnailError) -> ThumbnailRequest
    {
        try RequestParser.parse(query: query.map { (name: $0.0, value: $0.1) }, accept: accept, route: route)
    }

    func problems(_ query: [(String, String?)], route: RequestParser.Route = .thumb) -> [String] {
        do {
            _ = try parse(query, route: route)
            return []
        } catch {
            #expect(error.code == .invalidParameter)
            return error.invalidParams.map(\.name)
        }
    }

    @Test func defaultsAndCanonicalKey() throws {
        let request = try parse([("url", "HTTP://Example.ORG:80/a.jpg?x=1#frag"), ("w", "300")])
        #expect(request.source.description == "http://example.org/a.jpg?x=1")
        #expect(request.spec == TransformSpec(width: 300))
        #expect(request.variantKey == "v|http://example.org/a.jpg?x=1|w=300,h=-,fit=inside,crop=-,fmt=source,q=80")
        let same = try parse([("w", "300"), ("q", "80"), ("fit", "inside"), ("url", "http://example.org/a.jpg?x=1")])
        #expect(same.variantKey == request.variantKey)
    }

    @Test func everyBadParameterIsNamed() {
        #expect(problems([]) == ["url", "w"])
        #expect(problems([("url", "http://a.example/x"), ("w", "0")]) == ["w"])
        #expect(problems([("url", "http://a.example/x"), ("w", "8193")]) == ["w"])
        #expect(problems([("url", "http://a.example/x"), ("w", "+5")]) == ["w"])
        #expect(problems([("url", "http://a.example/x"), ("w", "1e3")]) == ["w"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("w", "20")]) == ["w"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("zoom", "2")]) == ["zoom"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("q", "101")]) == ["q"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("fit", "stretch")]) == ["fit"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("format", "gif")]) == ["format"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("crop", "attention")]) == ["crop"])
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("fit", "cover")]) == ["h"])
        #expect(problems([("url", "http://a.example/x"), ("w", nil)]) == ["w"])
        #expect(problems([("url", "ftp://a.example/x"), ("w", "10")]) == ["url"])
        #expect(problems([("url", "/relative.jpg"), ("w", "10")]) == ["url"])
    }

    @Test func prefetchMayOmitTheWidth() throws {
        let request = try parse([("url", "https://a.example/x.png")], route: .prefetch)
        #expect(request.spec == nil)
        #expect(problems([("url", "https://a.example/x.png"), ("q", "50")], route: .prefetch) == ["w"])
    }

    @Test func autoFormatFollowsAccept() throws {
        let query: [(String, String?)] = [("url", "http://a.example/x"), ("w", "10"), ("format", "auto")]
        #expect(try parse(query, accept: "image/avif,image/webp,*/*").spec?.format == .exactly(.avif))
        #expect(try parse(query, accept: "image/webp,*/*;q=0.8").spec?.format == .exactly(.webp))
        #expect(try parse(query, accept: "image/avif;q=0, image/webp").spec?.format == .exactly(.webp))
        #expect(try parse(query, accept: "*/*").spec?.format == .source)
        #expect(try parse(query, accept: nil).variesOnAccept)
    }

    @Test func sourceURLsAreParsedStrictly() throws {
        #expect(try SourceURL(parsing: "https://[::1]:8443/p").description == "https://[::1]:8443/p")
        #expect(try SourceURL(parsing: "https://h.example").description == "https://h.example/")
        #expect(try SourceURL(parsing: "https://h.example?x").description == "https://h.example/?x")
        for bad in [
            "http://user@h.example/", "http://h.example:0/", "http://h.example:99999/", "http://h example/",
            "http://h.example\\@evil/", "http://[::1/", "http://[zz::1]/", "http:///x", "http://h..example/",
            "javascript:alert(1)", "http://hé.example/",
        ] {
            #expect(throws: ThumbnailError.self, "\(bad)") { try SourceURL(parsing: bad) }
        }
    }
}
