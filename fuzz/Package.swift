// swift-tools-version:6.0
// libFuzzer targets for thumbd's parsers of untrusted text. A package of its own, depending on the
// main one by path, so that `swift build` / `swift test` of the main package never see a fuzzer
// flag or a target without a `main`. Build and run through `scripts/fuzz.sh TARGET SECONDS`, which
// passes `-Xswiftc -sanitize=fuzzer,address` (instrumenting the main package's modules too) and
// `-enable-testing` (the fuzzers reach internal parsers through `@testable import`).
import PackageDescription

let package = Package(
    name: "thumbd-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "thumbd", path: "..")],
    targets: [
        // The invariant check every target uses: a violated invariant is a crash libFuzzer records.
        .target(name: "FuzzSupport"),
        .executableTarget(
            name: "FuzzRequestParser",
            dependencies: [
                "FuzzSupport", .product(name: "ThumbnailCore", package: "thumbd"),
                .product(name: "HTTPServer", package: "thumbd"),
            ]),
        .executableTarget(
            name: "FuzzSourceURL",
            dependencies: ["FuzzSupport", .product(name: "ThumbnailCore", package: "thumbd")]),
        .executableTarget(
            name: "FuzzAddress",
            dependencies: [
                "FuzzSupport", .product(name: "ThumbnailCore", package: "thumbd"),
                .product(name: "Primitives", package: "thumbd"),
            ]),
        .executableTarget(
            name: "FuzzAccept",
            dependencies: [
                "FuzzSupport", .product(name: "ThumbnailCore", package: "thumbd"),
                .product(name: "ThumbnailService", package: "thumbd"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
