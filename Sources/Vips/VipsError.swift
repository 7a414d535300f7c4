internal import CVips

/// Why a libvips call failed. The associated strings carry libvips' error-buffer text: they are for
/// logs only (the buffer is process-wide, so under concurrency the text may belong to another call).
public enum VipsError: Error, Sendable, Equatable {
    /// The bytes start like none of the formats thumbd recognises (`VipsLoaderSignature`), or that
    /// format's libvips loader does not take them.
    case unknownFormat
    /// The bytes are in a recognised format, but the caller did not allow its loader (or libvips
    /// blocks it as untrusted). The associated value is the loader's nickname, e.g. `"tiffload_buffer"`.
    case blockedLoader(String)
    /// The header or the pixels could not be decoded (corrupt, truncated, unsupported variant).
    case decodeFailed(String)
    /// The encoder failed.
    case encodeFailed(String)
    /// The caller passed an option libvips cannot honour (e.g. a zero width).
    case invalidArgument(String)
    /// The call's `timeLimit` passed before its pixel work was done: libvips stopped it.
    case timedOut
}

extension VipsError {
    /// Reads and clears libvips' error buffer. Call it right after a failing libvips call.
    static func takeErrorText() -> String {
        let text = String(cString: vips_error_buffer())
        vips_error_clear()
        return text.trimmingTrailingNewlines()
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while text.last?.isNewline == true { text = text.dropLast() }
        return String(text)
    }
}
