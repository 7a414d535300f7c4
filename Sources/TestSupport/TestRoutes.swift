internal import Primitives

/// A route table a test changes while the origin runs (an image replaced, a source gone).
public final class TestRoutes: Sendable {
    private let table: Locked<[String: TestOrigin.Reply]>

    public init(_ routes: [String: TestOrigin.Reply] = [:]) { table = Locked(routes) }

    /// What `path` answers from now on.
    public func set(_ path: String, _ reply: TestOrigin.Reply) { table.withLock { $0[path] = reply } }

    /// The reply for a request, by path (query ignored); unknown paths get 404.
    public func reply(for request: TestOrigin.Request) -> TestOrigin.Reply {
        table.withLock { $0[request.path] } ?? .status(404, body: Array("not found".utf8))
    }
}
