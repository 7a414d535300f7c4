/// How long decodes and encodes take, by format, measured on the worker around the image
/// library's calls (two clock reads and two atomic adds per call). A first size from the original
/// is one streamed pass — libvips pulls the pixels through decode, resize and encode together —
/// so its whole time is an encode `fromOriginal`; a decode is the full decode of a reusable copy.
public final class RenderTimings: Sendable {
    private let decodes = DurationHistogram(
        bounds: DurationHistogram.workBounds, series: SourceFormat.allCases.count)
    /// Series: output format × (from the original, from a decoded copy).
    private let encodes = DurationHistogram(
        bounds: DurationHistogram.workBounds, series: OutputFormat.allCases.count * 2)

    public init() {}

    func recordDecode(_ format: SourceFormat, since start: ContinuousClock.Instant) {
        decodes.record(Self.index(format), since: start)
    }

    func recordEncode(_ format: OutputFormat, fromCopy: Bool, since start: ContinuousClock.Instant) {
        encodes.record(Self.index(format) * 2 + (fromCopy ? 1 : 0), since: start)
    }

    public struct Snapshot: Sendable, Equatable {
        public var decode: [SourceFormat: HistogramSnapshot] = [:]
        public var encodeFromOriginal: [OutputFormat: HistogramSnapshot] = [:]
        public var encodeFromCopy: [OutputFormat: HistogramSnapshot] = [:]

        public init() {}
    }

    public var snapshot: Snapshot {
        var snapshot = Snapshot()
        for format in SourceFormat.allCases { snapshot.decode[format] = decodes.snapshot(Self.index(format)) }
        for format in OutputFormat.allCases {
            snapshot.encodeFromOriginal[format] = encodes.snapshot(Self.index(format) * 2)
            snapshot.encodeFromCopy[format] = encodes.snapshot(Self.index(format) * 2 + 1)
        }
        return snapshot
    }

    private static func index<Format: CaseIterable & Equatable>(_ format: Format) -> Int {
        Format.allCases.firstIndex(of: format).map {
            Format.allCases.distance(from: Format.allCases.startIndex, to: $0)
        }
            ?? 0
    }
}
