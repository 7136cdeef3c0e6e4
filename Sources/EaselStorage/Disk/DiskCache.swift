import EaselSupport
import Foundation
import Logging
import Synchronization

/// A thread-safe, multi-process, crash-safe key/value store in a directory.
///
/// ```swift
/// let cache = try DiskCache(name: "thumbnails")          // ~/.cache/easel/thumbnails
/// cache.byteLimit = 500_000_000
/// try cache.set(Data(jpeg), forKey: "https://example.com/a.jpg")
/// let bytes = try cache.data(forKey: "https://example.com/a.jpg")
/// ```
///
/// Every call comes in two forms: a synchronous one that blocks the calling thread, and an
/// `async` one with the same name that runs the work on `BlockingIOPool` so the cooperative
/// thread pool never waits on the disk.
///
/// Storage: a SQLite index (`index.sqlite`, WAL mode) holds one row per key with its size,
/// checksum, dates and, for values up to `Configuration.inlineLimit` bytes, the value itself.
/// Larger values live in files under `data/`, written under `tmp/` and renamed into place;
/// file names are random, so keys never reach the file system. Every read verifies length and
/// checksum; a damaged entry is logged, removed and reported as a miss. A full disk never stops
/// a trim or removal: a reserve of allocated blocks is freed for it (see `DiskCache+Space.swift`).
///
/// Several `DiskCache` instances, in one process or many, may open the same directory: SQLite
/// serialises their changes, and limits are enforced against the shared totals.
public final class DiskCache: Sendable {
    /// Settings fixed when the cache is opened, plus initial limits.
    public struct Configuration: Sendable {
        /// Trim, least recently used first, whenever the stored bytes exceed this. 0: the
        /// automatic limit of `freeSpaceFraction`.
        public var byteLimit: Int
        /// The automatic byte limit, as a share of the space the cache could use when opened.
        ///
        /// With no `byteLimit`, the limit is `freeSpaceFraction × (free bytes of the file system
        /// + value bytes already held)`, at least 1 MiB, fixed until the cache is reopened. The
        /// rest is left to the index's own pages and to other programs, so that a cache nobody
        /// limited does not fill its disk. 0: no limit.
        public var freeSpaceFraction: Double
        /// Bytes kept allocated in the file `reserve`, freed when a full disk stops a removal.
        ///
        /// Real blocks, never a sparse file. Freeing them lets the trim or removal commit and
        /// give space back; the reserve is allocated again, before anything else, once there is
        /// room. At most a sixteenth of the file system. 0: none.
        public var reservedBytes: Int = 8 << 20
        /// Entries not read or written for this many seconds expire. 0: no limit.
        public var ageLimit: TimeInterval = 0
        /// When a set pushes the stored bytes over `byteLimit`, least recently used entries are
        /// removed until at most `byteLimit × trimRatio` remain, so evictions come in batches
        /// rather than one per set (Nuke's DataCache does the same with 0.7). 1: trim to the limit.
        public var trimRatio: Double
        /// Values of at most this many bytes (64 MiB at most) are kept inside the index rather
        /// than as files.
        /// Measured on ext4 (`docs/benchmarks.md`): while a cache grows, a 100 KB value is set
        /// about 2.8× faster inline than as a new file, and read as fast; values above this are
        /// files, which `withFileURL` lends without copying.
        public var inlineLimit: Int
        /// Flush files to stable storage before they become visible (survives power loss, slower).
        /// Without it, entries survive any process crash but the last few may be lost on power loss.
        public var synchronousWrites: Bool = false
        /// Reads update an entry's access date only when it is older than this many seconds,
        /// which keeps reads from writing. 0 records every read.
        public var accessTimeResolution: TimeInterval = 1
        /// How many bytes of the index SQLite may read through `mmap` (0: read with `pread`).
        /// Mapped reads of values in the index are about twice as fast; the trade-off is that a
        /// media error while reading a mapped page stops the process with SIGBUS instead of
        /// failing the read.
        public var memoryMappedIndexBytes: Int = 1 << 30
        /// Where damaged entries and recoveries are reported.
        public var logger = Logger(label: "easel.disk-cache")

        /// Settings with these defaults: no fixed byte limit (half the usable space), a 0.95 trim
        /// ratio and values up to 256 KiB inline. The others start at an 8 MiB reserve, no age
        /// limit, no flush to stable storage, access dates to the second and up to 1 GiB of the
        /// index mapped, and are set on the value.
        public init(byteLimit: Int = 0, freeSpaceFraction: Double = 0.5, trimRatio: Double = 0.95, inlineLimit: Int = 256 * 1024) {
            self.byteLimit = byteLimit
            self.freeSpaceFraction = freeSpaceFraction
            self.trimRatio = trimRatio
            self.inlineLimit = inlineLimit
        }
    }

    /// What enumeration reports about an entry, without its value.
    public struct Entry: Sendable, Hashable {
        /// The key the value is stored under.
        public var key: String
        /// Value size in bytes.
        public var size: Int
        /// When the value was last set (replacing a value resets it).
        public var createdAt: Date
        /// When the entry was last read or written, to within `Configuration.accessTimeResolution`.
        public var accessedAt: Date
        /// The expiry date given to `set`; nil when none (the age limit still applies).
        public var expiresAt: Date?
        /// True when the value is kept inside the index rather than in its own file.
        public var isInline: Bool
    }

