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
    public let directory: URL
    /// The formats, set once at creation.
    public let formats: [ImageFormat]
    private let formatsByName: [String: ImageFormat]
    private let tables: [String: ImageTable]
    let diskCache: DiskCache?
    private let sourceProvider: (any ImageSourceProvider)?
    private let decodingLimits: DecodingLimits
    private let pool: BlockingIOPool
    private let requests = Locked(Requests())
    private let decodes = Locked(0)

    /// How many source images were decoded (for tests of one-decode-per-family).
    package var decodeCount: Int { decodes.withLock { $0 } }

    /// Opens the tables of `formats` in `directory`.
    /// - Parameters:
    ///   - diskCache: where `.diskCache` formats keep their entries; by default a disk cache in
    ///     `directory/pixels` with room for every such format's `maximumCount` entries.
    ///   - sourceProvider: supplies missing source images; without one, only entities with a
    ///     file URL for the format can be loaded.
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
    }

    /// Closes every table (their file locks are released before this returns, so the same
    /// directory can be opened again at once). Later calls find nothing in the tables, and
    /// writes to them fail with `.closed`. Blocking (see `ImageTable.close()`).
    public func close() {
        for table in tables.values { table.close() }
    }

    // MARK: Formats

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
            _ = enqueue(entity: entity, format: format, deliver: completion)
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
        let box = WaiterBox()
        let result: Result<Bitmap, ImageTableError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let id = enqueue(entity: entity, format: format) { continuation.resume(returning: $0) }
                box.set(id)
                if Task.isCancelled { cancel(waiter: id) }
            }
        } onCancel: {
            if let id = box.id { cancel(waiter: id) }
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
        let results = try await pool.perform { () throws(ImageTableError) in try self.produce(targets, from: source, for: entity) }
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
        let (cancelled, stopped) = requests.withLock { requests -> ([Waiter], PendingWork?) in
            guard let family = formatsByName[formatName]?.family else { return ([], nil) }
            let key = WorkKey(entity: entity.entityID, family: family)
            guard var work = requests.works[key] else { return ([], nil) }
            let cancelled = work.waiters.filter { $0.value.formatName == formatName }
            for id in cancelled.keys {
                work.waiters.removeValue(forKey: id)
                requests.keys.removeValue(forKey: id)
            }
            if work.waiters.isEmpty {
                requests.works.removeValue(forKey: key)
                return (Array(cancelled.values), work)
            }
            requests.works[key] = work
            return (Array(cancelled.values), nil)
        }
        finishCancelled(cancelled, stopped: stopped)
    }

    // MARK: Shared work

    private struct WorkKey: Hashable {
        let entity: UUID
        let family: String
    }

    private struct Waiter {
        let id: UInt64
        let formatName: String
        let deliver: @Sendable (Result<Bitmap, ImageTableError>) -> Void
    }

    private struct PendingWork {
        let generation: UInt64
        let entity: any ImageEntity
        let formatName: String
        var waiters: [UInt64: Waiter] = [:]
        var task: Task<Void, Never>?
    }

    private struct Requests {
        var works: [WorkKey: PendingWork] = [:]
        /// The work each waiter belongs to.
        var keys: [UInt64: WorkKey] = [:]
        var nextID: UInt64 = 1
    }

    /// Adds a waiter to the entity's family work, starting the work if there is none; returns
    /// the waiter's id.
    private func enqueue(entity: some ImageEntity, format: ImageFormat,
                         deliver: @escaping @Sendable (Result<Bitmap, ImageTableError>) -> Void) -> UInt64 {
        let key = WorkKey(entity: entity.entityID, family: format.family)
        let (id, start) = requests.withLock { requests -> (UInt64, UInt64?) in
            let id = requests.nextID
            requests.nextID += 1
            requests.keys[id] = key
            let waiter = Waiter(id: id, formatName: format.name, deliver: deliver)
            if requests.works[key] != nil {
                requests.works[key]!.waiters[id] = waiter
                return (id, nil)
            }
            requests.works[key] = PendingWork(generation: id, entity: entity, formatName: format.name, waiters: [id: waiter])
            return (id, id)
        }
        if let generation = start { startWork(key: key, generation: generation, entity: entity, format: format) }
        return id
    }

    private func startWork(key: WorkKey, generation: UInt64, entity: some ImageEntity, format: ImageFormat) {
        let task = Task { await self.run(key: key, generation: generation, entity: entity, format: format) }
        let orphaned = requests.withLock { requests -> Bool in
            guard requests.works[key]?.generation == generation else { return true }
            requests.works[key]!.task = task
            return false
        }
        if orphaned { task.cancel() }
    }

    /// Requests waiting for shared work (for tests).
    package var waitingRequestCount: Int { requests.withLock { $0.keys.count } }

    /// Cancels one waiter (its task was cancelled).
    private func cancel(waiter id: UInt64) {
        let (cancelled, stopped) = requests.withLock { requests -> ([Waiter], PendingWork?) in
            guard let key = requests.keys.removeValue(forKey: id),
                  let waiter = requests.works[key]?.waiters.removeValue(forKey: id) else { return ([], nil) }
            if requests.works[key]!.waiters.isEmpty {
                return ([waiter], requests.works.removeValue(forKey: key))
            }
            return ([waiter], nil)
        }
        finishCancelled(cancelled, stopped: stopped)
    }

    private func finishCancelled(_ cancelled: [Waiter], stopped: PendingWork?) {
        if let stopped {
            stopped.task?.cancel()
            for name in Set(cancelled.map(\.formatName)) { sourceProvider?.didCancel(entity: stopped.entity, formatName: name) }
        }
        for waiter in cancelled { waiter.deliver(.failure(.cancelled)) }
    }

    /// Gets the source, makes the family's formats and hands each waiter its image.
    private func run(key: WorkKey, generation: UInt64, entity: some ImageEntity, format: ImageFormat) async {
        var results: [String: Result<Bitmap, ImageTableError>] = [:]
        do throws(ImageTableError) {
            let wanted = requests.withLock { requests in
                Set(requests.works[key]?.waiters.values.map(\.formatName) ?? [format.name])
            }
            // A request that missed the table just before another work stored the entry.
            for name in wanted {
                if let image = tables[name]?.image(for: entity.entityID, sourceID: entity.sourceImageID) { results[name] = .success(image) }
            }
            if results.count < wanted.count {
                let source = try await sourceImage(for: entity, format: format)
                try checkCancellation()
                let all = sourceProvider?.shouldProcessAllFormats(inFamily: format.family, for: entity) ?? true
                let wanted = requests.withLock { requests in
                    Set(requests.works[key]?.waiters.values.map(\.formatName) ?? [format.name])
                }
                let targets = formats(inFamily: format.family).filter { all || wanted.contains($0.name) }
                results = try await pool.perform { () throws(ImageTableError) in try self.produce(targets, from: source, for: entity) }
            }
        } catch {
            // Also `.cancelled`: if the provider gave up while requests still wait, they learn it.
            for target in formats(inFamily: format.family) { results[target.name] = .failure(error) }
        }
        let finished = results
        let (waiters, restart) = requests.withLock { requests -> ([Waiter], (UInt64, ImageFormat)?) in
            guard requests.works[key]?.generation == generation, let work = requests.works.removeValue(forKey: key) else { return ([], nil) }
            var done: [Waiter] = []
            var left: [UInt64: Waiter] = [:]
            for (id, waiter) in work.waiters {
                if finished[waiter.formatName] != nil {
                    done.append(waiter)
                    requests.keys.removeValue(forKey: id)
                } else {
                    left[id] = waiter
                }
            }
            // Formats the work did not make (the provider asked for only the requested formats,
            // and these requests came later): a new work for them, in this same critical
            // section, so that a cancellation cannot fall between.
            guard let first = left.values.first, let next = formatsByName[first.formatName] else { return (done, nil) }
            let nextGeneration = requests.nextID
            requests.nextID += 1
            requests.works[key] = PendingWork(generation: nextGeneration, entity: work.entity, formatName: next.name, waiters: left)
            return (done, (nextGeneration, next))
        }
        if let (nextGeneration, next) = restart { startWork(key: key, generation: nextGeneration, entity: entity, format: next) }
        var reported = Set<String>()
        for waiter in waiters {
            let result = finished[waiter.formatName]!
            if case .failure(let error) = result, error != .cancelled, reported.insert(waiter.formatName).inserted {
                sourceProvider?.didFail(entity: entity, formatName: waiter.formatName, error: error)
            }
            waiter.deliver(result)
        }
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
                let info = try ImageDecoder.info(of: data, limits: decodingLimits)
                var needed = (width: 1, height: 1)
                for target in targets {
                    let size = target.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
                    needed = (max(needed.width, size.width), max(needed.height, size.height))
                }
                decoded = try ImageDecoder.decode(data, info: info, covering: needed, limits: decodingLimits)
                decodes.withLock { $0 += 1 }
            } catch let error as CodecError {
                throw .decodingFailed(format: name, error: error)
            } catch {
                throw .processingFailed(format: name, reason: "\(error)")
            }
        }
        var results: [String: Result<Bitmap, ImageTableError>] = [:]
        for target in targets {
            results[target.name] = Result { () throws(ImageTableError) -> Bitmap in
                let image = try entry(for: entity, format: target, from: decoded)
                try store(image, for: entity, format: target)
                return image
            }
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

/// The id of a waiter, set once it is enqueued (read by the cancellation handler).
private final class WaiterBox: Sendable {
    private let value = Locked<UInt64?>(nil)
    var id: UInt64? { value.withLock { $0 } }
    func set(_ id: UInt64) { value.withLock { $0 = id } }
}
