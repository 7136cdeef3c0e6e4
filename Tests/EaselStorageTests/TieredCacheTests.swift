import EaselSupport
import EaselStorage
import Foundation
import Synchronization
import Testing

struct Profile: Codable, Equatable, Sendable, DataConvertible, DataRepresentable {
    var name: String
    var visits: Int
}

/// A thread-safe counter that closures can capture.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Opens a gate once, for fetchers that must wait until the test lets them finish.
final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

@Suite("TieredCache", .timeLimit(.minutes(1)))
struct TieredCacheTests {
    @Test func storesInMemoryAndOnDiskAndReadsBackAfterReopening() async throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
            try await cache.set("hello", forKey: "greeting")
            #expect(try await cache.value(forKey: "greeting") == "hello")
            #expect(try cache.memoryCache().value(forKey: "greeting") == "hello")
        }
        let reopened = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        #expect(try reopened.memoryCache().value(forKey: "greeting") == nil)
        #expect(try await reopened.value(forKey: "greeting") == "hello") // from disk
        #expect(try reopened.memoryCache().value(forKey: "greeting") == "hello") // promoted
    }

    @Test func formatsTransformBeforeCachingAndKeepTheirOwnStore() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        try await cache.addFormat(.init(name: "upper", diskCapacity: 1_000) { $0.uppercased() })
        #expect(try await cache.set("hi", forKey: "k", formatName: "upper") == "HI")
        #expect(try await cache.value(forKey: "k", formatName: "upper") == "HI")
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(try cache.diskCache(formatName: "upper").byteLimit == 1_000)
        await #expect(throws: TieredCacheError.unknownFormat("nope")) { try await cache.value(forKey: "k", formatName: "nope") }
    }

    @Test func eachFormatEvictsWithinItsOwnDiskCapacity() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<Data>(name: "blobs", rootDirectory: directory.url)
        try await cache.addFormat(.init(name: "small", diskCapacity: 10_000))
        for index in 0..<10 { try await cache.set(randomData(3_000, seed: UInt64(index)), forKey: "\(index)", formatName: "small") }
        #expect(await (try cache.diskCache(formatName: "small")).currentByteCount() <= 10_000)
        for index in 0..<10 { try await cache.set(randomData(3_000, seed: UInt64(index)), forKey: "\(index)") }
        #expect(await (try cache.diskCache()).currentByteCount() == 30_000) // the original format has no limit
    }

    @Test func codableValuesAreCachedAsJSON() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<Profile>(name: "profiles", rootDirectory: directory.url)
        try await cache.set(Profile(name: "Ada", visits: 3), forKey: "ada")
        let bytes = try #require(try await cache.diskCache().data(forKey: "ada"))
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"Ada\""))
        try cache.memoryCache().removeAll()
        #expect(try await cache.value(forKey: "ada") == Profile(name: "Ada", visits: 3))
        let lists = try TieredCache<[Int]>(name: "lists", rootDirectory: directory.url)
        try await lists.set([1, 2, 3], forKey: "l")
        #expect(try await lists.value(forKey: "l") == [1, 2, 3])
    }

    @Test func bytesThatDoNotConvertAreAMissAndAreDropped() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<Profile>(name: "profiles", rootDirectory: directory.url)
        try await cache.diskCache().set(Data("not json".utf8), forKey: "bad")
        #expect(try await cache.value(forKey: "bad") == nil)
        #expect(try await !cache.diskCache().contains("bad"))
    }

    @Test func fetchCachesTheFetchedValueAndSkipsTheFetcherNextTime() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        let calls = Counter()
        for _ in 0..<3 {
            let value = try await cache.fetch(key: "k") {
                calls.increment()
                return "fetched"
            }
            #expect(value == "fetched")
        }
        #expect(calls.value == 1)
    }

    @Test func concurrentFetchesOfOneKeyShareOneFetch() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        let calls = Counter()
        let gate = Gate()
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await cache.fetch(key: "shared") {
                        calls.increment()
                        await gate.wait()
                        return "one"
                    }
                }
            }
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values == Array(repeating: "one", count: 20))
        #expect(calls.value == 1)
    }

    @Test func aFetchErrorReachesEveryCallerAndIsNotCached() async throws {
        struct Boom: Error {}
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        await #expect(throws: Boom.self) { try await cache.fetch(key: "k") { throw Boom() } }
        #expect(try await cache.fetch(key: "k") { "recovered" } == "recovered")
    }

    @Test func aCancelledCallerLeavesAtOnceWhileOthersStillGetTheValue() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        let gate = Gate()
        let started = Gate()
        let fetch: @Sendable () async throws -> String = {
            started.open()
            await gate.wait()
            return "value"
        }
        let cancelled = Task { try await cache.fetch(key: "k", fetch) }
        let patient = Task { try await cache.fetch(key: "k", fetch) }
        await started.wait()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value } // before the gate opens
        gate.open()
        #expect(try await patient.value == "value")
    }

    @Test func cancellingEveryCallerCancelsTheFetch() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        let started = Gate()
        let sawCancellation = Gate()
        let task = Task {
            try await cache.fetch(key: "k") {
                started.open()
                await withTaskCancellationHandler {
                    await sawCancellation.wait()
                } onCancel: {
                    sawCancellation.open()
                }
                try Task.checkCancellation()
                return "never"
            }
        }
        await started.wait()
        task.cancel()
        await sawCancellation.wait() // the shared fetch itself was cancelled
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test func aCallerAfterEveryoneCancelledStartsAFreshFetch() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        let started = Gate()
        let release = Gate()
        let first = Task {
            try await cache.fetch(key: "k") {
                started.open()
                await release.wait() // ignores cancellation for a while, like a slow download
                return "stale"
            }
        }
        await started.wait()
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        // The first fetch is still running, but nobody waits for it any more.
        #expect(try await cache.fetch(key: "k") { "fresh" } == "fresh")
        release.open()
    }

    @Test func aCallerCancelledBeforeItWaitsCancelsTheFetch() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        let sawCancellation = Gate()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() } // cancelled before it reaches the shared fetch
            return try await cache.fetch(key: "k") {
                await withTaskCancellationHandler { await sawCancellation.wait() } onCancel: { sawCancellation.open() }
                return "never"
            }
        }
        await sawCancellation.wait()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func removeDropsOneFormatOrAll() async throws {
        let directory = try TemporaryDirectory()
        let cache = try TieredCache<String>(name: "words", rootDirectory: directory.url)
        try await cache.addFormat(.init(name: "upper") { $0.uppercased() })
        try await cache.set("a", forKey: "k")
        try await cache.set("a", forKey: "k", formatName: "upper")
        try await cache.remove(key: "k", formatName: "upper")
        #expect(try await cache.value(forKey: "k", formatName: "upper") == nil)
        #expect(try await cache.value(forKey: "k") == "a")
        try await cache.remove(key: "k")
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.set("b", forKey: "j")
        try await cache.removeAll()
        #expect(try await cache.value(forKey: "j") == nil)
    }
}
