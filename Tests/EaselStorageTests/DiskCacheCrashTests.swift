import EaselSupport
import EaselStorage
import Foundation
import Testing

/// Blocking steps of these tests (processes, pipes, synchronous cache calls) run on
/// `BlockingIOPool` and return what they found; the assertions are made in the test itself.
@Suite("DiskCache across crashes and processes", .serialized, .timeLimit(.minutes(5)))
struct DiskCacheCrashTests {
    /// Kills a writer at random moments, 20 times over one directory (`EASEL_CRASH_ROUNDS`
    /// overrides; `scripts/crash-test.sh` runs 200); after each kill every read is a miss or the
    /// exact bytes of a set that completed (or of the one under way). `EASEL_CRASH_SEED` replays.
    @Test func killedWritersNeverLeaveAPartialValue() async throws {
        let directory = try TemporaryDirectory()
        let environment = ProcessInfo.processInfo.environment
        let rounds = environment["EASEL_CRASH_ROUNDS"].flatMap(Int.init) ?? 20
        let seed = environment["EASEL_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        let (problems, interrupted) = try await BlockingIOPool.shared.run {
            try crashRounds(directory: directory.url, rounds: rounds, seed: seed)
        }
        #expect(problems.isEmpty, "seed \(seed): \(problems)")
        // The kills really land inside sets, not only between them.
        print("crash rounds: \(interrupted) of \(rounds) kills interrupted a set")
        #expect(interrupted > rounds / 2, "seed \(seed): only \(interrupted) of \(rounds) kills interrupted a set")
    }

    /// Three writer processes, two sharing their keys, while this process reads the same keys.
    @Test func writersInSeveralProcessesNeverExposePartialValuesOrLoseEntries() async throws {
        let directory = try TemporaryDirectory()
        let options = ["--count", "150", "--byte-limit", "0", "--max-length", "100000"]
        let report = try await BlockingIOPool.shared.run { () throws -> (statuses: [Int32], reads: Int, problems: [String]) in
            let writers = [
                try WriterProcess(directory: directory.url, seed: 1, options: options + ["--keys", "shared:8"]),
                try WriterProcess(directory: directory.url, seed: 2, options: options + ["--keys", "shared:8"]),
                try WriterProcess(directory: directory.url, seed: 3, options: options + ["--keys", "own:8"]),
            ]
            let reader = try openCache(directory.url)
            let drained = DispatchGroup()
            for writer in writers { DispatchQueue.global().async(group: drained) { _ = writer.finish() } }
            var reads = 0
            var problems: [String] = []
            while drained.wait(timeout: .now()) == .timedOut {
                for key in (0..<8).flatMap({ ["shared-\($0)", "own-\($0)"] }) {
                    if let data = try reader.data(forKey: key) {
                        reads += 1
                        if !isIntact(data, key: key) { problems.append("torn read of \(key)") }
                    }
                }
            }
            let cache = try openCache(directory.url)
            // A key with one writer holds exactly its last completed value: nothing was lost.
            var lastOwn: [String: Int] = [:]
            for (key, length) in writers[2].done { lastOwn[key] = length }
            for (key, length) in lastOwn where try cache.data(forKey: key) != CrashPattern.value(key: key, length: length) {
                problems.append("lost the last value of \(key)")
            }
            // A shared key holds one of the values either writer completed.
            var shared: [String: Set<Int>] = [:]
            for writer in writers[0...1] { for (key, length) in writer.done { shared[key, default: []].insert(length) } }
            for (key, lengths) in shared {
                guard let data = try cache.data(forKey: key), isIntact(data, key: key), lengths.contains(data.count) else {
                    problems.append("shared key \(key) lost or wrong")
                    continue
                }
            }
            let entries = try cache.entries()
            if entries.count != lastOwn.count + shared.count { problems.append("\(entries.count) entries, expected \(lastOwn.count + shared.count)") }
            if entries.reduce(0, { $0 + $1.size }) != cache.byteCount { problems.append("byte count drifted") }
            return (writers.map(\.process.terminationStatus), reads, problems)
        }
        #expect(report.statuses == [0, 0, 0])
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.reads > 0)
    }

    /// Two processes writing to one directory with a byte limit keep the shared total under it.
    @Test func aByteLimitHoldsAcrossProcesses() async throws {
        let directory = try TemporaryDirectory()
        let limit = 1 << 20
        let options = ["--count", "200", "--byte-limit", String(limit), "--max-length", "60000", "--keys", "k:200"]
        let report = try await BlockingIOPool.shared.run { () throws -> (statuses: [Int32], bytes: Int, summed: Int) in
            let writers = [try WriterProcess(directory: directory.url, seed: 10, options: options),
                           try WriterProcess(directory: directory.url, seed: 11, options: options)]
            let drained = DispatchGroup()
            for writer in writers { DispatchQueue.global().async(group: drained) { _ = writer.finish() } }
            drained.wait()
            let cache = try openCache(directory.url)
            return (writers.map(\.process.terminationStatus), cache.byteCount, try cache.entries().reduce(0) { $0 + $1.size })
        }
        #expect(report.statuses == [0, 0])
        #expect(report.bytes <= limit)
        #expect(report.summed == report.bytes)
    }

    /// `removeAll` while other tasks read and write: no error, no torn value, consistent totals.
    @Test func removeAllWhileOthersReadAndWrite() async throws {
        let directory = try TemporaryDirectory()
        let cache = try openCache(directory.url, inlineLimit: 4_096)
        // Each reader counts its reads that found a value: a loop that read nothing would pass
        // the torn-value check vacuously.
        let (torn, found) = try await withThrowingTaskGroup(of: (torn: [String], found: Int).self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(worker))
                    var torn: [String] = [], found = 0
                    for _ in 0..<150 {
                        let key = "k\(random.next() % 16)"
                        let length = Int(random.next() % 20_000)
                        try await cache.set(CrashPattern.value(key: key, length: length), forKey: key)
                        // The key just written, then a random one: each read either misses (a
                        // removeAll came between) or returns an intact value.
                        for readKey in [key, "k\(random.next() % 16)"] {
                            guard let data = try await cache.data(forKey: readKey) else { continue }
                            found += 1
                            if !isIntact(data, key: readKey) { torn.append(readKey) }
                        }
                    }
                    return (torn, found)
                }
            }
            group.addTask {
                for _ in 0..<15 { try await cache.removeAll() }
                return ([], 0)
            }
            var all: (torn: [String], found: Int) = ([], 0)
            for try await result in group {
                all.torn += result.torn
                all.found += result.found
            }
            return all
        }
        #expect(torn.isEmpty)
        // 1,200 reads, and only 15 removals to make them miss: most find their value.
        #expect(found > 100, "only \(found) of 1200 reads found a value")
        let entries = try await cache.entries()
        for entry in entries {
            let data = try #require(try await cache.data(forKey: entry.key))
            #expect(isIntact(data, key: entry.key))
        }
        #expect(entries.reduce(0) { $0 + $1.size } == (await cache.currentByteCount()))
    }
}

