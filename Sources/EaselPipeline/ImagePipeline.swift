import EaselSupport
import EaselCodecs
import EaselStorage
import EaselTables
import Foundation
import Logging
import Metrics

/// Gets images from their source to the one who asked, once, in order, within limits.
///
/// ```swift
/// let pipeline = try ImagePipeline(configuration: .init(cacheDirectory: cacheDir))
/// let response = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
/// print(response.tier)   // .memory, .table, .diskVariant, .diskOriginal, .network or .file
/// ```
///
/// A request travels memory → image table → disk (processed variant) → disk (original) →
/// fetcher → decode (at the scale the requested format needs) → process → store → answer; the
/// family's other formats that decode covers follow after the answer. Concurrent requests share
/// one fetch per original and one decode per variant; shared work runs at the highest priority of its
/// requesters and stops when the last of them cancels. Waiting work starts by priority, most
/// recently requested first, under separate limits for downloads and for decoding.
public final class ImagePipeline: Sendable {
    /// Everything a pipeline is made with: formats, cache location and limits, fetchers,
    /// concurrency, HTTP caching and decoding limits; fixed once the pipeline exists.
    public struct Configuration: Sendable {
        /// Named formats; formats with `storage: .table` get an image table.
        public var formats: [ImageFormat]
        /// Where the disk cache and the image tables live; nil keeps only the memory cache.
        public var cacheDirectory: URL?
        /// Bytes of decoded images kept in memory. Default: a fifth of the memory the process
        /// may use (`MemoryCacheDefaults.costLimit`).
        public var memoryCostLimit: Int = MemoryCacheDefaults.costLimit
        /// Bytes the disk cache (originals and variants) may hold before it evicts the least
        /// recently used. Default 1 GiB.
        public var diskByteLimit: Int = 1 << 30
        /// Tried in order; by default an `HTTPFetcher`. Add a `FileFetcher` for file URLs.
        public var fetchers: [any ImageFetcher]
        /// Fetches running at once; more wait for a slot by priority. Default 6. (Local files,
        /// read at once on the I/O pool, take no slot.)
        public var maximumConcurrentDownloads: Int = 6
        /// Decodes, processing and encodes running at once. Default: one per core.
        public var maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Download starts per second and burst; nil for no limit.
        public var downloadRate: (perSecond: Double, burst: Int)?
        /// `respectHeaders` (default) honours max-age, no-cache and no-store and revalidates with
        /// ETag / Last-Modified; `aggressive` keeps and serves every original regardless.
        public var httpCaching: HTTPCaching = .respectHeaders
        /// Freshness of an original whose origin said nothing (no max-age, no no-cache).
        public var defaultFreshness: Double = 3600
        /// Pixels, bytes, frames and profile sizes a source may have, checked before and while
        /// it is decoded. Default `DecodingLimits.default`.
        public var decodingLimits: DecodingLimits = .default
        /// How processed variants are stored in the disk cache (formats stored in tables are not).
        public var variantEncoding: ImageEncoder.Options = .jpeg(quality: 90)
        /// Bytes of encoded images (`encodedImage(for:)`) kept in memory; nil: half of
        /// `memoryCostLimit`.
        public var encodedMemoryCostLimit: Int? = nil
        /// Tiers of encoded answers after the disk cache, in order (e.g. a store several machines
        /// share): read before any fetch or decode, filled after an encode (without delaying the
        /// answer), purged with their source.
        public var sharedStores: [any DataStore] = []
        /// Among equal priorities, start the most recently requested work first (default: what
        /// a user scrolled to last) or the oldest (fair: what a server wants, so that no request
        /// waits behind an endless stream of newer ones).
        public var newestFirst: Bool = true
        /// After a named format's answer, make the other formats of its family that its decode
        /// covers, from that decode, at the lowest priority (true, the default), or make each
        /// format only when it is asked for (false). The answer never waits for them.
        public var familyInBackground: Bool = true
        /// Where the pipeline's metrics go (nil: the process's `MetricsSystem`); a server passes
        /// the factory of the registry it exports.
        public var metricsFactory: (any MetricsFactory)? = nil
        /// Negotiate JPEG XL for clients that name `image/jxl` in `Accept` (false, the default:
        /// few browsers take it, and its encoder is slow); a request that pins it gets it anyway.
        public var offersJPEGXL: Bool = false
        /// At most this many bytes of decodes, processing and encodes under way at once, as
        /// each request estimates its peak from the source's header before it decodes
        /// (`MemoryEstimate`); requests that would go over wait in priority order, and one whose
        /// estimate alone is over is refused with `.overMemoryBudget`. Nil (the default), 0 or
        /// less: no budget beyond `maximumConcurrentDecodes`. A budget that no mix of decodes can
        /// reach (`maximumConcurrentDecodes` at the largest estimate `decodingLimits` allow) is
        /// not enforced, and nothing is estimated.
        public var memoryBudget: Int? = nil

