// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "easel",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Easel", targets: ["Easel"]),
        .library(name: "EaselStorage", targets: ["EaselStorage"]),
        .library(name: "EaselCodecs", targets: ["EaselCodecs"]),
        .library(name: "EaselTables", targets: ["EaselTables"]),
        .executable(name: "easel", targets: ["easel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // System SQLite (libsqlite3-dev) — the disk cache's index.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "EaselStorage",
            dependencies: [
                "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libjpeg-turbo and libpng behind small C shims that catch their longjmp errors.
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "CPNG", linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("spng")]),
        .target(name: "CWebP", linkerSettings: [.linkedLibrary("webp"), .linkedLibrary("webpdemux")]),
        .target(name: "CGIF", linkerSettings: [.linkedLibrary("gif")]),
        .target(
            name: "EaselCodecs",
            dependencies: ["CJPEG", "CPNG", "CWebP", "CGIF"]
        ),
        .target(
            name: "EaselTables",
            dependencies: [
                "EaselCodecs",
                "EaselStorage",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Easel",
            dependencies: ["EaselStorage", "EaselCodecs", "EaselTables"]
        ),
        .executableTarget(
            name: "easel",
            dependencies: [
                "Easel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Writes entries in a loop so tests can kill it mid-write (crash safety).
        .executableTarget(
            name: "EaselCrashHelper",
            dependencies: ["EaselStorage", "EaselTables"]
        ),
        // Helpers shared by the test targets (temporary directories, built helper executables).
        .target(name: "EaselTestSupport", path: "Tests/EaselTestSupport"),
        .testTarget(
            name: "EaselStorageTests",
            dependencies: ["EaselStorage", "CSQLite", "EaselTestSupport"]
        ),
        .testTarget(
            name: "EaselCodecsTests",
            dependencies: ["EaselCodecs"]
        ),
        .testTarget(
            name: "EaselTablesTests",
            dependencies: ["EaselTables", "EaselCodecs", "EaselStorage", "EaselTestSupport"]
        ),
        .testTarget(
            name: "EaselCLITests",
            dependencies: ["EaselStorage", "EaselCodecs"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
