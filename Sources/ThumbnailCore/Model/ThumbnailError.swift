/// The one error Core throws. `code` decides the HTTP answer (mapped in one place by the service);
/// `detail` is for logs only and never reaches a client. `invalidParams` is public: it tells a
/// client which parameter was wrong and why.
public struct ThumbnailError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        case invalidParameter
        case sourceNotAllowed
        case sourceNotFound
        case sourceTooLarge
        case unsupportedSource
        case undecodableSource
        case tooManyPixels
        /// The decode-memory estimate alone is over the work budget (`--work-bytes`).
        case tooMuchMemory
        case originFailed
        case originTimeout
        case queueFull
        /// Making the image ran past `--job-timeout` (the work was stopped or abandoned).
        case processingTimeout
        case notCached
        case shuttingDown
        case `internal`
    }

    /// One rejected request parameter (RFC 9457 "invalid-params" member).
    public struct InvalidParam: Error, Sendable, Equatable {
        public let name: String
        public let reason: String
        public init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    public let code: Code
    public let detail: String
    public let invalidParams: [InvalidParam]

    public init(_ code: Code, _ detail: String = "", invalidParams: [InvalidParam] = []) {
        self.code = code
        self.detail = detail
        self.invalidParams = invalidParams
    }

    public static func invalid(_ params: [InvalidParam]) -> ThumbnailError {
        ThumbnailError(
            .invalidParameter, params.map { "\($0.name): \($0.reason)" }.joined(separator: "; "), invalidParams: params)
    }

    public var description: String { detail.isEmpty ? code.rawValue : "\(code.rawValue): \(detail)" }
}
