import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation

/// Pre-decoded images for entities in named formats (FastImageCache's `FICImageCache`): one
/// `ImageTable` per table format, a disk cache for `.diskCache` formats, and a source provider
/// that supplies source images when an entry is missing.
///
/// ```swift
/// let cache = try ImageTableCache(directory: dir, formats: [thumb, small], sourceProvider: photos)
/// if let image = try cache.cachedImage(for: photo, formatName: "thumb") { show(image) }  // no I/O, no decode
/// let image = try await cache.image(for: photo, formatName: "thumb")                   // asks the provider if missing
/// ```
///
/// Requests for the same entity and family share one call to the source provider and one decode;
/// every format of the family is made from it (unless the provider's
/// `shouldProcessAllFormats(inFamily:for:)` says no). A request cancelled before its image is
/// ready never receives one; the shared work stops when its last request is cancelled.
public final class ImageTableCache: Sendable {
    /// The directory holding the tables' files (and, unless another is given, the `.diskCache`
    /// formats' disk cache, in `pixels`).
    public let directory: URL
    /// The formats, set once at creation.
    public let formats: [ImageFormat]
    private let formatsByName: [String: ImageFormat]
    private let tables: [String: ImageTable]
    let diskCache: DiskCache?
    private let sourceProvider: (any ImageSourceProvider)?
    private let decodingLimits: DecodingLimits
    private let pool: BlockingIOPool
    /// Shared family work by (entity, family); each requester is tagged with its format.
    private let works: Coalescer<WorkKey, [String: Result<Bitmap, ImageTableError>], ImageTableError, Int>
    private let decodes = Locked(0)

    /// How many source images were decoded (for tests of one-decode-per-family).
    package var decodeCount: Int { decodes.withLock { $0 } }

    /// Opens the tables of `formats` in `directory`.
    /// - Parameters:
    ///   - directory: where the tables' files live (one per format, with its metadata).
    ///   - formats: the formats, each with a name of its own.
    ///   - diskCache: where `.diskCache` formats keep their entries; by default a disk cache in
    ///     `directory/pixels` with room for every such format's `maximumCount` entries.
    ///   - sourceProvider: supplies missing source images; without one, only entities with a
    ///     file URL for the format can be loaded.
    ///   - decodingLimits: what source images may be decoded (sizes, pixels, frames).
    /// - Throws: `.duplicateFormat`, `.inUseByAnotherProcess`, file errors.
    public init(directory: URL, formats: [ImageFormat], sourceProvider: (any ImageSourceProvider)? = nil,
                diskCache: DiskCache? = nil, decodingLimits: DecodingLimits = .default) throws(ImageTableError) {
        var byName: [String: ImageFormat] = [:]
        for format in formats {
            guard byName.updateValue(format, forKey: format.name) == nil else { throw .duplicateFormat(format.name) }
        }
        var tables: [String: ImageTable] = [:]
        for format in formats where format.storage == .table {
            tables[format.name] = try ImageTable(format: format, directory: directory)
        }
        let diskFormats = formats.filter { $0.storage == .diskCache }
        if let diskCache {
            self.diskCache = diskCache
        } else if !diskFormats.isEmpty {
            let bytes = diskFormats.reduce(0) { $0 + $1.maximumCount * ($1.entryByteCount + PixelRecord.headerBytes) }
            do {
                self.diskCache = try DiskCache(directory: directory.appendingPathComponent("pixels"),
                                               configuration: .init(byteLimit: bytes))
            } catch {
                throw Self.storageError(error)
            }
        } else {
            self.diskCache = nil
        }
        self.directory = directory
        self.formats = formats
        self.formatsByName = byName
        self.tables = tables
        self.sourceProvider = sourceProvider
        self.decodingLimits = decodingLimits
        pool = .shared
        // Work stopped because its last requester left: the provider hears of each format.
        works = Coalescer(cancelled: .cancelled, lowest: 0) { [sourceProvider] key, formats in
            for name in formats { sourceProvider?.didCancel(entity: key.entity, formatName: name) }
        }
    }

    /// Closes every table (their file locks are released before this returns, so the same
    /// directory can be opened again at once). Later calls find nothing in the tables, and
    /// writes to them fail with `.closed`. Blocking (see `ImageTable.close()`).
    public func close() {
        for table in tables.values { table.close() }
    }

