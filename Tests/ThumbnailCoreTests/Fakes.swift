import Foundation
import Primitives
import ThumbnailCore

/// A gate a test opens: whatever waits on it (a fake fetch, a fake render) is held until then,
/// so tests order events by what happened, never by how long they waited.
final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiting: [@Sendable () -> Void])>((false, []))

    init(open: Bool = false) { state.withLock { $0.open = open } }

    /// Runs `action` now if open, else when `open()` is called (on that thread).
    func whenOpen(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.open { return true }
            state.waiting.append(action)
            return false
        }
        if now { action() }
    }

    /// Blocks the calling (worker) thread until open.
    func wait() {
        let semaphore = DispatchSemaphore(value: 0)
        whenOpen { semaphore.signal() }
        semaphore.wait()
    }

    /// Holds whatever comes next until `open()` again.
    func close() { state.withLock { $0.open = false } }

    func open() {
        let waiting = state.withLock { state -> [@Sendable () -> Void] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for action in waiting { action() }
    }
}

/// A fetcher that answers from a table once its gate is open (at once by default), counting calls
/// per URL. It behaves like an honest origin: every body carries an ETag made from its bytes and
/// the table's `directives`, and a conditional fetch whose ETag still matches is answered "not
/// modified". Tests change the table (`set`) to play an origin whose image changed or went away.
final class FakeFetcher: ImageFetching {
    let gate: Gate
    private let state:
        Locked<
            (
                bodies: [String: Result<[UInt8], ThumbnailError>], directives: OriginDirectives, calls: [String: Int],
                conditional: [String: [SourceValidators]]
            )
        >

    init(
        _ bodies: [String: Result<[UInt8], ThumbnailError>], gate: Gate = Gate(open: true),
        directives: OriginDirectives = OriginDirectives()
    ) {
        self.gate = gate
        self.state = Locked((bodies, directives, [:], [:]))
    }

    func count(_ url: String) -> Int { state.withLock { $0.calls[url] ?? 0 } }
    var total: Int { state.withLock { $0.calls.values.reduce(0, +) } }
    /// The validators each conditional fetch of `url` carried, in order.
    func conditionalFetches(_ url: String) -> [SourceValidators] { state.withLock { $0.conditional[url] ?? [] } }

    /// What the origin answers for `url` from now on.
    func set(_ url: String, _ answer: Result<[UInt8], ThumbnailError>) { state.withLock { $0.bodies[url] = answer } }
    /// What its answers say about caching from now on (the ETag is always the fake's own).
    func set(directives: OriginDirectives) { state.withLock { $0.directives = directives } }

    static func etag(of bytes: [UInt8]) -> String { "\"" + bytes.map { String($0) }.joined(separator: "-") + "\"" }

    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        let key = url.description
        let (answer, directives) = state.withLock { state in
            state.calls[key, default: 0] += 1
            if let validators { state.conditional[key, default: []].append(validators) }
            return (state.bodies[key] ?? .failure(ThumbnailError(.sourceNotFound)), state.directives)
        }
        let fetched = answer.map { bytes -> FetchedSource in
            var directives = directives
            directives.validators.etag = Self.etag(of: bytes)
            if let validators, validators.etag == directives.validators.etag { return .notModified(directives) }
            return .modified(ImageBytes(bytes), directives)
        }
        // Never on the caller's thread: a real fetch completes on curl's I/O thread.
        gate.whenOpen { DispatchQueue.global().async { completion(fetched) } }
    }
}

/// The fake library's decoded copy.
final class FakeCopy: Sendable {
    let width: Int
    let height: Int
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// "Decodes" a source whose first byte is its width / 10 and second its height / 10 (an animated
/// GIF when a third byte 0xA7 is followed by its frame count), and "encodes" a thumbnail as the
/// text of its size (and its frames, when it keeps an animation). Renders wait on `gate` (open by
/// default).
final class FakeImaging: ImageInspecting, ImageDecoding, ImageEncoding {
    let gate: Gate
    let decodes = Locked(0)
    private let counter = Locked(0)

    init(gate: Gate = Gate(open: true)) { self.gate = gate }

    var encodes: Int { counter.withLock { $0 } }

    func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo {
        let bytes = source.array
        guard bytes.count >= 2 else { throw ThumbnailError(.unsupportedSource) }
        if bytes.count >= 4, bytes[2] == 0xA7 {
            return SourceInfo(
                format: .gif, width: Int(bytes[0]) * 10, height: Int(bytes[1]) * 10, pageCount: Int(bytes[3]),
                hasAlpha: true)
        }
        return SourceInfo(format: .jpeg, width: Int(bytes[0]) * 10, height: Int(bytes[1]) * 10)
    }

    func decode(
        _ source: ImageBytes, info: SourceInfo, fittingWidth width: Int, height: Int, deadline: JobDeadline
    ) throws(ThumbnailError) -> DecodedSource<FakeCopy> {
        decodes.withLock { $0 += 1 }
        let scale = min(1, Double(width) / Double(info.width), Double(height) / Double(info.height))
        let w = max(1, Int((Double(info.width) * scale).rounded()))
        let h = max(1, Int((Double(info.height) * scale).rounded()))
        return DecodedSource(handle: FakeCopy(width: w, height: h), width: w, height: h, byteCount: w * h, source: info)
    }

