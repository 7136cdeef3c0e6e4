import EaselCodecs
import EaselStorage
import EaselSupport
import Foundation

/// The encode stage: one encoded variant, from the first data store that has it (the local
/// disk, then the shared stores), else from its bitmap — a tier's (decoded memory, a table) or
/// one `DecodeTask`'s — encoded once, or an animated source's frames; then stored in every
/// encoded tier (memory and the local disk before the answer, the shared stores after it).
struct EncodeTask: PipelineTask {
    let pipeline: ImagePipeline
    let request: ImageRequest
    let keys: ImagePipeline.EncodedKeys

    /// The variant, and the purge marks of its source and of its watermarks' sources: requests
    /// after a purge of either never join work that began before it.
    var key: WorkKey {
        .encode(keys.variant, policy: request.cachePolicy, mark: keys.mark, madeWith: keys.madeWith.map(\.mark))
    }
    static func coalescer(in graph: TaskGraph) -> WorkCoalescer<WorkKey, EncodedResponse> { graph.encodes }

    func run(_ handle: PriorityHandle) async throws(PipelineError) -> EncodedResponse {
        var encoding = request.encoding ?? ImageEncoding(.jpeg)
        let keeps = request.cachePolicy != .noStore
        if let stored = await pipeline.storedAnswer(request, keys: keys, encoding: encoding, keeps: keeps) { return stored }
        guard encoding.options != nil else { return try await cleanedSVG(handle, encoding: encoding, keeps: keeps) }
        let made = try await madeImage(handle, encoding: encoding)
        if encoding.keepsSourceFormat {
            // The source's format, now that it is known: from the decode, else from an earlier
            // one, else (a bitmap from a tier after a restart) from the original's first bytes.
            let type = if let type = made.info?.fileType ?? pipeline.sourceTypes.type(of: keys.source) { type } else {
                try await pipeline.sourceType(request, sourceKey: keys.source)
            }
            encoding = encoding.resolved(forSource: type)
        }
        // The family's other formats once this answer is made (or has failed).
        defer { made.family?.start() }
        if let hook = pipeline.encodeHook.withLock({ $0 }) { await hook() }
        try Task.checkCancellation(orThrow: .cancelled)
        let until = made.freshUntil ?? Date().addingTimeInterval(pipeline.configuration.defaultFreshness)
        if let data = made.animation, let animation = encoding.animationEncoding {
            let encoded = EncodedImage(data: data, encoding: animation)
            let kept = keeps && made.storable ? await pipeline.store(encoded, data: data, keys: keys, until: until) : false
            return EncodedResponse(encoded: encoded, tier: made.tier, isInMemoryTier: kept)
        }
        guard let image = made.images.values.first else { throw .noSource }
        let rights = try await keptRights(of: made, encoding: encoding)
        let (data, madeAs) = try await encodeStill(image, encoding: encoding, rights: rights, handle: handle)
        let encoded = EncodedImage(data: data, encoding: madeAs)
        let kept = keeps && made.storable ? await pipeline.store(encoded, data: data, keys: keys, until: until) : false
        return EncodedResponse(encoded: encoded, tier: made.tier, isInMemoryTier: kept)
    }

    /// The request for the bitmap this answer encodes: no encoding, deadline or disk variants,
    /// at the work's priority.
    private func requestForBitmap(_ handle: PriorityHandle) -> ImageRequest {
        var bitmapRequest = request
        bitmapRequest.encoding = nil
        bitmapRequest.deadline = nil
        bitmapRequest.usesDiskVariants = false
        bitmapRequest.priority = handle.priority
        return bitmapRequest
    }

