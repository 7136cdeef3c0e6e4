import EaselSupport
import Foundation

/// One stage of the pipeline as a unit of shared work: a fetch (`FetchTask`), a decode with its
/// processing (`DecodeTask`) or an encode (`EncodeTask`). Each names its work key and the
/// coalescer its runs share; `TaskGraph.run` starts or joins it.
protocol PipelineTask: Sendable {
    associatedtype Value: Sendable
    /// The work's identity: two tasks with equal keys are one run.
    var key: WorkKey { get }
    /// The coalescer the task's runs are shared through.
    static func coalescer(in graph: TaskGraph) -> WorkCoalescer<WorkKey, Value>
    /// The work itself, at the priority `handle` carries (the highest of its requesters').
    func run(_ handle: PriorityHandle) async throws(PipelineError) -> Value
}

/// The one owner of the pipeline's work (as Nuke's task graph is): a request's stages are tasks
/// — encode, decode and process, fetch — each run once per work key however many requests wait,
/// at the highest priority of its requesters, and stopped when the last of them leaves; the
/// slots they run in (downloads, decodes) are here too.
///
/// A cold encoded request is one `EncodeTask`, which reads the data stores, then takes its
/// bitmap from a tier or runs one `DecodeTask`, which reads the original through one
/// `FetchTask`. Each stage reads its own tier's index once.
final class TaskGraph: Sendable {
    /// Originals: one fetch (or disk read) per source, policy and purge mark.
    let fetches = WorkCoalescer<WorkKey, ImagePipeline.Original>()
    /// Decodes with their processing: one per bitmap key (and frames, limits).
    let decodes = WorkCoalescer<WorkKey, ImagePipeline.Processed>()
    /// Encoded answers: one per variant key.
    let encodes = WorkCoalescer<WorkKey, EncodedResponse>()
    /// Downloads running at once (`maximumConcurrentDownloads`, the download rate).
    let downloadSlots: WorkQueue
    /// Decodes, processing and encodes running at once (`maximumConcurrentDecodes`).
    let decodeSlots: WorkQueue

    init(configuration: ImagePipeline.Configuration, metrics: PipelineMetrics) {
        downloadSlots = WorkQueue(limit: configuration.maximumConcurrentDownloads, rate: configuration.downloadRate,
                                  newestFirst: configuration.newestFirst) { waited in
            metrics.stage(.queue, took: waited)
        }
        decodeSlots = WorkQueue(limit: configuration.maximumConcurrentDecodes, newestFirst: configuration.newestFirst,
                                budget: Self.bindingBudget(configuration)) { waited in
            metrics.stage(.queue, took: waited)
        }
    }

    /// The memory budget the decode slots enforce: the configured one (above 0), unless no mix
    /// of decodes can reach it (every slot at the largest estimate the decoding limits allow):
    /// then none, and no estimate is made.
    static func bindingBudget(_ configuration: ImagePipeline.Configuration) -> Int? {
        guard let budget = configuration.memoryBudget, budget > 0 else { return nil }
        let largest = MemoryEstimate.largestPeakBytes(maxPixels: configuration.decodingLimits.maxPixels)
        let reachable = Int.checkedProduct(largest, max(1, configuration.maximumConcurrentDecodes)) ?? Int.max
        return budget < reachable ? budget : nil
    }

    /// Joins `task`'s work, or starts it when none runs under its key, and waits for its value;
    /// cancelling the calling task makes this requester (`waiter`) leave.
    func run<Work: PipelineTask>(_ task: Work, waiter: UInt64, priority: ImageRequest.Priority) async throws(PipelineError) -> Work.Value {
        try await Work.coalescer(in: self).value(for: task.key, waiter: waiter, priority: priority) { handle in
            do throws(PipelineError) {
                return .success(try await task.run(handle))
            } catch {
                return .failure(error)
            }
        }.get()
    }

    /// Changes the priority of the requester `waiter` of a decode (an `ImageTask`) while it waits.
    func setPriority(_ priority: ImageRequest.Priority, waiter: UInt64) {
        decodes.setPriority(waiter: waiter, priority)
    }
}
