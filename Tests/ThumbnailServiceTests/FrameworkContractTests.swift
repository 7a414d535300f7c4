import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// openapi.yaml's framework routes say what the server takes: their parameters are the parsers',
/// their values the parsers', and the IPX modifiers' pattern matches exactly what is answered
/// (in the one order it writes them).
@Suite struct FrameworkContractTests {
    static let document = OpenAPIContractTests.document

    /// Each framework route as openapi.yaml names it, and its request for a source URL (used by
    /// `OpenAPIContractTests` to bring about every documented status through each).
    static let routes: [(path: String, target: @Sendable (String) -> String)] = [
        ("/_next/image", { "/_next/image?url=\(Harness.encode($0))&w=640&q=75" }),
        ("/", { "/?w=100&url=\(Harness.encode($0))" }),
        ("/_ipx/{modifiers}/{path}", { "/_ipx/w_100/\($0)" }),
        ("/_image", { "/_image?href=\(Harness.encode($0))&w=100" }),
    ]

    func query(_ path: String) throws -> YAMLNode {
        let operation = try #require(Self.document.operation(path, "GET"))
        let parameter = try #require(operation.parameters.first { $0["in"]?.string == "query" })
        #expect(parameter["style"]?.string == "form" && parameter["explode"]?.string == "true")
        let schema = Self.document.resolve(try #require(parameter["schema"]))
        #expect(schema["additionalProperties"]?.string == "false", "\(path)")
        return schema
    }

    @Test func theDocumentedParametersAreTheParsers() throws {
        let document = Self.document
        for (path, names) in [
            ("/_next/image", NextImageQuery.parameters), ("/", WeservQuery.parameters),
            ("/_image", AstroQuery.parameters),
        ] {
            let schema = try query(path)
            #expect(document.properties(of: schema).map(\.name) == names, "\(path)")
            for method in ["GET", "HEAD"] {
                let operation = try #require(document.operation(path, method))
                #expect(operation.parameters.contains { $0["in"]?.string == "query" }, "\(method) \(path)")
            }
        }
        let next = try query("/_next/image")
        #expect(next["required"]?.strings == ["url", "w", "q"])
        #expect(next["properties"]?["w"]?["enum"]?.strings == FrameworkWidths.next.sorted().map(String.init))
        let weserv = try query("/")
        #expect(weserv["required"]?.strings == ["url"])
        #expect(weserv["properties"]?["a"]?["enum"]?.strings == ThumbTranslation.cropNames)
        #expect(weserv["properties"]?["output"]?["enum"]?.strings == ThumbTranslation.formatNames)
        #expect(weserv["properties"]?["we"]?["enum"]?.strings == WeservQuery.enlargeValues)
        let astro = try query("/_image")
        #expect(astro["required"]?.strings == ["href"])
        #expect(astro["properties"]?["position"]?["enum"]?.strings == ThumbTranslation.cropNames)
        #expect(astro["properties"]?["f"]?["enum"]?.strings == ThumbTranslation.formatNames)
        let presets = astro["properties"]?["q"]?["anyOf"]?.items.last?["enum"]?.strings ?? []
        #expect(Set(presets) == Set(AstroQuery.qualityPresets.keys))
        #expect(
            document.schema("SourcePath")?["maxLength"]?.number == Double(Frontends.maxPathLength))
    }

    /// The IPX modifiers' pattern, against the server: every string it matches is answered 200,
    /// every one it does not is a 400, for modifiers written in the pattern's order.
    @Test func theIPXPatternIsTheServers() async throws {
        let operation = try #require(Self.document.operation("/_ipx/{modifiers}/{path}", "GET"))
        let modifiers = try #require(operation.parameters.first { $0["name"]?.string == "modifiers" })
        let pattern = try NSRegularExpression(pattern: try #require(modifiers["schema"]?["pattern"]?.string))
        func matches(_ text: String) -> Bool {
            pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        let h = try Harness(routes: ["/a.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))], sourceBase: "/")
        let sizes = [
            "w_1", "width_8192", "h_0050", "w_50&h_40", "s_50x40", "resize_1x1", "w_0", "w_8193", "w_00001", "s_50",
            "h_",
        ]
        let fits = [
            "", ",fit_inside", "&fit_cover", "&fit_cover&pos_attention", ",fit_fill", "&fit_contain", "&pos_centre",
        ]
        let tails = ["", "&f_webp", ",format_jpg&q_100", "&quality_007", "&q_101", "&f_gif", "&f_png&f_png"]
        var agreed = (taken: 0, refused: 0)
        var disagreed: [String] = []
        for size in sizes {
            for fit in fits {
                for tail in tails {
                    let text = size + fit + tail
                    let status = try await h.get("/_ipx/\(text)/a.jpg", method: "HEAD").status
                    switch (matches(text), status) {
                    case (true, 200): agreed.taken += 1
                    case (false, 400): agreed.refused += 1
                    default: disagreed.append("\(text): \(status)")
                    }
                }
            }
        }
        for text in ["_", "f_avif", "q_5", "f_jpeg,q_50", "", "__", "blur_5", "w_5&&q_5"] {
            let status = try await h.get("/_ipx/\(text)/a.jpg", method: "HEAD").status
            if matches(text) != (status == 200) { disagreed.append("\(text): \(status)") }
        }
        #expect(disagreed.isEmpty, "\(disagreed.prefix(10))")
        #expect(agreed.taken > 50 && agreed.refused > 100, "\(agreed)")
    }
}
