internal import CVipsShims
import Primitives

/// The time limit of one `Vips.thumbnail` or `Vips.decode` call, enforced with libvips' own
/// mechanisms, in two places:
///
/// - The JPEG, PNG and TIFF loaders read their bytes as they decode: given a deadline, the
///   pipeline hands them the bytes through a source whose reads fail once it has passed
///   (`cvips_thumbnail_timed`), so a long decode stops within one read (4 KiB of a JPEG).
/// - Every copy to memory (`materialize`, where the lazy pipeline runs) reports progress, and
///   once the deadline has passed its handler sets libvips' kill flag (`watch`). libvips 8.14
///   emits that signal once before the copy and then once per 128 output rows, each after most
///   of the decoding for them (measured: a 300-row thumbnail of a 64-megapixel PNG signalled at
///   about 45 %, 85 % and 100 % of its time; a 100-row one only at the end). So this covers the
///   other loaders and the cuts from a decoded copy, coarsely.
///
/// The evaluation then fails with libvips' error, which the pipeline reports as
/// `VipsError.timedOut`. Not covered: the header reads, and the encoders, whose cost is bounded
/// by the output (heifsave encodes after its sink; 8.14's webpsave leaks when its sink fails), so
/// the pipeline checks the deadline once before encoding instead. The one exception is an animated
/// GIF's encoder, whose cost grows with the frames: its input is watched too (cgifsave stops
/// cleanly at the next frame's rows). Owns one reference to the C
/// deadline; each watched image and timed source holds its own.
final class VipsDeadline {
    private let pointer: OpaquePointer

    /// A deadline `limit` from now on the monotonic clock.
    init(after limit: Duration) {
        pointer = cvips_deadline_new(limit.nanoseconds)
    }

    deinit {
        cvips_deadline_release(pointer)
    }

    var hasPassed: Bool { cvips_deadline_passed(pointer) != 0 }

    /// Stops `image`'s evaluation once the deadline has passed, at its next progress signal. Call
    /// it on an image just before it is copied to memory (`materialize`).
    func watch(_ image: VipsImageHandle) {
        cvips_deadline_watch(image.pointer, pointer)
    }

    /// The C deadline, for a shim that holds its own reference.
    func withPointer<R>(_ body: (OpaquePointer) -> R) -> R {
        body(pointer)
    }
}
