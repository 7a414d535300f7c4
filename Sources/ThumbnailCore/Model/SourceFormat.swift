/// What a source was decoded as (from the libvips loader, never from Content-Type).
public enum SourceFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp, gif, heif, tiff
}
