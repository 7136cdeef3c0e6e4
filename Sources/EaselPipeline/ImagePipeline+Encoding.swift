import EaselSupport
import EaselCodecs
import EaselStorage
import EaselTables
import Foundation

/// What the caches hold.
public struct PipelineStatistics: Sendable {
    /// Decoded images in memory.
    public var memoryBytes: Int
    /// Encoded images in memory.
    public var encodedMemoryBytes: Int
    /// Originals, variants and encoded images on the local disk.
    public var diskBytes: Int
    /// Entries in the local disk cache; 0 without a cache directory.
    public var diskEntries: Int
    /// Entries per image table.
    public var tableEntries: [String: Int]
}

extension ImagePipeline {
    /// The encoded bytes for `request` (in `request.encoding`), from the first tier that has
    /// them:
    ///
    /// 1. encoded bytes in memory, keyed by (encoding, processing, source);
    /// 2. encoded bytes on disk (stored as served, so every tier answers the same bytes and the
    ///    same ETag);
    /// 3. the bitmap from `image(for:)`'s tiers (memory, table, original, fetcher: a bitmap
    ///    variant on disk, another encoding, is never its start), encoded once however many
    ///    requests ask at once, then stored in both encoded tiers.
    ///
    /// The encoding is `request.encoding`; to let the pipeline decide it from `request.output`
    /// and `request.client`, use `answer(for:)`.
    ///
    /// `request.deadline` covers all of it, the encode included.
    public func encodedImage(for request: ImageRequest) async throws(PipelineError) -> EncodedResponse {
        try await encodedResponse(for: request, id: nextID())
    }

    /// The encoded bytes when the memory tier has them: no I/O, no waiting.
    public func cachedEncodedImage(for request: ImageRequest) -> EncodedImage? {
        guard request.cachePolicy != .reload, let sourceKey = request.sourceKey,
              let key = variantKey(for: request, sourceKey: sourceKey) else { return nil }
        return encodedMemory.value(forKey: key.memory)
    }

    /// The encoded memory tier's entry under a variant's memory key (`VariantKey.memory`), for a
    /// caller that keeps the answer elsewhere and must know it is still the tier's (the server's
    /// ready answers). Never an expired one; a hit counts as a use for the tier's eviction order.
    public func cachedEncodedImage(memoryKey key: String) -> EncodedImage? { encodedMemory.value(forKey: key) }

    /// What decides an encoded answer's bytes besides its source: the encoding and the
    /// processing (a named format with every parameter that decides its pixels, so a changed
    /// format never serves old bytes). The data stores key it under the source
    /// (`StoreKey.encoded`); `VariantKey` carries it.
    func encodedIdentity(processing: ImageRequest.Processing, encoding: ImageEncoding) -> String? {
        processingIdentity(processing).map { encoding.description + "|" + $0 }
    }

    /// What decides a variant's pixels besides its source: a named format with every parameter
    /// that decides them (nil for an unknown format), the processors' identifier, or "original".
    /// Every tier's key carries it (`BitmapKey`, `VariantKey`).
    func processingIdentity(_ processing: ImageRequest.Processing) -> String? {
        switch processing {
        case .format(let name): formatIdentifiers[name]
        case .original: "original"
        case .processors(let processors): "processors:" + processors.identifier
        }
    }

    /// The bitmap variant's identity for `request` (nil for an unknown format).
    func bitmapKey(for request: ImageRequest, sourceKey: String) -> BitmapKey? {
        processingIdentity(request.processing).map { BitmapKey(source: sourceKey, processing: $0) }
    }

    /// The variant's identity for `request` (its encoding, else JPEG at 82): built once per
    /// request; every tier's key derives from it. Nil for an unknown format.
    func variantKey(for request: ImageRequest, sourceKey: String) -> VariantKey? {
        encodedIdentity(processing: request.processing, encoding: request.encoding ?? ImageEncoding(.jpeg))
            .map { VariantKey(source: sourceKey, identity: $0) }
    }

