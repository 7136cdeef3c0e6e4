import EaselCodecs
import EaselStorage
import EaselSupport
import Foundation
import Logging

/// Purge by source in every tier, and what keeps work that raced a purge from storing old
/// bytes (see `PurgeMarks`).
extension ImagePipeline {
    /// Where a purge reaches.
    public enum PurgeScope: Sendable {
        /// This pipeline's tiers and its shared stores.
        case everywhere
        /// This pipeline's own tiers only: memory, tables and the local disk (a purge relayed
        /// from an instance that has already purged the shared stores).
        case local
    }

    /// What a purge could not reach: shared stores that failed or did not finish within the
    /// time limit (their names). Empty when the purge reached everything in its scope.
    public struct PurgeReport: Sendable, Equatable {
        /// The names (`storeName`) of the shared stores the purge did not reach.
        public var unreachedSharedStores: [String] = []
    }

    /// Forgets everything made from the original of `request`, in every tier: the original,
    /// every variant and every encoded answer in the data stores (one key range per store, see
    /// `StoreKey`), its table entries, and its decoded and encoded entries in memory (found
    /// through the source index; nothing else is touched). Work on the source that began before
    /// or during the purge keeps nothing it made (`PurgeMarks`); requests after it start afresh.
    /// Readers holding an image keep it.
    ///
    /// A shared store that fails or takes longer than `sharedStoreTimeLimit` does not fail the
    /// purge: it is named in the report (and logged), as the local tiers are purged anyway.
    /// - Throws: `PipelineError.store` when the local disk failed; `.noSource`.
    @discardableResult
    public func purge(_ request: ImageRequest, scope: PurgeScope = .everywhere,
                      sharedStoreTimeLimit: Duration = .seconds(5)) async throws(PipelineError) -> PurgeReport {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        let (entityID, _) = Self.entityIDs(request, sourceKey: sourceKey)
        let prefix = StoreKey.prefix(sourceKey)
        return try await purges.purging(sourceKey) { () async throws(PipelineError) -> PurgeReport in
            var failure: PipelineError?
            if let disk {
                do { try await disk.removeValues(withKeyPrefix: prefix) } catch { failure = .store(disk, error) }
            }
            var report = PurgeReport()
            if scope == .everywhere {
                // The shared stores at once, each within the time limit.
                let shared = configuration.sharedStores
                report.unreachedSharedStores = await withTaskGroup(of: String?.self) { group in
                    for store in shared {
                        group.addTask {
                            do {
                                try await withTimeLimit(sharedStoreTimeLimit, timedOut: PipelineError.timedOut(seconds: Self.seconds(sharedStoreTimeLimit)),
                                                        cancelled: PipelineError.cancelled) { () async throws(PipelineError) in
                                    do { try await store.removeValues(withKeyPrefix: prefix) } catch { throw .store(store, error) }
                                }
                                return nil
                            } catch {
                                return store.storeName
                            }
                        }
                    }
                    var unreached: [String] = []
                    for await name in group { if let name { unreached.append(name) } }
                    return unreached.sorted()
                }
                if !report.unreachedSharedStores.isEmpty {
                    logger.error("purge did not reach shared stores", metadata: [
                        "source": "\(sourceKey)", "stores": "\(report.unreachedSharedStores.joined(separator: ", "))"])
                }
            }
            forgetLocally(sourceKey, entityID: entityID)
            if let failure { throw failure }
            return report
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Removes a source's entries from memory and the tables (blocking only on a table's lock).
    func forgetLocally(_ sourceKey: String, entityID: UUID) {
        animatedSources.remove(sourceKey)
        sourceTypes.remove(sourceKey)
        watermarks.remove(sourceKey)
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

    /// Puts a bitmap in the memory tier and the source index (the index first, so a purge that
    /// runs meanwhile finds the key; a refused value leaves it again).
    /// - Parameter madeWith: other sources the image was made with (`ImageRequest.madeWith`).
    func keep(_ image: Bitmap, key: String, sourceKey: String, madeWith: [String] = [], until: Date?) {
        sourceIndex.add(key, sources: [sourceKey] + madeWith)
        if !memory.set(image, forKey: key, cost: image.rowBytes * image.height, expiresAt: until) { sourceIndex.remove(key) }
    }
}
