import EaselSupport
import EaselCodecs
import EaselStorage
import EaselTables
import Foundation
import NIOCore

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
    /// The memory budget of the work under way (`Configuration.memoryBudget`), nil for none.
    public var memoryBudget: Int? = nil
    /// The estimated bytes of the decodes, processing and encodes under way (0 without a
    /// budget, or with one no mix of decodes can reach: nothing is estimated).
    public var reservedBytes = 0
    /// The most `reservedBytes` has been.
    public var peakReservedBytes = 0
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

    /// A variant's bytes for an answer given again (the server's ready answers: an index from
    /// requests to `VariantKey.memory` and the ETag they were answered with), while the encoded
    /// memory tier still holds them with that ETag: never an expired, evicted, purged or
    /// replaced entry. A hit is a use for the tier's eviction order and an answer of the tier
    /// in the pipeline's counts; nil otherwise.
    package func replayableBytes(memoryKey key: String, etag: String) -> ByteBuffer? {
        guard let entry = encodedMemory.value(forKey: key), entry.etag == etag else { return nil }
        metrics.answered(by: .encodedMemory)
        return entry.bytes
    }

    /// One encoded request between its events: the memory tier; else, once `admission` lets
    /// the work start (a refusal is `.overloaded`), the shared `EncodeTask` of its key, within
    /// the request's deadline and until `abandonWhen` returns (see `bounded`).
    func encodedResponse(for request: ImageRequest, id: UInt64, admission: (any WorkAdmission)? = nil,
                         abandonWhen: (@Sendable () async -> Void)? = nil) async throws(PipelineError) -> EncodedResponse {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        guard let key = variantKey(for: request, sourceKey: sourceKey) else {
            if case .format(let name) = request.processing { throw .unknownFormat(name) }
            throw .noSource
        }
        return try await tracked(request, id: id, tier: \.tier) { () async throws(PipelineError) -> EncodedResponse in
            if request.cachePolicy != .reload, let hit = encodedMemory.value(forKey: key.memory) {
                return EncodedResponse(encoded: hit, tier: .encodedMemory, key: key, isInMemoryTier: true)
            }
            if let admission, !admission.enter() { throw .overloaded }
            defer { admission?.leave() }
            let keys = EncodedKeys(variant: key, store: key.store, mark: purges.mark(key.source), madeWith: request.madeWith)
            let task = EncodeTask(pipeline: self, request: request, keys: keys)
            return try await bounded(by: request.deadline, abandonWhen: abandonWhen) { [tasks] () async throws(PipelineError) -> EncodedResponse in
                var response = try await tasks.run(task, waiter: id, priority: request.priority)
                response.key = key
                return response
            }
        }
    }
}
