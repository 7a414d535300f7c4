import Foundation
import Testing

/// openapi.yaml, as the contract tests read it: its operations with their statuses and
/// parameters, `x-any-path-responses`, and the components, with `$ref`s followed on request.
struct OpenAPIDocument: CustomTestStringConvertible {
    struct Operation {
        var path: String
        /// Upper case.
        var method: String
        var statuses: [Int]
        /// Each resolved (a `$ref` replaced by what it points at).
        var parameters: [YAMLNode]
    }

    let root: YAMLNode
    let operations: [Operation]
    /// `x-any-path-responses`: what any path may answer besides its operations' statuses (a path
    /// not listed, a method a path does not take).
    let anyPathStatuses: [Int]

    static func load() -> OpenAPIDocument {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = (try? String(contentsOf: root.appendingPathComponent("openapi.yaml"), encoding: .utf8)) ?? ""
        return OpenAPIDocument(root: YAMLNode.parse(text))
    }

    init(root: YAMLNode) {
        self.root = root
        var operations: [Operation] = []
        for (path, item) in root["paths"]?.entries ?? [] {
            for (method, operation) in item.entries {
                operations.append(
                    Operation(
                        path: path, method: method.uppercased(),
                        statuses: operation["responses"]?.keys.compactMap { Int($0) } ?? [],
                        parameters: (operation["parameters"]?.items ?? []).map { Self.resolve($0, in: root) }))
            }
        }
        self.operations = operations
        anyPathStatuses = root["x-any-path-responses"]?["responses"]?.keys.compactMap { Int($0) } ?? []
    }

    var testDescription: String { "openapi.yaml" }

    func operation(_ path: String, _ method: String) -> Operation? {
        operations.first { $0.path == path && $0.method == method }
    }

    /// `components/schemas/<name>`.
    func schema(_ name: String) -> YAMLNode? { root["components"]?["schemas"]?[name] }

    /// The node itself, or what its `$ref` (`#/a/b/c`, as this file writes them) points at.
    func resolve(_ node: YAMLNode) -> YAMLNode { Self.resolve(node, in: root) }

    /// An object schema's properties in document order, each resolved.
    func properties(of schema: YAMLNode) -> [(name: String, schema: YAMLNode)] {
        (resolve(schema)["properties"]?.entries ?? []).map { ($0.key, resolve($0.value)) }
    }

    private static func resolve(_ node: YAMLNode, in root: YAMLNode) -> YAMLNode {
        var node = node
        // A reference to a reference is followed too; openapi.yaml has no cycles.
        while let reference = node["$ref"]?.string, reference.hasPrefix("#/") {
            var target: YAMLNode? = root
            for part in reference.dropFirst(2).split(separator: "/") { target = target?[String(part)] }
            guard let target else { return node }
            node = target
        }
        return node
    }
}
