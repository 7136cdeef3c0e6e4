import EaselStorage
import Foundation
import Testing

@Suite("DiskCache", .timeLimit(.minutes(2)))
struct DiskCacheTests {
    @Test(arguments: [0, 32 * 1024])
    func storesReplacesAndRemovesValues(inlineLimit: Int) throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: inlineLimit)
        let small = randomData(100, seed: 1), large = randomData(200_000, seed: 2)
        try cache.set(small, forKey: "small")
        try cache.set(large, forKey: "large")
        try cache.set(Data(), forKey: "empty")
        #expect(try cache.data(forKey: "small") == small)
        #expect(try cache.data(forKey: "large") == large)
        #expect(try cache.data(forKey: "empty") == Data())
        #expect(try cache.data(forKey: "missing") == nil)
        #expect(try cache.contains("small") && !cache.contains("missing"))
        #expect(cache.byteCount == 200_100 && cache.count == 3)

        try cache.set(large, forKey: "small")
        #expect(try cache.data(forKey: "small") == large)
        #expect(cache.byteCount == 400_000)

        try cache.removeValue(forKey: "small")
        try cache.removeValue(forKey: "never-stored")
        #expect(try cache.data(forKey: "small") == nil)
        #expect(cache.byteCount == 200_000 && cache.count == 2)
    }

    @Test func valuesSurviveReopening() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try openCache(directory.url)
            try cache.set(randomData(10, seed: 3), forKey: "a")
            try cache.set(randomData(100_000, seed: 4), forKey: "b")
        }
        let reopened = try openCache(directory.url)
        #expect(try reopened.data(forKey: "a") == randomData(10, seed: 3))
        #expect(try reopened.data(forKey: "b") == randomData(100_000, seed: 4))
        #expect(reopened.byteCount == 100_010)
    }

    @Test func defaultLocationFollowsXDG() throws {
        let root = DiskCache.defaultRootDirectory.path
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            #expect(root == xdg + "/easel")
        } else {
            #expect(root.hasSuffix("/.cache/easel"))
        }
        let directory = try TemporaryDirectory()
        let cache = try DiskCache(name: "thumbs", rootDirectory: directory.url)
        #expect(cache.directory.path == directory.path + "/thumbs")
        #expect(cache.name == "thumbs")
        let hostile = try DiskCache(name: "../../escape", rootDirectory: directory.url)
        #expect(hostile.directory.deletingLastPathComponent().path == directory.path)
    }

    @Test func expiryDatesHideAndTrimEntries() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        try cache.set(Data([1]), forKey: "soon", expiresAt: Date(timeIntervalSince1970: clock.now() + 10))
        try cache.set(Data([2]), forKey: "later", expiresAt: Date(timeIntervalSince1970: clock.now() + 1000))
        try cache.set(Data([3]), forKey: "never")
        #expect(try cache.data(forKey: "soon") == Data([1]))
        clock.advance(by: 11)
        #expect(try !cache.contains("soon"))
        #expect(try cache.data(forKey: "soon") == nil)
        try cache.removeExpired()
        #expect(Set(try cache.entries().map(\.key)) == ["later", "never"])
        #expect(try cache.entries().first { $0.key == "later" }?.expiresAt != nil)
    }

    @Test func ageLimitExpiresUnusedEntries() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        try cache.set(Data([1]), forKey: "unused")
        try cache.set(Data([2]), forKey: "used")
        cache.ageLimit = 100
        clock.advance(by: 60)
        #expect(try cache.data(forKey: "used") == Data([2]))
        clock.advance(by: 60) // unused: 120 s idle; used: 60 s
        #expect(try cache.data(forKey: "unused") == nil)
        try cache.removeExpired()
        #expect(try cache.entries().map(\.key) == ["used"])
        cache.ageLimit = 0
    }

    @Test func periodicTrimRunsWhileAnAgeLimitIsSet() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        let events = cache.events()
        try await cache.set(Data([1]), forKey: "idle")
        clock.advance(by: 10)
        cache.ageLimit = 1 // the periodic trim runs every second
        for await event in events {
            if case .didRemove(key: "idle", reason: .expired) = event { break }
        }
        #expect(cache.count == 0)
        cache.ageLimit = 0
    }

    @Test func trimToDateRemovesEntriesUnusedSinceThen() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        try cache.set(Data([1]), forKey: "a")
        clock.advance(by: 10)
        try cache.set(Data([2]), forKey: "b")
        clock.advance(by: 10)
        _ = try cache.data(forKey: "a") // a now used at t+20
        try cache.trim(toDate: Date(timeIntervalSince1970: clock.now() - 5))
        #expect(try cache.entries().map(\.key) == ["a"])
    }

    @Test func trimToSizeRemovesLargestFirst() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 1000)
        for (key, size) in [("s", 100), ("m", 2_000), ("l", 5_000), ("xl", 9_000)] {
            try cache.set(randomData(size), forKey: key)
        }
        try cache.trim(toSize: 7_200) // 16,100 bytes: removing xl alone is enough
        #expect(Set(try cache.entries().map(\.key)) == ["s", "m", "l"])
        try cache.trim(toSize: 2_000) // l (leaves 2,100), then m
        #expect(try cache.entries().map(\.key) == ["s"])
        #expect(cache.byteCount == 100)
    }

    @Test func trimToSizeByDateRemovesLeastRecentlyUsedFirst() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        for key in ["a", "b", "c", "d"] {
            try cache.set(randomData(1_000), forKey: key)
            clock.advance(by: 1)
        }
        _ = try cache.data(forKey: "a")
        clock.advance(by: 1)
        _ = try cache.data(forKey: "b")
        try cache.trim(toSizeByDate: 2_000) // c and d are the least recently used
        #expect(try cache.entries().map(\.key) == ["a", "b"])
    }

    @Test func byteLimitEvictsLeastRecentlyUsedOnSet() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, byteLimit: 3_000, clock: clock)
        let events = EventLog<DiskCache.Event>()
        cache.addObserver { events.append($0) }
        for key in ["a", "b", "c"] {
            try cache.set(randomData(1_000), forKey: key)
            clock.advance(by: 1)
        }
        _ = try cache.data(forKey: "a")
        clock.advance(by: 1)
        try cache.set(randomData(1_000), forKey: "d")
        #expect(try cache.entries().map(\.key) == ["a", "c", "d"])
        #expect(events.all.contains(.didRemove(key: "b", reason: .trimmedByRecency)))
        #expect(throws: DiskCacheError.valueTooLarge(size: 3_001, limit: 3_000)) {
            try cache.set(randomData(3_001), forKey: "huge")
        }
    }

    @Test func loweringTheByteLimitQueuesATrim() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, clock: clock)
        for key in ["a", "b", "c"] {
            try await cache.set(randomData(1_000), forKey: key)
            clock.advance(by: 1)
        }
        let events = cache.events()
        cache.byteLimit = 1_000 // returns at once; the trim runs on an I/O thread
        var removed: [String] = []
        for await event in events {
            if case .didRemove(let key, .trimmedByRecency) = event { removed.append(key) }
            if removed.count == 2 { break }
        }
        #expect(removed == ["a", "b"])
        #expect(try await cache.entries().map(\.key) == ["c"])
    }

    /// The last reference to a cache often dies inside an I/O job; its deinit submits a job of
    /// its own. The pool must not be holding its queue lock at that moment.
    @Test func releasingCachesInsideIOJobsNeverDeadlocks() async throws {
        let directory = try TemporaryDirectory()
        for index in 0..<400 {
            let cache = try openCache(directory.child("c\(index % 8)"))
            _ = try await cache.contains("k")
        }
    }

    @Test func openingAsynchronouslyGivesTheSameCache() async throws {
        let directory = try TemporaryDirectory()
        let first = try await DiskCache.open(name: "async", rootDirectory: directory.url)
        try await first.set(Data([1]), forKey: "k")
        let second = try await DiskCache.open(directory: directory.child("async"))
        #expect(try await second.data(forKey: "k") == Data([1]))
    }

    @Test func crossingTheLimitTrimsDownToTheTrimRatio() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, byteLimit: 10_000, trimRatio: 0.5, clock: clock)
        for index in 0..<10 {
            try cache.set(randomData(1_000), forKey: "\(index)")
            clock.advance(by: 1)
        }
        #expect(cache.count == 10) // at the limit, not over it
        try cache.set(randomData(1_000), forKey: "10") // 11,000 > 10,000: down to 5,000 at once
        #expect(cache.byteCount == 5_000)
        #expect(try cache.entries().map(\.key).sorted() == ["10", "6", "7", "8", "9"])
        #expect(DiskCache.Configuration().trimRatio == 0.95)
    }

    @Test func eventsAnnounceEveryChange() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url)
        let log = EventLog<DiskCache.Event>()
        let token = cache.addObserver { log.append($0) }
        try cache.set(Data([1, 2]), forKey: "k")
        try cache.removeValue(forKey: "k")
        try cache.set(Data([3]), forKey: "k2")
        try cache.removeAll()
        #expect(log.all == [
            .willAdd(key: "k", size: 2), .didAdd(key: "k", size: 2),
            .willRemove(key: "k", reason: .removed), .didRemove(key: "k", reason: .removed),
            .willAdd(key: "k2", size: 1), .didAdd(key: "k2", size: 1),
            .willRemoveAll, .didRemoveAll,
        ])
        cache.removeObserver(token)
        try cache.set(Data([4]), forKey: "k3")
        #expect(log.all.count == 8)
    }

    @Test func observersMayCallBackIntoTheCache() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url)
        let seen = EventLog<Int>()
        cache.addObserver { event in
            if case .didAdd = event { seen.append(cache.count) }
        }
        try cache.set(Data([1]), forKey: "a")
        #expect(seen.all == [1])
    }

    @Test func removeAllEmptiesTheCache() async throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 0)
        for index in 0..<50 { try await cache.set(randomData(1_000, seed: UInt64(index)), forKey: "\(index)") }
        try await cache.removeAll()
        #expect(cache.count == 0 && cache.byteCount == 0)
        #expect(directory.allFiles().filter { $0.hasPrefix("data/") }.isEmpty)
        #expect(try await cache.data(forKey: "3") == nil)
        try await cache.set(Data([9]), forKey: "after")
        #expect(try await cache.data(forKey: "after") == Data([9]))
    }

    @Test func enumerationReportsEntriesWithoutValues() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 500)
        try cache.set(randomData(100), forKey: "inline")
        try cache.set(randomData(1_000), forKey: "file")
        let entries = try cache.entries()
        #expect(entries.map(\.key) == ["file", "inline"])
        #expect(entries.map(\.size) == [1_000, 100])
        #expect(entries.map(\.isInline) == [false, true])
        var visited: [String] = []
        try cache.forEachEntry { entry in
            visited.append(entry.key)
            try cache.removeValue(forKey: entry.key) // changing the cache while enumerating is safe
        }
        #expect(visited == ["file", "inline"])
        #expect(cache.count == 0)
    }

    @Test func statisticsSummariseTheIndex() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try openCache(directory.url, inlineLimit: 500, clock: clock)
        #expect(try cache.statistics().entryCount == 0)
        #expect(try cache.statistics().oldestAccess == nil)
        try cache.set(randomData(100), forKey: "a")
        clock.advance(by: 10)
        try cache.set(randomData(1_000), forKey: "b", expiresAt: Date(timeIntervalSince1970: clock.now() + 60))
        let stats = try cache.statistics()
        #expect(stats.entryCount == 2 && stats.valueBytes == 1_100)
        #expect(stats.inlineEntryCount == 1 && stats.entriesWithExpiry == 1)
        #expect(stats.newestAccess!.timeIntervalSince(stats.oldestAccess!) == 10)
        #expect(stats.indexFileBytes > 0)
    }

    @Test func fileAccessLendsAFileThatStaysWhileInUse() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 1_000)
        let value = randomData(5_000, seed: 7)
        try cache.set(value, forKey: "k")
        let result = try cache.withFileURL(forKey: "k") { file -> Bool in
            #expect(file.valueLength == 5_000)
            #expect(file.url.path.hasPrefix(directory.path))
            // Replacing and removing the entry meanwhile leaves the lent file intact.
            try cache.set(randomData(6_000, seed: 8), forKey: "k")
            try cache.removeValue(forKey: "k")
            let contents = try Data(contentsOf: file.url)
            return contents.prefix(5_000) == value
        }
        #expect(result == true)
        #expect(try cache.withFileURL(forKey: "k") { _ in true } == nil)
        // The file released, a later trim deletes it.
        try cache.trim(toSize: 0)
        #expect(directory.allFiles().filter { $0.hasPrefix("data/") }.isEmpty)
    }

    @Test func fileAccessMovesASmallValueIntoAFile() throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url)
        try cache.set(Data("hello".utf8), forKey: "greeting")
        #expect(try cache.entries().first?.isInline == true)
        let text = try cache.withFileURL(forKey: "greeting") { file in
            try String(decoding: Data(contentsOf: file.url).prefix(file.valueLength), as: UTF8.self)
        }
        #expect(text == "hello")
        #expect(try cache.entries().first?.isInline == false)
        #expect(try cache.data(forKey: "greeting") == Data("hello".utf8))
    }

    @Test func asyncCallsMatchTheSynchronousOnes() async throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url)
        try await cache.set(Data([1, 2, 3]), forKey: "a")
        #expect(try await cache.data(forKey: "a") == Data([1, 2, 3]))
        #expect(try await cache.contains("a"))
        #expect(await cache.currentByteCount() == 3)
        #expect(try await cache.entries().count == 1)
        let length = try await cache.withFileURL(forKey: "a") { $0.valueLength }
        #expect(length == 3)
        try await cache.trim(toDate: Date.distantPast)
        try await cache.trim(toSize: 100)
        try await cache.trim(toSizeByDate: 100)
        try await cache.removeExpired()
        try await cache.removeValue(forKey: "a")
        #expect(try await cache.data(forKey: "a") == nil)
        try await cache.removeAll()
    }

    /// Gets keep one read transaction open across calls (`HeldRead`): a value another connection
    /// commits right after a get — well inside the 2 ms the transaction may stay open — is what
    /// the very next get returns, inline or in a file, replaced or removed.
    @Test func aGetSeesWhatAnotherConnectionCommittedJustBefore() throws {
        let directory = try TemporaryDirectory()
        let reader = try openCache(directory.url)
        let writer = try openCache(directory.url)
        for round in 0..<300 {
            let value = Data("value \(round)".utf8) + Data(repeating: UInt8(round % 256), count: round % 3 == 0 ? 40_000 : 100)
            try writer.set(value, forKey: "shared")
            #expect(try reader.data(forKey: "shared") == value, "round \(round)")
            #expect(try reader.contains("shared"))
            if round % 50 == 49 {
                try writer.removeValue(forKey: "shared")
                #expect(try reader.data(forKey: "shared") == nil, "round \(round): removed")
            }
        }
        // The reader's own writes end its held transaction first and are seen at once.
        try reader.set(Data("mine".utf8), forKey: "shared")
        #expect(try writer.data(forKey: "shared") == Data("mine".utf8))
        #expect(try reader.data(forKey: "shared") == Data("mine".utf8))
    }
}
