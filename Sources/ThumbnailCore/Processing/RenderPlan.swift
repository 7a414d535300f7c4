/// How a thumbnail of one source is made (`ThumbnailRenderer.plan`).
public struct RenderPlan: Sendable, Equatable {
    /// The output format.
    public let format: OutputFormat
    /// Every frame of an animation is kept.
    public let animated: Bool
    /// An animation made a still of its first frame because of this limit.
    public let firstFrameOnly: FirstFrameReason?
    /// What is decoded: the source with all its frames when animated, its first frame otherwise
    /// (what the decode-memory estimate is made for).
    public let decoded: SourceInfo
}
