import CSQLite
import EaselStorage
import EaselTestSupport
import Foundation
import Testing

@Suite("DiskCache with bad input and failing disks", .timeLimit(.minutes(2)))
struct DiskCacheRobustnessTests {
    static let hostileKeys: [String] = [
        "../../x", "/etc/passwd", "a\u{0}b", "a\u{0}c", "a", String(repeating: "k", count: 10_240), "🎨🖼️ emoji",
        "", ".", "..", "con", "nul", "a/b/c", "a\\b", "%2e%2e%2f", "line\nbreak", "\u{202E}rtl", "key?query=1#frag",
    ]

    @Test(arguments: [0, 32 * 1024])
    func hostileKeysStayInsideTheDirectoryAndNeverCollide(inlineLimit: Int) throws {
        let parent = try TemporaryDirectory()
        let directory = parent.child("cache")
        let cache = try openCache(directory, inlineLimit: inlineLimit)
        for (index, key) in Self.hostileKeys.enumerated() {
            try cache.set(randomData(100 + index, seed: UInt64(index)), forKey: key)
        }
        for (index, key) in Self.hostileKeys.enumerated() {
            #expect(try cache.data(forKey: key) == randomData(100 + index, seed: UInt64(index)), "key \(index)")
        }
        #expect(try cache.data(forKey: "a\u{0}") == nil)
        #expect(try cache.data(forKey: "A") == nil)
        #expect(Set(try cache.entries().map(\.key)) == Set(Self.hostileKeys))
        // Nothing was written beside the cache directory, and no file name contains a key.
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["cache"])
        for file in parent.allFiles() {
            #expect(file.hasPrefix("cache/"))
            #expect(!file.contains("passwd") && !file.contains(".."))
        }
    }

    @Test func keysSurviveAnIndexRebuildExactly() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url, inlineLimit: 0)
            for (index, key) in Self.hostileKeys.enumerated() { try cache.set(randomData(10, seed: UInt64(index)), forKey: key) }
        }
        try FileManager.default.removeItem(atPath: directory.path + "/index.sqlite")
        let cache = try openCache(directory.url, inlineLimit: 0)
        for (index, key) in Self.hostileKeys.enumerated() {
            #expect(try cache.data(forKey: key) == randomData(10, seed: UInt64(index)))
        }
    }

    /// Finds the one value file of a cache holding a single file-backed entry.
    func onlyValueFile(_ directory: TemporaryDirectory) throws -> String {
        let files = directory.allFiles().filter { $0.hasPrefix("data/") }
        try #require(files.count == 1)
        return directory.path + "/" + files[0]
    }

    @Test func aFlippedByteMakesAMissAndRemovesTheEntry() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 0)
        let events = EventLog<DiskCache.Event>()
        cache.addObserver { events.append($0) }
        try cache.set(randomData(4_096), forKey: "k")
        let path = try onlyValueFile(directory)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[1_000] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(try cache.data(forKey: "k") == nil)
        #expect(try !cache.contains("k"))
        #expect(events.all.contains(.didRemove(key: "k", reason: .damaged)))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aTruncatedOrSwappedFileIsAMiss() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 0)
        try cache.set(randomData(4_096), forKey: "k")
        let path = try onlyValueFile(directory)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 2_000)
        try handle.close()
        #expect(try cache.data(forKey: "k") == nil)

        // A file of another key, put in place of this key's file, is refused.
        try cache.set(randomData(100, seed: 1), forKey: "a")
        try cache.set(randomData(100, seed: 2), forKey: "b")
        let files = directory.allFiles().filter { $0.hasPrefix("data/") }.map { directory.path + "/" + $0 }
        try #require(files.count == 2)
        let first = try Data(contentsOf: URL(fileURLWithPath: files[0]))
        try Data(contentsOf: URL(fileURLWithPath: files[1])).write(to: URL(fileURLWithPath: files[0]))
        let results = [try cache.data(forKey: "a"), try cache.data(forKey: "b")]
        #expect(results.filter { $0 == nil }.count == 1) // the overwritten one
        _ = first
    }

    @Test func aDamagedInlineValueIsAMiss() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url)
            try cache.set(randomData(500), forKey: "k")
        }
        #expect(executeOnIndex(directory, "UPDATE blobs SET value = zeroblob(500) WHERE id = (SELECT id FROM entries WHERE key = 'k')") == SQLITE_OK)
        let cache = try openCache(directory.url)
        #expect(try cache.data(forKey: "k") == nil)
        #expect(cache.count == 0)
    }

    @Test func aGarbageIndexIsRebuiltFromTheFiles() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url, inlineLimit: 1_000)
            try cache.set(randomData(5_000, seed: 1), forKey: "file-a")
            try cache.set(randomData(6_000, seed: 2), forKey: "file-b")
            try cache.set(randomData(10, seed: 3), forKey: "inline")
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.path + "/index.sqlite" + suffix) }
        try randomData(64 * 1024, seed: 9).write(to: directory.child("index.sqlite"))
        let cache = try openCache(directory.url, inlineLimit: 1_000)
        #expect(try cache.data(forKey: "file-a") == randomData(5_000, seed: 1))
        #expect(try cache.data(forKey: "file-b") == randomData(6_000, seed: 2))
        #expect(try cache.data(forKey: "inline") == nil) // small values lived only in the index
        #expect(cache.byteCount == 11_000 && cache.count == 2)
    }

    @Test func damagedFilesAreDroppedDuringARebuild() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url, inlineLimit: 0)
            try cache.set(randomData(3_000), forKey: "good")
        }
        try FileManager.default.createDirectory(atPath: directory.path + "/data/ab", withIntermediateDirectories: true)
        try randomData(500).write(to: directory.child("data/ab/ab00000000000000000000000000000"))
        try FileManager.default.removeItem(atPath: directory.path + "/index.sqlite")
        let cache = try openCache(directory.url, inlineLimit: 0)
        #expect(try cache.entries().map(\.key) == ["good"])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/data/ab/ab00000000000000000000000000000"))
    }

    @Test func orphanedFilesAreSwept() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 0)
        try cache.set(randomData(3_000), forKey: "kept")
        // A crash between renaming a file into place and committing its row leaves such a file.
        let orphan = directory.path + "/data/cd/cd000000000000000000000000000000"
        try FileManager.default.createDirectory(atPath: directory.path + "/data/cd", withIntermediateDirectories: true)
        try randomData(100).write(to: URL(fileURLWithPath: orphan))
        #expect(cache.sweepOrphans(olderThan: -1) == 1)
        #expect(!FileManager.default.fileExists(atPath: orphan))
        #expect(try cache.data(forKey: "kept") == randomData(3_000))
    }

    @Test(arguments: [(ENOSPC, DiskCacheError.diskFull(path: "")), (EIO, .ioError(operation: "write", path: "", errno: EIO)),
                      (EACCES, .permissionDenied(path: ""))])
    func aFailingWriteThrowsATypedErrorAndReadsGoOn(code: Int32, expected: DiskCacheError) throws {
        let directory = try TemporaryDirectory()
        let files = FaultyFileOperations()
        let cache = try openCache(directory.url, inlineLimit: 0, files: files)
        try cache.set(randomData(2_000, seed: 1), forKey: "old")
        files.fail(.create, with: code)
        let error = try #require(throws: DiskCacheError.self) { try cache.set(randomData(2_000, seed: 2), forKey: "old") }
        switch (error, expected) {
        case (.diskFull, .diskFull), (.permissionDenied, .permissionDenied): break
        case (.ioError(_, _, let got), .ioError(_, _, let want)): #expect(got == want)
        default: Issue.record("got \(error), expected \(expected)")
        }
        #expect(try cache.data(forKey: "old") == randomData(2_000, seed: 1))
        #expect(directory.allFiles().filter { $0.hasPrefix("tmp/") }.isEmpty)
        files.heal()
        try cache.set(randomData(2_000, seed: 2), forKey: "old")
        #expect(try cache.data(forKey: "old") == randomData(2_000, seed: 2))
    }

    @Test func aFailingRenameLeavesTheOldValueAndNoTemporaryFile() throws {
        let directory = try TemporaryDirectory()
        let files = FaultyFileOperations()
        let cache = try openCache(directory.url, inlineLimit: 0, files: files)
        try cache.set(randomData(2_000, seed: 1), forKey: "k")
        files.fail(.rename, with: EIO)
        #expect(throws: DiskCacheError.self) { try cache.set(randomData(2_000, seed: 2), forKey: "k") }
        files.heal()
        #expect(try cache.data(forKey: "k") == randomData(2_000, seed: 1))
        #expect(directory.allFiles().filter { $0.hasPrefix("tmp/") }.isEmpty)
        #expect(cache.byteCount == 2_000)
    }

    @Test func aReadErrorIsAMissNotACrash() throws {
        let directory = try TemporaryDirectory()
        let files = FaultyFileOperations()
        let cache = try openCache(directory.url, inlineLimit: 0, files: files)
        try cache.set(randomData(2_000), forKey: "k")
        files.fail(.read, with: EIO)
        #expect(try cache.data(forKey: "k") == nil)
    }

    @Test func aFullIndexThrowsDiskFullAndReadsGoOn() async throws {
        // Its own thread: minutes of synchronous SQLite I/O under ThreadSanitizer must not hold
        // one of the concurrency pool's few threads (every other suite waits for them).
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            let cache = try openCache(directory.url)
            try cache.set(randomData(1_000, seed: 0), forKey: "first")
            try cache.limitIndexPages(to: 40) // SQLite reports SQLITE_FULL past 40 pages
            var stored = 0
            var failure: (any Error)?
            for index in 1..<200 {
                do {
                    try cache.set(randomData(8_000, seed: UInt64(index)), forKey: "k\(index)")
                    stored += 1
                } catch {
                    failure = error
                    break
                }
            }
            #expect(failure as? DiskCacheError == .diskFull(path: directory.path + "/index.sqlite"))
            #expect(try cache.data(forKey: "first") == randomData(1_000, seed: 0))
            for index in 1...stored { #expect(try cache.data(forKey: "k\(index)") == randomData(8_000, seed: UInt64(index))) }
            #expect(cache.count == stored + 1)
    }
    }
}
