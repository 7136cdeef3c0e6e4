import EaselSupport
import CSQLite
import EaselStorage
import EaselTestSupport
import Foundation
import Testing

/// A cache on a `SimulatedDisk`: its index, write-ahead log, reserve and value files all count
/// against one small capacity, and SQLite gets SQLITE_FULL past it, as on a real full disk.
@Suite("DiskCache on a full disk", .timeLimit(.minutes(3)))
struct DiskCacheFullDiskTests {
    static let capacity = 32 << 20

    /// A cache in `directory`, on `disk`, with no byte limit unless `freeSpaceFraction` gives one.
    func openCacheOnDisk(_ directory: TemporaryDirectory, on disk: SimulatedDisk, freeSpaceFraction: Double = 0) throws -> DiskCache {
        let configuration = DiskCache.Configuration(freeSpaceFraction: freeSpaceFraction, trimRatio: 1, inlineLimit: 32 * 1024)
        return try DiskCache(directory: directory.url, name: "full", configuration: configuration,
                             files: FaultyFileOperations(disk: disk), clock: { Date().timeIntervalSince1970 })
    }

    /// 1,000 to 4,000 bytes: inline, and several to an index page.
    static func value(_ index: Int) -> Data { CrashPattern.value(key: "\(index)", length: 1_000 + index % 3_000) }

    /// Sets small (inline) values under `prefix` until one throws `diskFull`; returns how many fit.
    func fill(_ cache: DiskCache, prefix: String) throws -> Int {
        for index in 0..<50_000 {
            do {
                try cache.set(Self.value(index), forKey: "\(prefix)-\(index)")
            } catch DiskCacheError.diskFull {
                return index
            }
        }
        Issue.record("the cache never filled its disk")
        return 0
    }

    /// A new value can be stored and read back.
    func expectWritesWork(_ cache: DiskCache, _ key: String) throws {
        try cache.set(randomData(2_000, seed: 7), forKey: key)
        #expect(try cache.data(forKey: key) == randomData(2_000, seed: 7), "after \(key)")
    }

    @Test func trimsAndRemovalsFreeACacheThatFilledItsDisk() async throws {
        // Its own thread: minutes of synchronous SQLite I/O under ThreadSanitizer must not hold
        // one of the concurrency pool's few threads (every other suite waits for them).
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            let disk = SimulatedDisk(root: directory.path, capacity: Self.capacity)
            defer { disk.detach() }
            var cache = try openCacheOnDisk(directory, on: disk)

            // Given a disk full of small values: trim(toSize:) removes the largest half.
            #expect(try fill(cache, prefix: "a") > 1_000)
            var before = cache.count
            try cache.trim(toSize: cache.byteCount / 2)
            #expect(cache.count < before)
            #expect(cache.byteCount > 0)
            try expectWritesWork(cache, "after trim(toSize:)")

            // trim(toSizeByDate:), with an observer told of every removal.
            #expect(try fill(cache, prefix: "b") > 0)
            before = cache.count
            let events = EventLog<DiskCache.Event>()
            let token = cache.addObserver { events.append($0) }
            try cache.trim(toSizeByDate: cache.byteCount / 2)
            cache.removeObserver(token)
            let removed = before - cache.count
            #expect(removed > 0)
            #expect(events.all.filter { if case .didRemove(_, .trimmedByRecency) = $0 { true } else { false } }.count == removed)
            #expect(try cache.data(forKey: "a-0") == nil) // the oldest went first
            try expectWritesWork(cache, "after trim(toSizeByDate:)")

            // removeValue.
            #expect(try fill(cache, prefix: "c") > 0)
            #expect(try cache.contains("c-0"))
            try cache.removeValue(forKey: "c-0")
            #expect(try !cache.contains("c-0"))
            try expectWritesWork(cache, "after removeValue")

            // A trim from a cache opened afresh on the full disk.
            #expect(try fill(cache, prefix: "d") > 0)
            cache = try openCacheOnDisk(directory, on: disk)
            before = cache.count
            try cache.trim(toSizeByDate: cache.byteCount / 4)
            #expect(cache.count < before)
            try expectWritesWork(cache, "after a trim from a new instance")

            // removeAll.
            #expect(try fill(cache, prefix: "e") > 0)
            try cache.removeAll()
            #expect(cache.count == 0 && cache.byteCount == 0)
            try expectWritesWork(cache, "after removeAll")

            // Then the index gives its pages back to the file system, and the reserve is whole again.
            try cache.compact()
            #expect(disk.used < Self.capacity / 4, "\(disk.used) bytes still used")
            var info = stat()
            #expect(stat(directory.path + "/reserve", &info) == 0)
            #expect(Int(info.st_size) == Self.capacity / 16)
            #expect(Int(info.st_blocks) * 512 >= Int(info.st_size)) // real blocks, not a sparse file
    }
    }

    @Test func theDefaultLimitKeepsACacheFromFillingItsDisk() async throws {
        // Its own thread: minutes of synchronous SQLite I/O under ThreadSanitizer must not hold
        // one of the concurrency pool's few threads (every other suite waits for them).
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            let disk = SimulatedDisk(root: directory.path, capacity: Self.capacity)
            defer { disk.detach() }
            let cache = try openCacheOnDisk(directory, on: disk, freeSpaceFraction: 0.5)
            // Half of what was free after the reserve took its sixteenth.
            #expect(cache.byteLimit > Self.capacity * 2 / 5 && cache.byteLimit < Self.capacity / 2)
            // Twice the disk's capacity in sets, none failing, and the disk never full.
            var written = 0
            for index in 0..<50_000 where written < 2 * Self.capacity {
                let value = Self.value(index)
                try cache.set(value, forKey: "k-\(index)")
                written += value.count
            }
            #expect(cache.byteCount <= cache.byteLimit)
            #expect(disk.available > Self.capacity / 8, "only \(disk.available) bytes left")
    }
    }

    @Test func newIndexesCanHandFreePagesBackAFewAtATime() async throws {
        // Its own thread: minutes of synchronous SQLite I/O under ThreadSanitizer must not hold
        // one of the concurrency pool's few threads (every other suite waits for them).
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            do {
                let cache = try openCache(directory.url)
                try cache.set(Data([1]), forKey: "k")
            }
            var db: OpaquePointer?
            #expect(sqlite3_open(directory.path + "/index.sqlite", &db) == SQLITE_OK)
            defer { sqlite3_close(db) }
            sqlite3_busy_timeout(db, 10_000) // the cache may still be closing on an I/O thread
            var statement: OpaquePointer?
            let prepared = sqlite3_prepare_v2(db, "PRAGMA auto_vacuum", -1, &statement, nil)
            try #require(prepared == SQLITE_OK, "\(String(cString: sqlite3_errmsg(db)))")
            defer { sqlite3_finalize(statement) }
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            #expect(sqlite3_column_int(statement, 0) == 2) // INCREMENTAL
    }
    }
}