    /// One encoded request between its events: the memory tier, else (after `beforeWork`, whose
    /// returned closure runs when the work is over) `work` within the request's deadline.
    func encodedResponse(
        for request: ImageRequest, id: UInt64,
        beforeWork: () throws(PipelineError) -> (@Sendable () -> Void)? = { nil },
        work: (@Sendable (ImageRequest, VariantKey, UInt64) async throws(PipelineError) -> EncodedResponse)? = nil
    ) async throws(PipelineError) -> EncodedResponse {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        guard let key = variantKey(for: request, sourceKey: sourceKey) else {
            if case .format(let name) = request.processing { throw .unknownFormat(name) }
            throw .noSource
        }
        return try await tracked(request, id: id, tier: \.tier) { () async throws(PipelineError) -> EncodedResponse in
            if request.cachePolicy != .reload, let hit = encodedMemory.value(forKey: key.memory) {
                return EncodedResponse(encoded: hit, tier: .encodedMemory, key: key, isInMemoryTier: true)
            }
            let done = try beforeWork()
            defer { done?() }
            guard let deadline = request.deadline else { return try await run(work, request, key, id) }
            return try await withDeadline(deadline) { () async throws(PipelineError) -> EncodedResponse in
                try await self.run(work, request, key, id)
            }
        }
    }

    /// `work` when given, else the shared work of the key.
    private func run(_ work: (@Sendable (ImageRequest, VariantKey, UInt64) async throws(PipelineError) -> EncodedResponse)?,
                     _ request: ImageRequest, _ key: VariantKey, _ id: UInt64) async throws(PipelineError) -> EncodedResponse {
        if let work { return try await work(request, key, id) }
        return try await encodedWork(request, key: key, id: id)
    }

    /// A miss of the encoded memory tier: joins or starts the shared work of its key.
    func encodedWork(_ request: ImageRequest, key: VariantKey, id: UInt64) async throws(PipelineError) -> EncodedResponse {
        let mark = purges.mark(key.source)
        let workKey = key.memory + request.cachePolicy.workKeySuffix + mark.suffix
        let keys = EncodedKeys(variant: key, store: key.store, mark: mark, madeWith: request.madeWith)
        var response = try await encodes.value(for: workKey, waiter: id, priority: request.priority) { handle in
            do throws(PipelineError) {
                return .success(try await self.makeEncoded(request, keys: keys, handle: handle))
            } catch {
                return .failure(error)
            }
        }.get()
        response.key = key
        return response
    }

    /// A miss's keys: the variant's, its store key (made once), the purge mark it began under,
    /// and what it is made with.
    struct EncodedKeys: Sendable {
        var variant: VariantKey
        var store: String
        var mark: PurgeMarks.Mark
        var madeWith: [String]
        var memory: String { variant.memory }
        var source: String { variant.source }
    }

