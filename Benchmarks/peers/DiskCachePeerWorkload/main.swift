// The EaselStorage side of peers/diskcache-compare.sh.
//
// Takes the same arguments as peers/diskcache_workload.py, runs the same
// workload against EaselStorage's DiskCache and prints the same JSON lines
// (one per phase). See that script for what the arguments and modes mean.
//
// Only the synchronous DiskCache API is called (this is synchronous top-level
// code, so the async overloads are never picked).

import BenchmarkSupport
import EaselStorage
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct Arguments {
    var directory = ""
    var size = 0
    var count = 0
    var mode = ""
    var limit = 0
    var pool = 64
    /// Values up to this size are stored inside the index (nil: the library's default).
    var inlineLimit: Int?
    /// Trim ratio and access-time resolution (nil: the library's defaults).
    var trimRatio: Double?
    var accessResolution: Double?
    /// How much of the index SQLite may read through mmap (nil: the library's default).
    var mappedIndexBytes: Int?
    /// Extra untimed passes of the get phase afterwards (for profiling gets with `perf`).
    var extraGetPasses = 0
}

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("DiskCachePeerWorkload: \(message)\nusage: DiskCachePeerWorkload --dir PATH --size BYTES --count N --mode empty|full [--limit BYTES] [--pool K] [--inline-limit BYTES] [--trim-ratio R] [--access-resolution SECONDS] [--mapped-index-bytes BYTES] [--extra-get-passes N]\n".utf8))
    exit(2)
}

func parseArguments() -> Arguments {
    var result = Arguments()
    var iterator = CommandLine.arguments.dropFirst().makeIterator()
    while let flag = iterator.next() {
        guard let value = iterator.next() else { usage("missing value for \(flag)") }
        func int() -> Int {
            guard let n = Int(value) else { usage("\(flag) needs an integer, got \(value)") }
            return n
        }
        switch flag {
        case "--dir": result.directory = value
        case "--size": result.size = int()
        case "--count": result.count = int()
        case "--mode": result.mode = value
        case "--limit": result.limit = int()
        case "--pool": result.pool = int()
        case "--inline-limit": result.inlineLimit = int()
        case "--trim-ratio": result.trimRatio = Double(value) ?? { usage("--trim-ratio needs a number") }()
        case "--mapped-index-bytes": result.mappedIndexBytes = int()
        case "--extra-get-passes": result.extraGetPasses = int()
        case "--access-resolution": result.accessResolution = Double(value) ?? { usage("--access-resolution needs a number") }()
        default: usage("unknown argument \(flag)")
        }
    }
    guard !result.directory.isEmpty else { usage("--dir is required") }
    guard result.size > 0, result.count > 0, result.pool > 0 else { usage("--size, --count and --pool must be > 0") }
    guard result.mode == "empty" || result.mode == "full" else { usage("--mode must be empty or full") }
    if result.mode == "full", result.limit <= 0 { usage("--mode full needs --limit > 0") }
    return result
}

@inline(__always)
func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

func jsonLine(op: String, arguments: Arguments, durations: [UInt64], misses: Int, storedBytes: Int) -> String {
    let total = durations.reduce(0, +)
    let ordered = durations.sorted()
    let n = ordered.count
    let p50 = Double(ordered[n / 2]) / 1_000
    let p99 = Double(ordered[Swift.min(n - 1, (n * 99) / 100)]) / 1_000
    let mean = Double(total) / Double(n) / 1_000
    let opsPerSecond = total > 0 ? Double(n) / (Double(total) / 1e9) : 0
    let fields: [(String, String)] = [
        ("impl", "\"easel\""),
        ("op", "\"\(op)\""),
        ("mode", "\"\(arguments.mode)\""),
        ("size", "\(arguments.size)"),
        ("count", "\(n)"),
        ("limit", "\(arguments.mode == "full" ? arguments.limit : 0)"),
        ("total_ns", "\(total)"),
        ("mean_us", "\(mean)"),
        ("p50_us", "\(p50)"),
        ("p99_us", "\(p99)"),
        ("ops_per_s", "\(opsPerSecond)"),
        ("misses", "\(misses)"),
        ("stored_bytes", "\(storedBytes)"),
    ]
    return "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
}

func run(_ arguments: Arguments) throws {
    let values = randomValues(size: arguments.size, count: arguments.pool)
    let directory = URL(fileURLWithPath: arguments.directory, isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var configuration = DiskCache.Configuration()
    if let inlineLimit = arguments.inlineLimit { configuration.inlineLimit = inlineLimit }
    if let trimRatio = arguments.trimRatio { configuration.trimRatio = trimRatio }
    if let resolution = arguments.accessResolution { configuration.accessTimeResolution = resolution }
    if let mapped = arguments.mappedIndexBytes { configuration.memoryMappedIndexBytes = mapped }
    let cache = try DiskCache(directory: directory, configuration: configuration)

    if arguments.mode == "full" {
        // Held at its limit: every set past the fill evicts.
        cache.byteLimit = arguments.limit
        let fill = (arguments.limit / arguments.size) * 12 / 10 + 10
        for i in 0..<fill {
            try cache.set(values[i % values.count], forKey: "fill-\(i)")
        }
    }

    let keys = (0..<arguments.count).map { "key-\($0)" }
    var durations = [UInt64](repeating: 0, count: arguments.count)

    for (i, key) in keys.enumerated() {
        let value = values[i % values.count]
        let t0 = nowNanoseconds()
        try cache.set(value, forKey: key)
        durations[i] = nowNanoseconds() &- t0
    }
    print(jsonLine(op: "set", arguments: arguments, durations: durations, misses: 0, storedBytes: cache.byteCount))

    let getKeys: [String]
    if arguments.mode == "full" {
        // The newest half of what fits is certainly present (gets do not evict).
        let present = Swift.max(1, Swift.min(arguments.count, (arguments.limit / arguments.size) / 2))
        getKeys = (0..<arguments.count).map { keys[arguments.count - present + ($0 % present)] }
    } else {
        getKeys = keys
    }

    var misses = 0
    for (i, key) in getKeys.enumerated() {
        let t0 = nowNanoseconds()
        let value = try cache.data(forKey: key)
        durations[i] = nowNanoseconds() &- t0
        if value?.count != arguments.size { misses += 1 }
    }
    print(jsonLine(op: "get", arguments: arguments, durations: durations, misses: misses, storedBytes: cache.byteCount))
    for _ in 0..<arguments.extraGetPasses {
        for key in getKeys { _ = try cache.data(forKey: key) }
    }
}

do {
    try run(parseArguments())
} catch {
    FileHandle.standardError.write(Data("DiskCachePeerWorkload: \(error)\n".utf8))
    exit(1)
}
