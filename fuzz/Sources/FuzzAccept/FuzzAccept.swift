import FuzzSupport
import ThumbnailCore

@testable import ThumbnailService

/// `Accept` negotiation for `format=auto`. Invariants besides not crashing: the answer is one of
/// AVIF, WebP or the source's family; it does not depend on the order of the media ranges nor on
/// the ASCII case of the header; and a range that names neither format changes nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAccept(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let accept = text(data, size)
    let answer = AcceptNegotiation.preferredFormat(accept: accept)
    switch answer {
    case .source, .exactly(.avif), .exactly(.webp): break
    default: invariant(false, "\(accept) negotiates \(answer)")
    }
    // The reordering checks hold for ASCII: a non-ASCII range could start with a combining mark
    // that joins the comma before it once moved.
    guard accept.utf8.allSatisfy({ $0 < 0x80 }) else { return 0 }
    let ranges = accept.split(separator: ",")
    guard ranges.count < 64 else { return 0 }
    let reversed = ranges.reversed().joined(separator: ",")
    invariant(AcceptNegotiation.preferredFormat(accept: reversed) == answer, "order matters: \(accept)")
    let upper = String(decoding: accept.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
    invariant(AcceptNegotiation.preferredFormat(accept: upper) == answer, "case matters: \(accept)")
    invariant(
        AcceptNegotiation.preferredFormat(accept: accept + ",text/html;q=0.9") == answer,
        "an unrelated range changes \(accept)")
    return 0
}