    // MARK: Formats

    /// The format called `name`, or nil when the cache has none of that name.
    public func format(named name: String) -> ImageFormat? { formatsByName[name] }

    /// Every format of `family`, in the order they were given.
    public func formats(inFamily family: String) -> [ImageFormat] { formats.filter { $0.family == family } }

    /// The table of a `.table` format.
    public func table(forFormat name: String) -> ImageTable? { tables[name] }

    private func requireFormat(_ name: String) throws(ImageTableError) -> ImageFormat {
        guard let format = formatsByName[name] else { throw .unknownFormat(name) }
        return format
    }

    // MARK: Reading

    /// The entry when present and made from the entity's current source image, or nil. Never
    /// asks the source provider. Table formats answer from the mapped table (zero-copy; the
    /// first read of an entry after opening verifies its checksum); `.diskCache` formats read the
    /// disk cache (blocking I/O: from async code prefer `image(for:formatName:)`).
    public func cachedImage(for entity: some ImageEntity, formatName: String) throws(ImageTableError) -> Bitmap? {
        let format = try requireFormat(formatName)
        if let table = tables[formatName] {
            return table.image(for: entity.entityID, sourceID: entity.sourceImageID)
        }
        return try diskImage(for: entity, format: format)
    }

    /// True when the entry is present and made from the entity's current source image.
    public func imageExists(for entity: some ImageEntity, formatName: String) throws(ImageTableError) -> Bool {
        let format = try requireFormat(formatName)
        if let table = tables[formatName] {
            return table.contains(entity.entityID, sourceID: entity.sourceImageID)
        }
        return try diskImage(for: entity, format: format) != nil
    }

    /// FastImageCache's retrieval: when the entry is present, calls `completion` with it before
    /// returning and returns true. Otherwise returns false, asks the source provider (sharing
    /// the work with other requests for the entity's family), and calls `completion` later with
    /// the image or the error, `.cancelled` if the request was cancelled; a cancelled request's
    /// completion never carries an image. `completion` runs on an arbitrary thread.
    @discardableResult
    public func retrieveImage(for entity: some ImageEntity, formatName: String,
                              completion: @escaping @Sendable (Result<Bitmap, ImageTableError>) -> Void) -> Bool {
        do {
            if let image = try cachedImage(for: entity, formatName: formatName) {
                completion(.success(image))
                return true
            }
            let format = try requireFormat(formatName)
            enqueue(entity: entity, format: format, waiter: works.makeWaiterID(), deliver: completion)
        } catch {
            completion(.failure(error))
        }
        return false
    }