        /// Creates a configuration with the settings most callers choose; every other setting
        /// starts at the default its property names and is set on the value (no cache directory:
        /// memory only; `fetchers` nil: one `HTTPFetcher`).
        ///
        /// ```swift
        /// var configuration = ImagePipeline.Configuration(cacheDirectory: cache, fetchers: [FileFetcher(root: photos)])
        /// configuration.maximumConcurrentDecodes = 2
        /// configuration.memoryBudget = 512 << 20
        /// ```
        public init(formats: [ImageFormat] = ImageFormat.defaults, cacheDirectory: URL? = nil,
                    fetchers: [any ImageFetcher]? = nil, downloadRate: (perSecond: Double, burst: Int)? = (80, 25)) {
            self.formats = formats
            self.cacheDirectory = cacheDirectory
            self.fetchers = fetchers ?? [HTTPFetcher()]
            self.downloadRate = downloadRate
        }
    }

    /// Whether the origin's caching headers decide how long originals and what is made from
    /// them stay fresh.
    public enum HTTPCaching: Sendable {
        /// Honour `max-age`, `no-cache` and `no-store` (else `defaultFreshness`), and revalidate
        /// stale originals with ETag / Last-Modified.
        case respectHeaders
        /// Store every original and keep it fresh forever, whatever its headers say.
        case aggressive
    }

    /// The configuration the pipeline was made with.
    public let configuration: Configuration
    let memory: MemoryCache<String, Bitmap>
    /// Encoded bytes by (encoding, processing, source).
    let encodedMemory: MemoryCache<String, EncodedImage>
    /// The keys of both memory tiers by source (purge).
    let sourceIndex = SourceIndex()
    /// The shared work of every stage (fetch, decode, encode) and the slots it runs in.
    let tasks: TaskGraph
    /// Called before each still's encode, once its bitmap is there (an animation's frames are
    /// encoded as they are read, before it); tests hold it to make an encode outlast a deadline.
    package let encodeHook = Locked<(@Sendable () async -> Void)?>(nil)
    /// Called when a family job (the family's formats after an answer, from its decode or by
    /// follow-up decodes) starts (tests hold it to look at the tiers and counts between the
    /// answer and the family).
    package let familyHook = Locked<(@Sendable () async -> Void)?>(nil)
    let disk: DiskCache?
    /// The tiers of encoded answers after memory, in order: the disk cache (when there is a
    /// cache directory), then `configuration.sharedStores`. Originals and bitmap variants are
    /// kept on the local disk only.
    let stores: [any DataStore]
    /// Output decisions already made (by policy and `Accept` value).
    let decisions: Decisions
    /// Watermark images prepared once per source (until it is purged).
    let watermarks = PreparedWatermarks()
    /// Marks that keep work which raced a purge from storing what it made.
    let purges = PurgeMarks()
    /// Copies to other stores made after an answer; `close()` waits for them.
    let afterAnswer = BackgroundTasks()
    let tables: [String: ImageTable]
    let formatsByName: [String: ImageFormat]
    /// Per named format, its name and every parameter that decides its pixels (encoded keys).
    let formatIdentifiers: [String: String]
    /// Sources whose original turned out to be an animation (GIF or WebP with several frames),
    /// noted as they are decoded: WebP answers for them keep every frame.
    let animatedSources = AnimatedSources()
    let sourceTypes = SourceTypes()
    /// The decoded bytes family jobs hold while they wait or run (see `familyJob`): at most an
    /// eighth of the memory tier's budget, at least 16 MiB.
    let familyJobs: HeldBytes
    let suspensions = Locked(Suspensions())
    let observers = Observers<PipelineEvent>()
    private let ids = Locked<UInt64>(0)

    /// Source images decoded so far (for tests of shared work).
    package var decodeCount: Int { metrics.decodes.value }
    /// Downloads waiting for a slot, and running (for tests of ordering).
    package var waitingDownloads: Int { tasks.downloadSlots.waitingCount }
    let metrics: PipelineMetrics
    let logger = Logger(label: "easel.pipeline")

