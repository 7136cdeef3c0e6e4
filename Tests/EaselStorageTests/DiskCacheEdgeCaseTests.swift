import CSQLite
import EaselSupport
import EaselStorage
import Foundation
import Testing

/// Scenarios found in review: re-entrant observers, stale victims, the orphan sweep, expiry
/// with unwritten access dates, interrupted rebuilds.
@Suite("DiskCache edge cases", .timeLimit(.minutes(1)))
struct DiskCacheEdgeCaseTests {
    @Test func anObserverMayLendAFileWhenEverythingWasRemoved() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 0)
        try cache.set(randomData(100), forKey: "a")
        let lent = EventLog<Bool>()
        cache.addObserver { event in
            guard case .didRemoveAll = event else { return }
            try? cache.set(randomData(10), forKey: "b")
            lent.append((try? cache.withFileURL(forKey: "b") { _ in true }) == true)
        }
        try cache.removeAll() // would hang if the pin lock were still held here
        #expect(lent.all == [true])
    }

    @Test func anObserverMayRemoveEverythingWhileAFileIsBeingLent() throws {
        let directory = try TemporaryDirectory()
        do { try openCache(directory.url).set(randomData(100), forKey: "k") } // small: kept inline
        #expect(executeOnIndex(directory, "UPDATE blobs SET value = zeroblob(100)") == SQLITE_OK)
        let cache = try openCache(directory.url)
        let removedAll = EventLog<Bool>()
        cache.addObserver { event in
            // Lending "k" first moves it to a file, which finds it damaged and removes it.
            if case .didRemove(key: "k", reason: .damaged) = event {
                removedAll.append((try? cache.removeAll()) != nil)
            }
        }
        #expect(try cache.withFileURL(forKey: "k") { _ in true } == nil)
        #expect(removedAll.all == [true])
    }

    @Test func aStaleVictimNeverRemovesTheValueThatReplacedIt() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url)
        try cache.set(randomData(100), forKey: "a")
        try cache.set(randomData(200), forKey: "k")
        let replaced = EventLog<Bool>()
        cache.addObserver { event in
            // Between the trim choosing "k" and removing it, someone replaces "k".
            guard case .willRemove(key: "k", reason: .trimmedBySize) = event, replaced.all.isEmpty else { return }
            replaced.append(true)
            try? cache.removeValue(forKey: "k")
            try? cache.set(randomData(300, seed: 9), forKey: "k")
        }
        try cache.trim(toSize: 150)
        #expect(try cache.data(forKey: "k") == randomData(300, seed: 9))
        #expect(try cache.entries().reduce(0) { $0 + $1.size } == cache.byteCount)
    }

    @Test func theOrphanSweepLeavesALentFileAlone() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 0)
        try cache.set(randomData(1_000), forKey: "k")
        let intact = try cache.withFileURL(forKey: "k") { file -> Bool in
            try cache.removeValue(forKey: "k") // the file now waits in `garbage`
            cache.sweepOrphans(olderThan: -1)
            return (try? Data(contentsOf: file.url).prefix(1_000)) == randomData(1_000)
        }
        #expect(intact == true)
        try cache.trim(toSize: 0) // released: now it goes
        #expect(directory.allFiles().filter { $0.hasPrefix("data/") }.isEmpty)
    }

    @Test func aRecentReadKeepsAnEntryAliveBeforeItsDateIsWritten() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        cache.ageLimit = 2
        defer { cache.ageLimit = 0 }
        try cache.set(Data([1]), forKey: "k")
        clock.advance(by: 1.5)
        #expect(try cache.data(forKey: "k") == Data([1])) // read recorded in memory only
        clock.advance(by: 1.5) // 3 s since the set, 1.5 s since the read
        #expect(try cache.contains("k"))
        #expect(try cache.data(forKey: "k") == Data([1]))
    }

    @Test func aSetNeverEvictsTheValueItJustWrote() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, byteLimit: 1_000, trimRatio: 0)
        try cache.set(randomData(400, seed: 1), forKey: "a")
        try cache.set(randomData(900, seed: 2), forKey: "b") // 1,300 > 1,000: trims towards 0
        #expect(try cache.data(forKey: "b") == randomData(900, seed: 2))
        #expect(try cache.entries().map(\.key) == ["b"])
    }

    @Test func aTransientReadErrorKeepsTheEntry() throws {
        let directory = try TemporaryDirectory()
        let files = FaultyFileOperations()
        let cache = try openCache(directory.url, inlineLimit: 0, files: files)
        try cache.set(randomData(2_000), forKey: "k")
        files.fail(.open, with: EMFILE)
        #expect(try cache.data(forKey: "k") == nil)
        files.heal()
        #expect(try cache.data(forKey: "k") == randomData(2_000))
    }

    @Test func anIndexOfAnotherSchemaIsRefusedNotRebuilt() throws {
        let directory = try TemporaryDirectory()
        do { try openCache(directory.url).set(Data([1]), forKey: "k") }
        #expect(executeOnIndex(directory, "PRAGMA user_version = 99") == SQLITE_OK)
        #expect {
            _ = try openCache(directory.url)
        } throws: { error in
            guard case .incompatibleIndex(_, 99, _) = error as? DiskCacheError else { return false }
            return true
        }
        #expect(FileManager.default.fileExists(atPath: directory.path + "/index.sqlite"))
    }

    @Test func anIndexFromBeforeXXH3GainsTheColumnAndEveryVersionKeepsReadingIt() throws {
        let directory = try TemporaryDirectory()
        let inline = randomData(5_000, seed: 3), large = randomData(50_000, seed: 4)
        do {
            let cache = try openCache(directory.url)
            try cache.set(inline, forKey: "inline")
            try cache.set(large, forKey: "file")
        }
        // Every row carries XXH64 (what earlier versions verify); inline ones XXH3 as well.
        #expect(queryIndex(directory, "SELECT checksum FROM entries WHERE key = 'inline'") == Int64(bitPattern: Checksum.compute(inline)))
        #expect(queryIndex(directory, "SELECT xxh3 FROM entries WHERE key = 'inline'") == Int64(bitPattern: Checksum.xxh3(inline)))
        #expect(queryIndex(directory, "SELECT xxh3 IS NULL FROM entries WHERE key = 'file'") == 1)
        // An index as earlier versions made it: no `xxh3` column.
        #expect(executeOnIndex(directory, "ALTER TABLE entries DROP COLUMN xxh3") == SQLITE_OK)
        let cache = try openCache(directory.url)
        #expect(queryIndex(directory, "SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'xxh3'") == 1)
        #expect(queryIndex(directory, "PRAGMA user_version") == 3, "the schema version an earlier version accepts")
        #expect(try cache.data(forKey: "inline") == inline, "a row without XXH3 is read with XXH64")
        #expect(try cache.data(forKey: "file") == large)
        try cache.set(inline, forKey: "new")
        #expect(try cache.data(forKey: "new") == inline)
        // What an earlier version writes meanwhile (its statements name no `xxh3`): NULL.
        #expect(executeOnIndex(directory, "UPDATE entries SET xxh3 = NULL WHERE key = 'new'") == SQLITE_OK)
        #expect(try cache.data(forKey: "new") == inline)
        // A damaged old row is still caught (by XXH64), and a damaged new one (by XXH3).
        try cache.set(large.prefix(20_000), forKey: "newer")
        #expect(executeOnIndex(directory, """
            UPDATE blobs SET value = zeroblob(5000) WHERE id = (SELECT id FROM entries WHERE key = 'inline');
            UPDATE blobs SET value = CAST(zeroblob(20000) AS BLOB) WHERE id = (SELECT id FROM entries WHERE key = 'newer')
            """) == SQLITE_OK)
        #expect(try cache.data(forKey: "inline") == nil)
        #expect(try cache.data(forKey: "newer") == nil)
        // Another process opening it finds the column there.
        #expect(try openCache(directory.url).data(forKey: "new") == inline)
    }

    @Test func largeInlineValuesAreReadFromTheirPagesAndStillVerified() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 256 * 1024)
        // Both sides of the blob-read threshold, a value over many overflow pages, and empty.
        let sizes = [0, 1, 16 * 1024, 16 * 1024 + 1, 100_000, 256 * 1024]
        for (index, size) in sizes.enumerated() { try cache.set(randomData(size, seed: UInt64(index)), forKey: "v\(size)") }
        #expect(try cache.entries().allSatisfy(\.isInline))
        for (index, size) in sizes.enumerated() { #expect(try cache.data(forKey: "v\(size)") == randomData(size, seed: UInt64(index))) }
        // One byte changed in the middle of a large value: caught, removed, a miss.
        #expect(executeOnIndex(directory, """
            UPDATE blobs SET value = CAST(substr(value, 1, 50000) || x'00' || substr(value, 50002) AS BLOB)
            WHERE id = (SELECT id FROM entries WHERE key = 'v100000')
            """) == SQLITE_OK)
        #expect(try cache.data(forKey: "v100000") == nil)
        #expect(try cache.contains("v100000") == false)
        // A large value whose blob row is gone: a miss too, never a crash.
        #expect(executeOnIndex(directory, "DELETE FROM blobs WHERE id = (SELECT id FROM entries WHERE key = 'v262144')") == SQLITE_OK)
        #expect(try cache.data(forKey: "v262144") == nil)
        #expect(try cache.data(forKey: "v16385") == randomData(16 * 1024 + 1, seed: 3))
    }

    @Test func aRebuildCutShortIsDoneAgainAtTheNextOpen() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url, inlineLimit: 0)
            try cache.set(randomData(500), forKey: "k")
        }
        // What a crash in the middle of a rebuild leaves: rows missing, index not complete.
        #expect(executeOnIndex(directory, "DELETE FROM entries; UPDATE meta SET complete = 0, bytes = 0, count = 0") == SQLITE_OK)
        let cache = try openCache(directory.url, inlineLimit: 0)
        #expect(try cache.data(forKey: "k") == randomData(500))
    }

    @Test func theNewestFileWinsWhenARebuildFindsOneKeyTwice() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url, inlineLimit: 0)
            try cache.set(randomData(500, seed: 1), forKey: "k")
        }
        // A crash between renaming a replacement into place and deleting the old file.
        // Older copies of "k" in every shard, so listing order cannot pick the newest by luck.
        let newest = try #require(directory.allFiles().first { $0.hasPrefix("data/") })
        for shard in ["00", "7f", "ff"] {
            let copy = directory.path + "/data/\(shard)/\(shard)" + String(repeating: "0", count: 30)
            try FileManager.default.createDirectory(atPath: directory.path + "/data/" + shard, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: directory.path + "/" + newest, toPath: copy)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3_600)], ofItemAtPath: copy)
        }
        try FileManager.default.removeItem(atPath: directory.path + "/index.sqlite")
        let cache = try openCache(directory.url, inlineLimit: 0)
        #expect(try cache.data(forKey: "k") == randomData(500, seed: 1))
        #expect(directory.allFiles().filter { $0.hasPrefix("data/") } == [newest])
    }

    @Test func theIndexFileShrinksOnceMostlyEmpty() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url) // 32 KiB inline limit: these values are inline
        for index in 0..<400 { try cache.set(randomData(20_000, seed: UInt64(index)), forKey: "\(index)") }
        try cache.set(randomData(100), forKey: "kept")
        #expect(try cache.compact() == 0) // nothing free yet: left alone
        let before = try indexFileSize(directory)
        #expect(before > 8_000_000)
        try cache.trim(toSizeByDate: 200) // also compacts in the background; compact() waits for it
        try cache.compact()
        #expect(try indexFileSize(directory) < before / 4)
        #expect(try cache.data(forKey: "kept") == randomData(100))
        try cache.set(Data([1]), forKey: "after")
        #expect(try cache.data(forKey: "after") == Data([1]))
    }

    func indexFileSize(_ directory: TemporaryDirectory) throws -> Int {
        try ["", "-wal"].reduce(0) { total, suffix in
            let path = directory.path + "/index.sqlite" + suffix
            guard FileManager.default.fileExists(atPath: path) else { return total }
            return total + ((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
    }

    @Test func canonicallyEquivalentKeysAreDistinct() async throws {
        let directory = try TemporaryDirectory()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed) // Swift says equal; a cache must not
        let cache = try openCache(directory.url)
        try await cache.set(Data([1]), forKey: composed)
        #expect(try await cache.data(forKey: decomposed) == nil)
        let tiered = try TieredCache<String>(name: "t", rootDirectory: directory.url)
        try await tiered.set("one", forKey: composed)
        #expect(try await tiered.value(forKey: decomposed) == nil)
        #expect(try await tiered.fetch(key: decomposed) { "two" } == "two")
        #expect(try await tiered.value(forKey: composed) == "one")
    }
}
