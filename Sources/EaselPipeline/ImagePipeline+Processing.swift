import EaselCodecs
import EaselStorage
import EaselSupport
import EaselTables
import Foundation

/// Steps 3 to 6 of a request: the disk variant, the original (one fetch), one decode at the
/// requested format's scale, its image made and stored; the family's other formats after the answer.
extension ImagePipeline {
    struct Processed: Sendable {
        var images: [String: Bitmap]
        var tier: ImageTier
        var info: ImageInfo?
        var freshUntil: Date?
        var storable = true
        /// The original, when the decode found an animation (its frames are read from it
        /// without a second read of any tier).
        var animatedOriginal: Original?
        /// The family's formats still to make, for whoever answers to start after its answer.
        var family: FamilyJob?
    }

    /// Work to start once, after an answer (the first of the requesters sharing it to get there).
    struct FamilyJob: Sendable {
        private let once = OnceFlag()
        private let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
        func start() { if once.claim() { work() } }
    }

    func process(_ request: ImageRequest, url: URL, key: BitmapKey, format: ImageFormat?,
                         mark: PurgeMarks.Mark, handle: PriorityHandle) async throws(PipelineError) -> Processed {
        let name = format?.name ?? request.processingIdentifier
        let sourceKey = key.source
        let stores = request.cachePolicy != .noStore
        let (entityID, sourceID) = Self.entityIDs(request, sourceKey: sourceKey)
        // 3. The processed variant in the disk cache.
        if request.cachePolicy != .reload, request.usesDiskVariants, let disk, format.map({ tables[$0.name] == nil }) ?? true,
           let record = await Traces.cacheRead(store: disk.storeName, entry: "variant", { try? await disk.data(forKey: key.disk) }),
           let (data, freshUntil) = VariantRecord.decode(record) {
            let limits = decodingLimits(for: request)
            if let image = try? await decodes.run(priority: handle, { () async throws(PipelineError) -> Bitmap in
                try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> Bitmap in
                    do { return try ImageDecoder.decode(data, limits: limits) } catch { throw .decoding(error as? CodecError ?? .unknownFormat) }
                }
            }) {
                keep(image, key: key.memoryFromVariant, sourceKey: sourceKey, until: freshUntil)
                if !purges.isCurrent(mark) {
                    _ = try? await BlockingIOPool.shared.perform { () throws(PipelineError) in
                        self.undoIfPurged(mark, sourceKey: sourceKey, entityID: entityID)
                    }
                }
                return Processed(images: [name: image], tier: .diskVariant, info: nil, freshUntil: freshUntil)
            }
        }
        // 4 and 5. The original, from the disk cache or the fetcher (one fetch per original).
        let fetchWaiter = nextID()
        handle.observe { [originals] priority in originals.setPriority(waiter: fetchWaiter, priority) }
        let original = try await sharedOriginal(url: url, sourceKey: sourceKey, policy: request.cachePolicy, mark: mark,
                                                waiter: fetchWaiter, priority: handle.priority)
        handle.observe(nil)
        // 6. Decode at the scale this request needs, make its own image and answer; the family's
        // other formats follow from the same decode, after the answer.
        let family: [ImageFormat] = format.map { format in
            configuration.familyInBackground ? configuration.formats.filter { $0.family == format.family && $0.name != format.name } : []
        } ?? []
        let processed = try await decodes.run(priority: handle) { () async throws(PipelineError) -> Processed in
            try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> Processed in
                // Also when processing fails or is cancelled after the original was stored: a
                // purge that began meanwhile takes it back.
                defer { self.undoIfPurged(mark, sourceKey: sourceKey, entityID: entityID) }
                // Work nobody waits for any more (queued behind others) is not started; the
                // original it fetched is kept all the same (the next request needs no fetch).
                if WorkCancellation.isCancelled {
                    self.storePendingOriginal(original, sourceKey: sourceKey)
                    throw .cancelled
                }
                return try self.decodeAndProcess(original, request: request, format: format, family: family, name: name,
                                                 ids: (entityID, sourceID), sourceKey: sourceKey, mark: mark, stores: stores)
            }
        }
        return processed
    }

    /// Blocking: stores a fetched original once (the first of the requests sharing it to get here).
    func storePendingOriginal(_ original: Original, sourceKey: String) {
        if let flag = original.pendingStore, flag.claim(), let disk {
            try? disk.set(OriginalRecord.encode(original.data, original.metadata), forKey: StoreKey.original(sourceKey))
        }
    }

    /// Blocking: runs on the I/O pool under the decode limit. Decodes at the scale the
    /// request's own image needs (shrink-on-load), makes and stores it, and leaves the family's
    /// other formats to a `familyJob` that the answerer starts after its answer.
    private func decodeAndProcess(_ original: Original, request: ImageRequest, format: ImageFormat?, family: [ImageFormat],
                                  name: String, ids: (entity: UUID, source: UUID), sourceKey: String, mark: PurgeMarks.Mark,
                                  stores: Bool) throws(PipelineError) -> Processed {
        let decodeStart = ContinuousClock.now
        let decode: FamilyDecode
        do {
            // A named format: the decode covers that format. Ad-hoc processing: the decode covers
            // what its first resize needs.
            decode = try FamilyDecode(original.data, targets: format.map { [$0] } ?? [], limits: decodingLimits(for: request)) { info in
                guard case .processors(let processors) = request.processing, let resize = processors.first as? Resize else { return nil }
                return resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
            }
        } catch {
            throw .decoding(error)
        }
        let (info, decoded) = (decode.info, decode.decoded)
        let animated = info.isAnimated && (info.fileType == .gif || info.fileType == .webp)
        let known = animatedSources.isAnimated(sourceKey)
        animatedSources.note(sourceKey, animated: animated)
        if animated {
            // The mark outlives the memory tiers: a WebP answer made later from a table bitmap
            // still knows (it is written here, and read only on such a bitmap hit).
            // Written on every decode that finds an animation (rare): a mark lost to a trim, or
            // never written by a request that stored nothing, comes back.
            if stores, original.cacheable { try? disk?.set(Data([1]), forKey: StoreKey.animated(sourceKey)) }
        } else if known == true {
            // An animation replaced by a still without a purge.
            try? disk?.removeValue(forKey: StoreKey.animated(sourceKey))
        }
        metrics.decodes.increment()
        metrics.stage(.decode, since: decodeStart, attributes: ["easel.format": .string("\(info.fileType)".lowercased()), "easel.bytes": .int64(Int64(original.data.count)),
                                                               "easel.width": .int64(Int64(decoded.width)), "easel.height": .int64(Int64(decoded.height))])
        storePendingOriginal(original, sourceKey: sourceKey)
        let processStart = ContinuousClock.now
        let image: Bitmap
        switch request.processing {
        case .original:
            image = decoded
        case .processors(let processors):
            do { image = try processors.process(decoded) } catch CodecError.cancelled { throw .cancelled } catch { throw .processing("\(error)") }
        case .format:
            guard let format else { throw .noSource }
            do { image = try format.process(decoded) } catch .cancelled { throw .cancelled } catch { throw .processing(error.description) }
        }
        metrics.stage(.process, since: processStart)
        let made = Processed(images: [name: image], tier: original.tier, info: info, freshUntil: original.freshUntil,
                             storable: original.cacheable, animatedOriginal: animated ? original : nil)
        guard stores, original.cacheable else { return made }
        storeMade([name: image], request: request, sourceKey: sourceKey, ids: ids, freshUntil: original.freshUntil)
        var result = made
        if !family.isEmpty {
            result.family = familyJob(family, from: decoded, info: info, request: request, sourceKey: sourceKey, ids: ids, mark: mark,
                                      freshUntil: original.freshUntil)
        }
        return result
    }

    /// Blocking: keeps images made for `request`'s source in their tiers: a table format in its
    /// table, others in the memory tier and (for bitmap requests) as a variant on disk.
    private func storeMade(_ images: [String: Bitmap], request: ImageRequest, sourceKey: String, ids: (entity: UUID, source: UUID),
                           freshUntil: Date?) {
        for (imageName, image) in images {
            if let table = tables[imageName] {
                try? table.setImage(image, for: ids.entity, sourceID: ids.source)
                continue
            }
            // The image's own identity: a family format's, or the request's processing.
            guard let processing = processingIdentity(request.processing.isFormat ? .format(imageName) : request.processing) else { continue }
            let key = BitmapKey(source: sourceKey, processing: processing)
            keep(image, key: key.memory, sourceKey: sourceKey, madeWith: request.madeWith, until: freshUntil)
            if request.usesDiskVariants, let disk {
                let encodeStart = ContinuousClock.now
                let encoding = image.isKnownOpaque ? configuration.variantEncoding : .png(compressionLevel: 1)
                if let data = try? ImageEncoder.encode(image, as: encoding) {
                    metrics.stage(.encode, since: encodeStart)
                    metrics.encodes.increment()
                    try? disk.set(VariantRecord.encode(data, freshUntil: freshUntil),
                                  forKey: key.disk, expiresAt: freshUntil)
                }
            }
        }
    }

    /// FastImageCache's "decode once, make every format", without delaying anyone: after the
    /// answer, at the lowest priority, the family's other formats that `decoded` covers (a
    /// smaller one than the format it was decoded for, a crop of it) are made from it and
    /// stored, unless a tier already has them. A format that needs a larger decode is left to
    /// its own first request (which decodes at its scale): nothing speculative decodes twice.
    /// The job is started by whoever answers once the answer is made (after the encode, for an
    /// encoded answer): started earlier, it could take the decode slot the answer's encode
    /// needs. The decoded bitmaps such jobs hold while they wait are bounded in bytes
    /// (`familyJobs`); a job past the bound is dropped (its formats are made on request).
    private func familyJob(_ family: [ImageFormat], from decoded: Bitmap, info: ImageInfo, request: ImageRequest,
                           sourceKey: String, ids: (entity: UUID, source: UUID), mark: PurgeMarks.Mark, freshUntil: Date?) -> FamilyJob? {
        // Only formats whose own decode would be this very one (the same shrink-on-load
        // scale): a format's bytes, and so its ETag, never depend on which request came first.
        let covered = family.filter { format in
            let needed = format.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
            let own = ImageDecoder.decodedSize(of: info, covering: needed)
            return own.width == decoded.width && own.height == decoded.height
        }
        guard !covered.isEmpty else { return nil }
        let cost = decoded.rowBytes * decoded.height
        let reload = request.cachePolicy == .reload
        return FamilyJob { [self] in
            guard familyJobs.enter(cost: cost) else { return }
            afterAnswer.run { [self] in
                defer { familyJobs.leave(cost: cost) }
                if let hook = familyHook.withLock({ $0 }) { await hook() }
                _ = try? await decodes.run(priority: PriorityHandle(.veryLow)) { () async throws(PipelineError) in
                    try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) in
                        // A purge since the answer: nothing to make (and nothing of the source's
                        // newer work to take back). One during the making: what was stored goes.
                        guard self.purges.isCurrent(mark) else { return }
                        defer { self.undoIfPurged(mark, sourceKey: sourceKey, entityID: ids.entity) }
                        let start = ContinuousClock.now
                        var images: [String: Bitmap] = [:]
                        // A reload remakes them all (what the tiers hold may be stale).
                        for format in covered where reload || !self.holds(format, sourceKey: sourceKey, ids: ids) {
                            images[format.name] = try? format.process(decoded)
                        }
                        self.metrics.stage(.process, since: start)
                        self.storeMade(images, request: request, sourceKey: sourceKey, ids: ids, freshUntil: freshUntil)
                        self.metrics.familyImages.increment(by: images.count)
                    }
                }
            }
        }
    }

    /// Whether a tier already holds `format` of the source (its table, or the memory tier).
    private func holds(_ format: ImageFormat, sourceKey: String, ids: (entity: UUID, source: UUID)) -> Bool {
        if let table = tables[format.name] { return table.contains(ids.entity, sourceID: ids.source) }
        return processingIdentity(.format(format.name)).map { memory.contains(BitmapKey(source: sourceKey, processing: $0).memory) } ?? false
    }
}
