import FuzzSupport
import ThumbnailCore

@testable import HTTPServer

/// `/thumb` and `/prefetch` queries, from the raw request target to a `ThumbnailRequest`. The first
/// byte picks the route and the policy; the rest is the query as a client would send it.
///
/// Invariants besides not crashing: the query parser reads its own percent-encoding back exactly;
/// the request parser does not depend on the order of the parameters; a refusal names at least one
/// parameter (the 400 must say what was wrong); and an accepted request, written back as a
/// canonical query, parses to the same request, so one thumbnail has one cache key however it
/// was asked for.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let flags = data[0]
    let requireSpec = flags & 1 == 0
    let policy = RequestPolicy(
        allowedWidths: flags & 2 != 0 ? [160, 320, 640] : [], allowedHeights: flags & 4 != 0 ? [100, 200] : [],
        signed: flags & 8 != 0)
    let target = "/thumb?" + text(data + 1, size - 1)

    let query = QueryString.parse(target)
    let reread = QueryString.parse("/thumb?" + encode(query))
    invariant(same(reread, query), "query \(query) re-encoded reads back as \(reread)")

    let result = parse(query, requireSpec, policy)
    let reversed = parse(query.reversed(), requireSpec, policy)
    switch (result, reversed) {
    case (.success(let a), .success(let b)):
        invariant(a == b, "parameter order changes the request: \(a) vs \(b)")
    case (.failure(let a), .failure(let b)):
        invariant(!a.invalidParams.isEmpty && a.code == .invalidParameter, "a refusal names nothing: \(a)")
        invariant(Set(a.invalidParams.map(\.name)) == Set(b.invalidParams.map(\.name)), "order changes the 400")
        invariant(a.invalidParams.allSatisfy { $0.name.count <= 64 }, "an unbounded name is echoed: \(a)")
        return 0
    default:
        invariant(false, "parameter order decides acceptance of \(query)")
    }
    guard case .success(let request) = result else { return 0 }

    // The canonical query: `dpr` is already in the sizes, so it is left out; sizes past the
    // parameter's bounds (w=8192&dpr=4) cannot be written without it and are not re-checked.
    guard let canonical = canonicalQuery(request, signed: policy.signed) else { return 0 }
    let reparsed = parse(QueryString.parse("/thumb?" + canonical), requireSpec, RequestPolicy(signed: policy.signed))
    guard case .success(let again) = reparsed else {
        invariant(false, "canonical query \(canonical) of \(query) is refused: \(reparsed)")
        return 0
    }
    invariant(again.source == request.source, "source changed: \(request.source) -> \(again.source)")
    invariant(again.spec == request.spec, "spec changed: \(String(describing: request.spec)) -> \(canonical)")
    invariant(again.variantKey == request.variantKey, "cache key changed for \(canonical)")
    invariant(again.formatIsNegotiated == request.formatIsNegotiated, "format=auto lost in \(canonical)")
    invariant(again.expires == request.expires, "exp changed in \(canonical)")
    return 0
}

private func parse(
    _ query: [(name: String, value: String?)], _ requireSpec: Bool, _ policy: RequestPolicy
) -> Result<ThumbnailRequest, ThumbnailError> {
    do { return .success(try RequestParser.parse(query: query, requireSpec: requireSpec, policy: policy)) } catch {
        return .failure(error)
    }
}

private func same(_ a: [(name: String, value: String?)], _ b: [(name: String, value: String?)]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
}

private func canonicalQuery(_ request: ThumbnailRequest, signed: Bool) -> String? {
    var pairs: [(String, String?)] = [("url", request.source.description)]
    if let spec = request.spec {
        guard spec.width <= TransformSpec.maxSide, (spec.height ?? 1) <= TransformSpec.maxSide else { return nil }
        pairs.append(("w", String(spec.width)))
        if let height = spec.height { pairs.append(("h", String(height))) }
        pairs.append(("fit", spec.fit.rawValue))
        if spec.fit == .cover { pairs.append(("crop", spec.crop.rawValue)) }
        if request.formatIsNegotiated {
            pairs.append(("format", "auto"))
        } else if case .exactly(let format) = spec.format {
            pairs.append(("format", format.rawValue))
        }
        pairs.append(("q", String(spec.quality)))
    }
    if let expires = request.expires { pairs.append(("exp", String(expires))) }
    if signed { pairs.append(("sig", String(repeating: "A", count: 43))) }
    return encode(pairs.map { (name: $0.0, value: $0.1) })
}

/// Percent-encodes every byte but the unreserved ones, so nothing is read as a separator or a `+`.
private func encode(_ query: [(name: String, value: String?)]) -> String {
    func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
    return query.map { pair in escape(pair.name) + (pair.value.map { "=" + escape($0) } ?? "") }.joined(
        separator: "&")
}