    /// What the answer is encoded from: the bitmap (or an animated source's animation, when the
    /// answer keeps animations) from a tier that has it, else from one shared decode.
    private func madeImage(_ handle: PriorityHandle, encoding: ImageEncoding) async throws(PipelineError) -> ImagePipeline.Processed {
        let bitmapRequest = requestForBitmap(handle)
        let format = try pipeline.namedFormat(request)
        guard let bitmapKey = pipeline.bitmapKey(for: bitmapRequest, sourceKey: keys.source) else { throw .noSource }
        // The bitmap from a tier that has it, unless the answer keeps animations and the source
        // is one (known in memory, else from the disk's mark, read only on such a hit: a decode
        // finds out itself); else one decode, which makes the animation from the frames when
        // the source has several.
        // A source known as a still needs no frames (its decode is then the one a still answer's
        // is, shared with it).
        // A page other than the first is a still (a frame of an animation).
        var frames = request.page > 0 || pipeline.animatedSources.isAnimated(keys.source) == false ? nil : encoding.animationEncoding
        var made = frames != nil && pipeline.animatedSources.contains(keys.source)
            ? nil : await pipeline.cachedBitmap(bitmapRequest, key: bitmapKey, format: format)
        if made != nil, frames != nil {
            if await pipeline.isAnimated(keys.source) { made = nil } else { frames = nil }
        }
        if made == nil {
            let inner = pipeline.nextID()
            handle.observe { [tasks = pipeline.tasks] priority in tasks.setPriority(priority, waiter: inner) }
            made = try await pipeline.decoded(bitmapRequest, key: bitmapKey, format: format, frames: frames, waiter: inner,
                                              priority: handle.priority)
            handle.observe(nil)
        }
        guard let made else { throw .noSource }
        return made
    }

    /// The source's rights, when the encoding keeps them: from its header as decoded, else read
    /// again (a bitmap from a tier has no header with it).
    private func keptRights(of made: ImagePipeline.Processed, encoding: ImageEncoding) async throws(PipelineError) -> RightsMetadata? {
        if !encoding.keepsRights {
            return nil
        } else if let info = made.info {
            return RightsMetadata(info.exif)
        } else {
            return try await pipeline.sourceRights(request, sourceKey: keys.source)
        }
    }

    /// `image` encoded (a search may encode it several times) in a decode slot that counts its
    /// buffers against the memory budget, on the decoding pool, cancellable; timed and counted.
    private func encodeStill(_ image: Bitmap, encoding: ImageEncoding, rights: RightsMetadata?,
                             handle: PriorityHandle) async throws(PipelineError) -> (Data, ImageEncoding) {
        let metrics = pipeline.metrics
        let encoder = StillEncoder(encoding: encoding, rights: rights)
        // The encoder's buffers and output, for the memory budget: about half the bitmap's bytes
        // (the bitmap itself is held by the memory tier).
        let encodeCost = (Int.checkedProduct(image.rowBytes, image.height) ?? Int.max / 4) / 2 + (1 << 20)
        return try await pipeline.tasks.decodeSlots.run(priority: handle, cost: encodeCost, continuing: true) { () async throws(PipelineError) -> (Data, ImageEncoding) in
            // Cancellable: a search stops at its next encode when nobody waits for it any more.
            try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> (Data, ImageEncoding) in
                let start = ContinuousClock.now
                do {
                    let (data, madeAs, encodes) = try encoder.encode(image)
                    metrics.stage(.encode, since: start, attributes: ["easel.format": "\(madeAs.format)", "easel.bytes": .int64(Int64(data.count)),
                                                                      "easel.encodes": .int64(Int64(encodes))])
                    metrics.encodes.increment(by: encodes)
                    return (data, madeAs)
                } catch {
                    throw .processing(failure: error)
                }
            }
        }
    }

    /// An SVG answer: the source document itself, cleaned (`SVGSanitizer`), whatever the
    /// processing asks (SVG is served as SVG, as imgproxy does); a source that is not an SVG is
    /// refused. Stored in the encoded tiers like any answer.
    private func cleanedSVG(_ handle: PriorityHandle, encoding: ImageEncoding, keeps: Bool) async throws(PipelineError) -> EncodedResponse {
        guard let url = request.url else { throw .noSource }
        // An SVG has one page.
        guard request.page == 0 else { throw .decoding(.noSuchPage(page: request.page, pages: 1)) }
        let fetchWaiter = pipeline.nextID()
        handle.observe { [fetches = pipeline.tasks.fetches] priority in fetches.setPriority(waiter: fetchWaiter, priority) }
        let original = try await pipeline.tasks.run(FetchTask(pipeline: pipeline, url: url, sourceKey: keys.source, policy: request.cachePolicy,
                                                              mark: keys.mark), waiter: fetchWaiter, priority: handle.priority)
        handle.observe(nil)
        let limits = pipeline.decodingLimits(for: request)
        let (entityID, _) = ImagePipeline.entityIDs(request, sourceKey: keys.source)
        let data = try await pipeline.tasks.decodeSlots.run(priority: handle) { [pipeline, keys] () async throws(PipelineError) -> Data in
            try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> Data in
                // The original is kept (the next answer of it needs no fetch); a purge meanwhile takes it back.
                defer { pipeline.undoIfPurged(keys.mark, sourceKey: keys.source, entityID: entityID) }
                pipeline.storePendingOriginal(original, sourceKey: keys.source)
                guard (try? ImageFileType.sniff(original.data)) == .svg else {
                    throw .processing("SVG output is made only from an SVG source")
                }
                let sanitized: Data
                do { sanitized = try SVGSanitizer.sanitize(original.data, limits: limits) } catch let error as CodecError {
                    throw .codec(error)
                } catch {
                    throw .decoding(.invalidParameters("\(error)"))
                }
                try ImagePipeline.checkWhole(original.data, fileType: .svg)
                return sanitized
            }
        }
        let encoded = EncodedImage(data: data, encoding: encoding)
        let until = original.freshUntil ?? Date().addingTimeInterval(pipeline.configuration.defaultFreshness)
        let kept = keeps && original.cacheable ? await pipeline.store(encoded, data: data, keys: keys, until: until) : false
        return EncodedResponse(encoded: encoded, tier: original.tier, isInMemoryTier: kept)
    }
}

