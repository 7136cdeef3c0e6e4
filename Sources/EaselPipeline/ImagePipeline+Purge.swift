import EaselCodecs
import EaselStorage
import EaselSupport
import Foundation

/// Purge by source in every tier, and what keeps work that raced a purge from storing old
/// bytes (see `PurgeMarks`).
extension ImagePipeline {
    /// Forgets everything made from the original of `request`, in every tier: the original,
    /// every variant and every encoded answer in the data stores (one key range per store, see
    /// `StoreKey`), its table entries, and its decoded and encoded entries in memory (found
    /// through the source index; nothing else is touched). Work on the source that began before
    /// or during the purge keeps nothing it made (`PurgeMarks`); requests after it start afresh.
    /// Readers holding an image keep it.
    public func purge(_ request: ImageRequest) async throws(PipelineError) {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        let (entityID, _) = Self.entityIDs(request, sourceKey: sourceKey)
        try await purges.purging(sourceKey) { () async throws(PipelineError) in
            var failure: PipelineError?
            for store in stores {
                do {
                    try await store.removeValues(withKeyPrefix: StoreKey.prefix(sourceKey))
                } catch {
                    failure = failure ?? .store(store, error)
                }
            }
            forgetLocally(sourceKey, entityID: entityID)
            if let failure { throw failure }
        }
    }

    /// Removes a source's entries from memory and the tables (blocking only on a table's lock).
    func forgetLocally(_ sourceKey: String, entityID: UUID) {
        for table in tables.values { table.removeImage(for: entityID) }
        for key in sourceIndex.removeSource(sourceKey) {
            _ = memory.removeValue(forKey: key)
            _ = encodedMemory.removeValue(forKey: key)
        }
    }

    /// Undoes what work begun under `mark` stored, when a purge of its source began since (see
    /// `PurgeMarks`): memory, tables and the local disk. Blocking (the disk), so called from the
    /// I/O pool or after an await on it.
    func undoIfPurged(_ mark: PurgeMarks.Mark, sourceKey: String, entityID: UUID) {
        guard !purges.isCurrent(mark) else { return }
        try? disk?.removeValues(withKeyPrefix: StoreKey.prefix(sourceKey))
        forgetLocally(sourceKey, entityID: entityID)
    }
}

extension ImagePipeline {
    /// The suffix of memory keys of bitmaps decoded from a disk variant.
    static let fromVariant = "|from-variant"

    /// Puts a bitmap in the memory tier and the source index (the index first, so a purge that
    /// runs meanwhile finds the key; a refused value leaves it again).
    func keep(_ image: Bitmap, key: String, sourceKey: String, until: Date?) {
        sourceIndex.add(key, source: sourceKey)
        if !memory.set(image, forKey: key, cost: image.rowBytes * image.height, expiresAt: until) { sourceIndex.remove(key) }
    }
}
