// swift-tools-version: 6.1
import PackageDescription
#if canImport(Glibc)
import Glibc
#endif

/// The `easel` executable is linked by lld with packed relative relocations (DT_RELR): still
/// position-independent, its tens of thousands of relative relocations take kilobytes instead of
/// a megabyte read at every start. Only where the C library loads them (glibc 2.36 and later, as
/// Debian 12 has: an older one refuses to start such a program), as the manifest finds it on the
/// machine that builds.
let packedRelocations: [LinkerSetting] = {
    #if canImport(Glibc)
    // confstr's answer is "glibc 2.36".
    var buffer = [CChar](repeating: 0, count: 64)
    guard confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count) > 0 else { return [] }
    let words = String(cString: buffer).split(separator: " ")
    guard words.count == 2, words[0] == "glibc" else { return [] }
    let version = words[1].split(separator: ".").compactMap { Int($0) }
    guard version.count >= 2, version[0] > 2 || (version[0] == 2 && version[1] >= 36) else { return [] }
    return [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(platforms: [.linux]))]
    #else
    return []
    #endif
}()

let package = Package(
    name: "easel",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Easel", targets: ["Easel"]),
        .library(name: "EaselStorage", targets: ["EaselStorage"]),
        .library(name: "EaselCodecs", targets: ["EaselCodecs"]),
        .library(name: "EaselTables", targets: ["EaselTables"]),
        .library(name: "EaselRemote", targets: ["EaselRemote"]),
        .library(name: "EaselPipeline", targets: ["EaselPipeline"]),
        .library(name: "EaselServer", targets: ["EaselServer"]),
        .executable(name: "easel", targets: ["easel"]),
        // Face and eye detection (OpenCV), a plugin the executable loads on first use (CFacesLoader).
        .library(name: "EaselFaces", type: .dynamic, targets: ["CFaces"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Traces: the API everywhere; swift-otel's OTLP/HTTP exporter in the executable only
        // (its gRPC exporter, and the gRPC packages it needs, are left out).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // `make docs`: DocC catalogues of the library modules (swift package generate-documentation).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // System SQLite (libsqlite3-dev) — the disk cache's index.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Internal (no product): locks, the one Coalescer, the I/O pools, checksums, binary
        // records and the platform file, the only place that imports the C library.
        // XXH3 from xxHash's header (libxxhash-dev), AVX2 chosen at run time: inline values' checksum.
        .target(name: "CXXHash"),
        // pipe2, unshare and getrusage, which Swift's Glibc module does not show (_GNU_SOURCE).
        .target(name: "CPlatform"),
        .target(name: "EaselSupport", dependencies: ["CXXHash", "CPlatform", .product(name: "Tracing", package: "swift-distributed-tracing")]),
        .target(
            name: "EaselStorage",
            dependencies: [
                "EaselSupport",
                "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libjpeg-turbo and libpng behind small C shims that catch their longjmp errors.
        // Input files mapped read-only, their read pages handed back as decoders go (easel_input.h).
        .target(name: "CInput"),
        .target(name: "CJPEG", dependencies: ["CInput"], linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "CPNG", dependencies: ["CInput"], linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("spng"), .linkedLibrary("z"), .linkedLibrary("isal")]),
        .target(name: "CWebP", linkerSettings: [.linkedLibrary("webp"), .linkedLibrary("webpdemux"), .linkedLibrary("webpmux")]),
        .target(name: "CGIF", dependencies: ["CInput"], linkerSettings: [.linkedLibrary("gif")]),
        // Little CMS (ICC profiles to sRGB), libavif (AVIF: dav1d decodes, aom encodes) and
        // libheif (HEIC through libde265).
        .target(name: "CLCMS", linkerSettings: [.linkedLibrary("lcms2")]),
        // Libraries loaded on first use (dlopen), not linked, so that a process pays for them
        // only when it reads or writes their formats: libavif, libheif, libtiff, libjxl here; librsvg,
        // poppler, Pango, cairo and libxml2 below (CLazy says how; FFmpeg in CVideo the same way).
        .target(name: "CLazy"),
        .target(name: "CAVIF", dependencies: ["CLazy"]),
        .target(name: "CHEIF", dependencies: ["CLazy"]),
        .target(name: "CTIFF", dependencies: ["CInput", "CLazy"]),
        .target(name: "CJXL", dependencies: ["CLazy"]),
        // (These shims declare the few GLib, cairo, librsvg and poppler functions they call: see
        // CCairo's header.)
        .target(name: "CCairo", dependencies: ["CLazy"]),
        // libxml2, for the SVG budget check and sanitiser, is loaded on first use (CSVG's
        // easel_libxml2.h), not linked. Its headers (libxml2-dev) are found through
        // Sources/CSVG/libxml2/libxml, a link to Debian's /usr/include/libxml2/libxml: a system
        // module's pkg-config would link libxml2, and an unsafe -I flag would keep the library
        // products from being a versioned dependency. (Git dependencies keep the link; a package
        // registry's archive may refuse a link that leaves the package.)
        .target(name: "CSVG", dependencies: ["CCairo", "CLazy"], cSettings: [.headerSearchPath("libxml2")]),
        .target(name: "CPDF", dependencies: ["CCairo"], linkerSettings: [.linkedLibrary("z")]),
        // Text watermarks: Pango and PangoCairo (libpango1.0-dev), declared by hand like CCairo's.
        .target(name: "CText", dependencies: ["CCairo"]),
        // Video frames: FFmpeg's libavformat, libavcodec and libswscale (their headers are on the
        // default include path), input from memory only, few demuxers and decoders allowed;
        // loaded on first use (dlopen), not linked: see easel_video.c.
        .target(name: "CVideo", dependencies: ["CLazy"]),
        // Faces and eyes: OpenCV's Haar cascades (libopencv-objdetect-dev; the cascades from
        // opencv-data), through a small C++ shim with a C interface, built as the plugin
        // libEaselFaces.so (the EaselFaces product), which CFacesLoader loads on first use.
        .target(name: "CFacesLoader", dependencies: ["CLazy"]),
        .target(name: "CFaces", dependencies: ["CFacesLoader"], cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
                linkerSettings: [.linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core")]),
        // Resampling passes in 16-bit fixed point with SSE2 (our code; no library).
        .target(name: "CResample"),
        // glibc allocator tuning for batch decoding (`easel thumbnail`; mallopt is a macro-heavy C API).
        .target(name: "CMalloc"),
        .target(
            name: "EaselCodecs",
            dependencies: ["EaselSupport", "CLazy", "CInput", "CJPEG", "CPNG", "CWebP", "CGIF", "CLCMS", "CAVIF", "CHEIF", "CTIFF", "CSVG", "CJXL", "CPDF", "CResample", "CFacesLoader",
                           "CText", "CVideo", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "EaselTables",
            dependencies: [
                "EaselSupport",
                "EaselCodecs",
                "EaselStorage",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Tiers and sources on existing distributed stores: S3 (Signature V4 on swift-crypto,
        // transport on AsyncHTTPClient). Knows nothing about images.
        .target(
            name: "EaselRemote",
            dependencies: [
                "EaselSupport",
                "EaselStorage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "EaselPipeline",
            dependencies: [
                "EaselSupport",
                "EaselRemote",
                "EaselTables",
                "EaselCodecs",
                "EaselStorage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "EaselServer",
            dependencies: [
                "EaselSupport", "EaselPipeline", "EaselRemote", "EaselTables", "EaselCodecs", "EaselStorage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "Easel",
            dependencies: ["EaselStorage", "EaselCodecs", "EaselTables", "EaselRemote", "EaselPipeline"]
        ),
        .executableTarget(
            name: "easel",
            dependencies: [
                "EaselSupport",
                "Easel",
                "EaselServer",
                "CMalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            linkerSettings: packedRelocations
        ),
        // Writes entries in a loop so tests can kill it mid-write (crash safety).
        .executableTarget(
            name: "EaselCrashHelper",
            dependencies: ["EaselSupport", "EaselStorage", "EaselTables"]
        ),
        // Helpers shared by the test targets (temporary directories, built helper executables).
        .target(
            name: "EaselTestSupport",
            dependencies: [
                "EaselSupport",
                "EaselStorage",
                "EaselCodecs",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/EaselTestSupport"
        ),
        .testTarget(
            name: "EaselStorageTests",
            dependencies: ["EaselSupport", "EaselStorage", "CSQLite", "EaselTestSupport"]
        ),
        .testTarget(
            name: "EaselCodecsTests",
            dependencies: ["EaselCodecs", "EaselSupport", "EaselTestSupport"]
        ),
        .testTarget(
            name: "EaselTablesTests",
            dependencies: ["EaselSupport", "EaselTables", "EaselCodecs", "EaselStorage", "EaselTestSupport"]
        ),
        .testTarget(
            name: "EaselPipelineTests",
            dependencies: [
                "EaselSupport", "EaselPipeline", "EaselTables", "EaselCodecs", "EaselStorage", "EaselTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "EaselServerTests",
            dependencies: [
                "EaselSupport", "EaselServer", "EaselPipeline", "EaselRemote", "EaselCodecs", "EaselStorage", "EaselTables", "EaselTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "EaselRemoteTests",
            dependencies: ["EaselSupport", "EaselRemote", "EaselStorage", "EaselTestSupport"]
        ),
        .testTarget(
            name: "EaselCLITests",
            dependencies: ["EaselSupport", "EaselStorage", "EaselCodecs", "EaselServer", "EaselTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
