import FuzzSupport
import Primitives
import ThumbnailCore

/// IP literals and the address policy. The input is read twice: as text (the literal parser,
/// `inet_pton` behind `SocketAddress`) and, when long enough, as raw address bytes (the classifier).
///
/// Invariants: every text form of one address (the parsed one, `IPAddress.description`, the
/// `inet_ntop` text of `SocketAddress.host`, the IPv4-mapped IPv6 form of an IPv4 address) reads
/// back to the same bytes and gets the same policy answer, under every policy setting; the URL
/// check of a literal host agrees with the connect-time check of its address.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAddress(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = text(data, size)
    if let address = IPAddress(text: input) {
        check(address, from: "text \(input)")
        // The literal parser is the socket layer's: both agree on what the text is.
        let socket = SocketAddress(host: input, port: 443)
        invariant(socket?.bytes == address.bytes, "SocketAddress and IPAddress read \(input) differently")
    }
    if size >= 16, let address = IPAddress(bytes: Array(UnsafeBufferPointer(start: data, count: 16))) {
        check(address, from: "bytes")
    }
    if size >= 4, let address = IPAddress(bytes: Array(UnsafeBufferPointer(start: data, count: 4))) {
        check(address, from: "bytes")
        // IPv4 hidden in IPv6 is unwrapped: ::ffff:a.b.c.d is classified as a.b.c.d.
        let mapped = IPAddress(bytes: Array(repeating: 0, count: 10) + [0xFF, 0xFF] + address.bytes)!
        invariant(
            SourcePolicy.classify(mapped) == SourcePolicy.classify(address),
            "\(mapped) is classified unlike \(address)")
    }
    return 0
}

private let policies = [
    SourcePolicy(), SourcePolicy(allowLoopback: true), SourcePolicy(allowPrivate: true),
    SourcePolicy(allowLoopback: true, allowPrivate: true),
]

private func check(_ address: IPAddress, from origin: String) {
    let forms = [address.description, SocketAddress(host: address.description, port: 0)?.host ?? "(none)"]
    for form in forms {
        guard let again = IPAddress(text: form) else {
            invariant(false, "\(form), the text of \(address) (\(origin)), does not parse")
            return
        }
        invariant(again.bytes == address.bytes, "\(form) reads back as \(again), not \(address)")
        invariant(SourcePolicy.classify(again) == SourcePolicy.classify(address), "class of \(form) differs")
        for policy in policies {
            invariant(policy.allows(again) == policy.allows(address), "policy differs for \(form)")
            // The URL check of the literal host agrees with the connect-time check.
            let host = again.isIPv6 ? "[\(form)]" : form
            guard let url = try? SourceURL(parsing: "http://\(host)/a.jpg") else {
                invariant(false, "a URL with the literal \(host) is refused")
                return
            }
            let urlAllowed = (try? policy.check(url)) != nil
            invariant(urlAllowed == policy.allows(address), "URL check and address check disagree on \(host)")
        }
    }
    // Link-local (cloud metadata) and unspecified are refused whatever is allowed.
    let kind = SourcePolicy.classify(address)
    if kind == .linkLocal || kind == .unspecified || kind == .multicast || kind == .reserved {
        invariant(!policies.contains { $0.allows(address) }, "\(address) (\(kind)) is allowed")
    }
}
