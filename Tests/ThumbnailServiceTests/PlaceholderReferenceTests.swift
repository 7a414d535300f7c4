import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// `/info`'s `blurhash` and `thumbhash`, drawn by their reference decoders from PyPI (`blurhash`,
/// `thumbhash-python` with `pillow`) and compared with the image they stand for. The decoders live
/// in a venv under .build/pyref that scripts/pyref.sh makes (scripts/test.sh runs it): without it
/// these fail rather than skip.
@Suite struct PlaceholderReferenceTests {
    /// Reads `/info`'s JSON on standard input; prints both placeholders drawn by the reference
    /// decoders: the BlurHash at 32 × 16 (RGB), the ThumbHash at its own size (RGBA).
    static let driver = """
        import json, sys
        import blurhash
        from thumbhash import thumbhash_to_image

        info = json.load(sys.stdin)
        rows = blurhash.decode(info["blurhash"], 32, 16)
        image = thumbhash_to_image(info["thumbhash"])
        json.dump({
            "blurhash": {"width": 32, "height": 16, "bands": 3, "samples": [v for row in rows for px in row for v in px]},
            "thumbhash": {"width": image.size[0], "height": image.size[1], "bands": 4, "samples": list(image.tobytes())},
        }, sys.stdout)
        """

    /// A decoded placeholder.
    struct Drawing {
        let width: Int
        let height: Int
        let bands: Int
        let samples: [Int]

        init(_ object: Any?) throws {
            let object = try #require(object as? [String: Any])
            width = try #require(object["width"] as? Int)
            height = try #require(object["height"] as? Int)
            bands = try #require(object["bands"] as? Int)
            samples = try #require(object["samples"] as? [Int])
            #expect(samples.count == width * height * bands)
        }

        /// The mean of each band over columns `columns` and rows `rows` (fractions of the size).
        func mean(columns: ClosedRange<Double> = 0...1, rows: ClosedRange<Double> = 0...1) -> [Double] {
            let xs = Int(columns.lowerBound * Double(width))..<max(1, Int(columns.upperBound * Double(width)))
            let ys = Int(rows.lowerBound * Double(height))..<max(1, Int(rows.upperBound * Double(height)))
            var sums = [Double](repeating: 0, count: bands)
            for y in ys {
                for x in xs {
                    for band in 0..<bands { sums[band] += Double(samples[(y * width + x) * bands + band]) }
                }
            }
            return sums.map { $0 / Double(xs.count * ys.count) }
        }
    }

    /// Runs the reference decoders on an `/info` answer.
    static func draw(_ info: [UInt8]) async throws -> (blurhash: Drawing, thumbhash: Drawing) {
        let output = try await run(Self.driver, input: info)
        let drawn = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        return (try Drawing(drawn["blurhash"]), try Drawing(drawn["thumbhash"]))
    }

    /// Runs a Python program in the reference venv, `input` on its standard input; its output.
    static func run(_ program: String, input: [UInt8]) async throws -> Data {
        Data(try await ReferencePython.run(program, input: input))
    }

    /// Encodes `{"width", "height", "rgba"}` with the reference encoders: BlurHash of RGB (4 × 3),
    /// ThumbHash of RGBA, standard base64.
    static let encoders = """
        import base64, json, sys
        import blurhash
        from thumbhash.encode import rgba_to_thumbhash

        image = json.load(sys.stdin)
        w, h, rgba = image["width"], image["height"], image["rgba"]
        rows = [[rgba[(y * w + x) * 4:(y * w + x) * 4 + 3] for x in range(w)] for y in range(h)]
        print(blurhash.encode(rows, components_x=4, components_y=3))
        print(base64.b64encode(rgba_to_thumbhash(w, h, rgba)).decode())
        """