/// Runs `rounds` writer processes over `directory`, killing each after a random number of sets
/// has begun, and checks the cache after every kill. Returns the problems found and how many
/// kills interrupted a set.
func crashRounds(directory: URL, rounds: Int, seed: UInt64) throws -> (problems: [String], interrupted: Int) {
    var random = SplitMix64(seed: seed)
    var possible: [String: Set<Int>] = [:]
    var problems: [String] = []
    var interrupted = 0
    for round in 0..<rounds {
        let stopAfter = Int(random.next() % 40) + 1
        let writer = try WriterProcess(directory: directory, seed: seed &+ UInt64(round), options: ["--inline-limit", "65536"])
        writer.read(until: { $0.begun.count >= stopAfter })
        writer.kill()
        // The writer ran on between our decision and its death: read everything it wrote, so
        // every set it began is known (a slow parent, e.g. under TSan, can miss several).
        writer.read(until: { _ in false })
        for (key, length) in writer.done { possible[key] = [length] }
        if writer.begun.count > writer.done.count, let (key, length) = writer.begun.last {
            possible[key, default: []].insert(length)
            interrupted += 1
        }
        let cache = try openCache(directory, byteLimit: 8 << 20, inlineLimit: 65_536)
        for (key, lengths) in possible {
            guard let data = try cache.data(forKey: key) else {
                possible[key] = nil // evicted by the byte limit, or its only set never finished
                continue
            }
            if !isIntact(data, key: key) { problems.append("round \(round): torn value for \(key)") }
            if !lengths.contains(data.count) { problems.append("round \(round): \(key) holds a value never set") }
            possible[key] = [data.count]
        }
        let entries = try cache.entries()
        if entries.reduce(0, { $0 + $1.size }) != cache.byteCount { problems.append("round \(round): byte count drifted") }
        if !Set(entries.map(\.key)).isSubset(of: Set(possible.keys)) { problems.append("round \(round): an unknown key appeared") }
    }
    return (problems, interrupted)
}