extension ImagePipeline {
    /// An encoded request's keys: the variant's, its store key (made once), the purge mark it
    /// began under, and what else it is made with.
    struct EncodedKeys: Sendable {
        var variant: VariantKey
        var store: String
        var mark: PurgeMarks.Mark
        var madeWith: [PreparedWatermark]
        var memory: String { variant.memory }
        var source: String { variant.source }

        /// Whether what was made under these keys may stay stored: no purge of the source, or of
        /// a watermark's source since its preparation began, has begun since.
        func areCurrent(_ purges: PurgeMarks) -> Bool {
            purges.isCurrent(mark) && madeWith.allSatisfy { purges.isCurrent($0.mark) }
        }
    }

    /// The answer from the first data store that has it, kept in memory and copied to the
    /// faster stores before it (after the answer); nil when none has it (or the request reloads).
    func storedAnswer(_ request: ImageRequest, keys: EncodedKeys, encoding: ImageEncoding, keeps: Bool) async -> EncodedResponse? {
        guard request.cachePolicy != .reload else { return nil }
        for (position, store) in stores.enumerated() {
            guard let record = await Traces.cacheRead(store: store.storeName, entry: "encoded", { try? await store.data(forKey: keys.store) }),
                  let (data, freshUntil, recorded) = VariantRecord.decode(record),
                  // (A record of the first version names no format: its bytes say which.)
                  let stored = Self.storedEncoding(recorded ?? (try? ImageFileType.sniff(data)).flatMap(ImageEncoding.Format.init), asked: encoding) else {
                continue
            }
            let encoded = EncodedImage(data: data, encoding: stored)
            var kept = false
            if keeps {
                kept = keep(encoded, keys: keys, until: freshUntil)
                await undoIfPurged(keys, stored: encoded, record: record)
                kept = kept && keys.areCurrent(purges)
                // The faster stores before this one get a copy, after the answer.
                let earlier = stores[..<position]
                if !earlier.isEmpty {
                    afterAnswer.run { [self] in
                        for store in earlier {
                            await Traces.cacheWrite(store: store.storeName, entry: "encoded", bytes: record.count) {
                                try await store.set(record, forKey: keys.store, expiresAt: freshUntil)
                            }
                        }
                        await undoIfPurged(keys, stored: encoded, record: record)
                    }
                }
            }
            return EncodedResponse(encoded: encoded, tier: position == 0 && disk != nil ? .encodedDisk : .encodedShared, isInMemoryTier: kept)
        }
        return nil
    }

