import CMicroHTTPD

extension HTTPRequest {
    /// Reads the request head from libmicrohttpd (headers and query arguments in order).
    init(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?, target: String?, hasBody: Bool
    ) {
        var headers: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &headers) { headers in
            _ = MHD_get_connection_values_n(
                connection, .HEADER_KIND,
                { cls, _, key, keySize, value, valueSize in
                    let headers = cls!.assumingMemoryBound(to: [(name: String, value: String)].self)
                    headers.pointee.append((string(key, keySize), string(value, valueSize)))
                    return .YES
                }, headers)
        }
        let path = url.map { String(cString: $0) } ?? "/"
        self.init(
            method: method.map { String(cString: $0) } ?? "",
            target: target ?? path,
            path: path,
            headers: headers,
            version: version.map { String(cString: $0) } ?? "",
            hasBody: hasBody)
    }
}

private func string(_ bytes: UnsafePointer<CChar>?, _ count: Int) -> String {
    guard let bytes else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
}
