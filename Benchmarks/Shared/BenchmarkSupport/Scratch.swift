import Foundation

/// A fresh directory under the temporary directory, removed with everything in it when released.
public final class Scratch: Sendable {
    public let url = FileManager.default.temporaryDirectory.appendingPathComponent("easel-bench-\(UUID().uuidString)")
    public init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The repository's `Samples/` directory.
public let samplesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples")
