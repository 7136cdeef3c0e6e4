import EaselSupport
import EaselStorage
import Foundation
import Testing

@Suite("MemoryCache", .timeLimit(.minutes(1)))
struct MemoryCacheTests {
    func makeCache(countLimit: Int = 0, costLimit: Int = 0, ageLimit: Double = 0,
                   clock: ManualClock = ManualClock()) -> MemoryCache<String, Int> {
        MemoryCache(configuration: .init(countLimit: countLimit, costLimit: costLimit, ageLimit: ageLimit), clock: clock.closure)
    }

    @Test func storesAndReturnsValues() {
        let cache = makeCache()
        cache.set(1, forKey: "a")
        cache["b"] = 2
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache["b"] == 2)
        #expect(cache.value(forKey: "c") == nil)
        #expect(cache.count == 2)
        cache.set(10, forKey: "a", cost: 5)
        #expect(cache["a"] == 10)
        #expect(cache.totalCost == 5)
        #expect(cache.count == 2)
    }

    @Test func removesOneOrAll() {
        let cache = makeCache()
        cache.set(1, forKey: "a", cost: 3)
        cache.set(2, forKey: "b", cost: 4)
        #expect(cache.removeValue(forKey: "a") == 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache.totalCost == 4)
        cache["b"] = nil
        #expect(cache.count == 0)
        cache.set(3, forKey: "c")
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(cache["c"] == nil)
    }

    @Test func countLimitEvictsLeastRecentlyUsedFirst() {
        let cache = makeCache(countLimit: 3)
        let log = EventLog<(String, MemoryCacheEvictionReason)>()
        cache.addObserver { log.append(($0.key, $0.reason)) }
        for key in ["a", "b", "c"] { cache.set(0, forKey: key) }
        _ = cache.value(forKey: "a") // a is now the most recent; b the least
        cache.set(0, forKey: "d")
        #expect(cache["b"] == nil)
        #expect(cache.contains("a") && cache.contains("c") && cache.contains("d"))
        #expect(log.all.map(\.0) == ["b"])
        #expect(log.all.map(\.1) == [.countLimit])
    }

    @Test func costLimitEvictsUntilTheTotalFits() {
        let cache = makeCache(costLimit: 10)
        let log = EventLog<MemoryCache<String, Int>.Eviction>()
        cache.addObserver { log.append($0) }
        cache.set(1, forKey: "a", cost: 4)
        cache.set(2, forKey: "b", cost: 4)
        cache.set(3, forKey: "c", cost: 6) // 14 > 10: a goes (10 left)
        #expect(cache.totalCost == 10)
        #expect(log.all.map(\.key) == ["a"])
        #expect(log.all.first?.value == 1)
        #expect(log.all.first?.reason == .costLimit)
        cache.costLimit = 6
        #expect(cache.totalCost == 6)
        #expect(cache["c"] == 3)
    }

    @Test func expiredEntriesAreNeverReturnedAndAreTrimmed() {
        let clock = ManualClock()
        let cache = makeCache(ageLimit: 60, clock: clock)
        let log = EventLog<(String, MemoryCacheEvictionReason)>()
        cache.addObserver { log.append(($0.key, $0.reason)) }
        cache.set(1, forKey: "old")
        cache.set(2, forKey: "dated", expiresAt: Date(timeIntervalSince1970: clock.now() + 10))
        clock.advance(by: 30)
        cache.set(3, forKey: "new")
        #expect(cache["dated"] == nil) // its own expiry passed
        clock.advance(by: 40) // "old" unused for 70 s, "new" for 40 s
        #expect(!cache.contains("old"))
        cache.removeExpired()
        #expect(cache.count == 1)
        #expect(cache["new"] == 3)
        #expect(Set(log.all.map(\.0)) == ["old", "dated"])
        #expect(log.all.allSatisfy { $0.1 == .expired })
    }

    @Test func aPeriodicTrimEvictsExpiredEntriesWhileAnAgeLimitIsSet() async {
        let clock = ManualClock()
        let cache = makeCache(clock: clock)
        let evictions = cache.evictions()
        cache.set(1, forKey: "idle")
        clock.advance(by: 10)
        cache.ageLimit = 1 // the background trim runs every second
        for await eviction in evictions where eviction.key == "idle" {
            #expect(eviction.reason == .expired)
            break
        }
        #expect(cache.count == 0)
        cache.ageLimit = 0
    }

    @Test func aValueWhoseDeinitUsesTheCacheMayBeReplacedOrEvicted() {
        let cache = MemoryCache<String, DeinitProbe>(configuration: .init(countLimit: 1, costLimit: 0))
        let seen = EventLog<Int>()
        cache.set(DeinitProbe { seen.append(cache.count) }, forKey: "a")
        cache.set(DeinitProbe {}, forKey: "a") // replaces: the first probe's deinit reads the cache
        cache.set(DeinitProbe {}, forKey: "b") // evicts "a" through the count limit
        #expect(seen.all == [1])
        #expect(cache.count == 1)
        cache.set(DeinitProbe { seen.append(cache.count) }, forKey: "c")
        cache.removeAll() // releases the probe after unlocking: its deinit can read the count
        #expect(seen.all == [1, 0])
    }

    @Test func trimsToCountCostAndDateInRecencyOrder() {
        let clock = ManualClock()
        let cache = makeCache(clock: clock)
        for (index, key) in ["a", "b", "c", "d", "e"].enumerated() {
            cache.set(index, forKey: key, cost: 2)
            clock.advance(by: 10)
        }
        _ = cache["a"] // a used last
        cache.trim(toCount: 4)
        #expect(!cache.contains("b"))
        cache.trim(toCost: 4) // c, d go; e and a stay
        #expect(!cache.contains("c") && !cache.contains("d"))
        #expect(cache.contains("e") && cache.contains("a"))
        // e was last used at t0+40, a at t0+50: trimming to t0+45 removes e only.
        cache.trim(toDate: Date(timeIntervalSince1970: clock.now() - 5))
        #expect(!cache.contains("e"))
        #expect(cache["a"] == 0)
    }

    @Test func memoryPressureShedsHalfOnWarningAndAllWhenCritical() {
        let cache = makeCache()
        for index in 0..<100 { cache.set(index, forKey: "\(index)", cost: 10) }
        cache.handleMemoryPressure(.warning)
        #expect(cache.count == 50)
        #expect(cache.contains("99") && !cache.contains("0"))
        cache.handleMemoryPressure(.critical)
        #expect(cache.count == 0)
    }

    @Test func pressureMonitorReportsLevelsFromReadings() {
        let reading = ManualReading()
        let monitor = MemoryPressureMonitor(warningFraction: 0.8, criticalFraction: 0.95, interval: .seconds(3600),
                                            reading: { reading.value })
        let log = EventLog<MemoryPressureLevel>()
        let token = monitor.addHandler { log.append($0) }
        defer { monitor.removeHandler(token) }
        reading.set(MemoryUsage(used: 50, limit: 100))
        #expect(monitor.check() == .normal)
        reading.set(MemoryUsage(used: 85, limit: 100))
        #expect(monitor.check() == .warning)
        reading.set(MemoryUsage(used: 99, limit: 100))
        #expect(monitor.check() == .critical)
        #expect(log.all == [.warning, .critical])
    }

    @Test func defaultCostLimitComesFromTheMemoryLimit() throws {
        #expect(MemoryCacheDefaults.costLimit > 0)
        let usage = try #require(MemoryUsage.current())
        #expect(UInt64(MemoryCacheDefaults.costLimit) <= usage.limit / 5 + 1)
    }

    @Test func aValueCostlierThanTheWholeLimitIsRefusedAndEvictsNothing() {
        let cache = makeCache(costLimit: 10)
        let log = EventLog<String>()
        cache.addObserver { log.append($0.key) }
        cache.set(1, forKey: "a", cost: 4)
        cache.set(2, forKey: "b", cost: 4)
        cache.set(3, forKey: "big", cost: 11)
        #expect(cache["big"] == nil)
        #expect(cache["a"] == 1 && cache["b"] == 2)
        #expect(log.all.isEmpty)
        // Refusing a new value for a key also drops the old one: it is no longer current.
        cache.set(4, forKey: "a", cost: 11)
        #expect(cache["a"] == nil)
        #expect(cache.totalCost == 4 && cache.count == 1)
        #expect(log.all.isEmpty)
    }

    @Test func smallCachesKeepOneLRUOrderAndLargeOnesAreSharded() {
        #expect(MemoryCache<String, Int>(configuration: .init(countLimit: 3, costLimit: 0)).shardCount == 1)
        #expect(MemoryCache<String, Int>(configuration: .init(costLimit: 1 << 20)).shardCount == 1)
        #expect(MemoryCache<String, Int>(configuration: .init(countLimit: 0, costLimit: 0)).shardCount >= 8)
        #expect(MemoryCache<String, Int>(configuration: .init(costLimit: 1 << 30)).shardCount >= 8)
        #expect(MemoryCache<String, Int>(configuration: .init(countLimit: 3, shardCount: 5)).shardCount == 8)
    }

    @Test func aShardedCacheKeepsItsLimitsAsAWholeAndTrimsTheOldestFirst() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(configuration: .init(countLimit: 0, costLimit: 0, shardCount: 16),
                                             clock: clock.closure)
        #expect(cache.shardCount == 16)
        let keys = (0..<1_000).map { "key-\($0)" }
        for (index, key) in keys.enumerated() {
            cache.set(index, forKey: key, cost: 2)
            clock.advance(by: 1)
        }
        #expect(cache.count == 1_000 && cache.totalCost == 2_000)
        // Reading the first 100 makes them the most recent.
        for key in keys.prefix(100) { #expect(cache[key] != nil); clock.advance(by: 1) }
        // Trims across shards take the oldest entry of all shards each time: keys 100..<600 go.
        cache.trim(toCount: 500)
        #expect(cache.count == 500)
        #expect(keys[100..<600].allSatisfy { !cache.contains($0) })
        #expect(keys.prefix(100).allSatisfy { cache.contains($0) } && keys.suffix(400).allSatisfy { cache.contains($0) })
        cache.countLimit = 300 // keys 600..<800 go
        #expect(cache.count == 300 && cache.totalCost == 600)
        #expect(keys[600..<800].allSatisfy { !cache.contains($0) })
        // Sets past the cost limit evict (their own shard first) until the whole cache fits.
        cache.countLimit = 0
        cache.costLimit = 400
        #expect(cache.totalCost == 400 && cache.count == 200)
        for (index, key) in (0..<1_000).map({ "new-\($0)" }).enumerated() {
            cache.set(index, forKey: key, cost: 2)
            #expect(cache.totalCost <= 400)
            #expect(cache[key] == index)
        }
        #expect(cache.count == 200)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test func aShardedCacheIsSafeFromManyThreadsAtOnce() async {
        let cache = MemoryCache<Int, Int>(configuration: .init(countLimit: 5_000, costLimit: 0, shardCount: 8))
        await hammer(cache, keys: 10_000, iterations: 20_000, trimEvery: 5_000, trimTo: 2_500)
        #expect(cache.count <= 5_000)
        #expect(cache.totalCost == cache.count)
        #expect((0..<10_000).filter { cache.contains($0) }.count == cache.count)
    }

    @Test func isSafeFromManyThreadsAtOnce() async {
        let cache = MemoryCache<Int, Int>(configuration: .init(countLimit: 500, costLimit: 0))
        await hammer(cache, keys: 1_000, iterations: 5_000, trimEvery: 1_000, trimTo: 250)
        #expect(cache.count <= 500)
        #expect(cache.totalCost == cache.count)
    }

    /// Eight workers setting, reading, removing and trimming `keys` keys at once.
    func hammer(_ cache: MemoryCache<Int, Int>, keys: Int, iterations: Int, trimEvery: Int, trimTo: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<iterations {
                        let key = (index * 7 + worker) % keys
                        cache.set(key, forKey: key, cost: 1)
                        if let value = cache.value(forKey: (key + 1) % keys) { precondition(value == (key + 1) % keys) }
                        if index % 97 == 0 { cache.removeValue(forKey: key) }
                        if index % trimEvery == 0 { cache.trim(toCount: trimTo) }
                    }
                }
            }
        }
    }
}

/// Runs a closure when released.
final class DeinitProbe: Sendable {
    let onDeinit: @Sendable () -> Void
    init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

final class ManualReading: Sendable {
    private let state = Locked<MemoryUsage?>(nil)
    var value: MemoryUsage? { state.withLock { $0 } }
    func set(_ usage: MemoryUsage) { state.withLock { $0 = usage } }
}

