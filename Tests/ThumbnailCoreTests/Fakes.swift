import Foundation
import Synchronization
import ThumbnailCore

/// A fetcher that answers from a table after an optional delay, counting calls per URL.
final class FakeFetcher: ImageFetching {
    let bodies: [String: Result<[UInt8], ThumbnailError>]
    let delay: Duration
    private let calls = Mutex<[String: Int]>([:])

    init(_ bodies: [String: Result<[UInt8], ThumbnailError>], delay: Duration = .milliseconds(50)) {
        self.bodies = bodies
        self.delay = delay
    }

    func count(_ url: String) -> Int { calls.withLock { $0[url] ?? 0 } }
    var total: Int { calls.withLock { $0.values.reduce(0, +) } }

    func fetch(_ url: SourceURL, completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void) {
        let key = url.description
        calls.withLock { $0[key, default: 0] += 1 }
        let answer = bodies[key] ?? .failure(ThumbnailError(.sourceNotFound))
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            completion(answer.map { ImageBytes($0) })
        }
    }
}

/// "Decodes" a source whose first byte is its width / 10 and second its height / 10, and
/// "encodes" a thumbnail as the spec's canonical text.
final class FakeTransformer: ImageTransforming {
    let delay: Duration
    let gate: Mutex<Bool>
    private let counter = Mutex(0)
    let decodes = Mutex(0)

    init(delay: Duration = .zero) {
        self.delay = delay
        self.gate = Mutex(true)
    }

    var transforms: Int { counter.withLock { $0 } }

    func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo {
        let bytes = source.array
        guard bytes.count >= 2 else { throw ThumbnailError(.unsupportedSource) }
        return SourceInfo(format: .jpeg, width: Int(bytes[0]) * 10, height: Int(bytes[1]) * 10)
    }

    func decode(_ source: ImageBytes, info: SourceInfo, width: Int, height: Int) throws(ThumbnailError)
        -> DecodedSource
    {
        decodes.withLock { $0 += 1 }
        let w = min(width, info.width)
        let h = min(height, info.height)
        return DecodedSource(pixels: ImageBytes([UInt8](repeating: 1, count: w * h)), width: w, height: h, source: info)
    }

    func encode(
        _ decoded: DecodedSource, resize: Resize, format: OutputFormat, quality: Int, opaqueFormat: OutputFormat?
    ) throws(ThumbnailError) -> EncodedImage {
        counter.withLock { $0 += 1 }
        if delay > .zero {
            Thread.sleep(
                forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds))
        }
        guard case .exact(let width, let height) = resize else { throw ThumbnailError(.internal, "fake: exact only") }
        return EncodedImage(
            bytes: ImageBytes(Array("w=\(width),h=\(height)".utf8)), format: format, width: width, height: height)
    }
}

extension ThumbnailPipeline {
    /// Async bridge for tests (the pipeline itself never touches the cooperative pool).
    func thumbnail(_ request: ThumbnailRequest) async -> (Result<CachedImage, ThumbnailError>, Outcome) {
        await withCheckedContinuation { continuation in
            thumbnail(request) { result, outcome in continuation.resume(returning: (result, outcome)) }
        }
    }
}

func request(_ url: String, _ extra: [(String, String?)] = [("w", "100")], accept: String? = nil) throws
    -> ThumbnailRequest
{
    try RequestParser.parse(
        query: [("url", url)] + extra.map { (name: $0.0, value: $0.1) }, accept: accept, route: .thumb)
}