    /// Why an entry left the cache.
    public enum RemovalReason: Sendable, Hashable {
        /// `removeValue(forKey:)`.
        case removed
        /// Its expiry date or the age limit passed.
        case expired
        /// `trim(toDate:)`.
        case trimmedByDate
        /// `trim(toSize:)`, largest first.
        case trimmedBySize
        /// `trim(toSizeByDate:)` or the byte limit, least recently used first.
        case trimmedByRecency
        /// It failed its checksum or its file was missing.
        case damaged
    }

    /// A change to the cache. Handlers run on the thread making the change, outside the cache's
    /// locks, so they may call the cache; PINDiskCache's will/did blocks in Swift form.
    public enum Event: Sendable, Hashable {
        /// A value of `size` bytes is about to be stored under `key`.
        case willAdd(key: String, size: Int)
        /// A value of `size` bytes was stored under `key` (committed, before any trim it causes).
        case didAdd(key: String, size: Int)
        /// The entry under `key` is about to be removed for `reason`; it is kept after all if
        /// it changed meanwhile, and then no `didRemove` follows.
        case willRemove(key: String, reason: RemovalReason)
        /// The entry under `key` was removed for `reason`.
        case didRemove(key: String, reason: RemovalReason)
        /// `removeAll()` is about to remove every entry (no per-entry events follow).
        case willRemoveAll
        /// `removeAll()` removed every entry.
        case didRemoveAll
    }

    /// The cache's name (its directory's last component under the root).
    public let name: String
    /// The directory holding `index.sqlite`, `reserve`, `data/`, `tmp/` and `trash/`.
    public let directory: URL

    let paths: Paths
    let files: any FileOperations
    let logger: Logger
    let inlineLimit: Int
    let trimRatio: Double
    let synchronousWrites: Bool
    let accessTimeResolution: TimeInterval
    let reservedBytes: Int
    let index: GuardedIndex
    let limits: Locked<Limits>
    /// The background checkpoint's own connection, and whether a checkpoint is queued.
    let checkpointConnection = Locked<SQLiteConnection?>(nil)
    let checkpointPending = Atomic<Bool>(false)
    /// Index lookups by `data(forKey:)` and `contains(_:)` (see `lookupCount`).
    let lookups = Atomic<Int>(0)
    let observers = Observers<Event>()
    /// Seconds since 1970; replaceable in tests so that time can pass without waiting.
    let clock: @Sendable () -> Double

    struct Limits {
        var byteLimit: Int
        var ageLimit: TimeInterval
        var ageTask: Task<Void, Never>?
    }

    struct Paths: Sendable {
        let root: String
        let index: String
        let data: String
        let tmp: String
        let trash: String
        let pinLock: String
        let openLock: String
        let reserve: String

        init(_ root: String) {
            self.root = root
            index = root + "/index.sqlite"
            data = root + "/data"
            tmp = root + "/tmp"
            trash = root + "/trash"
            pinLock = root + "/pins.lock"
            openLock = root + "/open.lock"
            reserve = root + "/reserve"
        }

        func file(_ name: String) -> String { data + "/" + name.prefix(2) + "/" + name }
        func directory(of name: String) -> String { data + "/" + name.prefix(2) }
    }

