// Benchmarks of EaselStorage's MemoryCache and DiskCache.
//
// Run with `swift package --disable-sandbox benchmark` from the Benchmarks/
// directory (see Benchmarks/README.md).
//
// All DiskCache calls here are made from synchronous closures, so they go to
// the synchronous API (in an async context Swift would pick the async
// overloads of the same names).

import Benchmark
import BenchmarkSupport
import EaselStorage
import Foundation

let benchmarks: @Sendable () -> Void = {
    // `instructions` needs perf events (perf_event_open); where the kernel or
    // VM does not offer them (as on the 2-core dev VM) the row is left out.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
        warmupIterations: 3,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )

    memoryCacheBenchmarks()
    diskCacheBenchmarks()
}

// MARK: - MemoryCache

/// Number of distinct keys the MemoryCache benchmarks work on.
private let memoryKeyCount = 10_000

private struct MemoryState {
    let cache: MemoryCache<String, Int>
    let keys: [String]
}

/// A cache with the given count limit (0 = unlimited) and the benchmark's
/// keys; `populated` pre-sets every key.
private func makeMemoryState(countLimit: Int, populated: Bool) -> MemoryState {
    let cache = MemoryCache<String, Int>(configuration: .init(countLimit: countLimit, costLimit: 0, ageLimit: 0))
    let keys = (0..<memoryKeyCount).map { "key-\($0)" }
    if populated {
        for (i, key) in keys.enumerated() {
            cache.set(i, forKey: key, cost: 1)
        }
    }
    return MemoryState(cache: cache, keys: keys)
}

private func memoryCacheBenchmarks() {
    // Each iteration does `scaledIterations` (1,000) operations; the
    // throughput and per-op figures are shown scaled by that.
    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )

    Benchmark("MemoryCache get hit", configuration: micro) { (benchmark: Benchmark, state: MemoryState) in
        let (cache, keys) = (state.cache, state.keys)
        var index = benchmark.currentIteration &* 7_919
        for _ in benchmark.scaledIterations {
            index = (index &+ 1) % keys.count
            blackHole(cache.value(forKey: keys[index]))
        }
    } setup: {
        makeMemoryState(countLimit: 0, populated: true)
    }

    // Unlimited cache; after the first pass over the key space every set
    // replaces an existing entry.
    Benchmark("MemoryCache set", configuration: micro) { (benchmark: Benchmark, state: MemoryState) in
        let (cache, keys) = (state.cache, state.keys)
        var index = benchmark.currentIteration &* 1_000
        for i in benchmark.scaledIterations {
            index = (index &+ 1) % keys.count
            cache.set(i, forKey: keys[index], cost: 1)
        }
    } setup: {
        makeMemoryState(countLimit: 0, populated: false)
    }

    // Count-limited cache; keys cycle over 10x the limit, so (nearly) every
    // set inserts a new entry and evicts the least recently used one.
    Benchmark("MemoryCache set evicting countLimit 1000", configuration: micro) { (benchmark: Benchmark, state: MemoryState) in
        let (cache, keys) = (state.cache, state.keys)
        var index = benchmark.currentIteration &* 1_000
        for i in benchmark.scaledIterations {
            index = (index &+ 1) % keys.count
            cache.set(i, forKey: keys[index], cost: 1)
        }
    } setup: {
        makeMemoryState(countLimit: 1_000, populated: false)
    }

    // Hits from one thread and from two at once, on the same sharded cache (the default for an
    // unlimited one): each iteration is 1,000,000 gets in all, split evenly over the threads, so
    // the two rows' throughputs compare directly (goal: 2 threads >= 1.7x one thread).
    let threads = Benchmark.Configuration(
        metrics: [.wallClock, .throughput],
        warmupIterations: 3,
        scalingFactor: .mega,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )
    for threadCount in [1, 2] {
        Benchmark("MemoryCache get hit, \(threadCount) thread\(threadCount == 1 ? "" : "s")", configuration: threads) { (benchmark: Benchmark, state: MemoryState) in
            let (cache, keys) = (state.cache, state.keys)
            let perThread = benchmark.scaledIterations.count / threadCount
            let base = benchmark.currentIteration &* 7_919
            DispatchQueue.concurrentPerform(iterations: threadCount) { thread in
                var index = (base &+ thread &* (keys.count / 2)) % keys.count
                for _ in 0..<perThread {
                    index = (index &+ 1) % keys.count
                    blackHole(cache.value(forKey: keys[index]))
                }
            }
        } setup: {
            makeMemoryState(countLimit: 0, populated: true)
        }
    }

    // Two threads hammer the same cache at once, each doing half of the
    // 1,000 operations of an iteration, alternating get (hit) and set.
    Benchmark("MemoryCache get+set 2 threads", configuration: micro) { (benchmark: Benchmark, state: MemoryState) in
        let (cache, keys) = (state.cache, state.keys)
        let perThread = benchmark.scaledIterations.count / 2
        let base = benchmark.currentIteration &* 7_919
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            var index = (base &+ thread &* (keys.count / 2)) % keys.count
            for i in 0..<perThread {
                index = (index &+ 1) % keys.count
                if i & 1 == 0 {
                    blackHole(cache.value(forKey: keys[index]))
                } else {
                    cache.set(i, forKey: keys[index], cost: 1)
                }
            }
        }
    } setup: {
        makeMemoryState(countLimit: 0, populated: true)
    }
}

// MARK: - DiskCache

/// A fresh directory under the system temp directory for one benchmark,
/// created by `make()` and removed (with everything in it) by `remove()`.
private final class BenchDirectory: Sendable {
    let url: URL