    /// The shared work of one encoded key: the data stores in order, else the bitmap and one
    /// encode.
    private func makeEncoded(_ request: ImageRequest, keys: EncodedKeys,
                             handle: PriorityHandle) async throws(PipelineError) -> EncodedResponse {
        let encoding = request.encoding ?? ImageEncoding(.jpeg)
        let keeps = request.cachePolicy != .noStore
        if request.cachePolicy != .reload {
            for (position, store) in stores.enumerated() {
                guard let record = await Traces.cacheRead(store: store.storeName, entry: "encoded", { try? await store.data(forKey: keys.store) }),
                      let (data, freshUntil) = VariantRecord.decode(record) else {
                    continue
                }
                // An animation stored under a key that also serves stills (AVIF or JPEG with a
                // WebP alternative) is WebP: its content type follows its bytes.
                let stored = encoding.animationAsWebP != nil && (try? ImageFileType.sniff(data)) == .webp
                    ? encoding.animationEncoding ?? encoding : encoding
                let encoded = EncodedImage(data: data, encoding: stored)
                var kept = false
                if keeps {
                    kept = keep(encoded, keys: keys, until: freshUntil)
                    await undoIfPurged(keys, stored: encoded, record: record)
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
        }
        var bitmapRequest = request
        bitmapRequest.encoding = nil
        bitmapRequest.deadline = nil
        bitmapRequest.usesDiskVariants = false
        bitmapRequest.priority = handle.priority
        let inner = nextID()
        handle.observe { [weak self] priority in self?.setPriority(priority, id: inner) }
        let animation = encoding.animationEncoding
        // An animation known as such goes straight to its frames; otherwise the bitmap. A decode
        // for it tells whether the source is animated (and hands over the original); a bitmap
        // from memory or a table does not, and the source's mark on disk is read once.
        var bitmap = animation != nil && animatedSources.contains(keys.source) ? nil : try await resolve(bitmapRequest, id: inner)
        // The family's other formats once this answer is made (or has failed).
        defer { bitmap?.family?.start() }
        if let hook = encodeHook.withLock({ $0 }) { await hook() }
        try Task.checkCancellation(orThrow: .cancelled)
        if let animation {
            let animates: Bool
            if let known = animatedSources.isAnimated(keys.source) {
                animates = known
            } else {
                animates = await isMarkedAnimated(keys.source)
            }
            if animates, let response = try await makeAnimation(request, keys: keys, encoding: animation, handle: handle, keeps: keeps,
                                                                original: bitmap?.animatedOriginal) {
                handle.observe(nil)
                return response
            }
        }
        // Not an animation, or one over the animation limits: its first frame, as before.
        if bitmap == nil { bitmap = try await resolve(bitmapRequest, id: inner) }
        handle.observe(nil)
        guard let bitmap else { throw .noSource }
        let image = bitmap.image
        let data = try await decodes.run(priority: handle) { () async throws(PipelineError) -> Data in
            try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> Data in
                let start = ContinuousClock.now
                do {
                    // JPEG has no alpha: transparent pixels go on white rather than on black.
                    let opaque = encoding.format == .jpeg && !image.isKnownOpaque ? try Flatten().process(image) : image
                    let data = try ImageEncoder.encode(opaque, as: encoding.options)
                    self.metrics.stage(.encode, since: start, attributes: ["easel.format": "\(encoding.format)", "easel.bytes": .int64(Int64(data.count))])
                    self.metrics.encodes.increment()
                    return data
                } catch {
                    throw .processing("\(error)")
                }
            }
        }
        let encoded = EncodedImage(data: data, encoding: encoding)
        var kept = false
        if keeps, bitmap.storable {
            kept = await store(encoded, data: data, keys: keys, until: bitmap.freshUntil ?? Date().addingTimeInterval(configuration.defaultFreshness))
        }
        return EncodedResponse(encoded: encoded, tier: bitmap.tier, isInMemoryTier: kept)
    }

    /// Keeps a new encoded answer: memory and the local disk now, the shared stores after the
    /// answer; taken back where a purge began meanwhile.
    /// - Returns: whether the memory tier took the bytes.
    @discardableResult
    private func store(_ encoded: EncodedImage, data: Data, keys: EncodedKeys, until: Date) async -> Bool {
        let kept = keep(encoded, keys: keys, until: until)
        let record = VariantRecord.encode(data, freshUntil: until)
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
                if !purges.isCurrent(keys.mark) {
                    for store in shared where (try? await store.data(forKey: keys.store)) == record {
                        try? await store.removeValue(forKey: keys.store)
                    }
                }
            }
        }
        return kept
    }

    /// Whether a decode of the source left its mark on the local disk (for a bitmap from memory
    /// or a table, whose decode this process may not have seen).
    private func isMarkedAnimated(_ source: String) async -> Bool {
        let marked = (try? await disk?.data(forKey: StoreKey.animated(source))) != nil
        animatedSources.note(source, animated: marked)
        return marked
    }

    /// An animated WebP of an animated source: the original (one fetch, shared with other
    /// work), every frame processed as the request asks and encoded as it is read, with its
    /// delay. Nil when the animation is over the frame or animation-pixel limits: the caller
    /// answers its first frame instead.
    /// - Parameter original: the original when the caller has it (from the decode that found
    /// the animation); else it is read, shared with other work (one fetch whichever asks first).
    private func makeAnimation(_ request: ImageRequest, keys: EncodedKeys, encoding: ImageEncoding, handle: PriorityHandle,
                               keeps: Bool, original given: Original?) async throws(PipelineError) -> EncodedResponse? {
        guard let url = request.url else { throw .noSource }
        let original: Original
        if let given {
            original = given
        } else {
            original = try await sharedOriginal(url: url, sourceKey: keys.source, policy: request.cachePolicy, mark: keys.mark,
                                                waiter: nextID(), priority: handle.priority)
        }
        let limits = decodingLimits(for: request)
        let process: @Sendable (Bitmap) throws -> Bitmap
        switch request.processing {
        case .original: process = { $0 }
        case .processors(let processors): process = { try processors.process($0) }
        case .format(let name):
            guard let format = formatsByName[name] else { throw .unknownFormat(name) }
            process = { try format.process($0) }
        }
        let made = try await decodes.run(priority: handle) { () async throws(PipelineError) -> Data? in
            try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> Data? in
                let start = ContinuousClock.now
                do {
                    let info = try ImageDecoder.info(of: original.data, limits: limits)
                    // Marked animated, but a still now (replaced without a purge): unmark it and
                    // let the caller make the still.
                    guard info.isAnimated, info.fileType == .gif || info.fileType == .webp else {
                        self.animatedSources.note(keys.source, animated: false)
                        try? self.disk?.removeValue(forKey: StoreKey.animated(keys.source))
                        return nil
                    }
                    let encoder = AnimatedWebPEncoder(quality: encoding.quality)
                    try AnimationReader.frames(of: original.data, info: info, limits: limits) { frame in
                        var processed = frame
                        processed.image = try process(frame.image)
                        try encoder.add(processed)
                    }
                    let data = try encoder.finish()
                    if original.pendingStore != nil {
                        self.storePendingOriginal(original, sourceKey: keys.source)
                        // As the processing path does: a purge that began meanwhile takes it back.
                        self.undoIfPurged(keys.mark, sourceKey: keys.source, entityID: Self.entityIDs(request, sourceKey: keys.source).0)
                    }
                    self.metrics.decodes.increment()
                    self.metrics.stage(.encode, since: start, attributes: ["easel.format": "\(encoding.format)", "easel.bytes": .int64(Int64(data.count)),
                                                                           "easel.animated": true])
                    self.metrics.encodes.increment()
                    return data
                } catch CodecError.tooManyFrames, CodecError.tooManyAnimationPixels {
                    return nil
                } catch CodecError.cancelled, ImageTableError.cancelled {
                    throw .cancelled
                } catch let error as CodecError {
                    throw .decoding(error)
                } catch {
                    throw .processing("\(error)")
                }
            }
        }
        guard let data = made else { return nil }
        let encoded = EncodedImage(data: data, encoding: encoding)
        var kept = false
        if keeps, original.cacheable {
            kept = await store(encoded, data: data, keys: keys, until: original.freshUntil ?? Date().addingTimeInterval(configuration.defaultFreshness))
        }
        return EncodedResponse(encoded: encoded, tier: original.tier, isInMemoryTier: kept)
    }

    /// Puts encoded bytes in the memory tier and the source index (the index first, so a purge
    /// that runs meanwhile finds the key; a refused value leaves it again).
    /// - Returns: whether the tier took the bytes.
    @discardableResult
    private func keep(_ encoded: EncodedImage, keys: EncodedKeys, until: Date?) -> Bool {
        sourceIndex.add(keys.memory, sources: [keys.source] + keys.madeWith)
        guard encodedMemory.set(encoded, forKey: keys.memory, cost: encoded.count, expiresAt: until) else {
            sourceIndex.remove(keys.memory)
            return false
        }
        return true
    }

    /// After storing: when a purge of the source began since the work did, removes what it
    /// stored from every tier (see `PurgeMarks`) — only where the tier still holds these bytes,
    /// so what newer work stored under the same key stays.
    private func undoIfPurged(_ keys: EncodedKeys, stored: EncodedImage, record: Data) async {
        guard !purges.isCurrent(keys.mark) else { return }
        for store in stores where (try? await store.data(forKey: keys.store)) == record {
            try? await store.removeValue(forKey: keys.store)
        }
        if encodedMemory.value(forKey: keys.memory)?.etag == stored.etag {
            encodedMemory.removeValue(forKey: keys.memory)
        }
    }
}
