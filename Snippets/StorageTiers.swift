// The storage tiers: a memory cache, a disk cache, memory over disk for values of your own, and
// a data store of your own behind an image pipeline. Run it from the repository root: the
// pipeline reads the bundled sample photos in `Samples/`.

import Easel
import Foundation

// snippet.hide
let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("easel-storage-tiers")
let samples = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Samples")
// snippet.show

// snippet.tieredValue
// Codable types convert through JSON once they declare the two conformances.
struct Profile: Codable, Sendable, DataConvertible, DataRepresentable {
    var name: String
    var bio: String
}
// snippet.end

// snippet.hide
// In an async function, calls that have a synchronous and an asynchronous form (DiskCache's)
// take the asynchronous one; at the top level of a file they would not.
func storageTiers() async throws {
// snippet.show
    // MARK: Memory

    // snippet.memoryMake
    let memory = MemoryCache<String, Data>(configuration: .init(
        countLimit: 1_000,          // entries; 0: no limit
        costLimit: 64 << 20,        // the sum of the costs given to set; read as bytes here
        ageLimit: 600))             // seconds without use before an entry expires
    // snippet.end

    // snippet.memoryUse
    let value = Data(repeating: 7, count: 4096)
    memory.set(value, forKey: "a", cost: value.count)
    if let hit = memory.value(forKey: "a") {
        print("hit: \(hit.count) bytes")
    }
    memory["b"] = Data("small".utf8)          // cost 0: counts against the count limit only
    // snippet.end

    // snippet.memoryObserve
    let evictionToken = memory.addObserver { eviction in
        print("evicted \(eviction.key): \(eviction.reason)")
    }
    memory.trim(toCost: 1024)                 // evicts least recently used entries: "a" goes
    memory.removeObserver(evictionToken)
    // snippet.end

    // MARK: Disk

    // snippet.diskOpen
    var configuration = DiskCache.Configuration(
        byteLimit: 500_000_000,     // value bytes; 0: half of the free space at open
        inlineLimit: 256 * 1024)    // values up to this size live inside the index
    configuration.ageLimit = 7 * 86_400         // unused for a week: gone
    let cache = try await DiskCache.open(directory: temporary.appendingPathComponent("disk"), configuration: configuration)
    // snippet.end

    // snippet.diskValues
    try await cache.set(Data("hello".utf8), forKey: "greeting")
    let greeting = try await cache.data(forKey: "greeting")          // nil on a miss
    print(String(decoding: greeting ?? Data(), as: UTF8.self))

    let tomorrow = Date().addingTimeInterval(86_400)
    try await cache.set(Data(repeating: 1, count: 1 << 20), forKey: "large", expiresAt: tomorrow)  // a file
    // snippet.end

    // snippet.diskFile
    // While the closure runs, the file is neither removed nor replaced, by any process.
    let header = try await cache.withFileURL(forKey: "large") { (file: DiskCache.StoredFile) throws -> Data in
        let handle = try FileHandle(forReadingFrom: file.url)
        defer { try? handle.close() }
        return try handle.read(upToCount: min(16, file.valueLength)) ?? Data()  // the value is bytes 0..<valueLength
    }
    print("first bytes: \(header?.count ?? 0)")
    // snippet.end

    // snippet.diskEvents
    let removalToken = cache.addObserver { event in
        if case .didRemove(let key, let reason) = event { print("removed \(key): \(reason)") }
    }
    try await cache.trim(toSizeByDate: 512 * 1024)                   // least recently used first
    cache.removeObserver(removalToken)

    let statistics = try await cache.statistics()
    print("\(statistics.entryCount) entries, \(statistics.valueBytes) bytes, \(statistics.inlineEntryCount) inline")
    // snippet.end

    // snippet.diskErrors
    do {
        try await cache.set(Data(count: 1 << 20), forKey: "another")
    } catch DiskCacheError.diskFull(let path) {
        print("no space at \(path): the previous value, if any, is still readable")
    } catch {
        print("not stored: \(error)")
    }
    // snippet.end

    // MARK: Memory over disk


    // snippet.tieredMake
    let profiles = try await TieredCache<Profile>.open(name: "profiles", rootDirectory: temporary)
    try await profiles.addFormat(TieredCache<Profile>.Format(name: "short", diskCapacity: 10_000_000) { profile in
        Profile(name: profile.name, bio: String(profile.bio.prefix(80)))
    })
    // snippet.end

    // snippet.tieredFetch
    // Memory, then disk, then the closure; its value is transformed by the format and stored in both.
    let ada = try await profiles.fetch(key: "ada", formatName: "short") {
        Profile(name: "Ada", bio: "Wrote the first published program for Babbage's Analytical Engine.")
    }
    print(ada.bio)
    try await profiles.remove(key: "ada")     // from every format, in memory and on disk
    // snippet.end
// snippet.hide
}
// snippet.show

// MARK: A data store of your own

// snippet.storeType
// An in-memory stand-in for a key/value service.
actor DictionaryStore: DataStore {
    private var values: [String: (data: Data, expiresAt: Date?)] = [:]

    nonisolated var storeName: String { "dictionary" }

    func data(forKey key: String) async throws -> Data? {
        guard let entry = values[key] else { return nil }
        if let expiresAt = entry.expiresAt, expiresAt < Date() { return nil }
        return entry.data
    }

    func set(_ data: Data, forKey key: String, expiresAt: Date?) async throws {
        values[key] = (data, expiresAt)
    }

    func removeValue(forKey key: String) async throws {
        values[key] = nil
    }

    // The pipeline begins every key with its source, so a purge is one prefix.
    func removeValues(withKeyPrefix prefix: String) async throws {
        values = values.filter { !$0.key.hasPrefix(prefix) }
    }
}
// snippet.end

// snippet.storePipeline
let shared = DictionaryStore()
var configuration = ImagePipeline.Configuration(
    cacheDirectory: temporary.appendingPathComponent("pipeline"),   // memory, then this disk cache, ...
    fetchers: [FileFetcher(root: samples)])
configuration.sharedStores = [shared]                               // ... then the stores listed here
let pipeline = try ImagePipeline(configuration: configuration)
var request = ImageRequest(url: samples.appendingPathComponent("astronaut.jpg"), format: "small")
request.encoding = ImageEncoding(.jpeg, quality: 85)
let answer = try await pipeline.encodedImage(for: request)
print("\(answer.encoded.count) bytes from \(answer.tier)")
await pipeline.close()                                               // waits for the copy into `shared`
// snippet.end

// snippet.hide
try await storageTiers()
// snippet.show