    /// Creates a pipeline, opening its disk cache and an image table per table format under
    /// `configuration.cacheDirectory` when there is one; throws when either cannot open (a table
    /// locked by another pipeline, say).
    public init(configuration: Configuration = .init()) throws(PipelineError) {
        self.configuration = configuration
        decisions = Decisions(offersJPEGXL: configuration.offersJPEGXL)
        var byName: [String: ImageFormat] = [:]
        for format in configuration.formats { byName[format.name] = format }
        formatsByName = byName
        formatIdentifiers = byName.mapValues { "format:" + $0.name + "=" + $0.processingIdentifier }
        memory = MemoryCache(configuration: .init(costLimit: configuration.memoryCostLimit))
        familyJobs = HeldBytes(limit: max(16 << 20, configuration.memoryCostLimit / 8))
        encodedMemory = MemoryCache(configuration: .init(costLimit: configuration.encodedMemoryCostLimit ?? configuration.memoryCostLimit / 2))
        var tables: [String: ImageTable] = [:]
        if let directory = configuration.cacheDirectory {
            do {
                disk = try DiskCache(directory: directory.appendingPathComponent("disk"),
                                     configuration: .init(byteLimit: configuration.diskByteLimit))
            } catch {
                throw .diskCache(error)
            }
            for format in configuration.formats where format.storage == .table {
                do {
                    tables[format.name] = try ImageTable(format: format, directory: directory.appendingPathComponent("tables"))
                } catch {
                    throw PipelineError(error)
                }
            }
        } else {
            disk = nil
        }
        self.tables = tables
        stores = (disk.map { [$0 as any DataStore] } ?? []) + configuration.sharedStores
        // Entries the memory tiers drop leave the source index, unless a newer value for the
        // key came in before the event (events come after the cache's lock is released).
        let index = sourceIndex
        _ = memory.addObserver { [weak memory] in if memory?.contains($0.key) != true { index.remove($0.key) } }
        _ = encodedMemory.addObserver { [weak encodedMemory] in if encodedMemory?.contains($0.key) != true { index.remove($0.key) } }
        let metrics = PipelineMetrics(factory: configuration.metricsFactory)
        self.metrics = metrics
        tasks = TaskGraph(configuration: configuration, metrics: metrics)
    }

    /// What the caches hold: bytes in memory (decoded and encoded) and on disk, entries per table.
    public func statistics() async -> PipelineStatistics {
        let diskBytes = await disk?.currentByteCount() ?? 0
        let diskEntries = (try? await disk?.statistics().entryCount) ?? 0
        let reserved = tasks.decodeSlots.reservedBytes
        return PipelineStatistics(memoryBytes: memory.totalCost, encodedMemoryBytes: encodedMemory.totalCost, diskBytes: diskBytes,
                                  diskEntries: diskEntries, tableEntries: tables.mapValues(\.count),
                                  memoryBudget: configuration.memoryBudget.flatMap { $0 > 0 ? $0 : nil },
                                  reservedBytes: reserved.now, peakReservedBytes: reserved.peak)
    }

    /// Closes the fetchers' connections.
    public func shutdown() async {
        for fetcher in configuration.fetchers {
            if let http = fetcher as? HTTPFetcher { try? await http.shutdown() }
        }
    }

    /// Waits for the work that answers left behind — copies to shared stores, or to the local
    /// disk after a shared hit, and the family's formats made after an answer — those started
    /// meanwhile included.
    public func waitForBackgroundWork() async { await afterAnswer.drain() }

    /// Waits for the work answers left behind, then closes the fetchers' connections and the
    /// image tables: their file locks are released before this returns, so a new pipeline on
    /// the same cache directory opens at once (with the last reference dropped instead, a table
    /// stays locked until its deinit runs). Later requests still work from memory, disk and
    /// fetchers, but no longer read or fill tables.
    public func close() async {
        await afterAnswer.drain()
        await shutdown()
        let tables = self.tables
        _ = try? await BlockingIOPool.shared.run { for table in tables.values { table.close() } }
    }

    /// The configured format called `name`, or nil when there is none.
    public func format(named name: String) -> ImageFormat? { formatsByName[name] }

    /// The image table of a table format.
    public func table(forFormat name: String) -> ImageTable? { tables[name] }

    /// Counts of answers by tier, fetches, decodes and encodes so far (no metrics backend needed).
    public var counters: PipelineCounters { metrics.counters }

    /// Entries in the encoded memory tier (tests of purges).
    package var encodedMemoryCount: Int { encodedMemory.count }


    /// Every event: started, progress, finished (with the tier), failed, cancelled.
    public func events() -> AsyncStream<PipelineEvent> { observers.stream() }

    /// Calls `handler` with every event, synchronously; keep it short.
    public func addObserver(_ handler: @escaping @Sendable (PipelineEvent) -> Void) -> ObserverToken { observers.add(handler) }
    /// Stops calling the handler `addObserver(_:)` returned `token` for.
    public func removeObserver(_ token: ObserverToken) { observers.remove(token) }

    package func nextID() -> UInt64 {
        ids.withLock { id in
            id += 1
            return id
        }
    }

    // MARK: Requests

    /// The image for `request`; cancelling the calling task cancels this request (shared work
    /// goes on while others wait for it).
    public func image(for request: ImageRequest) async throws(PipelineError) -> ImageResponse {
        try await response(for: request, id: nextID())
    }

