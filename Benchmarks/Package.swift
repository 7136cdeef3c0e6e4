// swift-tools-version: 6.1
// Benchmarks for Easel, kept in their own package so the library itself does
// not depend on the benchmark framework (or its malloc interposer).
import PackageDescription

let package = Package(
    name: "easel-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "easel", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(
            url: "https://github.com/ordo-one/benchmark",
            from: "1.38.1",
            traits: ["MallocInterposer"]
        ),
    ],
    targets: [
        // Helpers shared by the benchmark suite and the peer workload (random values).
        .target(name: "BenchmarkSupport", path: "Shared/BenchmarkSupport"),
        // `swift package benchmark` discovers executable targets under Benchmarks/.
        .executableTarget(
            name: "StorageBenchmarks",
            dependencies: [
                .product(name: "EaselStorage", package: "easel"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/StorageBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "EaselCodecs", package: "easel"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
        .executableTarget(
            name: "TableBenchmarks",
            dependencies: [
                .product(name: "EaselTables", package: "easel"),
                .product(name: "EaselCodecs", package: "easel"),
                .product(name: "EaselStorage", package: "easel"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/TableBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
        .executableTarget(
            name: "PipelineBenchmarks",
            dependencies: [
                .product(name: "EaselPipeline", package: "easel"),
                .product(name: "EaselTables", package: "easel"),
                .product(name: "EaselCodecs", package: "easel"),
                .product(name: "EaselStorage", package: "easel"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/PipelineBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
        // The Swift side of peers/pipeline-throughput.sh.
        .executableTarget(
            name: "PipelineThroughput",
            dependencies: [
                .product(name: "EaselPipeline", package: "easel"),
                .product(name: "EaselTables", package: "easel"),
            ],
            path: "peers/PipelineThroughput"
        ),
        // Image bombs refused quickly and without allocating (run: swift run -c release LimitsCheck).
        .executableTarget(
            name: "LimitsCheck",
            dependencies: [.product(name: "EaselCodecs", package: "easel")],
            path: "Limits"
        ),
        // Decode-only timing for peers/thumbnail.sh's PNG table.
        .executableTarget(
            name: "DecodeFiles",
            dependencies: [.product(name: "EaselCodecs", package: "easel")],
            path: "DecodeFiles"
        ),
        // The Swift side of peers/diskcache-compare.sh.
        .executableTarget(
            name: "DiskCachePeerWorkload",
            dependencies: [
                .product(name: "EaselStorage", package: "easel"),
                "BenchmarkSupport",
            ],
            path: "peers/DiskCachePeerWorkload"
        ),
        // The Swift side of peers/shared-tier.sh: S3Store lookups, timed one by one.
        .executableTarget(
            name: "SharedTierLookup",
            dependencies: [.product(name: "EaselRemote", package: "easel")],
            path: "peers/SharedTierLookup"
        ),
        // The Swift side of peers/color-and-formats.sh: ICC conversion cost, AVIF encodes, HEIC
        // decodes, in process.
        .executableTarget(
            name: "ColorFormatsWorkload",
            dependencies: [.product(name: "EaselCodecs", package: "easel")],
            path: "peers/ColorFormatsWorkload"
        ),
        // A bare Hummingbird route serving preloaded bytes: the framework's ceiling for the
        // warm path (serve-vs-nginx.sh).
        .executableTarget(
            name: "BareRoute",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "peers/BareRoute"
        ),
        // The same answers from a plain SwiftNIO handler, no framework: the ceiling of answering
        // repeat requests in the channel pipeline (serve-vs-nginx.sh).
        .executableTarget(
            name: "BareNIO",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "peers/BareNIO"
        ),
    ],
    swiftLanguageModes: [.v6]
)