    /// `$XDG_CACHE_HOME/easel`, else `~/.cache/easel`.
    public static var defaultRootDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("easel")
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".cache/easel")
    }

    /// Opens (creating if needed) the cache `name` under `rootDirectory`.
    /// - Throws: `DiskCacheError` when the directory cannot be created or the index opened.
    public convenience init(name: String, rootDirectory: URL? = nil, configuration: Configuration = .init()) throws {
        let root = rootDirectory ?? Self.defaultRootDirectory
        try self.init(directory: root.appendingPathComponent(Self.safeDirectoryName(name)), name: name,
                      configuration: configuration, files: PosixFileOperations(), clock: { WallClock.now() })
    }

    /// Opens (creating if needed) the cache kept in exactly `directory`.
    public convenience init(directory: URL, configuration: Configuration = .init()) throws {
        try self.init(directory: directory, name: directory.lastPathComponent, configuration: configuration, files: PosixFileOperations(), clock: { WallClock.now() })
    }

    /// Opens a cache whose file-system calls go through `files` (tests inject faults here) and
    /// whose time comes from `clock`.
    package init(directory: URL, name: String, configuration: Configuration, files: any FileOperations,
                 clock: @escaping @Sendable () -> Double) throws {
        self.clock = clock
        self.name = name
        self.directory = directory
        self.paths = Paths(directory.path)
        self.files = files
        self.logger = configuration.logger
        self.inlineLimit = min(max(0, configuration.inlineLimit), 64 << 20)
        self.trimRatio = min(1, max(0, configuration.trimRatio))
        self.synchronousWrites = configuration.synchronousWrites
        self.accessTimeResolution = max(0, configuration.accessTimeResolution)
        self.reservedBytes = max(0, configuration.reservedBytes)
        self.index = GuardedIndex(try Self.openIndex(paths: paths, files: files, durable: configuration.synchronousWrites,
                                               mappedBytes: configuration.memoryMappedIndexBytes, logger: configuration.logger))
        self.limits = Locked(Limits(byteLimit: max(0, configuration.byteLimit), ageLimit: 0, ageTask: nil))
        self.ageLimit = configuration.ageLimit
        index.withLock { index in
            index.checkpointDue = { [weak self] in self?.checkpointSoon() }
        }
        restoreReserve()
        if configuration.byteLimit <= 0, configuration.freeSpaceFraction > 0 {
            let limit = automaticByteLimit(fraction: configuration.freeSpaceFraction)
            limits.withLock { $0.byteLimit = limit }
        }
        updateLowSpaceMode()
        scheduleMaintenance()
    }

    deinit {
        limits.withLock { $0.ageTask?.cancel() }
        // Write the last access dates on an I/O thread: the last reference may be dropped on
        // a thread of the cooperative pool. With none pending, the index closes right here.
        if index.withLock({ !$0.pendingAccess.isEmpty }) {
            BlockingIOPool.shared.submit { [index] in index.withLock { try? $0.flushAccessTimes() } }
        }
    }

    /// Opens (creating if needed) the cache `name` under `rootDirectory` on an I/O thread, so that
    /// opening, which may rebuild a damaged index from thousands of files, never blocks the
    /// caller's thread.
    public static func open(name: String, rootDirectory: URL? = nil, configuration: Configuration = .init()) async throws -> DiskCache {
        try await BlockingIOPool.shared.run { try DiskCache(name: name, rootDirectory: rootDirectory, configuration: configuration) }
    }

    /// Opens the cache kept in exactly `directory` on an I/O thread.
    public static func open(directory: URL, configuration: Configuration = .init()) async throws -> DiskCache {
        try await BlockingIOPool.shared.run { try DiskCache(directory: directory, configuration: configuration) }
    }

    /// A directory name for `name` that stays inside the root whatever `name` holds.
    static func safeDirectoryName(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        let cleaned = String(name.prefix(64).map { allowed.contains($0) ? $0 : "_" })
        if cleaned.isEmpty || cleaned.allSatisfy({ $0 == "." }) || cleaned != name {
            let digest = String(Checksum.compute(Array(name.utf8)), radix: 16)
            return (cleaned.isEmpty || cleaned.allSatisfy({ $0 == "." }) ? "cache" : cleaned) + "-" + digest
        }
        return cleaned
    }

    // MARK: Limits

    /// Bytes of values currently stored (shared by every process using the directory).
    public var byteCount: Int { (try? index.withLock { try $0.totals().bytes }) ?? 0 }

    /// Number of entries currently stored.
    public var count: Int { (try? index.withLock { try $0.totals().count }) ?? 0 }

    /// How many times a key has been looked up in the index (`data(forKey:)`, `contains(_:)`)
    /// since this instance opened: what a request path costs the disk tier, whatever it found.
    public var lookupCount: Int { lookups.load(ordering: .relaxed) }

    /// When the stored bytes exceed this, entries are removed least recently used first, down to
    /// `byteLimit × trimRatio`. Starts as the configured limit, or the automatic one (see
    /// `Configuration.freeSpaceFraction`). 0: none. Lowering it queues that trim on an I/O thread (the
    /// setter never touches the disk); the next `set` enforces it too.
    public var byteLimit: Int {
        get { limits.withLock { $0.byteLimit } }
        set {
            limits.withLock { $0.byteLimit = max(0, newValue) }
            guard newValue > 0 else { return }
            BlockingIOPool.shared.submit { [weak self] in
                do { try self?.enforceByteLimit() } catch {
                    self?.logger.warning("could not trim to the byte limit", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Entries unused for longer than this many seconds expire; while set, a periodic task
    /// removes them (every `min(ageLimit, 60)` seconds). 0: no limit.
    public var ageLimit: TimeInterval {
        get { limits.withLock { $0.ageLimit } }
        set {
            let limit = max(0, newValue)
            limits.withLock { limits in
                limits.ageLimit = limit
                limits.ageTask?.cancel()
                limits.ageTask = nil
                guard limit > 0 else { return }
                let period = min(max(limit, 1), 60)
                limits.ageTask = Task.detached(priority: .background) { [weak self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(period))
                        guard !Task.isCancelled, let cache = self else { return }
                        try? await cache.removeExpired()
                    }
                }
            }
        }
    }

    // MARK: Observing

    /// Registers `handler` for every event; see `Event`.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (Event) -> Void) -> ObserverToken {
        observers.add(handler)
    }

    /// Unregisters the handler that `addObserver(_:)` returned `token` for; an unknown token is
    /// ignored.
    public func removeObserver(_ token: ObserverToken) { observers.remove(token) }

    /// Every event from now on, as an async sequence (newest 4,096 kept if the reader lags).
    public func events() -> AsyncStream<Event> { observers.stream() }
}
