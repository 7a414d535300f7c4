/// The bounds on one request head, from ``HTTPServerConfiguration``: checked on the first bytes of
/// a connection and again, for every request, in the access handler.
struct HeadLimits: Sendable {
    let maxTargetBytes: Int
    let maxHeadBytes: Int
    let maxFields: Int
}
