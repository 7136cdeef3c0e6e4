import EaselCodecs
import EaselStorage
import EaselSupport
import EaselTables
import Foundation

/// Steps 3 to 6 of a request: the disk variant, the original (one fetch), one decode per family,
/// every format made and stored.
extension ImagePipeline {
    struct Processed: Sendable {
        var images: [String: Bitmap]
        var tier: ImageTier
        var info: ImageInfo?
        var freshUntil: Date?
        var storable = true
    }

    func process(_ request: ImageRequest, url: URL, sourceKey: String, format: ImageFormat?,
                         mark: PurgeMarks.Mark, handle: PriorityHandle) async throws(PipelineError) -> Processed {
        let name = format?.name ?? request.processingIdentifier
        let variantKey = request.processingIdentifier + "|" + sourceKey
        let stores = request.cachePolicy != .noStore
        let (entityID, sourceID) = Self.entityIDs(request, sourceKey: sourceKey)
        // 3. The processed variant in the disk cache.
        if request.cachePolicy != .reload, request.usesDiskVariants, let disk, format.map({ tables[$0.name] == nil }) ?? true,
           let record = try? await disk.data(forKey: StoreKey.variant(request.processingIdentifier, source: sourceKey)),
           let (data, freshUntil) = VariantRecord.decode(record) {
            let limits = decodingLimits(for: request)
            if let image = try? await decodes.run(priority: handle, { () async throws(PipelineError) -> Bitmap in
                try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> Bitmap in
                    do { return try ImageDecoder.decode(data, limits: limits) } catch { throw .decoding(error as? CodecError ?? .unknownFormat) }
                }
            }) {
                keep(image, key: variantKey + Self.fromVariant, sourceKey: sourceKey, until: freshUntil)
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
        // 6. Decode once, make every format of the family, store each.
        let targets: [ImageFormat] = format.map { format in configuration.formats.filter { $0.family == format.family } } ?? []
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
                return try self.decodeAndProcess(original, request: request, targets: targets, name: name,
                                                 entityID: entityID, sourceID: sourceID, sourceKey: sourceKey, stores: stores)
            }
        }
        return processed
    }

    /// Blocking: stores a fetched original once (the first of the requests sharing it to get here).
    private func storePendingOriginal(_ original: Original, sourceKey: String) {
        if let flag = original.pendingStore, flag.claim(), let disk {
            try? disk.set(OriginalRecord.encode(original.data, original.metadata), forKey: StoreKey.original(sourceKey))
        }
    }

    /// Blocking: runs on the I/O pool under the decode limit.
    private func decodeAndProcess(_ original: Original, request: ImageRequest, targets: [ImageFormat], name: String,
                                  entityID: UUID, sourceID: UUID, sourceKey: String, stores: Bool) throws(PipelineError) -> Processed {
        let decodeStart = ContinuousClock.now
        let family: FamilyDecode
        do {
            // A named format: every format of its family from one decode. Ad-hoc processing: the
            // decode covers what its first resize needs.
            family = try FamilyDecode(original.data, targets: request.processing.isFormat ? targets : [],
                                      limits: decodingLimits(for: request)) { info in
                guard case .processors(let processors) = request.processing, let resize = processors.first as? Resize else { return nil }
                return resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
            }
        } catch {
            throw .decoding(error)
        }
        let (info, decoded) = (family.info, family.decoded)
        if info.isAnimated, info.fileType == .gif || info.fileType == .webp {
            animatedSources.insert(sourceKey)
            if stores, original.cacheable { try? disk?.set(Data([1]), forKey: StoreKey.animated(sourceKey)) }
        } else {
            // A source that was an animation and is a still now (replaced without a purge).
            animatedSources.remove(sourceKey)
            if let disk, (try? disk.data(forKey: StoreKey.animated(sourceKey))) != nil { try? disk.removeValue(forKey: StoreKey.animated(sourceKey)) }
        }
        metrics.decodes.increment()
        metrics.stage(.decode, since: decodeStart)
        storePendingOriginal(original, sourceKey: sourceKey)
        let processStart = ContinuousClock.now
        var images: [String: Bitmap] = [:]
        switch request.processing {
        case .original:
            images[name] = decoded
        case .processors(let processors):
            do { images[name] = try processors.process(decoded) } catch CodecError.cancelled { throw .cancelled } catch { throw .processing("\(error)") }
        case .format:
            for (name, result) in FamilyDecode.make(targets, from: decoded, { (target, decoded) throws(ImageTableError) in try target.process(decoded) }) {
                do { images[name] = try result.get() } catch .cancelled { throw .cancelled } catch { throw .processing(error.description) }
            }
        }
        metrics.stage(.process, since: processStart)
        guard stores, original.cacheable else {
            return Processed(images: images, tier: original.tier, info: info, freshUntil: original.freshUntil, storable: original.cacheable)
        }
        for (imageName, image) in images {
            let processingIdentifier = request.processing.isFormat ? "format:" + imageName : request.processingIdentifier
            let key = processingIdentifier + "|" + sourceKey
            if let table = tables[imageName] {
                try? table.setImage(image, for: entityID, sourceID: sourceID)
                continue
            }
            keep(image, key: key, sourceKey: sourceKey, until: original.freshUntil)
            if request.usesDiskVariants, let disk {
                let encodeStart = ContinuousClock.now
                let encoding = image.isKnownOpaque ? configuration.variantEncoding : .png(compressionLevel: 1)
                if let data = try? ImageEncoder.encode(image, as: encoding) {
                    metrics.stage(.encode, since: encodeStart)
                    metrics.encodes.increment()
                    try? disk.set(VariantRecord.encode(data, freshUntil: original.freshUntil),
                                  forKey: StoreKey.variant(processingIdentifier, source: sourceKey), expiresAt: original.freshUntil)
                }
            }
        }
        return Processed(images: images, tier: original.tier, info: info, freshUntil: original.freshUntil)
    }
}
