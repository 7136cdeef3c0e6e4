// Helpers shared by the test targets.
import EaselSupport
import Foundation

/// A fresh directory under the system temporary directory, removed when released.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("easel-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    public func child(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Every regular file below this directory, as paths relative to it.
    public func allFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        var files: [String] = []
        while let item = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + item, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(item)
            }
        }
        return files
    }
}

/// A directory holding the package's built executables (next to the test bundle).
public func builtProduct(_ name: String) -> URL {
    let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    // swift-testing may run from inside the .xctest bundle on some platforms.
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), directory.path != "/" {
        directory.deleteLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}


/// A file of the bundled `Samples/` directory.
public func sampleURL(_ name: String, file: String = #filePath) -> URL {
    URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Samples").appendingPathComponent(name)
}

/// Runs `tool` with `arguments` (its output discarded) for at most `timeout` seconds: whether
/// it ran to the end with status 0.
public func runTool(_ tool: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try ChildProcesses.run(process)
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning, Date() < deadline { usleep(5_000) }
    if process.isRunning { process.terminate(); return false }
    return process.terminationStatus == 0
}

/// Threads for a test's blocking work — the child processes it waits for, long pixel loops — so
/// that it does not hold the cooperative pool's few threads (two on a two-core machine), which
/// every in-process server of the run needs too.
let testWorkPool = BlockingIOPool(threadCount: 4)

/// `body` run on `testWorkPool`, awaited. (Record expectations on the awaiting task, with what
/// it returns: the pool's threads are no test's.)
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await testWorkPool.perform { () throws -> T in try body() }
}

/// `runTool`, waited for on `testWorkPool`.
public func runToolOffThePool(_ tool: String, _ arguments: [String], timeout: TimeInterval = 60) async throws -> Bool {
    try await offThePool { try runTool(tool, arguments, timeout: timeout) }
}

/// `value` with `change` applied: a settings value made in one expression (settings types take
/// their common settings in their initialiser and the rest as properties).
public func configured<T>(_ value: T, _ change: (inout T) -> Void) -> T {
    var value = value
    change(&value)
    return value
}
