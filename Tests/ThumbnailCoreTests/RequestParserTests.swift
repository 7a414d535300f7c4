import Testing

@testable import ThumbnailCore

@Suite struct RequestParserTests {
    func parse(_ query: [(String, String?)], requireSpec: Bool = true) throws(ThumbnailError) -> ThumbnailRequest {
        try RequestParser.parse(query: query.map { (name: $0.0, value: $0.1) }, requireSpec: requireSpec)
    }

    func problems(_ query: [(String, String?)], requireSpec: Bool = true) -> [String] {
        do {
            _ = try parse(query, requireSpec: requireSpec)
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
        #expect(request.variantKey == .variant(request.source, TransformSpec(width: 300)))
        #expect(request.spec?.canonical == "w=300,h=-,fit=inside,crop=-,fmt=source,q=80")
        let same = try parse([
            ("w", "300"), ("q", "80"), ("fit", "inside"), ("dpr", "1.0"), ("url", "http://example.org/a.jpg?x=1"),
        ])
        #expect(same.variantKey == request.variantKey)
        // crop only counts with cover: the same output, the same key.
        let cover = try parse([("url", "http://example.org/a.jpg?x=1"), ("w", "30"), ("h", "30"), ("fit", "cover")])
        let coverCentre = try parse([
            ("url", "http://example.org/a.jpg?x=1"), ("w", "30"), ("h", "30"), ("fit", "cover"), ("crop", "centre"),
        ])
        #expect(cover.variantKey == coverCentre.variantKey)
    }

    /// The cache key does what each parameter's row in `RequestParameter.all` says of it (`key`):
    /// the table is the definition, `TransformSpec` and the parser must agree with it.
    @Test(arguments: RequestParameter.all) func theKeyFollowsTheParameterTable(_ parameter: RequestParameter) throws {
        let base: [String: String] = ["url": "http://example.org/a.jpg", "w": "100", "h": "80", "fit": "cover"]
        let signed = RequestPolicy(signed: true)
        func key(_ changes: [String: String?]) throws -> CacheKey? {
            var query = base
            query["sig"] = String(repeating: "A", count: 43)
            for (name, value) in changes { query[name] = value }
            let ordered = RequestParameter.all.compactMap { p in
                query[p.name].map { (name: p.name, value: Optional($0)) }
            }
            return try RequestParser.parse(query: ordered, requireSpec: true, policy: signed).variantKey
        }
        // Two valid values of the parameter that ask for different things.
        let (one, two): (String, String)
        switch parameter.kind {
        case .url: (one, two) = ("http://example.org/a.jpg", "http://example.org/b.jpg")
        case .integer(let range): (one, two) = (String(range.lowerBound + 1), String(range.lowerBound + 2))
        case .decimal(let range, _): (one, two) = (String(Int(range.lowerBound)), String(Int(range.lowerBound) + 1))
        case .choice(let words): (one, two) = (words[0], words[1])
        case .signature: (one, two) = (String(repeating: "A", count: 43), String(repeating: "B", count: 43))
        }
        let differ = try key([parameter.name: one]) != key([parameter.name: two])
        switch parameter.key {
        case .source, .always, .negotiated:
            #expect(differ, "\(parameter.name)=\(one) and =\(two) share a key")
        case .onlyWithCover:
            #expect(differ)
            // Elsewhere it changes nothing, so it is refused rather than keyed.
            #expect(throws: ThumbnailError.self) { try key(["fit": "inside", parameter.name: one]) }
        case .scalesSize:
            #expect(differ)
            #expect(
                try key(["w": "200", "h": "160", parameter.name: "1"])
                    == key(["w": "100", "h": "80", parameter.name: "2"]))
        case .never:
            #expect(!differ, "\(parameter.name) must not enter the key")
        }
        // Absent is its default.
        if let defaultValue = parameter.defaultValue {
            #expect(try key([parameter.name: nil]) == key([parameter.name: defaultValue]), "\(parameter.name)")
        }
    }

    /// Regression (found by fuzz/FuzzRequestParser): the first copy of a repeated parameter used
    /// to drive the checks that depend on it, so the 400 named `h` for `fit=cover&fit=x` but not
    /// for `fit=x&fit=cover`.
    @Test func aRepeatedParameterNamesTheSameProblemsInAnyOrder() {
        let base: [(String, String?)] = [("url", "http://a.example/x"), ("w", "10"), ("crop", "centre")]
        let coverFirst = problems(base + [("fit", "cover"), ("fit", "bogus")])
        let coverLast = problems(base + [("fit", "bogus"), ("fit", "cover")])
        #expect(Set(coverFirst) == Set(coverLast))
        #expect(coverFirst.contains("fit"))
        #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("w", "20"), ("dpr", "2")]) == ["w"])
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
        for bad in ["0.9", "4.1", "1.25", "+2", "2.", ".5", "2e0", "x", " 2"] {
            #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("dpr", bad)]) == ["dpr"], "dpr=\(bad)")
        }
        for good in ["1", "1.0", "1.5", "2", "3.9", "4", "4.0"] {
            #expect(problems([("url", "http://a.example/x"), ("w", "10"), ("dpr", good)]) == [], "dpr=\(good)")
        }
    }