    /// A flat, opaque mid-grey copy.
    func pixels(of copy: DecodedSource<FakeCopy>) throws(ThumbnailError) -> RGBAPixels {
        let grey: [UInt8] = [128, 128, 128, 255]
        let samples = Array([[UInt8]](repeating: grey, count: copy.width * copy.height).joined())
        guard let pixels = RGBAPixels(width: copy.width, height: copy.height, samples: samples) else {
            throw ThumbnailError(.internal, "fake: no pixels")
        }
        return pixels
    }

    func encode(_ input: EncodeInput<FakeCopy>, resize: Resize, output: OutputChoice, deadline: JobDeadline)
        throws(ThumbnailError) -> EncodedImage
    {
        counter.withLock { $0 += 1 }
        gate.wait()
        guard case .exact(let width, let height) = resize else { throw ThumbnailError(.internal, "fake: exact only") }
        if case .decoded(let copy) = input, copy.handle.width < width {
            throw ThumbnailError(.internal, "fake: cut larger than its copy")
        }
        var frames = 1
        if output.keepsAnimation {
            // A decoded copy holds one frame: an animation is only ever made from its original.
            guard case .original(_, let info) = input else {
                throw ThumbnailError(.internal, "fake: animation from a copy")
            }
            frames = info.pageCount
        }
        let text = "w=\(width),h=\(height)" + (frames > 1 ? ",frames=\(frames)" : "")
        return EncodedImage(
            bytes: ImageBytes(Array(text.utf8)), format: output.format, width: width, height: height, frames: frames)
    }
}

typealias FakePipeline = ThumbnailPipeline<FakeImaging, String>

/// Limits for tests: each test sets what it is about; the rest are generous values of the tests'
/// own (the service's defaults are `ServiceConfiguration`'s, and Core has none).
extension ThumbnailPipeline.Limits {
    static func test(
        maxSourcePixels: Int = 75_000_000, errorTTL: Duration = .seconds(10), freshness: FreshnessPolicy = .test(),
        maxPromisedLifetime: Duration = .seconds(86_400), maxFetchesPerOrigin: Int = 8,
        fetchTimeout: Duration = .seconds(20), fetchReservation: Int = 1 << 20
    ) -> Self {
        Self(
            maxSourcePixels: maxSourcePixels, errorTTL: errorTTL, freshness: freshness,
            maxPromisedLifetime: maxPromisedLifetime, maxFetchesPerOrigin: maxFetchesPerOrigin,
            fetchTimeout: fetchTimeout, fetchReservation: fetchReservation)
    }
}

extension FreshnessPolicy {
    static func test(
        minimum: Duration = .seconds(60), maximum: Duration = .seconds(7 * 86_400), fallback: Duration = .seconds(3600),
        staleWhileRevalidate: Duration = .seconds(60), staleIfError: Duration = .seconds(86_400)
    ) -> Self {
        Self(
            minimum: minimum, maximum: maximum, fallback: fallback, staleWhileRevalidate: staleWhileRevalidate,
            staleIfError: staleIfError)
    }
}

/// The fakes' prepared answer is text; it holds its length (the same for every preparation of one
/// variant, as the protocol asks).
extension String: PreparedAnswer {
    public var residentBytes: Int { utf8.count }
}

/// A pipeline over the fakes; `Prepared` is the variant's text, to check it travels with the entry.
func makePipeline(
    _ fetcher: FakeFetcher, _ imaging: FakeImaging, workers: Int = 2, queue: Int = 64, budget: Int = 10_000_000,
    maxSourcePixels: Int = 75_000_000
) -> FakePipeline {
    FakePipeline(
        cache: ImageCache<FakePipeline.Entry>(budget: budget),
        workers: WorkerPool(workers: workers, queueCapacity: queue),
        fetcher: fetcher, imaging: imaging, limits: .test(maxSourcePixels: maxSourcePixels, errorTTL: .seconds(3600))
    ) { image, _, _ in
        "prepared " + String(decoding: image.bytes.array, as: UTF8.self)
    }
}

extension ThumbnailPipeline {
    /// Async bridge for tests (the pipeline itself never touches the cooperative pool).
    func thumbnail(_ request: ThumbnailRequest) async -> (Result<Variant, ThumbnailError>, Outcome) {
        await withCheckedContinuation { continuation in
            thumbnail(request) { result, outcome in continuation.resume(returning: (result, outcome)) }
        }
    }
}

func request(_ url: String, _ extra: [(String, String?)] = [("w", "100")]) throws -> ThumbnailRequest {
    try RequestParser.parse(query: [("url", url)] + extra.map { (name: $0.0, value: $0.1) }, requireSpec: true)
}

func text(_ result: Result<CachedVariant<String>, ThumbnailError>) throws -> String {
    String(decoding: try result.get().image.bytes.array, as: UTF8.self)
}

/// A monotonic clock a test moves by hand.
final class FakeClock: Sendable {
    private let offset = Locked<Duration>(.zero)
    private let start = ContinuousClock.now

    var now: ContinuousClock.Instant { start.advanced(by: offset.withLock { $0 }) }

    func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
}
