import EaselSupport
import EaselStorage
import EaselTestSupport
import Foundation
import Testing

/// Runs the built `easel` executable and captures its output.
func runEasel(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String, error: String) {
    try await BlockingIOPool.shared.run {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = binary.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("easel").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        let process = Process()
        process.executableURL = directory.appendingPathComponent("easel")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = ChildProcesses.pipe(), error = ChildProcesses.pipe()
        process.standardOutput = output
        process.standardError = error
        try ChildProcesses.run(process)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

@Suite("easel cache", .timeLimit(.minutes(1)))
struct CacheCommandTests {
    func makeCache() throws -> (URL, DiskCache) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-cli-\(UUID().uuidString)")
        let cache = try DiskCache(directory: directory)
        return (directory, cache)
    }

    @Test func statsReportsEntriesAndBytes() async throws {
        let (directory, cache) = try makeCache()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await cache.set(Data(count: 1_000), forKey: "a")
        try await cache.set(Data(count: 300_000), forKey: "b") // above the inline limit: a file
        let result = try await runEasel(["cache", "stats", "--dir", directory.path, "--json"])
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        #expect(json?["entries"] as? Int == 2)
        #expect(json?["bytes"] as? Int == 301_000)
        #expect(json?["fileEntries"] as? Int == 1)
        let text = try await runEasel(["cache", "stats", "--dir", directory.path])
        #expect(text.output.contains("entries:    2"))
    }

    @Test func trimToSizeRemovesLeastRecentlyUsed() async throws {
        let (directory, cache) = try makeCache()
        defer { try? FileManager.default.removeItem(at: directory) }
        for index in 0..<10 { try await cache.set(Data(count: 1_024), forKey: "\(index)") }
        let result = try await runEasel(["cache", "trim", "--dir", directory.path, "--to-size", "4K"])
        #expect(result.status == 0)
        #expect(result.output.contains("removed 6 entries"))
        #expect(await cache.currentByteCount() == 4_096)
    }

    @Test func trimOlderThanRemovesIdleEntries() async throws {
        let (directory, cache) = try makeCache()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await cache.set(Data(count: 10), forKey: "a")
        let kept = try await runEasel(["cache", "trim", "--dir", directory.path, "--older-than", "1h"])
        #expect(kept.output.contains("removed 0 entries"))
        let removed = try await runEasel(["cache", "trim", "--dir", directory.path, "--older-than", "0s"])
        #expect(removed.output.contains("removed 1 entries"))
    }

    @Test func clearRemovesEverything() async throws {
        let (directory, cache) = try makeCache()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await cache.set(Data(count: 10), forKey: "a")
        let result = try await runEasel(["cache", "clear", "--dir", directory.path])
        #expect(result.status == 0 && result.output.contains("removed 1 entries"))
        #expect(try await cache.entries().isEmpty)
    }

    @Test func badArgumentsFailWithAMessage() async throws {
        let missing = try await runEasel(["cache", "stats", "--dir", "/nonexistent/easel"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("no cache directory"))
        let (directory, _) = try makeCache()
        defer { try? FileManager.default.removeItem(at: directory) }
        let badSize = try await runEasel(["cache", "trim", "--dir", directory.path, "--to-size", "lots"])
        #expect(badSize.status != 0 && badSize.error.contains("not a size"))
        let badAge = try await runEasel(["cache", "trim", "--dir", directory.path, "--older-than", "soon"])
        #expect(badAge.status != 0 && badAge.error.contains("not a duration"))
    }
}

@Suite("easel cache stats without a directory", .timeLimit(.minutes(1)))
struct CacheStatsDefaultRootTests {
    @Test func listsEveryCacheUnderTheDefaultRoot() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("easel-xdg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let empty = try await runEasel(["cache", "stats"], environment: ["XDG_CACHE_HOME": root.path])
        #expect(empty.status == 0 && empty.output.contains("no caches yet"))
        for name in ["one", "two"] {
            let cache = try DiskCache(name: name, rootDirectory: root.appendingPathComponent("easel"))
            try await cache.set(Data(count: 5), forKey: "k")
        }
        let listed = try await runEasel(["cache", "stats", "--json"], environment: ["XDG_CACHE_HOME": root.path])
        let reports = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]]
        #expect(reports?.count == 2)
        #expect(reports?.allSatisfy { $0["entries"] as? Int == 1 } == true)
    }
}
