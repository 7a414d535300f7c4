/// Reads a source's header: format and displayed size, no pixel decoded. Refuses formats the
/// service does not take. Called on worker threads only. The default is libvips (in the service).
public protocol ImageInspecting: Sendable {
    func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo
}
