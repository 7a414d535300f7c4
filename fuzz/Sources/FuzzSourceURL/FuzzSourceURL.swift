import FuzzSupport
import ThumbnailCore

/// Source URLs: the parser never crashes, and its canonical form is a fixed point (parsing the
/// canonical text gives the same URL and the same text back), since that text is the cache key
/// and what libcurl connects to.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSourceURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = text(data, size)
    guard let url = try? SourceURL(parsing: input) else { return 0 }
    let canonical = url.description
    let again: SourceURL
    do { again = try SourceURL(parsing: canonical) } catch {
        invariant(false, "canonical \(canonical) of \(input) does not parse: \(error)")
        return 0
    }
    invariant(again == url, "canonical \(canonical) parses to another URL \(again)")
    invariant(again.description == canonical, "canonical \(canonical) is not a fixed point: \(again)")
    invariant(url.pathAndQuery.hasPrefix("/"), "path \(url.pathAndQuery) does not start with /")
    invariant(!url.pathAndQuery.contains("#"), "fragment kept in \(canonical)")
    invariant(url.host == url.host.lowercased(), "host \(url.host) not lower-cased")
    if let port = url.port { invariant((1...65535).contains(port) && port != url.defaultPort, "port \(port)") }
    // A literal host is read by the one IP parser; the policy's URL check and its connect-time
    // check must agree on it.
    if let address = IPAddress(text: url.host) {
        let policy = SourcePolicy()
        let urlAllowed = (try? policy.check(url)) != nil
        invariant(urlAllowed == policy.allows(address), "URL check and address check disagree on \(canonical)")
    }
    return 0
}

extension SourceURL {
    fileprivate var defaultPort: Int { scheme == .http ? 80 : 443 }
}