    /// The entry, from the table when present, otherwise made from the source provider's image
    /// (shared with concurrent requests for the same entity and family). Cancelling the calling
    /// task cancels this request only.
    /// - Throws: `ImageTableError`, `.cancelled` when cancelled.
    public func image(for entity: some ImageEntity, formatName: String) async throws(ImageTableError) -> Bitmap {
        let format = try requireFormat(formatName)
        if let table = tables[formatName] {
            if let image = table.image(for: entity.entityID, sourceID: entity.sourceImageID) { return image }
        } else if let image = try await pool.perform({ () throws(ImageTableError) in try self.diskImage(for: entity, format: format) }) {
            return image
        }
        if Task.isCancelled { throw .cancelled }
        let id = works.makeWaiterID()
        let cancelled = Locked(false)
        let result: Result<Bitmap, ImageTableError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                enqueue(entity: entity, format: format, waiter: id, isCancelled: { cancelled.withLock { $0 } }) {
                    continuation.resume(returning: $0)
                }
                if Task.isCancelled { works.cancel(waiter: id) }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            works.cancel(waiter: id)
        }
        return try result.get()
    }

    // MARK: Writing

    /// Stores `source` as the entity's entry for `formatName`, processed like the format (or by
    /// the entity's custom drawing step). With `processingFamily`, every format of the format's
    /// family is made from the same decode. Decoding and processing run on the I/O pool.
    public func setImage(_ source: SourceImage, for entity: some ImageEntity, formatName: String,
                         processingFamily: Bool = false) async throws(ImageTableError) {
        let format = try requireFormat(formatName)
        let targets = processingFamily ? formats(inFamily: format.family) : [format]
        let results = try await pool.performCancellable { () throws(ImageTableError) in try self.produce(targets, from: source, for: entity) }
        if case .failure(let error) = results[formatName] { throw error }
    }

    /// Removes the entity's entry for `formatName`. Readers holding it keep their pixels.
    public func deleteImage(for entity: some ImageEntity, formatName: String) throws(ImageTableError) {
        let format = try requireFormat(formatName)
        if let table = tables[formatName] {
            table.removeImage(for: entity.entityID)
        } else if let diskCache {
            do { try diskCache.removeValue(forKey: diskKey(entity.entityID, format)) } catch { throw Self.storageError(error) }
        }
    }

    /// Removes the entity's entries in every format.
    public func deleteImages(for entity: some ImageEntity) throws(ImageTableError) {
        for format in formats { try deleteImage(for: entity, formatName: format.name) }
    }

    /// Empties every table and the disk cache's entries. Requests in flight continue.
    public func reset() throws(ImageTableError) {
        for table in tables.values { table.reset() }
        if let diskCache {
            do { try diskCache.removeAll() } catch { throw Self.storageError(error) }
        }
    }

    /// Cancels every pending request for this entity and format: their completions get
    /// `.cancelled`, and the shared work stops if no request for another format of the family
    /// waits for it (the source provider is told).
    public func cancelImageRetrieval(for entity: some ImageEntity, formatName: String) {
        guard let family = formatsByName[formatName]?.family else { return }
        works.cancel(key: WorkKey(entity: entity, family: family), tag: formatName)
    }

    // MARK: Shared work

    /// One entity's family; the entity rides along (for the provider's calls) but is not part
    /// of the identity.
    private struct WorkKey: Hashable, Sendable {
        let entityID: UUID
        let family: String
        let entity: any ImageEntity

        init(entity: some ImageEntity, family: String) {
            entityID = entity.entityID
            self.family = family
            self.entity = entity
        }

        static func == (a: WorkKey, b: WorkKey) -> Bool { a.entityID == b.entityID && a.family == b.family }
        func hash(into hasher: inout Hasher) {
            hasher.combine(entityID)
            hasher.combine(family)
        }
    }

    /// Joins the entity's family work as `waiter` (tagged with the format), starting the work if
    /// there is none. The requester is registered before this returns. When the work made other
    /// formats only (the provider asked for the formats requested when it started), the
    /// requester joins new work under the same id.
    /// `isCancelled` tells a requester that must join again whether it was cancelled meanwhile
    /// (between two works it is registered with neither, so a cancellation then finds nothing).
    private func enqueue(entity: some ImageEntity, format: ImageFormat, waiter: UInt64,
                         isCancelled: @escaping @Sendable () -> Bool = { false },
                         deliver: @escaping @Sendable (Result<Bitmap, ImageTableError>) -> Void) {
        let key = WorkKey(entity: entity, family: format.family)
        works.join(key: key, waiter: waiter, priority: 0, tag: format.name, work: { _ in
            await self.run(key: key, entity: entity, format: format)
        }, deliver: { [weak self] result in
            switch result {
            case .failure(let error): deliver(.failure(error))
            case .success(let results):
                if let mine = results[format.name] {
                    deliver(mine)
                } else if let self, !isCancelled() {
                    self.enqueue(entity: entity, format: format, waiter: waiter, isCancelled: isCancelled, deliver: deliver)
                    if isCancelled() { self.works.cancel(waiter: waiter) }
                } else {
                    deliver(.failure(.cancelled))
                }
            }
        })
    }

    /// Requests waiting for shared work (for tests).
    package var waitingRequestCount: Int { works.waiterCount }

    /// Gets the source, makes the family's formats (those requested, or all when the provider
    /// says so) and returns each format's result.
    private func run(key: WorkKey, entity: some ImageEntity,
                     format: ImageFormat) async -> Result<[String: Result<Bitmap, ImageTableError>], ImageTableError> {
        var results: [String: Result<Bitmap, ImageTableError>] = [:]
        func wanted() -> Set<String> {
            let tags = works.tags(for: key)
            return tags.isEmpty ? [format.name] : tags
        }
        do throws(ImageTableError) {
            // A request that missed the table just before another work stored the entry.
            for name in wanted() {
                if let image = tables[name]?.image(for: entity.entityID, sourceID: entity.sourceImageID) { results[name] = .success(image) }
            }
            let first = wanted()
            if results.count < first.count {
                let source = try await sourceImage(for: entity, format: format)
                try checkCancellation()
                let all = sourceProvider?.shouldProcessAllFormats(inFamily: format.family, for: entity) ?? true
                let names = wanted()
                let targets = formats(inFamily: format.family).filter { all || names.contains($0.name) }
                results = try await pool.performCancellable { () throws(ImageTableError) in try self.produce(targets, from: source, for: entity) }
            }
        } catch {
            // Also `.cancelled`: if the provider gave up while requests still wait, they learn it.
            for target in formats(inFamily: format.family) { results[target.name] = .failure(error) }
        }
        // Failures are reported once per format that requesters wait for.
        for name in works.tags(for: key).sorted() {
            if case .failure(let error) = results[name], error != .cancelled {
                sourceProvider?.didFail(entity: entity, formatName: name, error: error)
            }
        }
        return .success(results)
    }

    private func checkCancellation() throws(ImageTableError) {
        if Task.isCancelled { throw .cancelled }
    }

    /// From the provider, or the entity's file URL when there is no provider.
    private func sourceImage(for entity: some ImageEntity, format: ImageFormat) async throws(ImageTableError) -> SourceImage {
        if let sourceProvider {
            do {
                return try await sourceProvider.sourceImage(for: entity, formatName: format.name)
            } catch let error as ImageTableError {
                throw error
            } catch is CancellationError {
                throw .cancelled
            } catch {
                if Task.isCancelled { throw .cancelled }
                throw .sourceFailed(format: format.name, reason: "\(error)")
            }
        }
        guard let url = entity.sourceImageURL(forFormat: format.name), url.isFileURL else { throw .noSource(format: format.name) }
        return try await pool.perform { () throws(ImageTableError) in
            do {
                return .encoded(try Data(contentsOf: url, options: .mappedIfSafe))
            } catch {
                throw .sourceFailed(format: format.name, reason: "cannot read \(url.path): \(error.localizedDescription)")
            }
        }
    }

    /// Decodes `source` once (shrunk on load to the largest size any target needs), makes every
    /// target from it and stores each. Blocking: runs on the I/O pool.
    private func produce(_ targets: [ImageFormat], from source: SourceImage,
                         for entity: some ImageEntity) throws(ImageTableError) -> [String: Result<Bitmap, ImageTableError>] {
        let name = targets.first?.name ?? ""
        let decoded: Bitmap
        switch source {
        case .bitmap(let bitmap):
            decoded = bitmap
        case .encoded(let data):
            do {
                decoded = try FamilyDecode(data, targets: targets, limits: decodingLimits).decoded
                decodes.withLock { $0 += 1 }
            } catch .cancelled {
                throw .cancelled
            } catch {
                throw .decodingFailed(format: name, error: error)
            }
        }
        let results = FamilyDecode.make(targets, from: decoded) { (target, decoded) throws(ImageTableError) -> Bitmap in
            let image = try entry(for: entity, format: target, from: decoded)
            try store(image, for: entity, format: target)
            return image
        }
        return results
    }

    /// The entity's custom drawing, or the format's processing.
    private func entry(for entity: some ImageEntity, format: ImageFormat, from source: Bitmap) throws(ImageTableError) -> Bitmap {
        let drawn: Bitmap?
        do {
            drawn = try entity.draw(source, for: format)
        } catch {
            throw .processingFailed(format: format.name, reason: "custom drawing: \(error)")
        }
        if let drawn { return try format.fitted(drawn) }
        return try format.process(source)
    }

    private func store(_ image: Bitmap, for entity: some ImageEntity, format: ImageFormat) throws(ImageTableError) {
        if let table = tables[format.name] {
            try table.setImage(image, for: entity.entityID, sourceID: entity.sourceImageID)
        } else if let diskCache {
            do {
                try diskCache.set(PixelRecord.encode(image, sourceID: entity.sourceImageID), forKey: diskKey(entity.entityID, format))
            } catch {
                throw Self.storageError(error)
            }
        }
    }
}
