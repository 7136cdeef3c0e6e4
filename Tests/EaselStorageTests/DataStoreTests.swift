import EaselStorage
import Foundation
import Testing

@Suite("DataStore", .timeLimit(.minutes(1)))
struct DataStoreTests {
    @Test func aKeyPrefixIsOneRangeOfKeys() {
        #expect(KeyPrefix.upperBound(of: "3:abc|") == "3:abc}")
        #expect(KeyPrefix.upperBound(of: "caf\u{E9}") == "caf\u{EA}")
        #expect(KeyPrefix.upperBound(of: "a\u{D7FF}") == "a\u{E000}", "surrogates are skipped")
        #expect(KeyPrefix.upperBound(of: "a\u{10FFFF}") == "b", "the last scalar has no successor")
        #expect(KeyPrefix.upperBound(of: "\u{10FFFF}") == nil)
        #expect(KeyPrefix.upperBound(of: "") == nil)
        // Every key that begins with the prefix sorts below the bound (UTF-8 byte order).
        for prefix in ["3:abc|", "caf\u{E9}", "x\u{10FFFF}"] {
            let bound = Array(KeyPrefix.upperBound(of: prefix)!.utf8)
            for suffix in ["", "z", "\u{10FFFF}\u{10FFFF}", "~~~"] {
                #expect(Array((prefix + suffix).utf8).lexicographicallyPrecedes(bound))
            }
        }
    }

    @Test func theDiskCacheRemovesEveryKeyWithAPrefixAndNothingElse() async throws {
        let directory = try TemporaryDirectory()
        let cache = try DiskCache(directory: directory.url)
        let store: any DataStore = cache
        #expect(store.storeName == "disk")
        let removed = EventLog<String>()
        _ = cache.addObserver { event in
            if case .didRemove(let key, let reason) = event, reason == .removed { removed.append(key) }
        }
        let inside = ["3:abc|original", "3:abc|variant|x", "3:abc|encoded|jpeg|q=80", "3:abc|" + String(repeating: "z", count: 300)]
        let outside = ["3:abd|original", "4:abcd|original", "3:abc}", "3:ab|original", "5:caf\u{E9}|original", "3:abc"]
        // Small values live in the index, large ones in files: both go.
        for (index, key) in (inside + outside).enumerated() {
            try await store.set(randomData(index.isMultiple(of: 2) ? 100 : 200_000, seed: UInt64(index)), forKey: key, expiresAt: nil)
        }
        try await store.removeValues(withKeyPrefix: "3:abc|")
        for key in inside { #expect(try await store.data(forKey: key) == nil, "\(key)") }
        for key in outside { #expect(try await store.data(forKey: key) != nil, "\(key)") }
        #expect(Set(removed.all) == Set(inside))
        #expect(try await cache.statistics().entryCount == outside.count)
        // Non-ASCII prefixes are ranges too.
        try await store.removeValues(withKeyPrefix: "5:caf\u{E9}|")
        #expect(try await store.data(forKey: "5:caf\u{E9}|original") == nil)
        #expect(try await cache.statistics().entryCount == outside.count - 1)
        await #expect(throws: DiskCacheError.invalidKeyPrefix) { try await store.removeValues(withKeyPrefix: "") }
    }
}
