import EaselCodecs
import EaselStorage
import Foundation

/// What the caches hold.
public struct PipelineStatistics: Sendable {
    /// Decoded images in memory.
    public var memoryBytes: Int
    /// Encoded images in memory.
    public var encodedMemoryBytes: Int
    /// Originals, variants and encoded images on disk.
    public var diskBytes: Int
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
    /// 3. the bitmap from `image(for:)`'s tiers (memory, table, disk variant, original, fetcher),
    ///    encoded once however many requests ask at once, then stored in both encoded tiers.
    ///
    /// `request.deadline` covers all of it, the encode included.
    public func encodedImage(for request: ImageRequest) async throws(PipelineError) -> EncodedResponse {
        let id = nextID()
        guard let deadline = request.deadline else { return try await encodedResponse(for: request, id: id) }
        return try await withDeadline(deadline) { () async throws(PipelineError) -> EncodedResponse in
            try await self.encodedResponse(for: request, id: id)
        }
    }

    /// The encoded bytes when the memory tier has them: no I/O, no waiting (a server's warm path).
    public func cachedEncodedImage(for request: ImageRequest) -> EncodedImage? {
        guard request.cachePolicy != .reload, let sourceKey = request.sourceKey else { return nil }
        return cachedEncodedImage(sourceKey: sourceKey, processing: request.processing, encoding: request.encoding ?? ImageEncoding(.jpeg))
    }

    /// The same, by the source's key (`ImageRequest.sourceKey`, e.g. a `cacheKey` the caller
    /// set), so that a caller with a cheap key builds no URL on a hit.
    public func cachedEncodedImage(sourceKey: String, processing: ImageRequest.Processing, encoding: ImageEncoding) -> EncodedImage? {
        guard let key = encodedKey(processing: processing, encoding: encoding, sourceKey: sourceKey) else { return nil }
        return encodedMemory.value(forKey: key)
    }

    /// The encoded tiers' key: encoding, processing (a named format with every parameter that
    /// decides its pixels, so a changed format never serves old bytes) and source.
    func encodedKey(processing: ImageRequest.Processing, encoding: ImageEncoding, sourceKey: String) -> String? {
        let identifier: String
        switch processing {
        case .format(let name):
            guard let found = formatIdentifiers[name] else { return nil }
            identifier = found
        case .original: identifier = "original"
        case .processors(let processors): identifier = "processors:" + processors.identifier
        }
        return "encoded|" + encoding.description + "|" + identifier + "|" + sourceKey
    }

    private func encodedResponse(for request: ImageRequest, id: UInt64) async throws(PipelineError) -> EncodedResponse {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        guard let key = encodedKey(processing: request.processing, encoding: request.encoding ?? ImageEncoding(.jpeg), sourceKey: sourceKey) else {
            if case .format(let name) = request.processing { throw .unknownFormat(name) }
            throw .noSource
        }
        return try await tracked(request, id: id, tier: \.tier) { () async throws(PipelineError) -> EncodedResponse in
            if request.cachePolicy != .reload, let hit = encodedMemory.value(forKey: key) {
                return EncodedResponse(encoded: hit, tier: .encodedMemory)
            }
            return try await encodes.value(for: key + request.cachePolicy.workKeySuffix, waiter: id, priority: request.priority) { handle in
                do throws(PipelineError) {
                    return .success(try await self.makeEncoded(request, key: key, sourceKey: sourceKey, handle: handle))
                } catch {
                    return .failure(error)
                }
            }.get()
        }
    }

    /// The shared work of one encoded key: the disk tier, else the bitmap and one encode.
    private func makeEncoded(_ request: ImageRequest, key: String, sourceKey: String,
                             handle: PriorityHandle) async throws(PipelineError) -> EncodedResponse {
        let encoding = request.encoding ?? ImageEncoding(.jpeg)
        let stores = request.cachePolicy != .noStore
        if request.cachePolicy != .reload, let disk, let record = try? await disk.data(forKey: key),
           let (data, freshUntil) = VariantRecord.decode(record) {
            let encoded = EncodedImage(data: data, encoding: encoding)
            if stores { keep(encoded, key: key, sourceKey: sourceKey, until: freshUntil) }
            return EncodedResponse(encoded: encoded, tier: .encodedDisk)
        }
        var bitmapRequest = request
        bitmapRequest.encoding = nil
        bitmapRequest.deadline = nil
        bitmapRequest.usesDiskVariants = false
        bitmapRequest.priority = handle.priority
        let inner = nextID()
        handle.observe { [weak self] priority in self?.setPriority(priority, id: inner) }
        let bitmap = try await resolve(bitmapRequest, id: inner)
        handle.observe(nil)
        if let hook = encodeHook.withLock({ $0 }) { await hook() }
        try Task.checkCancellation(orThrow: .cancelled)
        let image = bitmap.image
        let data = try await decodes.run(priority: handle) { () async throws(PipelineError) -> Data in
            try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> Data in
                let start = ContinuousClock.now
                do {
                    // JPEG has no alpha: transparent pixels go on white rather than on black.
                    let opaque = encoding.format == .jpeg && !image.isKnownOpaque ? try Flatten().process(image) : image
                    let data = try ImageEncoder.encode(opaque, as: encoding.options)
                    self.metrics.stage(.encode, since: start)
                    self.metrics.encodes.increment()
                    return data
                } catch {
                    throw .processing("\(error)")
                }
            }
        }
        let encoded = EncodedImage(data: data, encoding: encoding)
        if stores, bitmap.storable {
            let until = bitmap.freshUntil ?? Date().addingTimeInterval(configuration.defaultFreshness)
            keep(encoded, key: key, sourceKey: sourceKey, until: until)
            if let disk { try? await disk.set(VariantRecord.encode(data, freshUntil: until), forKey: key, expiresAt: until) }
        }
        return EncodedResponse(encoded: encoded, tier: bitmap.tier)
    }

    private func keep(_ encoded: EncodedImage, key: String, sourceKey: String, until: Date?) {
        encodedMemory.set(encoded, forKey: key, cost: encoded.count, expiresAt: until)
        sourceIndex.add(key, source: sourceKey)
    }
}
