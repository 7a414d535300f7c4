// swift-tools-version:6.0
// thumbd: an image thumbnail and resize HTTP microservice. No outside Swift packages: the C
// libraries come from Debian (pkg-config), each behind a system-library target, a thin C shim
// for the variadic calls, and one safe Swift wrapper module.
import PackageDescription

let package = Package(
    name: "thumbd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "thumbd", targets: ["thumbd"]),
        // Libraries only so that the packages in fuzz/ (libFuzzer) and bench/ (thumbd-bench) can
        // depend on this one by path; `swift build` builds the same targets either way.
        .library(name: "Primitives", targets: ["Primitives"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "ThumbnailCore", targets: ["ThumbnailCore"]),
        .library(name: "ThumbnailService", targets: ["ThumbnailService"]),
        .library(name: "Vips", targets: ["Vips"]),
        .library(name: "DiskCache", targets: ["DiskCache"]),
        .library(name: "Crypto", targets: ["Crypto"]),
    ],
    targets: [
        // System libraries (Debian -dev packages, found through pkg-config).
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // Fixed-arity C shims for the variadic C calls Swift cannot make.
        // lcms2 (libvips' colour engine, a dependency of libvips-dev) for one question libvips
        // 8.14 does not answer: which rendering intents an embedded profile supports.
        .target(name: "CVipsShims", dependencies: ["CVips"], linkerSettings: [.linkedLibrary("lcms2")]),
        .target(name: "CCurlShims", dependencies: ["CCurl"]),
        .target(name: "CDiskShims"),
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"]),

        // The low-level pieces every module shares: owned descriptors, socket addresses, one thread
        // launcher, one blocking-wait type, Duration conversions. Glibc and Synchronization only.
        .target(name: "Primitives"),

        // One safe Swift type per C handle; no policy.
        .target(name: "Vips", dependencies: ["CVips", "CVipsShims", "Primitives"]),
        .target(name: "Curl", dependencies: ["CCurl", "CCurlShims", "Primitives"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CMicroHTTPDShims", "Primitives"]),
        .target(name: "Crypto", dependencies: ["CCrypto"]),

        // A bounded, restart-surviving store of keyed byte bodies in one folder (the disk tier
        // behind the memory cache). Knows nothing of images or HTTP; SHA-256 names its files.
        .target(name: "DiskCache", dependencies: ["CDiskShims", "Primitives", "Crypto"]),

        // Request model, keys, cache, coalescing, workers, policy. No HTTP, no C.
        .target(name: "ThumbnailCore", dependencies: ["Primitives", "DiskCache"]),

        // Configuration, routes, adapters, error mapping, logging.
        .target(
            name: "ThumbnailService",
            dependencies: ["ThumbnailCore", "Vips", "Curl", "HTTPServer", "Crypto", "DiskCache", "Primitives"]),

        .executableTarget(name: "thumbd", dependencies: ["ThumbnailService"]),

        // Test-only helpers: an in-process HTTP origin, a blocking HTTP client run off the
        // cooperative pool, and libvips-made fixtures (through Vips' `package` surface, no C).
        .target(name: "TestSupport", dependencies: ["Vips", "Primitives"]),

        .testTarget(name: "PrimitivesTests", dependencies: ["Primitives"]),
        .testTarget(name: "DiskCacheTests", dependencies: ["DiskCache", "Primitives", "TestSupport"]),
        .testTarget(
            name: "ThumbnailCoreTests", dependencies: ["ThumbnailCore", "DiskCache", "Primitives", "TestSupport"]),
        .testTarget(name: "VipsTests", dependencies: ["Vips", "TestSupport"]),
        .testTarget(name: "CurlTests", dependencies: ["Curl", "Primitives", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "Primitives", "TestSupport"]),
        .testTarget(
            name: "ThumbnailServiceTests",
            dependencies: ["ThumbnailService", "DiskCache", "Primitives", "TestSupport", "Vips"]),
    ],
    swiftLanguageModes: [.v6]
)
