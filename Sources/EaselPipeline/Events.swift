import EaselStorage
import Foundation
import Metrics

/// What the pipeline reports, in order, per request (`request` is `ImageTask.id`).
public enum PipelineEvent: Sendable {
    case started(request: UInt64, url: URL?)
    /// A download of an original began (one per fetch attempt, shared by its requesters).
    case downloadStarted(url: URL)
    /// Bytes of an original received so far (shared by every request waiting for it).
    case progress(url: URL, received: Int, expected: Int?)
    /// A download attempt ended: `error` is nil when the body is complete, `.cancelled` when
    /// every requester left (or it was suspended) before the body was complete.
    case downloadEnded(url: URL, received: Int, error: PipelineError?)
    case finished(request: UInt64, tier: ImageTier, seconds: Double)
    case failed(request: UInt64, error: PipelineError)
    case cancelled(request: UInt64)
}

/// swift-metrics instruments (no-ops until the process bootstraps a metrics backend):
/// `easel_pipeline_requests_total{tier}`, `easel_pipeline_failures_total`,
/// `easel_pipeline_cancellations_total`, `easel_pipeline_decodes_total` and
/// `easel_pipeline_stage_seconds{stage}` for queue (waiting for a download or decode slot),
/// fetch, decode, process and encode.
final class PipelineMetrics: Sendable {
    enum Stage: String, CaseIterable { case queue, fetch, decode, process, encode }

    private let tiers: [ImageTier: Counter]
    let failures = Counter(label: "easel_pipeline_failures_total")
    let cancellations = Counter(label: "easel_pipeline_cancellations_total")
    let decodes = Counter(label: "easel_pipeline_decodes_total")
    private let stages: [Stage: Metrics.Timer]

    init() {
        var tiers: [ImageTier: Counter] = [:]
        for tier in ImageTier.allCases { tiers[tier] = Counter(label: "easel_pipeline_requests_total", dimensions: [("tier", tier.rawValue)]) }
        self.tiers = tiers
        var stages: [Stage: Metrics.Timer] = [:]
        for stage in Stage.allCases { stages[stage] = Metrics.Timer(label: "easel_pipeline_stage_seconds", dimensions: [("stage", stage.rawValue)]) }
        self.stages = stages
    }

    func answered(by tier: ImageTier) { tiers[tier]?.increment() }

    func stage(_ stage: Stage, since start: ContinuousClock.Instant) {
        self.stage(stage, took: ContinuousClock.now - start)
    }

    func stage(_ stage: Stage, took duration: Duration) {
        stages[stage]?.recordNanoseconds(Int64(duration.seconds * 1e9))
    }
}
