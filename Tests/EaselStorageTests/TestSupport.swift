import EaselSupport
import EaselStorage
@_exported import EaselTestSupport
import Foundation

/// A clock the test moves by hand (seconds since 1970).
final class ManualClock: Sendable {
    private let time = Locked(Date().timeIntervalSince1970)
    func now() -> Double { time.withLock { $0 } }
    func advance(by seconds: Double) { time.withLock { $0 += seconds } }
    var closure: @Sendable () -> Double { { [self] in self.now() } }
}

/// Collects events from a handler, for assertions.
final class EventLog<Event: Sendable>: Sendable {
    private let events = Locked<[Event]>([])
    func append(_ event: Event) { events.withLock { $0.append(event) } }
    var all: [Event] { events.withLock { $0 } }
}

/// Bytes of `count` pseudo-random values from `seed` (the low byte of each step; checksum tests
/// know these very bytes), written in place: the array-mapping version kept the concurrency
/// pool's threads busy for seconds under ThreadSanitizer, and time-limited suites waited.
func randomData(_ count: Int, seed: UInt64 = 1) -> Data {
    var generator = SplitMix64(seed: seed)
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        for index in 0..<count { bytes[index] = UInt8(truncatingIfNeeded: generator.next()) }
    }
    return data
}

/// Opens a disk cache on a directory with the given settings.
/// Unlike the library's defaults, trims go exactly to the limit (`trimRatio` 1) and every read
/// updates the access date, so tests can state LRU order precisely.
func openCache(_ directory: URL, byteLimit: Int = 0, trimRatio: Double = 1, inlineLimit: Int = 32 * 1024,
               accessTimeResolution: Double = 0, files: any FileOperations = PosixFileOperations(),
               clock: ManualClock? = nil) throws -> DiskCache {
    var configuration = DiskCache.Configuration(byteLimit: byteLimit, trimRatio: trimRatio, inlineLimit: inlineLimit)
    configuration.accessTimeResolution = accessTimeResolution
    let time: @Sendable () -> Double
    if let clock { time = clock.closure } else { time = { Date().timeIntervalSince1970 } }
    return try DiskCache(directory: directory, name: directory.lastPathComponent, configuration: configuration,
                         files: files, clock: time)
}

/// The first column of the first row of `sql` on the index, as an integer (nil on error or no row).
func queryIndex(_ directory: TemporaryDirectory, _ sql: String) -> Int64? {
    withIndexConnection(directory, unopened: nil) { db in
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return sqlite3_column_int64(statement, 0)
    }
}

/// Runs `sql` on a cache's index through a connection of its own, the way another program (or
/// damage) would change it; waits for locks held by a cache that is still closing.
@discardableResult
func executeOnIndex(_ directory: TemporaryDirectory, _ sql: String) -> Int32 {
    withIndexConnection(directory, unopened: -1) { db in sqlite3_exec(db, sql, nil, nil, nil) }
}

/// `body` with a connection of its own to a cache's index (waiting up to 10 s for locks), or
/// `unopened` when the index cannot be opened.
private func withIndexConnection<R>(_ directory: TemporaryDirectory, unopened: R, _ body: (OpaquePointer?) -> R) -> R {
    var db: OpaquePointer?
    guard sqlite3_open(directory.path + "/index.sqlite", &db) == SQLITE_OK else { return unopened }
    defer { sqlite3_close(db) }
    sqlite3_busy_timeout(db, 10_000)
    return body(db)
}

import CSQLite