    /// The same pixels give the reference encoders' very strings: an opaque gradient for BlurHash
    /// (which has no alpha) and ThumbHash, and the gradient with a transparent corner for ThumbHash.
    @Test func theEncodersAgreeWithTheReferences() async throws {
        let (width, height) = (24, 16)
        var opaque: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                opaque += [UInt8(x * 10), UInt8(y * 15), UInt8(255 - x * 5 - y * 3), 255]
            }
        }
        var clear = opaque
        for y in 0..<6 { for x in 0..<8 { clear[(y * width + x) * 4 + 3] = UInt8(x * y * 5) } }
        for (name, samples) in [("opaque", opaque), ("with alpha", clear)] {
            let pixels = try #require(RGBAPixels(width: width, height: height, samples: samples))
            let request = try JSONSerialization.data(withJSONObject: [
                "width": width, "height": height, "rgba": samples.map(Int.init),
            ])
            let lines = String(decoding: try await Self.run(Self.encoders, input: Array(request)), as: UTF8.self)
                .split(separator: "\n").map(String.init)
            try #require(lines.count == 2, "\(lines)")
            if name == "opaque" { #expect(BlurHash.encode(pixels) == lines[0], "BlurHash") }
            #expect(ThumbHash.encode(pixels) == Array(Data(base64Encoded: lines[1]) ?? Data()), "ThumbHash \(name)")
        }
    }

    /// Red on the left half, blue on the right, twice as wide as high: each decoder draws red
    /// where the red is and blue where the blue is; ThumbHash keeps the shape and the average
    /// colour (sRGB: half red, half blue).
    @Test func twoColoursComeBackOnTheirSides() async throws {
        let image = InfoTests.stripes(height: 100, [([255, 0, 0], 100), ([0, 0, 255], 100)])
        let h = try Harness(routes: ["/two.png": .ok(image)])
        let response = try await h.get(InfoTests.target(h, "/two.png"))
        #expect(response.status == 200)
        let (blurhash, thumbhash) = try await Self.draw(response.body)

        for drawing in [blurhash, thumbhash] {
            let left = drawing.mean(columns: 0...0.25)
            let right = drawing.mean(columns: 0.75...1)
            #expect(left[0] > 150 && left[2] < 100, "left \(left) of \(drawing.width)x\(drawing.height)")
            #expect(right[2] > 150 && right[0] < 100, "right \(right)")
            #expect(left[1] < 60 && right[1] < 60, "no green: \(left) \(right)")
        }
        let ratio = Double(thumbhash.width) / Double(thumbhash.height)
        #expect(ratio > 1.5 && ratio < 2.5, "\(thumbhash.width)x\(thumbhash.height)")
        let average = thumbhash.mean()
        #expect(abs(average[0] - 127.5) < 35 && abs(average[2] - 127.5) < 35 && average[1] < 35, "\(average)")
        #expect(average[3] > 250, "opaque: \(average)")
    }

    /// A portrait source with a transparent lower half: ThumbHash's alpha is opaque above and
    /// clear below, its shape upright; BlurHash paints the clear half in the visible colours.
    @Test func alphaAndShapeSurviveThumbHash() async throws {
        let h = try Harness(routes: ["/a.png": .ok(Fixtures.png(width: 60, height: 120, alpha: true))])
        let response = try await h.get(InfoTests.target(h, "/a.png"))
        #expect(response.status == 200)
        let (blurhash, thumbhash) = try await Self.draw(response.body)
        #expect(thumbhash.height > thumbhash.width, "\(thumbhash.width)x\(thumbhash.height)")
        let top = thumbhash.mean(rows: 0...0.35)
        let bottom = thumbhash.mean(rows: 0.65...1)
        #expect(top[3] > 200 && bottom[3] < 60, "alpha: top \(top[3]), bottom \(bottom[3])")
        // The visible half is red (left) and green (right); the painted half is no darker than it.
        let visible = blurhash.mean(rows: 0...0.35)
        let painted = blurhash.mean(rows: 0.65...1)
        #expect(painted.reduce(0, +) > visible.reduce(0, +) * 0.6, "visible \(visible), painted \(painted)")
    }
}
