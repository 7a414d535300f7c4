// swift-tools-version:6.0
// thumbd-bench: thumbd's render pipeline in-process, with no HTTP, fetch or cache (bench/run.sh's
// memory reference, bench/instructions.sh's instruction count, bench/decode-memory.sh's
// measurements). A package of its own, depending on the main one by path as fuzz/ does, so that
// `swift build` / `swift test` of the main package build the service and its tests only. Build:
// `swift build -c release --package-path bench`; the binary is in
// `$(swift build -c release --package-path bench --show-bin-path)/thumbd-bench`.
import PackageDescription

let package = Package(
    name: "thumbd-bench",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "thumbd", path: "..")],
    targets: [
        .executableTarget(
            name: "thumbd-bench",
            dependencies: [
                .product(name: "ThumbnailCore", package: "thumbd"),
                .product(name: "ThumbnailService", package: "thumbd"), .product(name: "Vips", package: "thumbd"),
                .product(name: "Primitives", package: "thumbd"),
                .product(name: "DiskCache", package: "thumbd"), .product(name: "Crypto", package: "thumbd"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