    /// The encoding of a stored answer in `format` (its record's) for a request asking for
    /// `asked`: that, or the animation alternative (an animation stored under a key that also
    /// serves stills is in the alternative's format), or the format that won a best-format
    /// search; nil for another format (a miss, made again).
    static func storedEncoding(_ format: ImageEncoding.Format?, asked encoding: ImageEncoding) -> ImageEncoding? {
        guard let format else { return nil }
        if encoding.keepsSourceFormat { return encoding.resolved(forSource: format.fileType) }
        if format == encoding.format { return encoding }
        if let alternative = encoding.animationEncoding, alternative.format == format { return alternative }
        // (The key holds the encoding: a best-format record is in the format that won.)
        if !encoding.bestOf.isEmpty { return encoding.made(format, quality: encoding.quality) }
        return nil
    }

    /// Keeps a new encoded answer: memory and the local disk now, the shared stores after the
    /// answer; taken back where a purge began meanwhile.
    /// - Returns: whether the memory tier took the bytes (and keeps them: no purge took them back).
    func store(_ encoded: EncodedImage, data: Data, keys: EncodedKeys, until: Date) async -> Bool {
        let kept = keep(encoded, keys: keys, until: until)
        let record = VariantRecord.encode(data, freshUntil: until, format: encoded.encoding.format)
        if let disk {
            await Traces.cacheWrite(store: disk.storeName, entry: "encoded", bytes: record.count) {
                try await disk.set(record, forKey: keys.store, expiresAt: until)
            }
        }
        await undoIfPurged(keys, stored: encoded, record: record)
        // Shared stores are filled after the answer, never delaying it.
        let shared = disk == nil ? stores[...] : stores.dropFirst()
        if !shared.isEmpty {
            afterAnswer.run { [self] in
                for store in shared {
                    await Traces.cacheWrite(store: store.storeName, entry: "encoded", bytes: record.count) {
                        try await store.set(record, forKey: keys.store, expiresAt: until)
                    }
                }
                if !keys.areCurrent(purges) {
                    for store in shared where (try? await store.data(forKey: keys.store)) == record {
                        try? await store.removeValue(forKey: keys.store)
                    }
                }
            }
        }
        return kept && keys.areCurrent(purges)
    }

    /// Whether the source is an animation: known in memory, else from the mark a decode left on
    /// the local disk (for a bitmap from memory or a table, whose decode this process may not
    /// have seen), read once and then known.
    func isAnimated(_ source: String) async -> Bool {
        if let known = animatedSources.isAnimated(source) { return known }
        let marked = (try? await disk?.data(forKey: StoreKey.animated(source))) != nil
        animatedSources.note(source, animated: marked)
        return marked
    }

    /// Puts encoded bytes in the memory tier and the source index (the index first, so a purge
    /// that runs meanwhile finds the key; a refused value leaves it again).
    /// - Returns: whether the tier took the bytes.
    @discardableResult
    private func keep(_ encoded: EncodedImage, keys: EncodedKeys, until: Date?) -> Bool {
        sourceIndex.add(keys.memory, sources: [keys.source] + keys.madeWith.map(\.sourceKey))
        guard encodedMemory.set(encoded, forKey: keys.memory, cost: encoded.count, expiresAt: until) else {
            sourceIndex.remove(keys.memory)
            return false
        }
        return true
    }

    /// After storing: when a purge of the source (or of a watermark's) began since the work did, removes what it
    /// stored from every tier (see `PurgeMarks`) — only where the tier still holds these bytes,
    /// so what newer work stored under the same key stays.
    private func undoIfPurged(_ keys: EncodedKeys, stored: EncodedImage, record: Data) async {
        guard !keys.areCurrent(purges) else { return }
        for store in stores where (try? await store.data(forKey: keys.store)) == record {
            try? await store.removeValue(forKey: keys.store)
        }
        if encodedMemory.value(forKey: keys.memory)?.etag == stored.etag {
            encodedMemory.removeValue(forKey: keys.memory)
        }
    }
}