    /// A handle on a request that runs at once: await `response`, change its priority while it
    /// waits, or cancel it.
    public func task(for request: ImageRequest) -> ImageTask {
        ImageTask(pipeline: self, request: request, id: nextID())
    }

    /// Loads `requests` at low priority (unless they ask for less) without delivering them, so
    /// later requests hit the caches. Cancel with the returned handle.
    @discardableResult
    public func prefetch(_ requests: [ImageRequest]) -> PrefetchHandle {
        let tasks = requests.map { request in
            var request = request
            request.priority = min(request.priority, .low)
            return task(for: request)
        }
        return PrefetchHandle(tasks: tasks)
    }

    /// One request (`image(for:)`, `task(for:)`, prefetches) within its deadline, between its
    /// events: a deadline that passes is a failure (`.timedOut`), not a cancellation.
    func response(for request: ImageRequest, id: UInt64) async throws(PipelineError) -> ImageResponse {
        try await tracked(request, id: id, tier: \.tier) { () async throws(PipelineError) -> ImageResponse in
            try await bounded(by: request.deadline) { () async throws(PipelineError) -> ImageResponse in
                try await self.resolve(request, id: id)
            }
        }
    }

    /// Runs one request's `body` between its events — started, then finished (with the tier
    /// that answered), failed or cancelled — and counts the outcome.
    func tracked<Answer>(_ request: ImageRequest, id: UInt64, tier: (Answer) -> ImageTier,
                         _ body: () async throws(PipelineError) -> Answer) async throws(PipelineError) -> Answer {
        let start = ContinuousClock.now
        observers.emit(.started(request: id, url: request.url))
        do throws(PipelineError) {
            let answer = try await body()
            metrics.answered(by: tier(answer))
            Traces.annotate("easel.tier", tier(answer).rawValue)
            if !observers.isEmpty {
                observers.emit(.finished(request: id, tier: tier(answer), seconds: (ContinuousClock.now - start).seconds))
            }
            return answer
        } catch {
            if error == .cancelled {
                metrics.cancellations.increment()
                observers.emit(.cancelled(request: id))
            } else if error == .overloaded {
                // Refused before any work (admission): not the pipeline's failure, but the
                // request still ends in its events.
                observers.emit(.failed(request: id, error: error))
            } else {
                metrics.failures.increment()
                observers.emit(.failed(request: id, error: error))
            }
            throw error
        }
    }

    /// Changes the priority of the request `id` while its work waits.
    func setPriority(_ priority: ImageRequest.Priority, id: UInt64) {
        tasks.setPriority(priority, waiter: id)
    }

    /// A bitmap request: a tier that holds the variant, else the shared `DecodeTask` of its key
    /// (whose family job starts as it answers).
    func resolve(_ request: ImageRequest, id: UInt64) async throws(PipelineError) -> ImageResponse {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        let format = try namedFormat(request)
        guard let key = bitmapKey(for: request, sourceKey: sourceKey) else { throw .noSource }
        let processed: Processed
        if let cached = await cachedBitmap(request, key: key, format: format) {
            processed = cached
        } else {
            processed = try await decoded(request, key: key, format: format, frames: nil, waiter: id, priority: request.priority)
        }
        processed.family?.start()
        let name = format?.name ?? request.processingIdentifier
        guard let image = processed.images[name] else { throw .processing("no image made for \(name)") }
        return ImageResponse(image: image, tier: processed.tier, sourceInfo: processed.info, freshUntil: processed.freshUntil,
                             storable: processed.storable)
    }

    /// For table entries: the entity's IDs, or IDs derived from the source key.
    static func entityIDs(_ request: ImageRequest, sourceKey: String) -> (UUID, UUID) {
        if case .entity(let entity) = request.source { return (entity.entityID, entity.sourceImageID) }
        let bytes = Data(sourceKey.utf8)
        let high = Checksum.compute(bytes, seed: 1), low = Checksum.compute(bytes, seed: 2)
        let id = withUnsafeBytes(of: (high, low)) { UUID(uuid: $0.load(as: uuid_t.self)) }
        return (id, id)
    }
}

extension ImagePipeline {
    /// The limits `request`'s source is decoded within: the pipeline's, tightened by the request's.
    func decodingLimits(for request: ImageRequest) -> DecodingLimits {
        request.sourceLimits.map { configuration.decodingLimits.tightened(by: $0) } ?? configuration.decodingLimits
    }
}

extension ImageRequest.Processing {
    var isFormat: Bool {
        if case .format = self { return true }
        return false
    }
}

extension BlockingIOPool {
    /// Threads for decoding and processing, one per core, shared by every pipeline (so that
    /// long decodes never hold up disk reads on `.shared`).
    package static let decoding = BlockingIOPool(threadCount: ProcessInfo.processInfo.activeProcessorCount)
}

extension Duration {
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