    @Test func everyDefinedParameterIsParsedAndNothingElse() throws {
        // The table is the vocabulary: each of its names is known, with a value of its kind.
        for parameter in RequestParameter.all where !parameter.onlyWhenSigned {
            let sample: String
            switch parameter.kind {
            case .url, .signature: continue
            case .integer(let range): sample = String(range.upperBound)
            case .decimal(let range, _): sample = String(Int(range.upperBound))
            case .choice(let words): sample = words[0]
            }
            var query: [(String, String?)] = [
                ("url", "http://a.example/x"), ("w", "10"), ("h", "10"), ("fit", "cover"),
            ]
            query.removeAll { $0.0 == parameter.name }
            query.append((parameter.name, sample))
            #expect(problems(query) == [], "\(parameter.name)=\(sample)")
        }
    }

    @Test func prefetchMayOmitTheWidth() throws {
        let request = try parse([("url", "https://a.example/x.png")], requireSpec: false)
        #expect(request.spec == nil)
        #expect(problems([("url", "https://a.example/x.png"), ("q", "50")], requireSpec: false) == ["w"])
        #expect(problems([("url", "https://a.example/x.png"), ("dpr", "2")], requireSpec: false) == ["w"])
    }

    @Test func autoFormatIsLeftToTheHost() throws {
        let query: [(String, String?)] = [("url", "http://a.example/x"), ("w", "10"), ("format", "auto")]
        let request = try parse(query)
        #expect(request.formatIsNegotiated)
        #expect(request.choosingFormat(.exactly(.webp)).spec?.format == .exactly(.webp))
        #expect(try !parse([("url", "http://a.example/x"), ("w", "10"), ("format", "png")]).formatIsNegotiated)
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

    /// `--snap-widths`: a width outside the list is the next allowed one up (the largest above
    /// all), and the height scales with it unless heights are restricted.
    @Test func widthsSnapToTheAllowedOnes() throws {
        let policy = RequestPolicy(allowedWidths: [400, 100, 200], snapWidths: true)
        func spec(_ query: [(String, String?)], _ policy: RequestPolicy) throws -> TransformSpec? {
            try RequestParser.parse(
                query: ([("url", "http://example.org/a.jpg")] + query).map { (name: $0.0, value: $0.1) },
                requireSpec: true, policy: policy
            ).spec
        }
        #expect(try spec([("w", "150")], policy) == TransformSpec(width: 200))
        #expect(try spec([("w", "1")], policy) == TransformSpec(width: 100))
        #expect(try spec([("w", "401")], policy) == TransformSpec(width: 400))
        #expect(try spec([("w", "200")], policy) == TransformSpec(width: 200))
        #expect(try spec([("w", "150"), ("h", "300")], policy) == TransformSpec(width: 200, height: 400))
        #expect(try spec([("w", "150"), ("h", "8000")], policy) == TransformSpec(width: 200, height: 8192))
        #expect(try spec([("w", "150"), ("dpr", "2")], policy) == TransformSpec(width: 200, dprTenths: 20))
        let heights = RequestPolicy(allowedWidths: [100, 200], allowedHeights: [300], snapWidths: true)
        #expect(try spec([("w", "150"), ("h", "300")], heights) == TransformSpec(width: 200, height: 300))
        #expect(throws: ThumbnailError.self) { try spec([("w", "150"), ("h", "299")], heights) }
        let strict = RequestPolicy(allowedWidths: [100, 200])
        #expect(throws: ThumbnailError.invalid([.init(name: "w", reason: "must be one of 100, 200")])) {
            try spec([("w", "150")], strict)
        }
    }

    /// `--allowed-qualities`: a `q` outside the list is refused; without `q`, 80, or the listed
    /// quality nearest to it when 80 is not listed (the higher of two as near).
    @Test func qualitiesAreAllowedOrRefused() throws {
        let policy = RequestPolicy(allowedQualities: [50, 75])
        func parse(_ query: [(String, String?)]) throws -> ThumbnailRequest {
            try RequestParser.parse(
                query: ([("url", "http://example.org/a.jpg"), ("w", "10")] + query).map { (name: $0.0, value: $0.1) },
                requireSpec: true, policy: policy)
        }
        #expect(try parse([("q", "75")]).spec?.quality == 75)
        #expect(try parse([]).spec?.quality == 75)
        #expect(RequestPolicy(allowedQualities: [60, 80, 90]).defaultQuality == 80)
        #expect(RequestPolicy(allowedQualities: [70, 90]).defaultQuality == 90)
        #expect(RequestPolicy(allowedQualities: [40]).defaultQuality == 40)
        #expect(RequestPolicy().defaultQuality == TransformSpec.defaultQuality)
        #expect(throws: ThumbnailError.invalid([.init(name: "q", reason: "must be one of 50, 75")])) {
            try parse([("q", "80")])
        }
    }
}