    init(_ label: String) {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("easel-bench-\(label)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
    }

    func make() throws -> URL {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Synchronous population helper (the setup hooks are async closures, where
/// Swift would pick DiskCache's async overloads; this keeps them sync).
private func populate(_ cache: DiskCache, keys: [String], values: [Data]) throws {
    for (i, key) in keys.enumerated() {
        try cache.set(values[i % values.count], forKey: key)
    }
}

private struct DiskState {
    let cache: DiskCache
    let keys: [String]
    let values: [Data]
}

/// An open cache in a fresh `directory`, holding `keyCount` entries of
/// `size` random bytes under the keys `"\(prefix)-0"`... (all returned).
private func makeDiskState(_ directory: BenchDirectory, size: Int, prefix: String, keyCount: Int) throws -> DiskState {
    let cache = try DiskCache(directory: try directory.make())
    let values = randomValues(size: size, count: 64)
    let keys = (0..<keyCount).map { "\(prefix)-\($0)" }
    try populate(cache, keys: keys, values: values)
    return DiskState(cache: cache, keys: keys, values: values)
}

/// A directory holding `entryCount` entries of `size` bytes, written by an
/// instance that is closed again before this returns.
private func makePopulatedDirectory(_ directory: BenchDirectory, size: Int, entryCount: Int) throws -> URL {
    let url = try directory.make()
    let cache = try DiskCache(directory: url)
    let keys = (0..<entryCount).map { "entry-\($0)" }
    try populate(cache, keys: keys, values: randomValues(size: size, count: 64))
    return url
}

private struct TrimState {
    let directory: BenchDirectory
    let keys: [String]
    let values: [Data]
}

/// A DiskCache.data(forKey:) miss where a hit was expected: the benchmark
/// reports an error instead of silently measuring misses.
private struct UnexpectedMiss: Error, CustomStringConvertible {
    let key: String
    var description: String { "expected a hit for key \(key)" }
}

private struct TrimLeftover: Error, CustomStringConvertible {
    let bytes: Int
    var description: String { "trim(toSizeByDate: 0) left \(bytes) bytes" }
}

private func diskCacheBenchmarks() {
    let diskSizes: [(label: String, size: Int, setIterations: Int, getKeys: Int)] = [
        ("10 KB", 10 * 1_024, 5_000, 1_000),
        ("100 KB", 100 * 1_024, 1_500, 300),
    ]

    for (label, size, setIterations, getKeys) in diskSizes {
        // One set per iteration, each with a new key, into an unlimited cache.
        let setDirectory = BenchDirectory("set-\(size)")
        Benchmark(
            "DiskCache set \(label)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
                warmupIterations: 10,
                maxDuration: .seconds(3),
                maxIterations: setIterations
            )
        ) { (benchmark: Benchmark, state: DiskState) throws in
            let i = benchmark.currentIteration
            try state.cache.set(state.values[i % state.values.count], forKey: "set-\(i)")
        } setup: {
            try makeDiskState(setDirectory, size: size, prefix: "unused", keyCount: 0)
        } teardown: {
            setDirectory.remove()
        }

        // One get (hit) per iteration, cycling over pre-populated keys.
        let getDirectory = BenchDirectory("get-\(size)")
        Benchmark(
            "DiskCache get \(label)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
                warmupIterations: 10,
                maxDuration: .seconds(2),
                maxIterations: 20_000
            )
        ) { (benchmark: Benchmark, state: DiskState) throws in
            let key = state.keys[benchmark.currentIteration % state.keys.count]
            guard let data = try state.cache.data(forKey: key) else {
                throw UnexpectedMiss(key: key)
            }
            blackHole(data)
        } setup: {
            try makeDiskState(getDirectory, size: size, prefix: "get", keyCount: getKeys)
        } teardown: {
            getDirectory.remove()
        }
    }

    let largeEntryCount = 100_000
    let smallValueSize = 100

    // Opening a cache directory that already holds 100,000 entries. The
    // population happens once in setup; each iteration opens the directory
    // and releases the instance again.
    let openDirectory = BenchDirectory("open")
    Benchmark(
        "DiskCache open 100k entries",
        configuration: .init(
            metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
            warmupIterations: 1,
            maxDuration: .seconds(10),
            maxIterations: 20
        )
    ) { (_: Benchmark, directory: URL) throws in
        let cache = try DiskCache(directory: directory)
        blackHole(cache)
    } setup: {
        try makePopulatedDirectory(openDirectory, size: smallValueSize, entryCount: largeEntryCount)
    } teardown: {
        openDirectory.remove()
    }

    // Trimming 100,000 entries down to nothing, oldest first. Every
    // iteration needs a fresh population, which happens before
    // startMeasurement() and so is not measured; hence the small fixed
    // iteration count and no warmup.
    let trimDirectory = BenchDirectory("trim")
    Benchmark(
        "DiskCache trim toSizeByDate 0 100k entries",
        configuration: .init(
            metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
            warmupIterations: 0,
            maxDuration: .seconds(600),
            maxIterations: 5
        )
    ) { (benchmark: Benchmark, state: TrimState) throws in
        let directory = state.directory.url.appendingPathComponent("iteration-\(benchmark.currentIteration)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let cache = try DiskCache(directory: directory)
            try populate(cache, keys: state.keys, values: state.values)

            benchmark.startMeasurement()
            try cache.trim(toSizeByDate: 0)
            benchmark.stopMeasurement()

            if cache.byteCount != 0 {
                throw TrimLeftover(bytes: cache.byteCount)
            }
        } // the instance is released before its directory is removed
    } setup: {
        TrimState(
            directory: trimDirectory,
            keys: (0..<largeEntryCount).map { "entry-\($0)" },
            values: randomValues(size: smallValueSize, count: 64)
        )
    } teardown: {
        trimDirectory.remove()
    }
}
